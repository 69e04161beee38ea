package dev.arrayd.server;

import dev.arrayd.scheduler.SchedulerConfig;
import java.nio.file.Path;

/**
 * How to run the daemon.
 *
 * @param bind              address to listen on (default 127.0.0.1)
 * @param port              TCP port (default 7700; 0 = any free port)
 * @param devices           the --devices spec (default "cpu")
 * @param allowNativeSource accept native kernel source (default false)
 * @param insecure          allow a non-loopback bind without authentication (default false)
 * @param leaseMillis       default session lease (default 10 s)
 * @param maxMessageBytes   largest gRPC message accepted (default 64 MiB)
 * @param cpuMemoryBytes    memory of each CPU device; 0 = half the machine's RAM split among CPU devices
 * @param portFile          where to write the bound port once listening (null = nowhere)
 * @param fastPathNanos     commands expected to run within this long skip the stream's worker thread
 *                          (default 20 µs; 0 = off); see SchedulerConfig
 * @param metricsPort       HTTP port of /metrics on the bind address (default 7701; 0 = any free port; -1 = none)
 * @param metricsClientLimit distinct client names with their own metric label before "other" (default 20)
 * @param shutdownGraceMillis how long accepted work may drain on shutdown before it is failed (default 25 s)
 * @param cacheDir          the CPU backend's compiled-kernel cache (null = its default,
 *                          {@code $XDG_CACHE_HOME/arrayd/kernels} or {@code ~/.cache/arrayd/kernels})
 * @param compileCacheMaxBytes most bytes the CPU backend's kernel cache keeps on disk (default 1 GiB; least
 *                          recently used kernels go first)
 * @param cpuThreads        worker threads of each CPU device; 0 (the default) = the cores split among them
 * @param cpuNice           nice value added to the CPU devices' kernel threads (default 10; 0 = unchanged)
 * @param cpuVectorBits     widest vectors gcc may use for IR kernels on x86-64, 256 or 512 (default 512)
 * @param cpuLanes          whether the CPU devices give IR kernels that loop inside each work-item a lane form (blocks
 *                          of work-items as vector lanes; default true)
 * @param jitNice           nice value added to the JVM's JIT compiler threads (default 10; 0 = unchanged)
 * @param metricsBind       address of /metrics; empty (the default) = the {@code bind} address
 * @param metricsKernelLimit kernel names with their own {@code kernel} label; 0 (the default) = no kernel label
 * @param tracing           export a span per command with OpenTelemetry, set up from OTEL_* (default false)
 * @param uds               a Unix domain socket to listen on too (null = none)
 * @param regionMemoryBytes most bytes all shared-memory regions together may hold (0 = a quarter of the memory
 *                          the JVM sees: the container's limit in a container, else the machine's)
 * @param peers             peer daemons whose devices this one presents, {@code [name=]host:port,...} (empty = none)
 * @param peerTokenFile     file whose first line is the token presented to the peers (null = none)
 * @param peerTlsCa         PEM CA certificates to trust when connecting to the peers with TLS (null = plaintext)
 * @param peerBulkPort      TCP port of the bulk port peers read buffers through (0 = any free port; -1 = none);
 *                          never opened while the gRPC port serves TLS
 * @param transferMemoryBytes most bytes of downloads not yet sent the daemon holds in its heap (0 = half of the
 *                          largest heap, at least 64 MiB); see {@link TransferMemory}
 *
 * <p>Every field is a key of {@link dev.arrayd.server.config.ArraydConfig}, which documents it.
 */
