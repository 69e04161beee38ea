package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.support.AbstractBackend;
import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.api.KernelCompiler;
import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.JCudaDriver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The CUDA backend on JCuda's driver API: every device the driver finds, as {@code cuda:0 .. cuda:n-1}
 * in driver order, each working in its primary context.
 *
 * <p><b>A missing driver never breaks the daemon.</b> {@link #unavailableReason()} first loads
 * {@code libcuda.so.1} through FFM without touching JCuda (whose driver class would otherwise fail to
 * initialize for the rest of the process), then calls {@code cuInit} and counts devices. The first step
 * that fails is the reason, exactly:
 * <ul>
 *   <li>{@code "CUDA driver library libcuda.so.1 not found"};</li>
 *   <li>{@code "cuInit failed: CUDA_ERROR_NO_DEVICE (100): ..."} (or whichever CUresult);</li>
 *   <li>{@code "no CUDA device: cuDeviceGetCount found 0 ..."}.</li>
 * </ul>
 * NVRTC is bound through FFM from whichever {@code libnvrtc} the host has ({@link NvrtcLibrary}: 13, 12,
 * or the unversioned name); without one the devices still hold memory, copy and run PTX, and compiling
 * CUDA C or IR is UNAVAILABLE naming the libraries tried.
 *
 * <p>{@code openDevices(0)} opens every device, {@code openDevices(n)} the first {@code n}. Peer access is
 * enabled between every pair of opened devices that supports it; any two of them can copy from each other
 * ({@link dev.arrayd.devices.api.DeviceCommand.PeerCopy}), directly or through pinned staging.
 */
public final class CudaBackend extends AbstractBackend<CudaDevice> {

    public static final String NAME = "cuda";

    private static final Logger log = LoggerFactory.getLogger(CudaBackend.class);

    private final CudaOptions options;
    private final CudaKernelCompiler compiler;
    private NvrtcLibrary.Resolved nvrtc; // guarded by this; resolved once
    private CudaDiscovery.Found found; // guarded by this; set by the probe

    public CudaBackend() {
        this(CudaOptions.defaults());
    }

    public CudaBackend(CudaOptions options) {
        super(NAME, false);
        this.options = options;
        this.compiler = new CudaKernelCompiler(options, this::unavailableReason, this::nvrtcProblem, this::nvrtcLibrary,
                this::opened);
    }

    /** Why CUDA C cannot be compiled (empty when NVRTC loads); PTX does not need NVRTC. */
    synchronized Optional<String> nvrtcProblem() {
        return resolvedNvrtc().problem();
    }

    /** The NVRTC library CUDA C and IR kernels are compiled with; null when {@link #nvrtcProblem} says why not. */
    synchronized NvrtcLibrary nvrtcLibrary() {
        return resolvedNvrtc().library();
    }

    private synchronized NvrtcLibrary.Resolved resolvedNvrtc() {
        if (nvrtc == null) {
            nvrtc = NvrtcLibrary.resolve(options.nvrtcLibrary());
        }
        return nvrtc;
    }

    @Override
    protected Optional<String> probe() {
        Optional<String> driver = LibraryProbe.driverProblem(options.driverLibrary());
        if (driver.isPresent()) {
            return driver;
        }
        try {
            found = CudaDiscovery.discover();
        } catch (LinkageError e) {
            return Optional.of("JCuda could not load its native driver binding: " + e);
        } catch (ArraydException e) {
            return Optional.of("querying CUDA devices failed: " + e.getMessage());
        }
        if (found.problem().isPresent()) {
            return found.problem();
        }
        Optional<String> nvrtc = nvrtcProblem();
        log.info("CUDA driver {} with {} device(s): {}{}", found.driverVersion(), found.facts().size(),
                found.facts().stream().map(CudaDeviceFacts::describe).toList(),
                nvrtc.map(p -> "; CUDA C unavailable (" + p + "), PTX only").orElseGet(() -> "; CUDA C through "
                        + nvrtcLibrary()));
        return Optional.empty();
    }

    /** The first {@code count} devices (0: all), each on its primary context, with peer access where it works. */
    @Override
    protected void open(int count, List<CudaDevice> devices) {
        int available = found.devices().size();
        if (count > available) {
            throw ArraydException.invalid("count: " + count + " (expected: at most the " + available + " CUDA devices found)");
        }
        int wanted = count == 0 ? available : count;
        boolean nvrtc = nvrtcProblem().isEmpty();
        for (int i = 0; i < wanted; i++) {
            CUdevice d = found.devices().get(i);
            CUcontext ctx = new CUcontext();
            CudaErrors.check(JCudaDriver.cuDevicePrimaryCtxRetain(ctx, d), "cuDevicePrimaryCtxRetain for cuda:" + i);
            devices.add(new CudaDevice(new DeviceId(NAME, i), found.facts().get(i), d, ctx, options, nvrtc, this));
        }
        enablePeerAccess(devices);
    }

    private void enablePeerAccess(List<CudaDevice> devices) {
        int n = devices.size();
        boolean[][] enabled = new boolean[n][n];
        for (int a = 0; a < n; a++) {
            for (int b = 0; b < n; b++) {
                if (a == b) {
                    continue;
                }
                int[] can = new int[1];
                CudaDevice src = devices.get(a);
                CudaDevice dst = devices.get(b);
                if (JCudaDriver.cuDeviceCanAccessPeer(can, src.cuDevice(), dst.cuDevice()) != CudaErrors.CUDA_SUCCESS || can[0] == 0) {
                    continue;
                }
                src.makeCurrent();
                int r = JCudaDriver.cuCtxEnablePeerAccess(dst.context(), 0);
                enabled[a][b] = r == CudaErrors.CUDA_SUCCESS || r == CudaErrors.CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
                if (!enabled[a][b]) {
                    log.warn("peer access {} -> {} refused: {}; copies between them go through host staging", src.id(), dst.id(),
                            CudaErrors.name(r));
                }
            }
        }
        PeerAccess peers = new PeerAccess(enabled);
        for (CudaDevice d : devices) {
            d.setPeers(peers);
        }
    }

    @Override
    public KernelCompiler compiler() {
        return compiler;
    }

    /**
     * Registers {@code segment} with the driver for every context ({@code cuMemHostRegister}, portable), so that
     * transfers from and to it are single DMAs with no staging ({@link PageLocked}). Best effort: nothing when no
     * device is open, the segment is not native or over 2 GiB, or the driver refuses (logged; its transfers are
     * staged as before). Registering costs about 40 ms per GiB on an H200 host. The returned action unregisters
     * it, once.
     */
    @Override
    public Runnable lockHostMemory(MemorySegment segment) {
        List<CudaDevice> devices = opened();
        if (devices.isEmpty() || !segment.isNative() || segment.byteSize() == 0 || segment.byteSize() > Integer.MAX_VALUE) {
            return () -> { };
        }
        CudaDevice device = devices.getFirst();
        device.makeCurrent();
        Pointer p = Pointer.to(segment.asByteBuffer());
        int result = JCudaDriver.cuMemHostRegister(p, segment.byteSize(), CU_MEMHOSTREGISTER_PORTABLE);
        if (result != CudaErrors.CUDA_SUCCESS) {
            log.info("page-locking {} bytes of host memory failed ({}): its transfers go through staging", segment.byteSize(),
                    CudaErrors.name(result));
            return () -> { };
        }
        AtomicBoolean undone = new AtomicBoolean();
        return () -> {
            if (undone.compareAndSet(false, true)) {
                device.makeCurrent();
                JCudaDriver.cuMemHostUnregister(p);
            }
        };
    }

    private static final int CU_MEMHOSTREGISTER_PORTABLE = 1;

    /** The compiler with its cache counters; for tests and benchmarks. */
    CudaKernelCompiler cudaCompiler() {
        return compiler;
    }

    /** The opened devices as CUDA devices; for tests and benchmarks of this package. */
    List<CudaDevice> cudaDevices() {
        return opened();
    }

    /** Closes a device (draining its streams, freeing slabs and staging), then releases its primary context. */
    @Override
    protected void closeDevice(CudaDevice d) {
        try {
            d.close();
        } finally {
            JCudaDriver.cuDevicePrimaryCtxRelease(d.cuDevice());
        }
    }
}
