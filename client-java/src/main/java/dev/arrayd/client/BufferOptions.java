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
 */
public record BufferOptions(String device, boolean zeroInit, String label, MemoryMode mode, boolean perStream) {
    private static final BufferOptions DEFAULTS = new BufferOptions("", false, "", MemoryMode.DEVICE, false);

    public BufferOptions {
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(label, "label");
        Objects.requireNonNull(mode, "mode");
    }

    public BufferOptions(String device, boolean zeroInit, String label) {
        this(device, zeroInit, label, MemoryMode.DEVICE, false);
    }

    public BufferOptions(String device, boolean zeroInit, String label, MemoryMode mode) {
        this(device, zeroInit, label, mode, false);
    }

    public BufferOptions mode(MemoryMode mode) {
        return new BufferOptions(device, zeroInit, label, mode, perStream);
    }

    /** Each stream its own instance of the buffer (PER_STREAM sharing), or one shared array. */
    public BufferOptions perStream(boolean perStream) {
        return new BufferOptions(device, zeroInit, label, mode, perStream);
    }

    /** The defaults: first device, no zeroing, no label. */
    public static BufferOptions defaults() {
        return DEFAULTS;
    }

    public BufferOptions device(String device) {
        return new BufferOptions(device, zeroInit, label, mode, perStream);
    }

    public BufferOptions zeroInit(boolean zeroInit) {
        return new BufferOptions(device, zeroInit, label, mode, perStream);
    }

    public BufferOptions label(String label) {
        return new BufferOptions(device, zeroInit, label, mode, perStream);
    }
}
