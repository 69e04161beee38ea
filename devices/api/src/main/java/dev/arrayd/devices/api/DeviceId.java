package dev.arrayd.devices.api;

import java.util.Objects;

/**
 * Stable id of a device: {@code <backend>:<ordinal>}, e.g. {@code cpu:0}, {@code opencl:1}.
 * Ordinals are dense per backend in the order the backend opened its devices.
 */
public record DeviceId(String backend, int ordinal) implements Comparable<DeviceId> {

    public DeviceId {
        Objects.requireNonNull(backend, "backend");
        if (backend.isEmpty() || !backend.chars().allMatch(c -> c >= 'a' && c <= 'z')) {
            throw new IllegalArgumentException("backend: " + Quote.string(backend) + " (expected: lower-case letters)");
        }
        if (ordinal < 0) {
            throw new IllegalArgumentException("ordinal: " + ordinal + " (expected: >= 0)");
        }
    }

    /** Parses {@code cpu:0}. */
    public static DeviceId parse(String text) {
        int colon = text.indexOf(':');
        if (colon <= 0 || colon == text.length() - 1) {
            throw new IllegalArgumentException("device id: " + Quote.string(text) + " (expected: <backend>:<ordinal>, e.g. cpu:0)");
        }
        try {
            return new DeviceId(text.substring(0, colon), Integer.parseInt(text.substring(colon + 1)));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("device id: " + Quote.string(text) + " (expected: <backend>:<ordinal>, e.g. cpu:0)");
        }
    }

    @Override
    public int compareTo(DeviceId o) {
        int c = backend.compareTo(o.backend);
        return c != 0 ? c : Integer.compare(ordinal, o.ordinal);
    }

    @Override
    public String toString() {
        return backend + ":" + ordinal;
    }
}
