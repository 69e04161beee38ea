package dev.arrayd.devices.remote;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * How this daemon reaches its peers.
 *
 * @param peers          the peers, each named once
 * @param sets           peers found by name ({@code dns:///host:port}): every address is one
 * @param self           this daemon's own name (a pod's, its HOSTNAME), skipped among peers and sets' members; null
 * @param token          the bearer token presented to every peer (empty: none, for peers without authentication)
 * @param clientName     how this daemon names itself in its sessions on the peers
 * @param callTimeout    longest wait for a peer's answer to a synchronous call (a slab, a stream, a compile)
 * @param probeInterval  how often an idle link is checked, and a lost one tried again
 * @param startWait      how long opening the devices waits for a peer that is not up yet
 * @param tls            TLS to the peers, or null for plaintext
 */
public record RemoteOptions(List<PeerAddress> peers, List<PeerSet> sets, String self, String token, String clientName,
        Duration callTimeout, Duration probeInterval, Duration startWait, Tls tls) {

    /**
     * TLS to the peers: trust {@code ca} (PEM); present {@code cert} / {@code key} (PEM; both or neither) as this
     * daemon's client certificate, for peers that require one.
     */
    public record Tls(java.nio.file.Path ca, java.nio.file.Path cert, java.nio.file.Path key) {
        public Tls {
            java.util.Objects.requireNonNull(ca, "ca");
            if ((cert == null) != (key == null)) {
                throw new IllegalArgumentException("peer TLS: a certificate and a key, or neither");
            }
        }
    }

    public RemoteOptions {
        peers = List.copyOf(peers);
        sets = List.copyOf(sets);
        Set<String> names = new HashSet<>();
        for (PeerAddress p : peers) {
            if (!names.add(p.name())) {
                throw new IllegalArgumentException("peers: " + p.name() + " named twice (expected: one entry per peer)");
            }
        }
    }

    /** {@code --peers}: a comma-separated list of {@code [name=]host:port} and {@code dns:///host:port}. */
    public static RemoteOptions parse(String peers, String token, String clientName) {
        List<PeerAddress> out = new ArrayList<>();
        List<PeerSet> sets = new ArrayList<>();
        for (String part : peers.split(",")) {
            if (PeerSet.isSet(part)) {
                sets.add(PeerSet.parse(part));
            } else if (!part.isBlank()) {
                out.add(PeerAddress.parse(part));
            }
        }
        return new RemoteOptions(out, sets, null, token == null ? "" : token.strip(), clientName, Duration.ofSeconds(30),
                Duration.ofSeconds(1), Duration.ofSeconds(10), null);
    }

    /** Whether there is any peer to reach: one listed, or a set to resolve. */
    public boolean hasPeers() {
        return !peers.isEmpty() || !sets.isEmpty();
    }

    /**
     * These options for the daemon named {@code self} (a pod's name, its HOSTNAME): a pool's members share one
     * peers list, and each skips itself, among the peers listed and the sets' members. Null: unchanged.
     */
    public RemoteOptions without(String self) {
        if (self == null) {
            return this;
        }
        return new RemoteOptions(peers.stream().filter(p -> !p.name().equals(self)).toList(), sets, self, token,
                clientName, callTimeout, probeInterval, startWait, tls);
    }

    public RemoteOptions withProbeInterval(Duration interval) {
        return new RemoteOptions(peers, sets, self, token, clientName, callTimeout, interval, startWait, tls);
    }

    public RemoteOptions withTls(Tls t) {
        return new RemoteOptions(peers, sets, self, token, clientName, callTimeout, probeInterval, startWait, t);
    }
}
