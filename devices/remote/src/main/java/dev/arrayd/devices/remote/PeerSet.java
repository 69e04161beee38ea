package dev.arrayd.devices.remote;

import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.api.Quote;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Peers found by name: {@code dns:///host:port}, every address the host name resolves to (a Kubernetes headless
 * Service: one per ready pod) is a daemon listening on {@code port}. Each member is named by its address's own
 * name (reverse lookup; in Kubernetes a StatefulSet pod's is {@code <pod>.<service>.<namespace>.svc…}, so the
 * member is called after its pod), its first label; an address without a name is called after the address
 * ({@code 10-0-0-7}).
 *
 * @param host the name to resolve
 * @param port the port of every member
 */
public record PeerSet(String host, int port) {

    /** The prefix of a set in {@code --peers}. */
    static final String SCHEME = "dns:///";

    public PeerSet {
        if (host.isBlank() || port < 1 || port > 65535) {
            throw new IllegalArgumentException("peer set: " + Quote.string(host + ":" + port)
                    + " (expected: dns:///host:port with a port of 1 to 65535)");
        }
    }

    /** Whether {@code text} (one entry of {@code --peers}) names a set. */
    static boolean isSet(String text) {
        return text.strip().startsWith(SCHEME);
    }

    /** Parses {@code dns:///host:port}. */
    static PeerSet parse(String text) {
        String t = text.strip();
        String rest = t.substring(SCHEME.length());
        int colon = rest.lastIndexOf(':');
        if (!t.startsWith(SCHEME) || colon <= 0 || rest.contains("/")) {
            throw new IllegalArgumentException("peer set: " + Quote.string(t) + " (expected: dns:///host:port)");
        }
        int port;
        try {
            port = Integer.parseInt(rest.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("peer set: " + Quote.string(t) + " (expected: dns:///host:port)");
        }
        return new PeerSet(rest.substring(0, colon).replace("[", "").replace("]", ""), port);
    }

    /** The addresses {@link #host} resolves to now (empty when it resolves to none). */
    List<InetAddress> resolve() {
        try {
            return List.of(InetAddress.getAllByName(host));
        } catch (UnknownHostException e) {
            return List.of();
        }
    }

    /** The member at {@code address}: named after its address's name (or the address), reached at it. */
    PeerAddress member(InetAddress address) {
        return new PeerAddress(memberName(address), target(address));
    }

    /** The target of the member at {@code address} ({@code ip:port}; no lookup). */
    String target(InetAddress address) {
        String ip = address.getHostAddress();
        return (address instanceof Inet6Address ? "[" + ip + "]" : ip) + ":" + port;
    }

    /** The first label of {@code address}'s name, lower-cased; the address itself ('-' for '.' and ':') without one. */
    static String memberName(InetAddress address) {
        String ip = address.getHostAddress();
        String name = InetAddress.ofLiteral(ip).getCanonicalHostName(); // a reverse lookup; the address when none
        String label = name.equals(ip) ? ip.replaceAll("[.:%]", "-") : name.split("\\.", 2)[0];
        label = label.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9.-]", "-");
        if (label.length() > 63) {
            label = label.substring(0, 63);
        }
        return DeviceId.isPeerName(label) ? label : ip.replaceAll("[.:%]", "-");
    }

    /** The members of {@code addresses}, one per address. */
    List<PeerAddress> members(List<InetAddress> addresses) {
        List<PeerAddress> out = new ArrayList<>();
        for (InetAddress a : addresses) {
            out.add(member(a));
        }
        return out;
    }

    @Override
    public String toString() {
        return SCHEME + host + ":" + port;
    }
}
