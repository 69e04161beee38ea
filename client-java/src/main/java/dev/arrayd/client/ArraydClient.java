package dev.arrayd.client;

import dev.arrayd.proto.v1.CloseSessionRequest;
import dev.arrayd.proto.v1.GetDeviceRequest;
import dev.arrayd.proto.v1.ListDevicesRequest;
import dev.arrayd.proto.v1.ListDevicesResponse;
import dev.arrayd.proto.v1.OpenSessionRequest;
import io.grpc.Channel;
import io.grpc.ChannelCredentials;
import io.grpc.ClientInterceptors;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.TlsChannelCredentials;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A connection to one arrayd daemon: device queries and sessions.
 *
 * <pre>{@code
 * try (ArraydClient client = ArraydClient.connect("127.0.0.1:7700");
 *      Session s = client.openSession("trainer-7").join()) {
 *     BufferHandle a = s.createBuffer(DType.F32, 1024).join();
 *     s.write(a, new float[1024]).future().join();
 * }
 * }</pre>
 *
 * <p><b>Threads.</b> The client is thread-safe. Its gRPC channel runs with a direct executor: responses
 * are handled, and futures completed, on the transport's event-loop threads, because every thread hop
 * costs tens of microseconds. Callbacks attached with {@code thenApply} / {@code thenAccept} therefore
 * run on a transport thread and must be short and never block; hop with {@code thenApplyAsync} (or
 * {@code thenApplyAsync(fn, yourExecutor)}) for heavy work. Besides the transport, the client owns one
 * daemon thread that sends the sessions' lease pings.
 *
 * <p><b>Defaults.</b> Plaintext ({@link Builder#tls} for TLS); maximum message size 64 MiB in both
 * directions (bulk data travels in Upload commands of 1 MiB and Download commands of 8 MiB, and the
 * daemon closes a completions message once it carries 8 MiB of data, so at least 16 MiB is required);
 * no bearer token; close timeout 10 s.
 */
public final class ArraydClient implements AutoCloseable {

    /** Default maximum message size, inbound and outbound: 64 MiB. */
    public static final int DEFAULT_MAX_MESSAGE_BYTES = 64 << 20;
    /** Default size of each session's staging region over a Unix socket: 16 MiB. */
    public static final long DEFAULT_STAGING_BYTES = 16L << 20;
    /** Default bound on {@link #close()} and {@link Session#close()}: 10 s. */
    public static final Duration DEFAULT_CLOSE_TIMEOUT = Duration.ofSeconds(10);

    private final ManagedChannel channel;
    private final Stubs stubs;
    /** The largest message this client accepts, stated to the daemon when a session opens. */
    private final int maxMessageBytes;
    private final Duration closeTimeout;
    private final ScheduledThreadPoolExecutor timer;
    private final Set<SessionImpl> sessions = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean closed = new AtomicBoolean();
    /** Bytes of each session's staging region (a Unix socket target with regions on), else 0. */
    private final long stagingBytes;

    private ArraydClient(Builder b) {
        this.channel = b.channel != null ? b.channel
                : Grpc.newChannelBuilder(b.target, b.credentials)
                        .directExecutor()
                        .maxInboundMessageSize(b.maxMessageBytes)
                        .build();
        Channel ch = b.bearerToken == null ? channel
                : ClientInterceptors.intercept(channel, new BearerTokenInterceptor(b.bearerToken));
        this.stubs = Stubs.of(ch, b.maxMessageBytes);
        this.maxMessageBytes = b.maxMessageBytes;
        this.stagingBytes = b.channel == null && b.target != null && b.target.startsWith("unix:") && b.regions
                ? b.stagingBytes : 0;
        this.closeTimeout = b.closeTimeout;
        this.timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "arrayd-client-keepalive");
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true);
        timer.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    /**
     * Connects to {@code target} with the defaults: {@code "host:port"} (e.g. {@code "127.0.0.1:7700"}), or
     * {@code "unix:///path"} for the daemon's Unix domain socket ({@code serve --uds}).
     */
    public static ArraydClient connect(String target) {
        return builder().target(target).build();
    }

    /** A builder with the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** Every device of the daemon. */
    public CompletableFuture<List<DeviceInfo>> devices() {
        return inventory().thenApply(DeviceInventory::devices);
    }

    /** Every device and every backend of the daemon, unavailable ones with their reason. */
    public CompletableFuture<DeviceInventory> inventory() {
        CompletableFuture<DeviceInventory> f = new CompletableFuture<>();
        stubs.devices().listDevices(ListDevicesRequest.getDefaultInstance(),
                new FutureObserver<>(f, (ListDevicesResponse r) -> {
                    List<DeviceInfo> devices = new ArrayList<>(r.getDevicesCount());
                    r.getDevicesList().forEach(d -> devices.add(Protos.device(d)));
                    List<BackendInfo> backends = new ArrayList<>(r.getBackendsCount());
                    r.getBackendsList().forEach(d -> backends.add(Protos.backend(d)));
                    return new DeviceInventory(devices, backends);
                }));
        return f;
    }

    /** One device by id; fails with {@code NOT_FOUND} for an unknown id. */
    public CompletableFuture<DeviceInfo> device(String id) {
        CompletableFuture<DeviceInfo> f = new CompletableFuture<>();
        stubs.devices().getDevice(GetDeviceRequest.newBuilder().setDevice(id).build(),
                new FutureObserver<>(f, r -> Protos.device(r.getDevice())));
        return f;
    }

    /** Opens a session with the daemon's default lease. */
    public CompletableFuture<Session> openSession(String clientName) {
        return openSession(clientName, Duration.ZERO);
    }

    /**
     * Opens a session, asking for {@code lease} ({@link Duration#ZERO} = the daemon's default), opens its
     * stream and attaches. Completes when the daemon has attached the stream.
     */
    public CompletableFuture<Session> openSession(String clientName, Duration lease) {
        if (lease.isNegative()) {
            throw new IllegalArgumentException("lease: " + lease + " (expected: >= 0)");
        }
        return openSession(clientName, SessionOptions.defaults().lease(lease));
    }

    /**
     * Opens a session with {@code options} (its lease, how long completions may linger), opens its stream and
     * attaches. Completes when the daemon has attached the stream.
     */
    public CompletableFuture<Session> openSession(String clientName, SessionOptions options) {
        Objects.requireNonNull(clientName, "clientName");
        Objects.requireNonNull(options, "options");
        Duration lease = options.lease();
        if (closed.get()) {
            throw new IllegalStateException("client is closed");
        }
        CompletableFuture<Session> opened = new CompletableFuture<>();
        OpenSessionRequest req = OpenSessionRequest.newBuilder()
                .setClientName(clientName).setLease(Protos.duration(lease)).setMaxReceiveMessageBytes(maxMessageBytes)
                .setDependenciesOnlyOrder(options.dependenciesOnlyOrder()).build();
        CompletableFuture<SessionImpl> created = new CompletableFuture<>();
        stubs.sessions().openSession(req, new FutureObserver<>(created, r -> new SessionImpl(stubs, timer,
                closeTimeout, sessions::remove, r.getSession(), clientName,
                r.hasLease() ? Protos.duration(r.getLease()) : Duration.ofSeconds(30), options.completionLinger())));
        created.whenComplete((session, error) -> {
            if (error != null) {
                opened.completeExceptionally(error);
                return;
            }
            sessions.add(session);
            session.start().whenComplete((s, attachError) -> {
                if (attachError == null) {
                    if (stagingBytes <= 0) {
                        opened.complete(s);
                        return;
                    }
                    // over the daemon's Unix socket: a staging region for write and read (without one, if refused)
                    session.createRegion(stagingBytes).whenComplete((region, regionError) -> {
                        if (region != null) {
                            session.useStaging(region);
                        }
                        opened.complete(s);
                    });
                    return;
                }
                sessions.remove(session);
                stubs.sessions().closeSession(CloseSessionRequest.newBuilder().setSession(session.id()).build(),
                        new FutureObserver<>(new CompletableFuture<>(), r -> null));
                opened.completeExceptionally(attachError);
            });
        });
        return opened;
    }

    /**
     * Closes every open session (best effort: their errors are ignored), then shuts the channel down,
     * waiting at most the close timeout for each step before forcing it. The channel is shut down even
     * when it was given to the builder. Idempotent.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        long deadline = System.nanoTime() + closeTimeout.toNanos();
        List<CompletableFuture<Void>> closing = new ArrayList<>();
        for (SessionImpl s : sessions) {
            closing.add(s.closeAsync().exceptionally(e -> null));
        }
        try {
            CompletableFuture.allOf(closing.toArray(CompletableFuture[]::new))
                    .get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            // timed out or failed: the channel shutdown below ends the streams
        }
        timer.shutdownNow();
        channel.shutdown();
        try {
            if (!channel.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                channel.shutdownNow();
                channel.awaitTermination(1, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            channel.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Settings of a client. Exactly one of {@link #target} and {@link #channel} is required.
     * Not thread-safe.
     */
    public static final class Builder {
        private String target;
        private ManagedChannel channel;
        private int maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES;
        private String bearerToken;
        private ChannelCredentials credentials = InsecureChannelCredentials.create();
        private Duration closeTimeout = DEFAULT_CLOSE_TIMEOUT;
        private boolean regions = true;
        private long stagingBytes = DEFAULT_STAGING_BYTES;

        private Builder() {
        }

        /**
         * The daemon's address, e.g. {@code "127.0.0.1:7700"} or {@code "dns:///arrayd:7700"}; plaintext unless
         * {@link #tls} is given.
         */
        public Builder target(String target) {
            this.target = Objects.requireNonNull(target, "target");
            return this;
        }

        /**
         * Uses an existing channel instead of {@link #target}. The client takes ownership and shuts it down
         * on {@link ArraydClient#close()}. Give it a direct executor for the lowest latency.
         */
        public Builder channel(ManagedChannel channel) {
            this.channel = Objects.requireNonNull(channel, "channel");
            return this;
        }

        /** Maximum message size in bytes, inbound and outbound; default 64 MiB; at least 16 MiB. */
        /**
         * Whether sessions over a {@code unix://} target move the bytes of {@link Session#write} and
         * {@link Session#read} through a shared-memory staging region (default true): each session maps one of
         * {@link #stagingBytes} bytes, counted in its tenant's memory quota; a write or read that does not
         * fit its free space takes the session stream instead. False: always the session stream.
         */
        public Builder regions(boolean on) {
            this.regions = on;
            return this;
        }

        /** Size of each session's staging region (default {@link #DEFAULT_STAGING_BYTES}); 0 turns it off. */
        public Builder stagingBytes(long bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException("stagingBytes: " + bytes + " (expected: >= 0)");
            }
            this.stagingBytes = bytes;
            return this;
        }

        public Builder maxMessageBytes(int maxMessageBytes) {
            if (maxMessageBytes < (16 << 20)) {
                throw new IllegalArgumentException("maxMessageBytes: " + maxMessageBytes
                        + " (expected: >= 16777216, room for a completions message with 12 MiB of read data)");
            }
            this.maxMessageBytes = maxMessageBytes;
            return this;
        }

        /**
         * Connects to {@link #target} with TLS, trusting the certificates of {@code caPem} (a PEM file: the CA
         * that signed the daemon's certificate, or that certificate itself when it is self-signed). The
         * target's host must be a name or address the daemon's certificate lists. Default: plaintext.
         *
         * @throws IllegalArgumentException naming the file when it cannot be read or holds no certificate
         */
        public Builder tls(Path caPem) {
            Objects.requireNonNull(caPem, "caPem");
            try {
                this.credentials = TlsChannelCredentials.newBuilder().trustManager(caPem.toFile()).build();
            } catch (IOException | RuntimeException e) {
                throw new IllegalArgumentException("tls: " + caPem + " (expected: a readable PEM file of CA certificates; "
                        + e.getMessage() + ")", e);
            }
            return this;
        }

        /** Sends {@code authorization: Bearer <token>} on every call; default none. */
        public Builder bearerToken(String token) {
            Objects.requireNonNull(token, "token");
            if (token.isBlank() || !token.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
                throw new IllegalArgumentException("bearerToken: " + token.length()
                        + " characters (expected: non-empty printable ASCII without spaces)");
            }
            this.bearerToken = token;
            return this;
        }

        /** Bound on {@code close()} of the client and of each session; default 10 s. */
        public Builder closeTimeout(Duration closeTimeout) {
            if (closeTimeout.isNegative()) {
                throw new IllegalArgumentException("closeTimeout: " + closeTimeout + " (expected: >= 0)");
            }
            this.closeTimeout = closeTimeout;
            return this;
        }

        /** Builds the client. Connecting is lazy: the first call connects. */
        public ArraydClient build() {
            if ((target == null) == (channel == null)) {
                throw new IllegalStateException("target: " + target + ", channel: " + channel
                        + " (expected: exactly one of them)");
            }
            return new ArraydClient(this);
        }
    }
}
