package dev.arrayd.devices.opencl;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.support.AbstractBackend;
import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.api.KernelCompiler;
import org.jocl.CLException;
import org.jocl.cl_device_id;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The OpenCL backend on JOCL: every device of every platform the ICD loader finds, as
 * {@code opencl:0 .. opencl:n-1} in platform order, then each platform's device order.
 *
 * <p><b>A missing runtime never breaks the daemon.</b> {@link #unavailableReason()} first loads
 * {@code libOpenCL.so.1} through FFM without touching JOCL (whose class initializer would otherwise
 * fail for the rest of the process), then loads JOCL, then asks for platforms and devices; the first
 * step that fails is the reason ("libOpenCL.so.1 not found ...", "no OpenCL platform ...", "no OpenCL
 * device ..."). Nothing else of the backend runs while there is a reason.
 *
 * <p>{@code openDevices(0)} opens every device; {@code openDevices(n)} the first {@code n}
 * (INVALID_ARGUMENT when fewer exist). One {@code cl_context} is made per platform with its opened
 * devices. For several devices on one CPU, PoCL takes a space-separated list in {@code POCL_DEVICES}
 * (e.g. {@code POCL_DEVICES="basic basic"}).
 */
public final class OpenClBackend extends AbstractBackend<OpenClDevice> {

    public static final String NAME = "opencl";

    private final OpenClOptions options;
    private final OpenClKernelCompiler compiler;
    private final List<ClContext> contexts = new ArrayList<>(); // guarded by this
    private List<ClPlatform> platforms = List.of(); // guarded by this; set by the probe

    public OpenClBackend() {
        this(OpenClOptions.defaults());
    }

    public OpenClBackend(OpenClOptions options) {
        super(NAME, false);
        this.options = options;
        this.compiler = new OpenClKernelCompiler(options.compileTimeout(), this::unavailableReason, this::opened);
    }

    @Override
    protected Optional<String> probe() {
        Optional<String> library = LibraryProbe.problem(options.libraryName());
        if (library.isPresent()) {
            return library;
        }
        try {
            ClDiscovery.initJocl();
            platforms = ClDiscovery.platforms();
        } catch (LinkageError e) {
            return Optional.of("JOCL could not load its native library: " + e);
        } catch (CLException e) {
            if (e.getStatus() == ClDiscovery.CL_PLATFORM_NOT_FOUND_KHR) {
                return Optional.of("no OpenCL platform: the ICD loader " + options.libraryName()
                        + " found no driver (expected: an .icd file in /etc/OpenCL/vendors, e.g. from pocl-opencl-icd)");
            }
            return Optional.of("clGetPlatformIDs failed: " + ClInfo.errorName(e.getStatus()));
        }
        if (platforms.isEmpty()) {
            return Optional.of("no OpenCL platform: the ICD loader " + options.libraryName()
                    + " found no driver (expected: an .icd file in /etc/OpenCL/vendors, e.g. from pocl-opencl-icd)");
        }
        if (platforms.stream().allMatch(p -> p.devices().isEmpty())) {
            return Optional.of("no OpenCL device on platform(s) " + platforms.stream().map(ClPlatform::name).toList()
                    + " (for PoCL, check POCL_DEVICES: e.g. \"basic basic\" or \"pthread\")");
        }
        return Optional.empty();
    }

    /** The first {@code count} devices (0: all) in platform order, one context per platform. */
    @Override
    protected void open(int count, List<OpenClDevice> devices) {
        int found = platforms.stream().mapToInt(p -> p.devices().size()).sum();
        if (count > found) {
            throw ArraydException.invalid("count: " + count + " (expected: at most the " + found
                    + " OpenCL devices found on " + platforms.stream().map(ClPlatform::name).toList() + ")");
        }
        int wanted = count == 0 ? found : count;
        try {
            int ordinal = 0;
            for (ClPlatform platform : platforms) {
                if (ordinal == wanted) {
                    break;
                }
                List<cl_device_id> chosen = platform.devices().subList(0, Math.min(platform.devices().size(), wanted - ordinal));
                if (chosen.isEmpty()) {
                    continue;
                }
                ClContext context = ClContext.create(contexts.size(), platform, chosen);
                contexts.add(context);
                for (cl_device_id id : chosen) {
                    ClDeviceFacts facts = ClDeviceFacts.query(new DeviceId(NAME, ordinal++), id, platform);
                    devices.add(new OpenClDevice(facts, context, id, options.binaryCacheEntries()));
                }
            }
        } catch (CLException e) {
            throw ClErrors.toArrayd(e, "opening OpenCL devices");
        }
    }

    @Override
    public KernelCompiler compiler() {
        return compiler;
    }

    /** The compiler with its package-private counters; for tests. */
    OpenClKernelCompiler openClCompiler() {
        return compiler;
    }

    /** After the devices (their streams drained, their slabs released): the contexts. */
    @Override
    protected void closed() {
        for (ClContext context : contexts) {
            try {
                context.release();
            } catch (CLException e) {
                // nothing left to do with it: the process keeps running
            }
        }
        contexts.clear();
    }
}
