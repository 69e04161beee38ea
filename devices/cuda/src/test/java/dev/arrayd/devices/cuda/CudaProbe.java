package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.Device;
import java.util.List;
import java.util.Optional;
import jcuda.driver.JCudaDriver;

/**
 * What the GPU check kit reports first: whether this machine has a usable CUDA device, and if not, exactly
 * why; if so, each device, the driver's CUDA version and the NVRTC library CUDA C and IR kernels compile
 * with. A main on the backend's test class path (it reads the backend's package-private state). Exits 0
 * either way; the last line is {@code RESULT cuda-probe available=0|1 ...}.
 */
public final class CudaProbe {

    private CudaProbe() {}

    public static void main(String[] args) {
        try (CudaBackend backend = new CudaBackend()) {
            Optional<String> reason = backend.unavailableReason();
            if (reason.isPresent()) {
                System.out.println("cuda: unavailable: " + reason.get());
                System.out.println("nvrtc: " + backend.nvrtcProblem().map(p -> "unavailable: " + p)
                        .orElseGet(() -> backend.nvrtcLibrary().toString()));
                System.out.println("RESULT cuda-probe available=0");
                return;
            }
            List<Device> devices = backend.openDevices(0);
            int[] driver = new int[1];
            JCudaDriver.cuDriverGetVersion(driver);
            String driverVersion = driver[0] / 1000 + "." + driver[0] % 1000 / 10;
            for (Device d : devices) {
                System.out.printf("cuda: %s %s, %d MiB, %d multiprocessors%n", d.id(), d.info().name(),
                        d.info().memoryBytes() >> 20, d.info().computeUnits());
            }
            System.out.println("driver: CUDA " + driverVersion);
            String nvrtc = backend.nvrtcProblem().map(p -> "unavailable: " + p).orElseGet(() -> backend.nvrtcLibrary().toString());
            System.out.println("nvrtc: " + nvrtc);
            System.out.printf("RESULT cuda-probe available=1 devices=%d device=\"%s\" driver_cuda=%s nvrtc=\"%s\"%n",
                    devices.size(), devices.getFirst().info().name(), driverVersion, nvrtc);
        }
    }
}
