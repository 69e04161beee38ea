package dev.arrayd.client;

import java.util.Objects;

/**
 * Optional settings of a new buffer. Immutable; start from {@link #defaults()}.
 *
 * @param device   device that holds the buffer; empty (the default) = the daemon's first device
 * @param zeroInit zero the buffer before first use; default {@code false} (contents unspecified)
 * @param label    free-form label for the daemon's logs; default empty
 */
public record BufferOptions(String device, boolean zeroInit, String label) {
    private static final BufferOptions DEFAULTS = new BufferOptions("", false, "");

    public BufferOptions {
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(label, "label");
    }

    /** The defaults: first device, no zeroing, no label. */
    public static BufferOptions defaults() {
        return DEFAULTS;
    }

    public BufferOptions device(String device) {
        return new BufferOptions(device, zeroInit, label);
    }

    public BufferOptions zeroInit(boolean zeroInit) {
        return new BufferOptions(device, zeroInit, label);
    }

    public BufferOptions label(String label) {
        return new BufferOptions(device, zeroInit, label);
    }
}
