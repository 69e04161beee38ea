package dev.arrayd.devices.remote;

import dev.arrayd.client.ArraydClient;
import dev.arrayd.client.ArraydCommandException;
import dev.arrayd.client.DeviceInfo;
import dev.arrayd.client.Session;
import dev.arrayd.client.SessionOptions;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.support.GuardedBy;
import io.grpc.Channel;
import io.grpc.ChannelCredentials;
import io.grpc.TlsChannelCredentials;
import io.grpc.ClientInterceptors;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This daemon's connection to one peer daemon: a client and one session on it, through which every command for
 * the peer's devices goes (batched on the session stream). A link that fails is lost as a whole: its session's
 * slabs, streams and kernels are gone with it (the peer may have restarted), so what lived only there is lost.
 * The next use, or the backend's probe, connects again with a new session: a new {@link Connection#generation()}.
 */
final class PeerLink implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(PeerLink.class);

    /**
     * One connected session on the peer; everything made through it is valid while it is the link's current one.
     * {@code channel} carries the link's token, for the calls the client has no method for (sharing, fetches);
     * {@code bulk} holds the way to the peer's bulk port once a read has looked for it.
     */
    record Connection(int generation, ArraydClient client, Session session, Channel channel,
            Map<String, Long> opened, BulkLink.Slot bulk) {}

    /** Where the peer is: its target changes when a set's member comes back at a new address. */
    private volatile PeerAddress address;
    private final RemoteOptions options;
    private final List<Runnable> watchers = new CopyOnWriteArrayList<>();
    private final Object lock = new Object();
    private volatile Connection current;
    @GuardedBy("lock")
    private int generations;
    @GuardedBy("lock")
    private String downReason = "not connected yet";
    @GuardedBy("lock")
    private boolean closed;
    /** When the last connection attempt failed: commands fail at once until the probe interval has passed. */
    @GuardedBy("lock")
    private long failedAtNanos;
    @GuardedBy("lock")
    private boolean failedOnce;

    /**
     * Where completions of this link's commands are reported: never a client thread, since what a completion
     * starts (the next command of a stream) may wait for the peer's answer to a call, which a client thread
     * delivers.
     */
    private final java.util.concurrent.Executor completions;
    private final EventLoopGroup eventLoop;

    PeerLink(PeerAddress address, RemoteOptions options, java.util.concurrent.Executor completions,
            EventLoopGroup eventLoop) {
        this.address = address;
        this.options = options;
        this.completions = completions;
        this.eventLoop = eventLoop;
    }

    java.util.concurrent.Executor completions() {
        return completions;
    }

    String name() {
        return address.name();
    }

    String target() {
        return address.target();
    }

    RemoteOptions options() {
        return options;
    }

    /** Bytes of the transfer timed when the link's devices open. */
    static final int MEASURE_BYTES = 4 << 20;

    /** Measured nanoseconds per byte of a write to the peer (NaN until measured). */
    private volatile double nanosPerByte = Double.NaN;

    double nanosPerByte() {
        return nanosPerByte;
    }

    /**
     * Times writes of {@link #MEASURE_BYTES} into a scratch buffer on {@code device} of the peer (the second of
     * two, the first warming the path up): what moving data to the peer costs per byte, network included.
     */
    void measure(String device) {
        Connection c = connection();
        var b = await(c, c.session().createBuffer(dev.arrayd.client.DType.U8, new long[] {MEASURE_BYTES},
                new dev.arrayd.client.BufferOptions(device, false, "link measurement")));
        try {
            byte[] data = new byte[MEASURE_BYTES];
            long best = Long.MAX_VALUE;
            for (int i = 0; i < 2; i++) {
                long t0 = System.nanoTime();
                await(c, c.session().write(b, data).future());
                best = Math.min(best, System.nanoTime() - t0);
            }
            nanosPerByte = (double) best / MEASURE_BYTES;
            log.info("peer {}: writes at {} MB/s", name(), String.format(java.util.Locale.ROOT, "%.0f", 1e3 / nanosPerByte));
        } finally {
            c.session().destroy(b);
        }
    }

    /** Peers this one could not fetch from (their copies to it are staged through this daemon). */
    private final java.util.Set<String> stagedFrom = ConcurrentHashMap.newKeySet();

    /** Records that copies from peer {@code source} to this one are staged; true the first time. */
    boolean stagesFrom(String source) {
        return stagedFrom.add(source);
    }

    /**
     * Reaches the peer at {@code target} from now on, if the link is down (a live link keeps its connection); the
     * next use or probe connects there at once. True if the target changed.
     */
    boolean retarget(String target) {
        synchronized (lock) {
            if (current != null || closed || address.target().equals(target)) {
                return false;
            }
            address = new PeerAddress(address.name(), target);
            failedOnce = false;
            return true;
        }
    }

    /** Whether the link has a live session now. */
    boolean isUp() {
        return current != null;
    }

    /** Why the link is down; empty while it is up. */
    String downReason() {
        synchronized (lock) {
            return current != null ? "" : downReason;
        }
    }

    /** Runs {@code r} after every change between up and down. */
    void watch(Runnable r) {
        watchers.add(r);
    }

    /** The live connection, connecting first when there is none. */
    Connection connection() {
        Connection c = current;
        if (c != null) {
            return c;
        }
        synchronized (lock) {
            if (current != null) {
                return current;
            }
            if (closed) {
                throw unavailable("closed");
            }
            if (failedOnce && System.nanoTime() - failedAtNanos < options.probeInterval().toNanos()) {
                throw unavailable(downReason);
            }
            return connectLocked();
        }
    }

    /** The live connection, or null: never connects. */
    Connection currentOrNull() {
        return current;
    }

    /** The peer's devices, through the live connection. */
    List<DeviceInfo> devices() {
        Connection c = connection();
        return await(c, c.client().devices());
    }

    /** Checks a live link (a call with the call timeout), or tries a lost one again. */
    void probe() {
        Connection c = current;
        try {
            if (c == null) {
                connection();
            } else {
                await(c, c.client().devices());
            }
        } catch (ArraydException e) {
            log.debug("peer {} probe: {}", name(), e.getMessage());
        }
    }

    @GuardedBy("lock")
    private Connection connectLocked() {
        ArraydClient client = null;
        try {
            // a channel on the link's own event loop: the server's handlers run on the shared transport threads and
            // may wait for a peer's answer (a slab, a stream), which must not need one of those threads to arrive
            ManagedChannel channel = new DetachedChannel(NettyChannelBuilder.forTarget(address.target(), credentials())
                    .eventLoopGroup(eventLoop).channelType(NioSocketChannel.class).directExecutor()
                    .maxInboundMessageSize(ArraydClient.DEFAULT_MAX_MESSAGE_BYTES).build());
            var b = ArraydClient.builder().channel(channel);
            Channel calls = channel;
            if (!options.token().isEmpty()) {
                b.bearerToken(options.token());
                Metadata auth = new Metadata();
                auth.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + options.token());
                calls = ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(auth));
            }
            client = b.build();
            // this daemon keeps the failure rules: on the peer, waits only order (a marker's wait names its stream's
            // last command, not necessarily the one waited for) and a failure does not spread to the other buffers
            // of a slab, which the peer sees as one buffer
            Session s = client.openSession(options.clientName(),
                    SessionOptions.defaults().dependenciesOnlyOrder(true))
                    .get(options.callTimeout().toMillis(), TimeUnit.MILLISECONDS);
            Connection c = new Connection(++generations, client, s, calls, new ConcurrentHashMap<>(),
                    new BulkLink.Slot());
            current = c;
            log.info("peer {} ({}) connected (session {})", name(), target(), s.id());
            watchers.forEach(Runnable::run);
            return c;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            closeQuietly(client);
            throw unavailable("interrupted while connecting");
        } catch (ExecutionException | TimeoutException | java.io.IOException | RuntimeException e) {
            closeQuietly(client);
            Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
            downReason = describe(cause);
            failedOnce = true;
            failedAtNanos = System.nanoTime();
            Status.Code code = cause instanceof ArraydCommandException ace ? ace.code() : Status.fromThrowable(cause).getCode();
            if (code == Status.Code.UNAUTHENTICATED || code == Status.Code.PERMISSION_DENIED) {
                // not a matter of time: the peer refuses this daemon's token
                throw new ArraydException(ErrorCode.valueOf(code.name()), "peer " + name() + " (" + target()
                        + ") refused this daemon: " + downReason + " (see peer-token-file)");
            }
            if (tlsFailure(cause)) {
                // nor is a TLS handshake that fails (a certificate the other side does not accept)
                throw new ArraydException(ErrorCode.UNAUTHENTICATED, "peer " + name() + " (" + target()
                        + ") refused this daemon: TLS handshake failed: " + downReason + " (see peer-tls-ca, tls-cert)");
            }
            throw unavailable(downReason);
        }
    }

    /** Plaintext, or TLS trusting the configured CA (with this daemon's certificate when it has one). */
    private ChannelCredentials credentials() throws java.io.IOException {
        RemoteOptions.Tls tls = options.tls();
        if (tls == null) {
            return InsecureChannelCredentials.create();
        }
        var b = TlsChannelCredentials.newBuilder().trustManager(tls.ca().toFile());
        if (tls.cert() != null) {
            b.keyManager(tls.cert().toFile(), tls.key().toFile());
        }
        return b.build();
    }

    /** {@code c} failed as a whole (the peer went away): the link is down until it connects again. */
    void lost(Connection c, String reason) {
        synchronized (lock) {
            if (current != c) {
                return;
            }
            current = null;
            downReason = reason;
        }
        log.warn("peer {} ({}) lost: {}", name(), target(), reason);
        c.bulk().close();
        closeQuietly(c.client());
        watchers.forEach(Runnable::run);
    }

    /** Waits for a call through {@code c}; its failure as an {@link ArraydException} naming the peer. */
    <T> T await(Connection c, CompletableFuture<T> call) {
        try {
            return call.get(options.callTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw unavailable("interrupted");
        } catch (TimeoutException e) {
            call.cancel(false);
            lost(c, "no answer in " + options.callTimeout().toSeconds() + " s");
            throw unavailable("no answer in " + options.callTimeout().toSeconds() + " s");
        } catch (ExecutionException e) {
            throw failure(c, e.getCause());
        }
    }

    /**
     * A failure a peer reported, or the failure to reach it, as an {@link ArraydException} with the same code and a
     * message naming the peer. An unreachable peer loses the link ({@code c}).
     */
    ArraydException failure(Connection c, Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        Status status = t instanceof ArraydCommandException ace ? ace.status()
                : t instanceof StatusRuntimeException sre ? sre.getStatus() : null;
        if (t instanceof ArraydException ae) {
            return ae;
        }
        if (status == null) {
            return new ArraydException(ErrorCode.INTERNAL, "peer " + name() + ": " + describe(t));
        }
        String message = status.getDescription() == null ? status.getCode().name() : status.getDescription();
        if (status.getCause() != null) {
            // a status made in this process (a response that failed to parse, a listener that threw) says why only
            // in its cause
            String why = describe(status.getCause());
            message += " (" + (why.length() > 200 ? why.substring(0, 200) + "…" : why) + ")";
        }
        if (status.getCode() == Status.Code.UNAVAILABLE && c != null) {
            lost(c, message);
            return unavailable(message);
        }
        return new ArraydException(ErrorCode.valueOf(status.getCode().name()), "peer " + name() + ": " + message);
    }

    /** Whether {@code t} (or a cause of it) is a failed TLS handshake. */
    static boolean tlsFailure(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof javax.net.ssl.SSLException) {
                return true;
            }
        }
        return false;
    }

    ArraydException unavailable(String reason) {
        return new ArraydException(ErrorCode.UNAVAILABLE, "peer " + name() + " (" + target() + ") unreachable: " + reason);
    }

    private static String describe(Throwable t) {
        if (t instanceof StatusRuntimeException sre) {
            Status s = sre.getStatus();
            return s.getCode() + (s.getDescription() == null ? "" : ": " + s.getDescription());
        }
        if (t instanceof ArraydCommandException ace) {
            return ace.code() + ": " + ace.status().getDescription();
        }
        return t.getClass().getSimpleName() + (t.getMessage() == null ? "" : ": " + t.getMessage());
    }

    private static void closeQuietly(ArraydClient client) {
        if (client == null) {
            return;
        }
        Thread.ofVirtual().name("arrayd-peer-close").start(() -> {
            try {
                client.close();
            } catch (RuntimeException e) {
                log.debug("closing a lost peer client", e);
            }
        });
    }

    @Override
    public void close() {
        Connection c;
        synchronized (lock) {
            closed = true;
            c = current;
            current = null;
            downReason = "closed";
        }
        if (c != null) {
            c.bulk().close();
            try {
                c.session().close();
            } catch (RuntimeException e) {
                log.debug("closing the session on peer {}", name(), e);
            }
            c.client().close();
        }
    }
}
