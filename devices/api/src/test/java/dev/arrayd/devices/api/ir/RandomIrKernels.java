package dev.arrayd.devices.api.ir;

/** Random well-typed IR kernels ({@link RandomIrPrograms}) for tests outside this package (a codec's round trip). */
public final class RandomIrKernels {

    private RandomIrKernels() {}

    /** A kernel of seed {@code seed}: a plain one, or with {@code group} one with local memory and barriers. */
    public static IrKernel kernel(long seed, boolean group) {
        RandomIrPrograms g = new RandomIrPrograms(seed, true);
        return (group ? g.groupKernel("k" + seed) : g.kernel("k" + seed)).kernel();
    }
}
