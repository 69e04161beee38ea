package dev.arrayd.scheduler;

import dev.arrayd.devices.api.ArraydException;
import java.util.Locale;

/**
 * Priority class of a command. The device dispatcher serves the highest class that has ready work
 * first, and shares a class among sessions by weight (see {@link DeviceQueue}). A lower class is
 * never starved: after {@link DeviceQueue#STARVATION_LIMIT} dispatches in a row went to a higher
 * class while it waited, one dispatch goes to it.
 *
 * <p>Wire values ({@code arrayd.v1.Priority}): 0 = unspecified (the session's class), 1 = LOW,
 * 2 = NORMAL, 3 = HIGH.
 */
public enum Priority {
    HIGH, NORMAL, LOW;

    private final String label = name().toLowerCase(Locale.ROOT);

    public String label() {
        return label;
    }

    /** The class of a wire value; null for 0 (unspecified: the session's class). */
    public static Priority fromWire(int value) {
        return switch (value) {
            case 0 -> null;
            case 1 -> LOW;
            case 2 -> NORMAL;
            case 3 -> HIGH;
            default -> throw ArraydException.invalid("priority: " + value
                    + " (expected: 0 unspecified, 1 LOW, 2 NORMAL or 3 HIGH)");
        };
    }
}
