package dev.arrayd.devices.opencl;

import org.jocl.CL;
import org.jocl.CLException;
import org.jocl.cl_device_id;
import org.jocl.cl_platform_id;

import java.util.ArrayList;
import java.util.List;

/**
 * Finds platforms and devices through JOCL. Only called once {@link LibraryProbe} found the ICD
 * loader, so that the first touch of {@link CL} (which loads JOCL's native part) cannot fail for
 * lack of it.
 */
final class ClDiscovery {

    /** clGetPlatformIDs' answer when the ICD loader finds no driver (cl_khr_icd). */
    static final int CL_PLATFORM_NOT_FOUND_KHR = -1001;

    private ClDiscovery() {}

    /** Turns on JOCL's exceptions: every failing call throws a {@link CLException} with its status. */
    static void initJocl() {
        CL.setExceptionsEnabled(true);
    }

    /**
     * Every platform with its devices (all types). A platform whose device query fails or finds none
     * is listed with no devices.
     *
     * @throws CLException when clGetPlatformIDs fails, e.g. {@link #CL_PLATFORM_NOT_FOUND_KHR}
     */
    static List<ClPlatform> platforms() {
        DriverSignals.taken();
        try {
            return query();
        } finally {
            DriverSignals.restore(); // (PoCL installs LLVM's signal handlers as it initializes its devices)
        }
    }

    private static List<ClPlatform> query() {
        int[] count = new int[1];
        CL.clGetPlatformIDs(0, null, count);
        cl_platform_id[] ids = new cl_platform_id[count[0]];
        if (ids.length > 0) {
            CL.clGetPlatformIDs(ids.length, ids, null);
        }
        List<ClPlatform> out = new ArrayList<>(ids.length);
        for (cl_platform_id id : ids) {
            String name = ClInfo.platformString(id, CL.CL_PLATFORM_NAME);
            List<cl_device_id> devices = new ArrayList<>();
            try {
                int[] n = new int[1];
                CL.clGetDeviceIDs(id, CL.CL_DEVICE_TYPE_ALL, 0, null, n);
                cl_device_id[] ds = new cl_device_id[n[0]];
                if (ds.length > 0) {
                    CL.clGetDeviceIDs(id, CL.CL_DEVICE_TYPE_ALL, ds.length, ds, null);
                }
                devices.addAll(List.of(ds));
            } catch (CLException e) {
                // CL_DEVICE_NOT_FOUND: a platform without devices is listed empty, the others still count
            }
            out.add(new ClPlatform(id, name, devices));
        }
        return out;
    }
}
