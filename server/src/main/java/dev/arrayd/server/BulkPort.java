package dev.arrayd.server;

import dev.arrayd.devices.api.support.GuardedBy;
import dev.arrayd.devices.remote.BulkProtocol;
import dev.arrayd.scheduler.Scheduler;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.security.SecureRandom;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The bulk port: plain TCP beside the gRPC port, through which a peer daemon reads ranges of its session's buffers
 * ({@link BulkProtocol}) without gRPC's per-message work. A connection is let in only with the key that
 * {@code PeerService.OpenBulkLink} gave a session (over gRPC, so with that call's authentication), and reads only
 * that session's buffers, as its tenant. Each connection is served on a virtual thread of its own
 * ({@link BulkConnection}); at most {@link #MAX_CONNECTIONS} at once, and one that has not presented a key within
 * {@link BulkConnection#HELLO_MILLIS} is closed.
 */
final class BulkPort implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(BulkPort.class);
    private static final ThrottledLog tooMany = new ThrottledLog(log, java.util.concurrent.TimeUnit.SECONDS.toNanos(10));

    static final int MAX_CONNECTIONS = 256;

    /** What a key lets in: one session of one tenant. */
    record Grant(String tenant, String session) {}

    private final ServerSocketChannel listener;
    private final Scheduler scheduler;
    private final SessionRegistry sessions;
    private final SecureRandom random = new SecureRandom();
    private final Object lock = new Object();
    @GuardedBy("lock")
    private final Map<String, Grant> grants = new HashMap<>();
    @GuardedBy("lock")
    private final Map<String, byte[]> keyOfSession = new HashMap<>();
    @GuardedBy("lock")
    private final Set<SocketChannel> connections = new HashSet<>();
    @GuardedBy("lock")
    private boolean closed;
    private final Thread acceptor;
    /** Bytes of buffers sent. */
    final Counter sent;
    /** Connections closed without being served: no valid greeting, a request over the limit, too many. */
    final Counter refused;

    private BulkPort(ServerSocketChannel listener, Scheduler scheduler, SessionRegistry sessions, MeterRegistry meters) {
        this.listener = listener;
        this.scheduler = scheduler;
        this.sessions = sessions;
        this.acceptor = Thread.ofPlatform().daemon().name("arrayd-bulk-accept").unstarted(this::accept);
        this.sent = Counter.builder("arrayd.peer.bulk.sent").baseUnit("bytes")
                .description("Bytes of buffers sent through the bulk port").register(meters);
        this.refused = Counter.builder("arrayd.peer.bulk.refused")
                .description("Connections to the bulk port closed without being served").register(meters);
        Gauge.builder("arrayd.peer.bulk.connections", this, BulkPort::connections)
                .description("Connections to the bulk port open now").register(meters);
    }

    /** Listens on {@code bind}, port {@code port} (0: any free one); its meters go to {@code meters}. */
    static BulkPort open(InetAddress bind, int port, Scheduler scheduler, SessionRegistry sessions,
            MeterRegistry meters) {
        try {
            ServerSocketChannel ch = ServerSocketChannel.open();
            ch.bind(new InetSocketAddress(bind, port), MAX_CONNECTIONS);
            BulkPort p = new BulkPort(ch, scheduler, sessions, meters);
            p.acceptor.start();
            return p;
        } catch (IOException e) {
            throw new UncheckedIOException("peer-bulk-port " + port + " on " + bind.getHostAddress() + ": cannot listen", e);
        }
    }

    int port() {
        try {
            return ((InetSocketAddress) listener.getLocalAddress()).getPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The key of the session of {@code l}: made on the first call, forgotten when the session closes. */
    byte[] keyFor(SessionLease l) {
        String session = l.session.token();
        byte[] k;
        boolean made = false;
        synchronized (lock) {
            k = keyOfSession.get(session);
            if (k == null) {
                k = new byte[BulkProtocol.KEY_BYTES];
                random.nextBytes(k);
                keyOfSession.put(session, k);
                grants.put(HexFormat.of().formatHex(k), new Grant(l.tenantName(), session));
                made = true;
            }
        }
        if (made) {
            l.session.onClose(() -> forget(session)); // (run at once if it closed meanwhile)
        }
        return k.clone();
    }

    private void forget(String session) {
        synchronized (lock) {
            byte[] k = keyOfSession.remove(session);
            if (k != null) {
                grants.remove(HexFormat.of().formatHex(k));
            }
        }
    }

    /** Who {@code key} lets in, or null. */
    Grant grant(byte[] key) {
        synchronized (lock) {
            return grants.get(HexFormat.of().formatHex(key));
        }
    }

    Scheduler scheduler() {
        return scheduler;
    }

    SessionRegistry sessions() {
        return sessions;
    }

    /** Connections open now (tests). */
    int connections() {
        synchronized (lock) {
            return connections.size();
        }
    }

    private void accept() {
        while (true) {
            SocketChannel ch;
            try {
                ch = listener.accept();
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException e) {
                synchronized (lock) {
                    if (closed) {
                        return;
                    }
                }
                log.warn("bulk port: accept failed: {}", e.toString());
                continue;
            }
            boolean admitted;
            synchronized (lock) {
                admitted = !closed && connections.size() < MAX_CONNECTIONS;
                if (admitted) {
                    connections.add(ch);
                }
            }
            if (!admitted) {
                refused.increment();
                tooMany.warn("bulk port: closed a connection: " + MAX_CONNECTIONS + " are open already");
                closeQuietly(ch);
                continue;
            }
            Thread.ofVirtual().name("arrayd-bulk").start(() -> {
                try {
                    new BulkConnection(this, ch).serve();
                } finally {
                    synchronized (lock) {
                        connections.remove(ch);
                    }
                    closeQuietly(ch);
                }
            });
        }
    }

    static void closeQuietly(java.io.Closeable c) {
        try {
            c.close();
        } catch (IOException e) {
            // nothing left to do with it
        }
    }

    /** Stops listening and closes every connection (a read in progress ends when its download does). */
    @Override
    public void close() {
        List<SocketChannel> open;
        synchronized (lock) {
            closed = true;
            open = List.copyOf(connections);
        }
        closeQuietly(listener);
        open.forEach(BulkPort::closeQuietly);
    }
}
