package dev.arrayd.server;

import dev.arrayd.devices.api.Backend;
import dev.arrayd.devices.api.BackendStatus;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.KernelCompiler;
import dev.arrayd.devices.cpu.CpuBackend;
import dev.arrayd.devices.cpu.CpuOptions;
import dev.arrayd.devices.cuda.CudaBackend;
import dev.arrayd.devices.opencl.OpenClBackend;
import dev.arrayd.devices.remote.RemoteBackend;
import dev.arrayd.devices.remote.RemoteOptions;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Wires the backends named by {@code --devices}. The only place that knows concrete backends.
 * A backend that is unavailable is reported with its reason and skipped; the others run.
 */
final class Backends implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Backends.class);

    /** Backends this build knows; others are refused with a clear message. */
    static final List<String> KNOWN = List.of("cpu", "opencl", "cuda");

    private final List<Backend> open = new ArrayList<>();
    private final List<Device> devices = new ArrayList<>();
    private final Map<String, KernelCompiler> compilers = new LinkedHashMap<>();
    private final List<BackendStatus> statuses = new ArrayList<>();

    Backends(List<DeviceRequest> requests, ServerOptions options) {
        this(requests, options, null);
    }

    /** @param security this daemon's own certificate (presented to TLS peers), or null */
    Backends(List<DeviceRequest> requests, ServerOptions options, SecurityOptions security) {
        try {
            for (DeviceRequest r : requests) {
                open(create(r.backend(), options), r.count());
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
        try {
            if (!options.peers().isBlank()) {
                RemoteOptions remote = RemoteOptions.parse(options.peers(), peerToken(options), "arrayd-peer")
                        .without(System.getenv("HOSTNAME")) // one list for every member of a pool
                        .withTls(options.peerTlsCa() == null ? null : new RemoteOptions.Tls(options.peerTlsCa(),
                                security == null ? null : security.tlsCert(), security == null ? null : security.tlsKey()));
                if (remote.hasPeers()) {
                    open(new RemoteBackend(remote), 0);
                }
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
        if (devices.isEmpty()) {
            close();
            throw new IllegalStateException("no device could be opened: " + statuses);
        }
    }

    private void open(Backend b, int count) {
        open.add(b);
        var reason = b.unavailableReason();
        if (reason.isPresent()) {
            log.warn("backend {} unavailable: {}", b.name(), reason.get());
            statuses.add(new BackendStatus(b.name(), false, reason.get(), List.of()));
            return;
        }
        List<Device> ds = b.openDevices(count);
        devices.addAll(ds);
        compilers.put(b.name(), b.compiler());
        statuses.add(new BackendStatus(b.name(), true, "", ds.stream().map(Device::id).toList()));
    }

    /** The first line of {@code peer-token-file}, or empty. */
    private static String peerToken(ServerOptions options) {
        if (options.peerTokenFile() == null) {
            return "";
        }
        try {
            var lines = java.nio.file.Files.readAllLines(options.peerTokenFile());
            return lines.isEmpty() ? "" : lines.getFirst().strip();
        } catch (java.io.IOException e) {
            throw new IllegalStateException("peer-token-file: " + options.peerTokenFile() + ": " + e.getMessage(), e);
        }
    }

    private static Backend create(String name, ServerOptions options) {
        return switch (name) {
            case "cpu" -> {
                CpuOptions cpu = CpuOptions.defaults();
                if (options.cpuMemoryBytes() > 0) {
                    cpu = cpu.withDeviceMemoryBytes(options.cpuMemoryBytes());
                }
                cpu = cpu.withCacheMaxBytes(options.compileCacheMaxBytes());
                if (options.cacheDir() != null) {
                    cpu = cpu.withCacheDir(options.cacheDir());
                }
                yield new CpuBackend(cpu.withDeviceThreads(options.cpuThreads()).withComputeNice(options.cpuNice())
                        .withVectorBits(options.cpuVectorBits()));
            }
            // unavailable without an OpenCL runtime: reported with its reason, the other backends still run
            case "opencl" -> new OpenClBackend();
            // unavailable without the NVIDIA driver (libcuda.so.1): reported with its reason, the others still run
            case "cuda" -> new CudaBackend();
            default -> throw new IllegalArgumentException("--devices: backend \"" + name + "\" (expected one of " + KNOWN + ")");
        };
    }

    /** The remote backend when this daemon has peers, else null. */
    RemoteBackend remote() {
        for (Backend b : open) {
            if (b instanceof RemoteBackend r && r.unavailableReason().isEmpty()) {
                return r;
            }
        }
        return null;
    }

    List<Device> devices() {
        return devices;
    }

    Map<String, KernelCompiler> compilers() {
        return compilers;
    }

    List<BackendStatus> statuses() {
        return statuses;
    }

    /**
     * Offers {@code segment} to every usable backend to page-lock ({@link Backend#lockHostMemory}); returns what
     * undoes all of it.
     */
    Runnable lockHostMemory(MemorySegment segment) {
        List<Runnable> undo = new ArrayList<>();
        for (Backend b : open) {
            if (b.unavailableReason().isEmpty()) {
                undo.add(b.lockHostMemory(segment));
            }
        }
        return () -> undo.forEach(Runnable::run);
    }

    /** Closes the backends (after the scheduler has closed their devices). */
    @Override
    public void close() {
        for (Backend b : open) {
            try {
                b.close();
            } catch (RuntimeException e) {
                log.warn("closing backend {} failed", b.name(), e);
            }
        }
        open.clear();
    }
}
