package dev.arrayd.client;

import java.util.Objects;

/**
 * Optional settings of a new buffer. Immutable; start from {@link #defaults()}.
 *
 * @param device   device of its first replica; empty (the default) = the daemon's first device (commands on
 *                 other devices get replicas there, moved automatically)
 * @param zeroInit zero the buffer before first use; default {@code false} (contents unspecified)
 * @param label    free-form label for the daemon's logs; default empty
 * @param mode     memory mode; default {@link MemoryMode#DEVICE}
 * @param perStream DEVICE buffers only: each stream that uses it gets its own instance, zeroed on first use
 *                  (PER_STREAM sharing); default {@code false} (one array shared by all streams)
 * @param padding  a padded buffer's padding, one pair per axis; default null (none)
 */
public record BufferOptions(String device, boolean zeroInit, String label, MemoryMode mode, boolean perStream,
                            Padding padding) {
    private static final BufferOptions DEFAULTS = new BufferOptions("", false, "", MemoryMode.DEVICE, false, null);

    public BufferOptions {
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(label, "label");
        Objects.requireNonNull(mode, "mode");
    }

    public BufferOptions(String device, boolean zeroInit, String label, MemoryMode mode, boolean perStream) {
        this(device, zeroInit, label, mode, perStream, null);
    }

    public BufferOptions(String device, boolean zeroInit, String label) {
        this(device, zeroInit, label, MemoryMode.DEVICE, false);
    }

    /** A padded buffer: {@code padding}'s elements around its dims, holding its value ({@link Padding}). */
    public BufferOptions padding(Padding padding) {
        return new BufferOptions(device, zeroInit, label, mode, perStream, padding);
    }

    public BufferOptions(String device, boolean zeroInit, String label, MemoryMode mode) {
        this(device, zeroInit, label, mode, false);
    }

    public BufferOptions mode(MemoryMode mode) {
        return new BufferOptions(device, zeroInit, label, mode, perStream, padding);
    }

    /** Each stream its own instance of the buffer (PER_STREAM sharing), or one shared array. */
    public BufferOptions perStream(boolean perStream) {
        return new BufferOptions(device, zeroInit, label, mode, perStream, padding);
    }

    /** The defaults: first device, no zeroing, no label. */
    public static BufferOptions defaults() {
        return DEFAULTS;
    }

    public BufferOptions device(String device) {
        return new BufferOptions(device, zeroInit, label, mode, perStream, padding);
    }

    public BufferOptions zeroInit(boolean zeroInit) {
        return new BufferOptions(device, zeroInit, label, mode, perStream, padding);
    }

    public BufferOptions label(String label) {
        return new BufferOptions(device, zeroInit, label, mode, perStream, padding);
    }
}
