package dev.arrayd.devices.remote;

import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.api.Quote;
import java.util.Locale;

/**
 * One peer daemon: the name its devices carry here ({@code <name>/cuda:0}) and its gRPC target.
 *
 * @param name   a peer name ({@link DeviceId#isPeerName})
 * @param target {@code host:port}, or {@code unix:///path}
 */
public record PeerAddress(String name, String target) {

    public PeerAddress {
        if (!DeviceId.isPeerName(name)) {
            throw new IllegalArgumentException("peer name: " + Quote.string(name) + " (expected: lower-case letters, "
                    + "digits, '-' and '.', starting with a letter or digit, at most 63 characters)");
        }
        if (target.isBlank()) {
            throw new IllegalArgumentException("peer " + name + ": empty target (expected: host:port)");
        }
    }

    /**
     * Parses {@code name=host:port} or {@code host:port}; without a name the peer is called after its host and
     * port ({@code 10.0.0.7:7700} is {@code 10.0.0.7-7700}).
     */
    public static PeerAddress parse(String text) {
        String t = text.trim();
        if (t.contains("://")) {
            throw new IllegalArgumentException("peer: " + Quote.string(t) + " (expected: host:port or name=host:port of one "
                    + "daemon, or dns:///host:port for every address a name resolves to)");
        }
        int eq = t.indexOf('=');
        if (eq >= 0) {
            return new PeerAddress(t.substring(0, eq).trim(), t.substring(eq + 1).trim());
        }
        int colon = t.lastIndexOf(':');
        if (colon <= 0 || colon == t.length() - 1) {
            throw new IllegalArgumentException("peer: " + Quote.string(t) + " (expected: host:port or name=host:port)");
        }
        String host = t.substring(0, colon).replace("[", "").replace("]", "").toLowerCase(Locale.ROOT);
        String name = host.replaceAll("[^a-z0-9.-]", "-") + "-" + t.substring(colon + 1);
        return new PeerAddress(name, t);
    }
}
