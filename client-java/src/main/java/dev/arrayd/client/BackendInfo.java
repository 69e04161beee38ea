package dev.arrayd.client;

import java.util.List;
import java.util.Objects;

/**
 * A backend of the daemon (cpu, opencl, cuda) and whether it could be loaded.
 *
 * @param name      backend name, e.g. {@code "opencl"}
 * @param available whether the backend loaded
 * @param reason    why it is unavailable (missing native library, no platform, ...); empty when available
 * @param devices   ids of the devices it contributes
 */
public record BackendInfo(String name, boolean available, String reason, List<String> devices) {
    public BackendInfo {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(reason, "reason");
        devices = List.copyOf(devices);
    }
}
