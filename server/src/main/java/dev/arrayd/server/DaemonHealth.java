package dev.arrayd.server;

import dev.arrayd.scheduler.DeviceRuntime;
import io.grpc.BindableService;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.protobuf.services.HealthStatusManager;
import java.util.List;

/**
 * {@code grpc.health.v1.Health}: the overall service {@code ""} and one service per device,
 * {@code arrayd.device.<id>} (e.g. {@code arrayd.device.cpu:0}). A device is SERVING once it is
 * open; the overall service is SERVING when every opened device is. On shutdown everything turns
 * NOT_SERVING at once and stays so (Kubernetes readiness probes stop routing before the drain).
 */
final class DaemonHealth {

    /** The health service name of a device. */
    static String serviceName(String deviceId) {
        return "arrayd.device." + deviceId;
    }

    private final HealthStatusManager manager = new HealthStatusManager();

    DaemonHealth() {
        // until the devices are up, nothing serves (the manager's default for "" is SERVING)
        manager.setStatus(HealthStatusManager.SERVICE_NAME_ALL_SERVICES, ServingStatus.NOT_SERVING);
    }

    BindableService service() {
        return manager.getHealthService();
    }

    /** The devices are open and the server listens. */
    void serving(List<DeviceRuntime> devices) {
        for (DeviceRuntime d : devices) {
            manager.setStatus(serviceName(d.id().toString()), ServingStatus.SERVING);
        }
        manager.setStatus(HealthStatusManager.SERVICE_NAME_ALL_SERVICES, ServingStatus.SERVING);
    }

    /** Shutdown began: every service NOT_SERVING, for good. */
    void shuttingDown() {
        manager.enterTerminalState();
    }
}
