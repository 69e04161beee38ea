package dev.arrayd.client;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** Java arrays to and from the little-endian bytes of a buffer's elements (what writes send and reads return). */
final class TypedArrays {

    /** Whether a Java array of numbers holds its elements as a buffer does (little-endian): true on x86-64, arm64. */
    static final boolean LITTLE_ENDIAN_HERE = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

    private TypedArrays() {}

    static ByteBuffer bytes(float[] data) {
        ByteBuffer b = littleEndian(data.length, Float.BYTES);
        b.asFloatBuffer().put(data);
        return b;
    }

    static ByteBuffer bytes(double[] data) {
        ByteBuffer b = littleEndian(data.length, Double.BYTES);
        b.asDoubleBuffer().put(data);
        return b;
    }

    static ByteBuffer bytes(int[] data) {
        ByteBuffer b = littleEndian(data.length, Integer.BYTES);
        b.asIntBuffer().put(data);
        return b;
    }

    static ByteBuffer bytes(long[] data) {
        ByteBuffer b = littleEndian(data.length, Long.BYTES);
        b.asLongBuffer().put(data);
        return b;
    }

    private static ByteBuffer littleEndian(int count, int width) {
        if ((long) count * width > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("data: " + count + " values (expected: at most "
                    + Integer.MAX_VALUE / width + " per call; write a range)");
        }
        return ByteBuffer.allocate(count * width).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** The elements of {@code buffer}, of {@code width} bytes each, as the length of one Java array. */
    static int count(BufferHandle buffer, int width) {
        long n = buffer.dataBytes() / width;
        if (n > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("buffer " + buffer.id() + ": " + n + " elements (expected: at most "
                    + (Integer.MAX_VALUE - 8) + " to fit one array; read it in ranges)");
        }
        return (int) n;
    }

    /** The elements of a little-endian buffer (read from its position to its limit). */
    static float[] floats(ByteBuffer b) {
        float[] out = new float[b.remaining() / Float.BYTES];
        b.asFloatBuffer().get(out);
        return out;
    }

    static double[] doubles(ByteBuffer b) {
        double[] out = new double[b.remaining() / Double.BYTES];
        b.asDoubleBuffer().get(out);
        return out;
    }

    static int[] ints(ByteBuffer b) {
        int[] out = new int[b.remaining() / Integer.BYTES];
        b.asIntBuffer().get(out);
        return out;
    }

    static long[] longs(ByteBuffer b) {
        long[] out = new long[b.remaining() / Long.BYTES];
        b.asLongBuffer().get(out);
        return out;
    }
}
