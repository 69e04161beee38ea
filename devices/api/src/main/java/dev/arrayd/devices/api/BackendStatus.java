package dev.arrayd.devices.api;

import java.util.List;

/** Whether a backend loaded, why not if it did not, and what devices it contributes. */
public record BackendStatus(String name, boolean available, String reason, List<DeviceId> devices) {

    public BackendStatus {
        devices = List.copyOf(devices);
        reason = reason == null ? "" : reason;
    }
}
