package dev.arrayd.client;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Objects;

/**
 * The completion of one command.
 *
 * @param event       the event id
 * @param state       {@link EventState#SUCCEEDED} for results that complete an {@link Event#future()};
 *                    {@link Session#waitEvents} also reports failed ones
 * @param code        a {@code google.rpc.Code} value; 0 unless failed
 * @param message     the reason, naming the bad value; empty unless failed
 * @param deviceNanos time the command spent executing on its device, in nanoseconds (0 when unknown)
 * @param data        for a download: the bytes read (little-endian); empty otherwise. The accessor returns
 *                    a fresh read-only view each time.
 */
public record EventResult(long event, EventState state, int code, String message, long deviceNanos, ByteBuffer data) {
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0).asReadOnlyBuffer();

    public EventResult {
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(message, "message");
        data = data == null ? EMPTY : data.asReadOnlyBuffer();
    }

    /** A success with no data. */
    static EventResult succeeded(long event) {
        return new EventResult(event, EventState.SUCCEEDED, 0, "", 0, null);
    }

    @Override
    public ByteBuffer data() {
        return data.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    }

    /** The downloaded bytes, copied. */
    public byte[] bytes() {
        byte[] out = new byte[data.remaining()];
        data.duplicate().get(out);
        return out;
    }

    /** The downloaded bytes as f32 values. */
    public float[] floats() {
        float[] out = new float[data.remaining() / Float.BYTES];
        data().asFloatBuffer().get(out);
        return out;
    }

    /** The downloaded bytes as f64 values. */
    public double[] doubles() {
        double[] out = new double[data.remaining() / Double.BYTES];
        data().asDoubleBuffer().get(out);
        return out;
    }

    /** The downloaded bytes as i32 values. */
    public int[] ints() {
        int[] out = new int[data.remaining() / Integer.BYTES];
        data().asIntBuffer().get(out);
        return out;
    }

    /** The downloaded bytes as i64 values. */
    public long[] longs() {
        long[] out = new long[data.remaining() / Long.BYTES];
        data().asLongBuffer().get(out);
        return out;
    }
}
