package dev.arrayd.devices.api.ir;

import dev.arrayd.devices.api.KernelParam;
import dev.arrayd.devices.api.KernelSignature;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * One IR entry point: its body runs once per work-item of a {@code gridDims}-dimensional grid.
 *
 * @param localSize   the work-group size (one entry per grid dimension), or empty when the kernel
 *                    uses no local arrays and no barriers and leaves the choice to the launch
 * @param relaxedMath the kernel allows relaxed floating point: reassociation, contraction into fused
 *                    multiply-adds, no signed zeros (a permission a backend may use; off: strict IEEE order)
 */
public record IrKernel(String name, List<IrParam> params, int gridDims, List<Long> localSize, List<Stmt> body,
        boolean relaxedMath) {

    public IrKernel {
        Objects.requireNonNull(name, "name");
        params = List.copyOf(params);
        localSize = List.copyOf(localSize);
        body = List.copyOf(body);
    }

    /** A kernel with strict floating point. */
    public IrKernel(String name, List<IrParam> params, int gridDims, List<Long> localSize, List<Stmt> body) {
        this(name, params, gridDims, localSize, body, false);
    }

    /** The launch signature every backend checks arguments against. */
    public KernelSignature signature() {
        List<KernelParam> out = new ArrayList<>(params.size());
        for (IrParam p : params) {
            out.add(switch (p) {
                case IrParam.Buffer b -> KernelParam.buffer(b.name(), b.dtype(), b.access());
                case IrParam.Scalar s -> KernelParam.scalar(s.name(), s.dtype());
            });
        }
        return new KernelSignature(name, out);
    }

    /** Work-items per group when {@link #localSize} is declared, else 0. */
    public long groupSize() {
        if (localSize.isEmpty()) {
            return 0;
        }
        long n = 1;
        for (long l : localSize) {
            n *= l;
        }
        return n;
    }
}
