package dev.arrayd.client;

import java.util.Objects;

/**
 * A launch argument: {@code sizeBytes} bytes of a buffer's memory from {@code offsetBytes}, seen by the kernel as
 * an array of the parameter's dtype whatever the buffer's own. The offset is a multiple of the device's base
 * alignment ({@link DeviceInfo}), the size a positive multiple of the parameter's element size; the daemon
 * refuses others with INVALID_ARGUMENT, and a range past the buffer's end with OUT_OF_RANGE.
 */
public record BufferRange(BufferHandle buffer, long offsetBytes, long sizeBytes) {
    public BufferRange {
        Objects.requireNonNull(buffer, "buffer");
        if (offsetBytes < 0 || sizeBytes <= 0) {
            throw new IllegalArgumentException("range [" + offsetBytes + ", +" + sizeBytes + ") of " + buffer
                    + " (expected: offset >= 0, size > 0)");
        }
    }
}
