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
 * @param jitNice           nice value added to the JVM's JIT compiler threads (default 10; 0 = unchanged)
 * @param metricsBind       address of /metrics; empty (the default) = the {@code bind} address
 * @param metricsKernelLimit kernel names with their own {@code kernel} label; 0 (the default) = no kernel label
 * @param tracing           export a span per command with OpenTelemetry, set up from OTEL_* (default false)
 * @param uds               a Unix domain socket to listen on too (null = none)
 * @param regionMemoryBytes most bytes all shared-memory regions together may hold (0 = a quarter of the memory
 *                          the JVM sees: the container's limit in a container, else the machine's)
 *
 * <p>Every field is a key of {@link dev.arrayd.server.config.ArraydConfig}, which documents it.
 */
public record ServerOptions(String bind, int port, String devices, boolean allowNativeSource, boolean insecure,
        long leaseMillis, int maxMessageBytes, long cpuMemoryBytes, Path portFile, long fastPathNanos, int metricsPort,
        int metricsClientLimit, long shutdownGraceMillis, Path cacheDir, long compileCacheMaxBytes, int cpuThreads, int cpuNice,
        int jitNice, String metricsBind, int metricsKernelLimit, boolean tracing, Path uds, long regionMemoryBytes) {

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
                DEFAULT_JIT_NICE, "", 0, false, null, 0);
    }

    /**
     * Port 0 (tests, benchmarks) also moves a default metrics port to any free port, so that such daemons
     * never collide on 7701 (the same rule as the {@code metrics-port} key).
     */
    public ServerOptions withPort(int p) {
        int m = p == 0 && metricsPort == DEFAULT_METRICS_PORT ? 0 : metricsPort;
        return new ServerOptions(bind, p, devices, allowNativeSource, insecure, leaseMillis, maxMessageBytes, cpuMemoryBytes, portFile, fastPathNanos, m, metricsClientLimit, shutdownGraceMillis, cacheDir, compileCacheMaxBytes, cpuThreads, cpuNice, jitNice, metricsBind, metricsKernelLimit, tracing, uds, regionMemoryBytes);
    }

    public ServerOptions withMetricsBind(String b) {
        return new ServerOptions(bind, port, devices, allowNativeSource, insecure, leaseMillis, maxMessageBytes, cpuMemoryBytes, portFile, fastPathNanos, metricsPort, metricsClientLimit, shutdownGraceMillis, cacheDir, compileCacheMaxBytes, cpuThreads, cpuNice, jitNice, b, metricsKernelLimit, tracing, uds, regionMemoryBytes);
    }

    public ServerOptions withMetricsKernelLimit(int n) {
        return new ServerOptions(bind, port, devices, allowNativeSource, insecure, leaseMillis, maxMessageBytes, cpuMemoryBytes, portFile, fastPathNanos, metricsPort, metricsClientLimit, shutdownGraceMillis, cacheDir, compileCacheMaxBytes, cpuThreads, cpuNice, jitNice, metricsBind, n, tracing, uds, regionMemoryBytes);
    }

    public ServerOptions withTracing(boolean on) {
        return new ServerOptions(bind, port, devices, allowNativeSource, insecure, leaseMillis, maxMessageBytes, cpuMemoryBytes, portFile, fastPathNanos, metricsPort, metricsClientLimit, shutdownGraceMillis, cacheDir, compileCacheMaxBytes, cpuThreads, cpuNice, jitNice, metricsBind, metricsKernelLimit, on, uds, regionMemoryBytes);
    }

    public ServerOptions withUds(Path path) {
        return new ServerOptions(bind, port, devices, allowNativeSource, insecure, leaseMillis, maxMessageBytes, cpuMemoryBytes, portFile, fastPathNanos, metricsPort, metricsClientLimit, shutdownGraceMillis, cacheDir, compileCacheMaxBytes, cpuThreads, cpuNice, jitNice, metricsBind, metricsKernelLimit, tracing, path, regionMemoryBytes);
    }

    public ServerOptions withRegionMemoryBytes(long bytes) {
        return new ServerOptions(bind, port, devices, allowNativeSource, insecure, leaseMillis, maxMessageBytes, cpuMemoryBytes, portFile, fastPathNanos, metricsPort, metricsClientLimit, shutdownGraceMillis, cacheDir, compileCacheMaxBytes, cpuThreads, cpuNice, jitNice, metricsBind, metricsKernelLimit, tracing, uds, bytes);
    }

    /** Where /metrics listens: {@code metricsBind}, or the gRPC {@code bind} address when that is empty. */
    public String metricsAddress() {
        return metricsBind.isEmpty() ? bind : metricsBind;
    }

    public ServerOptions withMetricsPort(int p) {
        return new ServerOptions(bind, port, devices, allowNativeSource, insecure, leaseMillis, maxMessageBytes, cpuMemoryBytes, portFile, fastPathNanos, p, metricsClientLimit, shutdownGraceMillis, cacheDir, compileCacheMaxBytes, cpuThreads, cpuNice, jitNice, metricsBind, metricsKernelLimit, tracing, uds, regionMemoryBytes);
    }

    public ServerOptions withShutdownGraceMillis(long millis) {
        return new ServerOptions(bind, port, devices, allowNativeSource, insecure, leaseMillis, maxMessageBytes, cpuMemoryBytes, portFile, fastPathNanos, metricsPort, metricsClientLimit, millis, cacheDir, compileCacheMaxBytes, cpuThreads, cpuNice, jitNice, metricsBind, metricsKernelLimit, tracing, uds, regionMemoryBytes);
    }

    public ServerOptions withMetricsClientLimit(int limit) {
        return new ServerOptions(bind, port, devices, allowNativeSource, insecure, leaseMillis, maxMessageBytes, cpuMemoryBytes, portFile, fastPathNanos, metricsPort, limit, shutdownGraceMillis, cacheDir, compileCacheMaxBytes, cpuThreads, cpuNice, jitNice, metricsBind, metricsKernelLimit, tracing, uds, regionMemoryBytes);
    }

    public ServerOptions withDevices(String d) {
        return new ServerOptions(bind, port, d, allowNativeSource, insecure, leaseMillis, maxMessageBytes, cpuMemoryBytes, portFile, fastPathNanos, metricsPort, metricsClientLimit, shutdownGraceMillis, cacheDir, compileCacheMaxBytes, cpuThreads, cpuNice, jitNice, metricsBind, metricsKernelLimit, tracing, uds, regionMemoryBytes);
    }

    public ServerOptions withAllowNativeSource(boolean allow) {
        return new ServerOptions(bind, port, devices, allow, insecure, leaseMillis, maxMessageBytes, cpuMemoryBytes, portFile, fastPathNanos, metricsPort, metricsClientLimit, shutdownGraceMillis, cacheDir, compileCacheMaxBytes, cpuThreads, cpuNice, jitNice, metricsBind, metricsKernelLimit, tracing, uds, regionMemoryBytes);
    }

    public ServerOptions withFastPathNanos(long nanos) {
        return new ServerOptions(bind, port, devices, allowNativeSource, insecure, leaseMillis, maxMessageBytes, cpuMemoryBytes, portFile, nanos, metricsPort, metricsClientLimit, shutdownGraceMillis, cacheDir, compileCacheMaxBytes, cpuThreads, cpuNice, jitNice, metricsBind, metricsKernelLimit, tracing, uds, regionMemoryBytes);
    }

    public ServerOptions withCpuMemoryBytes(long bytes) {
        return new ServerOptions(bind, port, devices, allowNativeSource, insecure, leaseMillis, maxMessageBytes, bytes, portFile, fastPathNanos, metricsPort, metricsClientLimit, shutdownGraceMillis, cacheDir, compileCacheMaxBytes, cpuThreads, cpuNice, jitNice, metricsBind, metricsKernelLimit, tracing, uds, regionMemoryBytes);
    }

    public ServerOptions withCacheDir(Path dir) {
        return new ServerOptions(bind, port, devices, allowNativeSource, insecure, leaseMillis, maxMessageBytes, cpuMemoryBytes, portFile, fastPathNanos, metricsPort, metricsClientLimit, shutdownGraceMillis, dir, compileCacheMaxBytes, cpuThreads, cpuNice, jitNice, metricsBind, metricsKernelLimit, tracing, uds, regionMemoryBytes);
    }

    public ServerOptions withCompileCacheMaxBytes(long bytes) {
        return new ServerOptions(bind, port, devices, allowNativeSource, insecure, leaseMillis, maxMessageBytes, cpuMemoryBytes, portFile, fastPathNanos, metricsPort, metricsClientLimit, shutdownGraceMillis, cacheDir, bytes, cpuThreads, cpuNice, jitNice, metricsBind, metricsKernelLimit, tracing, uds, regionMemoryBytes);
    }

    public ServerOptions withCpuThreads(int threads) {
        return new ServerOptions(bind, port, devices, allowNativeSource, insecure, leaseMillis, maxMessageBytes, cpuMemoryBytes, portFile, fastPathNanos, metricsPort, metricsClientLimit, shutdownGraceMillis, cacheDir, compileCacheMaxBytes, threads, cpuNice, jitNice, metricsBind, metricsKernelLimit, tracing, uds, regionMemoryBytes);
    }

    public ServerOptions withCpuNice(int nice) {
        return new ServerOptions(bind, port, devices, allowNativeSource, insecure, leaseMillis, maxMessageBytes, cpuMemoryBytes, portFile, fastPathNanos, metricsPort, metricsClientLimit, shutdownGraceMillis, cacheDir, compileCacheMaxBytes, cpuThreads, nice, jitNice, metricsBind, metricsKernelLimit, tracing, uds, regionMemoryBytes);
    }

    public ServerOptions withJitNice(int nice) {
        return new ServerOptions(bind, port, devices, allowNativeSource, insecure, leaseMillis, maxMessageBytes, cpuMemoryBytes, portFile, fastPathNanos, metricsPort, metricsClientLimit, shutdownGraceMillis, cacheDir, compileCacheMaxBytes, cpuThreads, cpuNice, nice, metricsBind, metricsKernelLimit, tracing, uds, regionMemoryBytes);
    }
}
