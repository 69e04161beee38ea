package dev.arrayd.client;

import java.util.List;
import java.util.Objects;

/**
 * A buffer of a session: a logical array of one dtype and shape in a device's memory. Valid only in the
 * session that created it (another session's handle is {@code NOT_FOUND} on the daemon).
 *
 * @param id        the daemon's buffer handle
 * @param dtype     element type
 * @param dims      extents, outermost first
 * @param sizeBytes size in bytes
 * @param device    id of the device that holds it
 */
public record BufferHandle(long id, DType dtype, List<Long> dims, long sizeBytes, String device) {
    public BufferHandle {
        Objects.requireNonNull(dtype, "dtype");
        Objects.requireNonNull(device, "device");
        dims = List.copyOf(dims);
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
