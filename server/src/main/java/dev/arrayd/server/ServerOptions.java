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
 */
public record ServerOptions(String bind, int port, String devices, boolean allowNativeSource, boolean insecure,
        long leaseMillis, int maxMessageBytes, long cpuMemoryBytes, Path portFile, long fastPathNanos) {

    public static final String DEFAULT_BIND = "127.0.0.1";
    public static final int DEFAULT_PORT = 7700;
    public static final String DEFAULT_DEVICES = "cpu";
    public static final long DEFAULT_LEASE_MILLIS = 10_000;
    public static final int DEFAULT_MAX_MESSAGE_BYTES = 64 << 20;

    public static ServerOptions defaults() {
        return new ServerOptions(DEFAULT_BIND, DEFAULT_PORT, DEFAULT_DEVICES, false, false, DEFAULT_LEASE_MILLIS,
                DEFAULT_MAX_MESSAGE_BYTES, 0, null, SchedulerConfig.DEFAULT_FAST_PATH_NANOS);
    }

    public ServerOptions withPort(int p) {
        return new ServerOptions(bind, p, devices, allowNativeSource, insecure, leaseMillis, maxMessageBytes, cpuMemoryBytes, portFile, fastPathNanos);
    }

    public ServerOptions withDevices(String d) {
        return new ServerOptions(bind, port, d, allowNativeSource, insecure, leaseMillis, maxMessageBytes, cpuMemoryBytes, portFile, fastPathNanos);
    }

    public ServerOptions withAllowNativeSource(boolean allow) {
        return new ServerOptions(bind, port, devices, allow, insecure, leaseMillis, maxMessageBytes, cpuMemoryBytes, portFile, fastPathNanos);
    }

    public ServerOptions withFastPathNanos(long nanos) {
        return new ServerOptions(bind, port, devices, allowNativeSource, insecure, leaseMillis, maxMessageBytes, cpuMemoryBytes, portFile, nanos);
    }

    public ServerOptions withCpuMemoryBytes(long bytes) {
        return new ServerOptions(bind, port, devices, allowNativeSource, insecure, leaseMillis, maxMessageBytes, bytes, portFile, fastPathNanos);
    }
}
