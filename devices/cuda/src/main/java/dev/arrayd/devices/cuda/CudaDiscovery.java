package dev.arrayd.devices.cuda;

import jcuda.driver.CUdevice;
import jcuda.driver.JCudaDriver;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * {@code cuInit} and the devices it finds. Touches JCuda: called only after {@link LibraryProbe} found the
 * driver library. Results are returned, not thrown, because "no usable GPU" is an expected outcome that
 * becomes the backend's unavailable reason.
 */
final class CudaDiscovery {

    private static final int MAX_THREADS_PER_BLOCK = 1;
    private static final int MAX_BLOCK_DIM_X = 2;
    private static final int MAX_GRID_DIM_X = 5;
    private static final int MAX_SHARED_MEMORY_PER_BLOCK = 8;
    private static final int MULTIPROCESSOR_COUNT = 16;
    private static final int INTEGRATED = 18;
    private static final int ASYNC_ENGINE_COUNT = 40;
    private static final int UNIFIED_ADDRESSING = 41;
    private static final int COMPUTE_CAPABILITY_MAJOR = 75;
    private static final int COMPUTE_CAPABILITY_MINOR = 76;

    /** Either the devices found, or why there are none. */
    record Found(List<CUdevice> devices, List<CudaDeviceFacts> facts, int driverVersion, Optional<String> problem) {}

    private CudaDiscovery() {}

    static Found discover() {
        int init = JCudaDriver.cuInit(0);
        if (init != CudaErrors.CUDA_SUCCESS) {
            return none("cuInit failed: " + CudaErrors.name(init) + " (" + init + ")"
                    + (init == CudaErrors.CUDA_ERROR_NO_DEVICE ? ": the driver sees no CUDA-capable device" : ""));
        }
        int[] version = new int[1];
        JCudaDriver.cuDriverGetVersion(version);
        int[] count = new int[1];
        int r = JCudaDriver.cuDeviceGetCount(count);
        if (r != CudaErrors.CUDA_SUCCESS) {
            return none("cuDeviceGetCount failed: " + CudaErrors.name(r) + " (" + r + ")");
        }
        if (count[0] == 0) {
            return none("no CUDA device: cuDeviceGetCount found 0 (driver version " + version[0] + ")");
        }
        List<CUdevice> devices = new ArrayList<>();
        List<CudaDeviceFacts> facts = new ArrayList<>();
        for (int i = 0; i < count[0]; i++) {
            CUdevice d = new CUdevice();
            r = JCudaDriver.cuDeviceGet(d, i);
            if (r != CudaErrors.CUDA_SUCCESS) {
                return none("cuDeviceGet(" + i + ") failed: " + CudaErrors.name(r) + " (" + r + ")");
            }
            devices.add(d);
            facts.add(facts(d));
        }
        return new Found(List.copyOf(devices), List.copyOf(facts), version[0], Optional.empty());
    }

    private static Found none(String problem) {
        return new Found(List.of(), List.of(), 0, Optional.of(problem));
    }

    static CudaDeviceFacts facts(CUdevice d) {
        byte[] name = new byte[256];
        JCudaDriver.cuDeviceGetName(name, name.length, d);
        int n = 0;
        while (n < name.length && name[n] != 0) {
            n++;
        }
        long[] total = new long[1];
        CudaErrors.check(JCudaDriver.cuDeviceTotalMem(total, d), "cuDeviceTotalMem");
        int[] block = {attr(d, MAX_BLOCK_DIM_X), attr(d, MAX_BLOCK_DIM_X + 1), attr(d, MAX_BLOCK_DIM_X + 2)};
        long[] grid = {attr(d, MAX_GRID_DIM_X), attr(d, MAX_GRID_DIM_X + 1), attr(d, MAX_GRID_DIM_X + 2)};
        return new CudaDeviceFacts(new String(name, 0, n, StandardCharsets.UTF_8), attr(d, COMPUTE_CAPABILITY_MAJOR),
                attr(d, COMPUTE_CAPABILITY_MINOR), total[0], attr(d, MULTIPROCESSOR_COUNT), attr(d, MAX_THREADS_PER_BLOCK), block,
                grid, attr(d, MAX_SHARED_MEMORY_PER_BLOCK), attr(d, ASYNC_ENGINE_COUNT), attr(d, UNIFIED_ADDRESSING) != 0,
                attr(d, INTEGRATED) != 0);
    }

    private static int attr(CUdevice d, int attribute) {
        int[] v = new int[1];
        CudaErrors.check(JCudaDriver.cuDeviceGetAttribute(v, attribute, d), "cuDeviceGetAttribute(" + attribute + ")");
        return v[0];
    }
}
