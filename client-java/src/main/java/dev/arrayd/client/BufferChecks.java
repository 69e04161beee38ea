package dev.arrayd.client;

/**
 * The checks a client makes of a buffer argument before anything is sent, each an IllegalArgumentException that
 * names the argument and the buffer: its dtype against a typed array, a byte range against its size.
 */
final class BufferChecks {

    private BufferChecks() {}

    /** A typed write or read of {@code buffer} needs a buffer of {@code expected}. */
    static void dtype(BufferHandle buffer, DType expected, String what, String value) {
        if (buffer.dtype() != expected) {
            throw new IllegalArgumentException(what + ": " + value + " (expected: a buffer of type " + expected
                    + "; buffer " + buffer.id() + " is " + buffer.dtype() + ")");
        }
    }

    /** Checks that [offset, offset + size) lies within the buffer. */
    static void range(BufferHandle buffer, String offsetName, long offset, String sizeName, long size) {
        range(buffer, offsetName, offset, sizeName, size, false);
    }

    /** {@code [offset, +size)} within the bytes a command addresses: a padded buffer's interior unless {@code whole}. */
    static void range(BufferHandle buffer, String offsetName, long offset, String sizeName, long size,
            boolean whole) {
        long bytes = addressable(buffer, whole);
        if (offset < 0 || offset > bytes) {
            throw new IllegalArgumentException(offsetName + ": " + offset + " (expected: 0 to " + bytes
                    + ", the size of buffer " + buffer.id() + ")");
        }
        if (size < 0 || size > bytes - offset) {
            throw new IllegalArgumentException(sizeName + ": " + size + " bytes at " + offsetName + " " + offset
                    + " (expected: <= " + (bytes - offset) + ", the rest of buffer " + buffer.id() + ")");
        }
    }

    /** The bytes a command addresses of {@code buffer}: its memory when {@code whole}, else its elements. */
    static long addressable(BufferHandle buffer, boolean whole) {
        return whole ? buffer.sizeBytes() : buffer.dataBytes();
    }
}
