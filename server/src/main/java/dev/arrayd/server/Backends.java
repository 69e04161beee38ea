package dev.arrayd.server;

import dev.arrayd.devices.api.Backend;
import dev.arrayd.devices.api.BackendStatus;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.api.KernelCompiler;
import dev.arrayd.devices.api.ir.LaneBlocks;
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
import java.util.function.Consumer;
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
    /** Devices found after the start, before {@link #onDevicesAdded} was set; and where they go once it is. */
    private final List<Device> early = new ArrayList<>();
    private Consumer<List<Device>> sink;

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
            RemoteBackend r = remote();
            if (r == null || !r.awaitsPeers()) {
                close();
                throw new IllegalStateException("no device could be opened: " + statuses);
            }
            // the devices are the peers', and none has answered yet: they join when one does (health NOT_SERVING
            // until then)
            log.warn("no device yet: waiting for the peers ({})", options.peers());
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
        b.onDevicesAdded(added -> added(b, added));
    }

    /**
     * Where devices a backend finds after the start go (the scheduler, through the server); those found before
     * this is set are handed over now.
     */
    void onDevicesAdded(Consumer<List<Device>> sink) {
        List<Device> early;
        synchronized (this) {
            this.sink = sink;
            early = List.copyOf(this.early);
            this.early.clear();
        }
        if (!early.isEmpty()) {
            sink.accept(early);
        }
    }

    private void added(Backend b, List<Device> ds) {
        Consumer<List<Device>> to;
        synchronized (this) {
            for (int i = 0; i < statuses.size(); i++) {
                BackendStatus s = statuses.get(i);
                if (s.name().equals(b.name())) {
                    List<DeviceId> ids = new ArrayList<>(s.devices());
                    ds.forEach(d -> ids.add(d.id()));
                    statuses.set(i, new BackendStatus(s.name(), s.available(), s.reason(), List.copyOf(ids)));
                }
            }
            to = sink;
            if (to == null) {
                early.addAll(ds);
                return;
            }
        }
        to.accept(ds);
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

    /** The backend {@code name} ({@code cpu}, {@code opencl}, {@code cuda}, {@code null}) made from {@code options}. */
    static Backend create(String name, ServerOptions options) {
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
                        .withVectorBits(options.cpuVectorBits())
                        .withLanes(options.cpuLanes() ? LaneBlocks.Rule.AUTO : LaneBlocks.Rule.OFF));
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

    /** The devices opened at the start. */
    List<Device> devices() {
        return devices;
    }

    Map<String, KernelCompiler> compilers() {
        return compilers;
    }

    synchronized List<BackendStatus> statuses() {
        return List.copyOf(statuses);
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
