package dev.arrayd.client;

import dev.arrayd.proto.v1.IrBufferParam;
import dev.arrayd.proto.v1.IrParam;
import dev.arrayd.proto.v1.IrScalarParam;

import java.util.function.Consumer;

/** Declares an IR kernel's grid and parameters, then its body ({@link #body} finishes it). */
public final class IrKernelBuilder {

    private final dev.arrayd.proto.v1.IrKernel.Builder kernel;
    private KernelSpec spec;

    IrKernelBuilder(String name) {
        kernel = dev.arrayd.proto.v1.IrKernel.newBuilder().setName(name).setGridDims(1);
        spec = KernelSpec.entry(name);
    }

    /** Grid dimensions, 1 (the default) to 3. */
    public IrKernelBuilder gridDims(int dims) {
        kernel.setGridDims(dims);
        return this;
    }

    /** The work-group size, one entry per grid dimension; needed for local arrays and barriers. */
    public IrKernelBuilder localSize(long... size) {
        kernel.clearLocalSize();
        for (long s : size) {
            kernel.addLocalSize(s);
        }
        return this;
    }

    /**
     * Allows relaxed floating point in this kernel (off by default): the backend may reassociate float
     * additions and multiplications (a loop that accumulates can then be vectorized), fuse multiply-adds and
     * ignore the sign of zero, so results may differ from the strict ones in their last bits. The CPU backend
     * uses it; OpenCL and CUDA keep the strict order. See docs/kernels.md.
     */
    public IrKernelBuilder relaxedMath() {
        kernel.setRelaxedMath(true);
        return this;
    }

    public IrKernelBuilder buffer(String name, DType dtype, Access access) {
        return buffer(name, dtype, access, null);
    }

    /** A buffer that has at least {@code minExtent} elements (checked at launch; lets the daemon prove accesses). */
    public IrKernelBuilder buffer(String name, DType dtype, Access access, IrExpr minExtent) {
        spec = spec.buffer(name, dtype, access);
        IrBufferParam.Builder b = IrBufferParam.newBuilder().setDtype(Protos.dtype(dtype)).setAccess(Protos.access(access));
        if (minExtent != null) {
            b.setMinExtent(minExtent.toProto());
        }
        kernel.addParams(IrParam.newBuilder().setName(name).setBuffer(b));
        return this;
    }

    public IrKernelBuilder scalar(String name, DType dtype) {
        spec = spec.scalar(name, dtype);
        kernel.addParams(IrParam.newBuilder().setName(name).setScalar(IrScalarParam.newBuilder().setDtype(Protos.dtype(dtype))));
        return this;
    }

    /** An integer scalar within {@code [min, max]} (checked at launch; bounds loops and indices). */
    public IrKernelBuilder scalar(String name, DType dtype, long min, long max) {
        spec = spec.scalar(name, dtype);
        kernel.addParams(IrParam.newBuilder().setName(name).setScalar(IrScalarParam.newBuilder()
                .setDtype(Protos.dtype(dtype)).setMin(min).setMax(max)));
        return this;
    }

    /** Fills the body and returns the finished kernel. */
    public IrKernelSpec body(Consumer<IrBlock> body) {
        IrBlock b = new IrBlock();
        body.accept(b);
        return new IrKernelSpec(kernel.clone().clearBody().addAllBody(b.statements()).build(), spec);
    }
}
