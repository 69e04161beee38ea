package dev.arrayd.client;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Elements of every dtype as doubles, to and from the daemon's little-endian bytes: what
 * {@link Session#setValues} and {@link Session#getValues} send and receive. f16 and bf16 round to the
 * nearest value (ties to even); integer dtypes take values that are whole and in range.
 */
final class Elements {
    private Elements() {
    }

    static ByteBuffer encode(DType dtype, double[] values) {
        ByteBuffer out = ByteBuffer.allocate(values.length * dtype.byteSize()).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < values.length; i++) {
            double v = values[i];
            switch (dtype) {
                case F32 -> out.putFloat((float) v);
                case F64 -> out.putDouble(v);
                case F16 -> out.putShort(Float.floatToFloat16((float) v));
                case BF16 -> out.putShort(bf16((float) v));
                case I32 -> out.putInt((int) integral(v, Integer.MIN_VALUE, Integer.MAX_VALUE, i, dtype));
                case I64 -> out.putLong(integral(v, Long.MIN_VALUE, Long.MAX_VALUE, i, dtype));
                case U8 -> out.put((byte) integral(v, 0, 255, i, dtype));
            }
        }
        return out.flip();
    }

    static double[] decode(DType dtype, ByteBuffer bytes) {
        ByteBuffer in = bytes.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        double[] out = new double[in.remaining() / dtype.byteSize()];
        for (int i = 0; i < out.length; i++) {
            out[i] = switch (dtype) {
                case F32 -> in.getFloat();
                case F64 -> in.getDouble();
                case F16 -> Float.float16ToFloat(in.getShort());
                case BF16 -> Float.intBitsToFloat((in.getShort() & 0xffff) << 16);
                case I32 -> in.getInt();
                case I64 -> in.getLong();
                case U8 -> in.get() & 0xff;
            };
        }
        return out;
    }

    private static long integral(double v, long min, long max, int i, DType dtype) {
        if (v != Math.rint(v) || v < min || v > max) {
            throw new IllegalArgumentException("values[" + i + "]: " + v + " (expected: a whole number in [" + min + ", "
                    + max + "] for " + dtype + ")");
        }
        return (long) v;
    }

    /** The bf16 nearest to {@code f} (ties to even; NaN stays NaN). */
    private static short bf16(float f) {
        int bits = Float.floatToRawIntBits(f);
        if (Float.isNaN(f)) {
            return (short) ((bits >>> 16) | 0x40);
        }
        int rounded = bits + 0x7fff + ((bits >>> 16) & 1);
        return (short) (rounded >>> 16);
    }
}
