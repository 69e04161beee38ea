package dev.arrayd.devices.api;

/** An argument of a launch, in parameter order. */
public sealed interface KernelArg {

    /** A buffer argument: the memory it lives in. */
    record Buffer(MemRef ref) implements KernelArg {}

    /**
     * A scalar argument. {@code bits} holds the value: the raw IEEE bits for F32 (low 32) and F64,
     * the two's-complement value for integers.
     */
    record Scalar(DType dtype, long bits) implements KernelArg {

        public static Scalar f32(float v) {
            return new Scalar(DType.F32, Float.floatToRawIntBits(v) & 0xffff_ffffL);
        }

        public static Scalar f64(double v) {
            return new Scalar(DType.F64, Double.doubleToRawLongBits(v));
        }

        public static Scalar i32(int v) {
            return new Scalar(DType.I32, v);
        }

        public static Scalar i64(long v) {
            return new Scalar(DType.I64, v);
        }

        public static Scalar u8(int v) {
            return new Scalar(DType.U8, v & 0xff);
        }
    }
}
