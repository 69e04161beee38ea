package dev.arrayd.devices.api;

import java.util.Objects;

/**
 * Stable id of a device: {@code <backend>:<ordinal>}, e.g. {@code cpu:0}, {@code opencl:1}; a peer daemon's
 * device carries the peer's name in front: {@code <peer>/<backend>:<ordinal>}, e.g. {@code gpu-node-1/cuda:0}.
 * Ordinals are dense per backend in the order the backend opened its devices (on that peer).
 *
 * @param peer empty for this daemon's own devices; else the peer's name (lower-case letters, digits, '-' and
 *             '.', starting with a letter or digit, at most 63 characters)
 */
public record DeviceId(String backend, int ordinal, String peer) implements Comparable<DeviceId> {

    private static final int MAX_PEER = 63;

    public DeviceId {
        Objects.requireNonNull(backend, "backend");
        Objects.requireNonNull(peer, "peer");
        if (backend.isEmpty() || !backend.chars().allMatch(c -> c >= 'a' && c <= 'z')) {
            throw new IllegalArgumentException("backend: " + Quote.string(backend) + " (expected: lower-case letters)");
        }
        if (ordinal < 0) {
            throw new IllegalArgumentException("ordinal: " + ordinal + " (expected: >= 0)");
        }
        if (!peer.isEmpty() && !isPeerName(peer)) {
            throw new IllegalArgumentException("peer: " + Quote.string(peer) + " (expected: lower-case letters, digits, "
                    + "'-' and '.', starting with a letter or digit, at most " + MAX_PEER + " characters)");
        }
    }

    /** One of this daemon's own devices. */
    public DeviceId(String backend, int ordinal) {
        this(backend, ordinal, "");
    }

    /** Whether {@code name} can name a peer. */
    public static boolean isPeerName(String name) {
        if (name.isEmpty() || name.length() > MAX_PEER || !Character.isLetterOrDigit(name.charAt(0))) {
            return false;
        }
        return name.chars().allMatch(c -> c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.');
    }

    /** The same device as seen from another daemon that reaches this one as peer {@code peerName}. */
    public DeviceId onPeer(String peerName) {
        return new DeviceId(backend, ordinal, peerName);
    }

    /** Parses {@code cpu:0} or {@code gpu-node-1/cuda:0}. */
    public static DeviceId parse(String text) {
        int slash = text.indexOf('/');
        String local = slash < 0 ? text : text.substring(slash + 1);
        int colon = local.indexOf(':');
        if (colon <= 0 || colon == local.length() - 1 || slash == 0) {
            throw new IllegalArgumentException("device id: " + Quote.string(text)
                    + " (expected: <backend>:<ordinal>, e.g. cpu:0, or <peer>/<backend>:<ordinal>)");
        }
        try {
            return new DeviceId(local.substring(0, colon), Integer.parseInt(local.substring(colon + 1)),
                    slash < 0 ? "" : text.substring(0, slash));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("device id: " + Quote.string(text)
                    + " (expected: <backend>:<ordinal>, e.g. cpu:0, or <peer>/<backend>:<ordinal>)");
        }
    }

    @Override
    public int compareTo(DeviceId o) {
        int c = peer.compareTo(o.peer);
        if (c != 0) {
            return c;
        }
        c = backend.compareTo(o.backend);
        return c != 0 ? c : Integer.compare(ordinal, o.ordinal);
    }

    @Override
    public String toString() {
        return peer.isEmpty() ? backend + ":" + ordinal : peer + "/" + backend + ":" + ordinal;
    }
}