public record ServerOptions(String bind, int port, String devices, boolean allowNativeSource, boolean insecure,
        long leaseMillis, int maxMessageBytes, long cpuMemoryBytes, Path portFile, long fastPathNanos, int metricsPort,
        int metricsClientLimit, long shutdownGraceMillis, Path cacheDir, long compileCacheMaxBytes, int cpuThreads, int cpuNice,
        int cpuVectorBits, boolean cpuLanes, int jitNice, String metricsBind, int metricsKernelLimit, boolean tracing, Path uds, long regionMemoryBytes,
        String peers, Path peerTokenFile, Path peerTlsCa, int peerBulkPort, long transferMemoryBytes) {

    public static final String DEFAULT_BIND = "127.0.0.1";
    public static final int DEFAULT_PORT = 7700;
    public static final String DEFAULT_DEVICES = "cpu";
    public static final long DEFAULT_LEASE_MILLIS = 10_000;
    public static final int DEFAULT_MAX_MESSAGE_BYTES = 64 << 20;
    public static final int DEFAULT_METRICS_PORT = 7701;
    public static final int DEFAULT_METRICS_CLIENT_LIMIT = 20;
    public static final long DEFAULT_SHUTDOWN_GRACE_MILLIS = 25_000;
    /** Default of the {@code jit-nice} key; see {@link JitThreadPriority}. */
    public static final int DEFAULT_JIT_NICE = 10;

    public static ServerOptions defaults() {
        return new ServerOptions(DEFAULT_BIND, DEFAULT_PORT, DEFAULT_DEVICES, false, false, DEFAULT_LEASE_MILLIS,
                DEFAULT_MAX_MESSAGE_BYTES, 0, null, SchedulerConfig.DEFAULT_FAST_PATH_NANOS, DEFAULT_METRICS_PORT,
                DEFAULT_METRICS_CLIENT_LIMIT, DEFAULT_SHUTDOWN_GRACE_MILLIS, null,
                dev.arrayd.devices.cpu.CpuOptions.DEFAULT_CACHE_MAX_BYTES, 0, dev.arrayd.devices.cpu.CpuOptions.DEFAULT_COMPUTE_NICE,
                dev.arrayd.devices.cpu.CpuOptions.DEFAULT_VECTOR_BITS, true, DEFAULT_JIT_NICE, "", 0, false, null, 0, "", null, null, 0, 0);
    }

    /**
     * Port 0 (tests, benchmarks) also moves a default metrics port to any free port, so that such daemons
     * never collide on 7701 (the same rule as the {@code metrics-port} key).
     */
    public ServerOptions withPort(int p) {
        int m = p == 0 && metricsPort == DEFAULT_METRICS_PORT ? 0 : metricsPort;
        return with(b -> { b.port = p; b.metricsPort = m; });
    }

    public ServerOptions withMetricsBind(String address) {
        return with(b -> b.metricsBind = address);
    }

    public ServerOptions withMetricsKernelLimit(int n) {
        return with(b -> b.metricsKernelLimit = n);
    }

    public ServerOptions withTracing(boolean on) {
        return with(b -> b.tracing = on);
    }

    public ServerOptions withUds(Path path) {
        return with(b -> b.uds = path);
    }

    public ServerOptions withPeers(String list) {
        return with(b -> b.peers = list);
    }

    public ServerOptions withPeerTokenFile(Path file) {
        return with(b -> b.peerTokenFile = file);
    }

    public ServerOptions withPeerTlsCa(Path file) {
        return with(b -> b.peerTlsCa = file);
    }

    public ServerOptions withPeerBulkPort(int p) {
        return with(b -> b.peerBulkPort = p);
    }

    public ServerOptions withRegionMemoryBytes(long bytes) {
        return with(b -> b.regionMemoryBytes = bytes);
    }

    public ServerOptions withTransferMemoryBytes(long bytes) {
        return with(b -> b.transferMemoryBytes = bytes);
    }

    /** Where /metrics listens: {@code metricsBind}, or the gRPC {@code bind} address when that is empty. */
    public String metricsAddress() {
        return metricsBind.isEmpty() ? bind : metricsBind;
    }

    public ServerOptions withMetricsPort(int p) {
        return with(b -> b.metricsPort = p);
    }

    public ServerOptions withShutdownGraceMillis(long millis) {
        return with(b -> b.shutdownGraceMillis = millis);
    }

    public ServerOptions withMetricsClientLimit(int limit) {
        return with(b -> b.metricsClientLimit = limit);
    }

    public ServerOptions withDevices(String d) {
        return with(b -> b.devices = d);
    }

    public ServerOptions withAllowNativeSource(boolean allow) {
        return with(b -> b.allowNativeSource = allow);
    }

    public ServerOptions withFastPathNanos(long nanos) {
        return with(b -> b.fastPathNanos = nanos);
    }

    public ServerOptions withCpuMemoryBytes(long bytes) {
        return with(b -> b.cpuMemoryBytes = bytes);
    }

    public ServerOptions withCacheDir(Path dir) {
        return with(b -> b.cacheDir = dir);
    }

    public ServerOptions withCompileCacheMaxBytes(long bytes) {
        return with(b -> b.compileCacheMaxBytes = bytes);
    }

    public ServerOptions withCpuThreads(int threads) {
        return with(b -> b.cpuThreads = threads);
    }

    public ServerOptions withCpuNice(int nice) {
        return with(b -> b.cpuNice = nice);
    }

    public ServerOptions withCpuVectorBits(int bits) {
        return with(b -> b.cpuVectorBits = bits);
    }

    public ServerOptions withCpuLanes(boolean lanes) {
        return with(b -> b.cpuLanes = lanes);
    }

    public ServerOptions withJitNice(int nice) {
        return with(b -> b.jitNice = nice);
    }

    /** This with the fields {@code change} sets, the others as they are. */
    private ServerOptions with(java.util.function.Consumer<Copy> change) {
        Copy b = new Copy(this);
        change.accept(b);
        return b.build();
    }

    /** The fields, settable: what the withers change. */
    private static final class Copy {
        String bind;
        int port;
        String devices;
        boolean allowNativeSource;
        boolean insecure;
        long leaseMillis;
        int maxMessageBytes;
        long cpuMemoryBytes;
        Path portFile;
        long fastPathNanos;
        int metricsPort;
        int metricsClientLimit;
        long shutdownGraceMillis;
        Path cacheDir;
        long compileCacheMaxBytes;
        int cpuThreads;
        int cpuNice;
        int cpuVectorBits;
        boolean cpuLanes;
        int jitNice;
        String metricsBind;
        int metricsKernelLimit;
        boolean tracing;
        Path uds;
        long regionMemoryBytes;
        String peers;
        Path peerTokenFile;
        Path peerTlsCa;
        int peerBulkPort;
        long transferMemoryBytes;

        Copy(ServerOptions o) {
            bind = o.bind;
            port = o.port;
            devices = o.devices;
            allowNativeSource = o.allowNativeSource;
            insecure = o.insecure;
            leaseMillis = o.leaseMillis;
            maxMessageBytes = o.maxMessageBytes;
            cpuMemoryBytes = o.cpuMemoryBytes;
            portFile = o.portFile;
            fastPathNanos = o.fastPathNanos;
            metricsPort = o.metricsPort;
            metricsClientLimit = o.metricsClientLimit;
            shutdownGraceMillis = o.shutdownGraceMillis;
            cacheDir = o.cacheDir;
            compileCacheMaxBytes = o.compileCacheMaxBytes;
            cpuThreads = o.cpuThreads;
            cpuNice = o.cpuNice;
            cpuVectorBits = o.cpuVectorBits;
            cpuLanes = o.cpuLanes;
            jitNice = o.jitNice;
            metricsBind = o.metricsBind;
            metricsKernelLimit = o.metricsKernelLimit;
            tracing = o.tracing;
            uds = o.uds;
            regionMemoryBytes = o.regionMemoryBytes;
            peers = o.peers;
            peerTokenFile = o.peerTokenFile;
            peerTlsCa = o.peerTlsCa;
            peerBulkPort = o.peerBulkPort;
            transferMemoryBytes = o.transferMemoryBytes;
        }

        ServerOptions build() {
            return new ServerOptions(bind, port, devices, allowNativeSource, insecure, leaseMillis, maxMessageBytes, cpuMemoryBytes, portFile, fastPathNanos, metricsPort, metricsClientLimit, shutdownGraceMillis, cacheDir, compileCacheMaxBytes, cpuThreads, cpuNice, cpuVectorBits, cpuLanes, jitNice, metricsBind, metricsKernelLimit, tracing, uds, regionMemoryBytes, peers, peerTokenFile, peerTlsCa, peerBulkPort,
                    transferMemoryBytes);
        }
    }
}
