package dev.arrayd.devices.opencl;

import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.api.DeviceInfo;
import dev.arrayd.devices.api.Dialect;
import org.jocl.CL;
import org.jocl.cl_device_id;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * What {@code clGetDeviceInfo} says about a device, as arrayd's {@link DeviceInfo} plus the limits
 * only the backend needs.
 *
 * @param maxAllocBytes    {@code CL_DEVICE_MAX_MEM_ALLOC_SIZE}: the largest single {@code cl_mem}, so the
 *                         largest slab
 * @param exactDivideSqrt  {@code CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT} in {@code CL_DEVICE_SINGLE_FP_CONFIG}: IR
 *                         builds then ask for IEEE f32 division and square root
 * @param irMissing        what the device lacks for IR kernels (empty when it runs them): the renderer's
 *                         helpers compute in double ({@code cl_khr_fp64}) and its guards record the first
 *                         hit with a 64-bit compare-and-swap ({@code cl_khr_int64_base_atomics})
 */
record ClDeviceFacts(DeviceInfo info, long maxAllocBytes, boolean exactDivideSqrt, List<String> irMissing) {

    ClDeviceFacts {
        irMissing = List.copyOf(irMissing);
    }

    /** Streams per device the scheduler shares among sessions: one for compute, one to overlap transfers. */
    static final int SUGGESTED_STREAMS = 2;

    static ClDeviceFacts query(DeviceId id, cl_device_id device, ClPlatform platform) {
        String name = ClInfo.deviceString(device, CL.CL_DEVICE_NAME) + " (" + platform.name() + ")";
        long memory = ClInfo.deviceUlong(device, CL.CL_DEVICE_GLOBAL_MEM_SIZE);
        int computeUnits = ClInfo.deviceUint(device, CL.CL_DEVICE_MAX_COMPUTE_UNITS);
        long maxGroup = ClInfo.deviceSize(device, CL.CL_DEVICE_MAX_WORK_GROUP_SIZE);
        int dims = ClInfo.deviceUint(device, CL.CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS);
        long[] itemSizes = ClInfo.deviceSizes(device, CL.CL_DEVICE_MAX_WORK_ITEM_SIZES, dims);
        long local = ClInfo.deviceUlong(device, CL.CL_DEVICE_LOCAL_MEM_SIZE);
        long alignBits = ClInfo.deviceUint(device, CL.CL_DEVICE_MEM_BASE_ADDR_ALIGN) & 0xffff_ffffL;
        long maxAlloc = ClInfo.deviceUlong(device, CL.CL_DEVICE_MAX_MEM_ALLOC_SIZE);
        String extensions = " " + ClInfo.deviceString(device, CL.CL_DEVICE_EXTENSIONS) + " ";
        long deviceType = ClInfo.deviceUlong(device, CL.CL_DEVICE_TYPE);
        boolean unified = ClInfo.deviceBool(device, CL.CL_DEVICE_HOST_UNIFIED_MEMORY,
                (deviceType & CL.CL_DEVICE_TYPE_CPU) != 0);

        Set<DType> dtypes = EnumSet.of(DType.F32, DType.I32, DType.I64, DType.U8, DType.BF16);
        List<String> irMissing = new ArrayList<>();
        if (extensions.contains(" cl_khr_fp64 ") || hasDoubleConfig(device)) {
            dtypes.add(DType.F64);
        } else {
            irMissing.add("cl_khr_fp64");
        }
        if (!extensions.contains(" cl_khr_int64_base_atomics ")) {
            irMissing.add("cl_khr_int64_base_atomics");
        }
        if (extensions.contains(" cl_khr_fp16 ")) {
            dtypes.add(DType.F16);
        }
        List<Long> sizes = new ArrayList<>();
        for (long s : itemSizes) {
            sizes.add(s);
        }
        // CL_DEVICE_MEM_BASE_ADDR_ALIGN is in bits; arrayd places every buffer at a multiple of it in bytes
        long alignment = Math.max(1, Long.highestOneBit(Math.max(8, alignBits) / 8));
        int gridDims = Math.max(1, Math.min(3, dims));
        Set<Dialect> dialects = irMissing.isEmpty() ? Set.of(Dialect.OPENCL_C, Dialect.IR) : Set.of(Dialect.OPENCL_C);
        DeviceInfo info = new DeviceInfo(id, name, memory, Math.max(1, computeUnits), maxGroup, sizes, local,
                alignment, dtypes, SUGGESTED_STREAMS, unified, dialects, gridDims);
        return new ClDeviceFacts(info, maxAlloc, exactDivideSqrt(device), irMissing);
    }

    private static boolean exactDivideSqrt(cl_device_id device) {
        try {
            return (ClInfo.deviceUlong(device, CL.CL_DEVICE_SINGLE_FP_CONFIG) & CL.CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0;
        } catch (org.jocl.CLException e) {
            return false;
        }
    }

    /** OpenCL 3.0 may report fp64 as {@code __opencl_c_fp64} only; a non-zero fp config says the same. */
    private static boolean hasDoubleConfig(cl_device_id device) {
        try {
            return ClInfo.deviceUlong(device, CL.CL_DEVICE_DOUBLE_FP_CONFIG) != 0;
        } catch (org.jocl.CLException e) {
            return false; // drivers older than 1.2 without cl_khr_fp64 may refuse the query
        }
    }
}
