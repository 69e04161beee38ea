package dev.arrayd.devices.opencl;

import org.jocl.CL;
import org.jocl.cl_context;
import org.jocl.cl_context_properties;
import org.jocl.cl_device_id;

import java.util.List;

/**
 * One {@code cl_context} per platform, holding every device opened from it. Programs are built per
 * context (once for all its devices), and a {@code cl_mem} of the context may be used by any of its
 * devices, which is what later makes device-to-device copies direct within a platform.
 *
 * @param index position among the backend's contexts; kernels keep per-context handles by it
 */
record ClContext(int index, ClPlatform platform, cl_context context, List<cl_device_id> devices) {

    ClContext {
        devices = List.copyOf(devices);
    }

    static ClContext create(int index, ClPlatform platform, List<cl_device_id> devices) {
        cl_context_properties properties = new cl_context_properties();
        properties.addProperty(CL.CL_CONTEXT_PLATFORM, platform.id());
        cl_context context;
        try {
            context = CL.clCreateContext(properties, devices.size(), devices.toArray(cl_device_id[]::new),
                    null, null, null);
        } finally {
            DriverSignals.restore();
        }
        return new ClContext(index, platform, context, devices);
    }

    void release() {
        CL.clReleaseContext(context);
    }
}
