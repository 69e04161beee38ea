package dev.arrayd.devices.api.support;

import java.util.ArrayDeque;

/**
 * Arrays of one size for bulk transfers, kept for the next transfer instead of left to the collector: a large array
 * costs a pass of zeroing when made and a collection when dropped, as much as the copy it is made for. At most
 * {@code keep} arrays are kept; {@link #take} makes a new one when none is free, so a burst is never held back.
 * Thread-safe.
 */
public final class ByteArrayPool {

    private final int size;
    private final int keep;
    @GuardedBy("this")
    private final ArrayDeque<byte[]> free = new ArrayDeque<>();

    /**
     * @param size bytes of every array
     * @param keep most arrays kept between uses
     */
    public ByteArrayPool(int size, int keep) {
        if (size <= 0 || keep < 0) {
            throw new IllegalArgumentException("size " + size + ", keep " + keep + " (expected: size > 0, keep >= 0)");
        }
        this.size = size;
        this.keep = keep;
    }

    /** Bytes of every array. */
    public int size() {
        return size;
    }

    /** A free array (its contents are what its last user left), or a new one. */
    public byte[] take() {
        synchronized (this) {
            byte[] a = free.poll();
            if (a != null) {
                return a;
            }
        }
        return new byte[size];
    }

    /** Gives {@code array} back (one of {@link #take}'s, no longer used by anyone); kept if there is room. */
    public void give(byte[] array) {
        if (array.length != size) {
            throw new IllegalArgumentException("array of " + array.length + " bytes (expected: " + size + ", this pool's)");
        }
        synchronized (this) {
            if (free.size() < keep) {
                free.push(array);
            }
        }
    }

    /** Arrays kept now. */
    public synchronized int kept() {
        return free.size();
    }
}
