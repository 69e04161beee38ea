package dev.arrayd.scheduler;

import java.util.Locale;

/** Whether a stream shares its native stream with other sessions' default streams or owns one. */
public enum StreamKind {
    /** A session's default stream on a device, carried by one of the device's shared native streams. */
    SHARED,
    /** A stream made by {@code CreateStream}, with its own native stream. */
    DEDICATED;

    private final String label = name().toLowerCase(Locale.ROOT);

    public String label() {
        return label;
    }
}
