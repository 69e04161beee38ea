package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.ir.CheckedKernel;
import dev.arrayd.devices.api.ir.IrParam;

import java.util.Arrays;
import java.util.List;

/**
 * What an IR kernel's launch adds to a native one, decided without touching CUDA (pure, tested): the
 * checks the kernel's proofs rely on ({@link CheckedKernel#checkLaunch}), the block size to run with,
 * the extents the launch wrapper takes by value ({@link CudaIrAssembler}), and, after the launch, what
 * its guard words mean.
 *
 * @param localDims the local size to launch with: the kernel's declared one, the caller's, or null
 *                  (the backend chooses, see {@link LaunchGeometry})
 * @param extents   the element count of each buffer argument by parameter position (0 for scalars):
 *                  the wrapper's {@code arrayd_ext} struct, at least one entry long
 */
record IrLaunch(long[] localDims, long[] extents) {

    /**
     * Checks a launch of {@code kernel} whose arguments {@link PackedArgs#pack} has already matched
     * against its signature (count, kinds, dtypes).
     *
     * @throws ArraydException INVALID_ARGUMENT naming the grid, the local size or the argument
     */
    static IrLaunch prepare(CheckedKernel kernel, long[] globalDims, long[] localDims, List<KernelArg> args) {
        if (globalDims == null) {
            throw ArraydException.invalid("globalDims: null (expected: " + kernel.kernel().gridDims() + " dims, as kernel "
                    + kernel.name() + " declares)");
        }
        List<IrParam> params = kernel.kernel().params();
        long[] extents = new long[Math.max(1, params.size())];
        for (int i = 0; i < params.size() && i < args.size(); i++) {
            if (params.get(i) instanceof IrParam.Buffer b && args.get(i) instanceof KernelArg.Buffer arg && arg.ref() != null) {
                extents[i] = arg.ref().bytes() / b.dtype().byteSize();
            }
        }
        long[] local = kernel.checkLaunch(globalDims, localDims, args, extents);
        return new IrLaunch(local, extents);
    }

    /**
     * The outcome the guard words give: null when no guard fired, else OUT_OF_RANGE naming the kernel,
     * the buffer (or local array) and the index ({@code word0} is the guard id + 1, {@code word1} the index).
     */
    ArraydException failure(CheckedKernel kernel, long word0, long word1) {
        if (word0 == 0) {
            return null;
        }
        int guardId = word0 > 0 && word0 - 1 <= Integer.MAX_VALUE ? (int) (word0 - 1) : Integer.MAX_VALUE;
        return kernel.outOfRange(guardId, word1, extents);
    }

    @Override
    public String toString() {
        return "IrLaunch[localDims=" + Arrays.toString(localDims) + ", extents=" + Arrays.toString(extents) + "]";
    }
}
