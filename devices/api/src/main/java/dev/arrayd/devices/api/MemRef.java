package dev.arrayd.devices.api;

/**
 * A range of device memory addressed as {@code (poolId, offset)} in one of the device's slabs,
 * never by a native pointer: stable, comparable and meaningful in logs (OCANNL's slab addressing).
 */
public record MemRef(int poolId, long offset, long bytes) {

    public MemRef {
        if (offset < 0 || bytes < 0) {
            throw new IllegalArgumentException("MemRef(pool " + poolId + ", offset " + offset + ", bytes " + bytes
                    + ") (expected: offset >= 0, bytes >= 0)");
        }
    }

    /** A sub-range of this one. */
    public MemRef slice(long relOffset, long length) {
        if (relOffset < 0 || length < 0 || relOffset + length > bytes) {
            throw new IllegalArgumentException("slice [" + relOffset + ", +" + length + ") of " + this);
        }
        return new MemRef(poolId, offset + relOffset, length);
    }

    @Override
    public String toString() {
        return "pool" + poolId + "+" + offset + "[" + bytes + "]";
    }
}
