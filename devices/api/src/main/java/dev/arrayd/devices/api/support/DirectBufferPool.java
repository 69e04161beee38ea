package dev.arrayd.devices.api.support;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;

/**
 * Direct buffers of one capacity for bulk transfers through sockets, kept for the next transfer: a channel reads
 * into and writes from native memory without a copy through a temporary buffer, and a direct buffer costs an
 * allocation and a pass of zeroing when made. At most {@code keep} buffers are kept; {@link #take} makes a new one
 * when none is free, so a burst is never held back. Thread-safe. The direct buffers' counterpart of
 * {@link ByteArrayPool}.
 */
public final class DirectBufferPool {

    private final int capacity;
    private final int keep;
    @GuardedBy("this")
    private final ArrayDeque<ByteBuffer> free = new ArrayDeque<>();

    /**
     * @param capacity bytes of every buffer
     * @param keep     most buffers kept between uses
     */
    public DirectBufferPool(int capacity, int keep) {
        if (capacity <= 0 || keep < 0) {
            throw new IllegalArgumentException("capacity " + capacity + ", keep " + keep
                    + " (expected: capacity > 0, keep >= 0)");
        }
        this.capacity = capacity;
        this.keep = keep;
    }

    /** Bytes of every buffer. */
    public int capacity() {
        return capacity;
    }

    /** A free buffer, cleared (its contents are what its last user left), or a new one. */
    public ByteBuffer take() {
        synchronized (this) {
            ByteBuffer b = free.poll();
            if (b != null) {
                return b.clear();
            }
        }
        return ByteBuffer.allocateDirect(capacity);
    }

    /** Gives {@code buffer} back (one of {@link #take}'s, no longer used by anyone); kept if there is room. */
    public void give(ByteBuffer buffer) {
        if (!buffer.isDirect() || buffer.capacity() != capacity) {
            throw new IllegalArgumentException("a buffer of " + buffer.capacity() + " bytes" + (buffer.isDirect() ? ""
                    : " on the heap") + " (expected: a direct one of " + capacity + ", this pool's)");
        }
        synchronized (this) {
            if (free.size() < keep) {
                free.push(buffer);
            }
        }
    }

    /** Buffers kept now. */
    public synchronized int kept() {
        return free.size();
    }
}
