package dev.arrayd.client;

import java.util.List;

/**
 * Every device of the daemon and every backend, available or not.
 *
 * @param devices  the devices, in the daemon's order
 * @param backends the backends, with the reason for each unavailable one
 */
public record DeviceInventory(List<DeviceInfo> devices, List<BackendInfo> backends) {
    public DeviceInventory {
        devices = List.copyOf(devices);
        backends = List.copyOf(backends);
    }
}
