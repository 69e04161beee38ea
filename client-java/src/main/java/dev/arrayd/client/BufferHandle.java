package dev.arrayd.client;

import java.util.List;
import java.util.Objects;

/**
 * A buffer of a session: a logical array of one dtype and shape in a device's memory. Valid only in the
 * session that created it (another session's handle is {@code NOT_FOUND} on the daemon).
 *
 * @param id        the daemon's buffer handle
 * @param dtype     element type
 * @param dims      extents, outermost first (a padded buffer's interior)
 * @param sizeBytes size of its memory in bytes, padding included
 * @param device    id of the device that holds it
 * @param padding   a padded buffer's padding, else null
 */
public record BufferHandle(long id, DType dtype, List<Long> dims, long sizeBytes, String device, Padding padding) {
    public BufferHandle {
        Objects.requireNonNull(dtype, "dtype");
        Objects.requireNonNull(device, "device");
        dims = List.copyOf(dims);
    }

    public BufferHandle(long id, DType dtype, List<Long> dims, long sizeBytes, String device) {
        this(id, dtype, dims, sizeBytes, device, null);
    }

    /** Bytes of its elements: what writes, reads, copies and fills address (a padded buffer's interior). */
    public long dataBytes() {
        return elementCount() * dtype.byteSize();
    }

    /**
     * The position of the element at {@code index} (one entry per axis, each in range) among its elements,
     * row-major: what {@link Session#setValue} and {@link Session#getValue} address.
     */
    public long linearIndex(long... index) {
        if (index.length != dims.size()) {
            throw new IllegalArgumentException("index: " + index.length + " entries (expected: " + dims.size()
                    + ", one per axis of " + dims + ")");
        }
        long at = 0;
        for (int i = 0; i < index.length; i++) {
            long d = dims.get(i);
            if (index[i] < 0 || index[i] >= d) {
                throw new IllegalArgumentException("index[" + i + "]: " + index[i] + " (expected: 0 to " + (d - 1) + ")");
            }
            at = at * d + index[i];
        }
        return at;
    }

    /** Number of elements: the product of {@link #dims()}. */
    public long elementCount() {
        long n = 1;
        for (long d : dims) {
            n *= d;
        }
        return n;
    }
}
