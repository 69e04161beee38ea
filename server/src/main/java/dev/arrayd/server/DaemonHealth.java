package dev.arrayd.server;

import dev.arrayd.scheduler.DeviceRuntime;
import io.grpc.BindableService;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.protobuf.services.HealthStatusManager;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code grpc.health.v1.Health}: the overall service {@code ""} and one service per device,
 * {@code arrayd.device.<id>} (e.g. {@code arrayd.device.cpu:0}). A device is SERVING once it is
 * open, a peer's device while its peer is reachable; the overall service is SERVING once the devices are open (a daemon
 * whose devices are all its peers', none of which has answered yet, once the first joins). On shutdown everything turns
 * NOT_SERVING at once and stays so (Kubernetes readiness probes stop routing before the drain).
 */
final class DaemonHealth {

    /** The health service name of a device. */
    static String serviceName(String deviceId) {
        return "arrayd.device." + deviceId;
    }

    private final HealthStatusManager manager = new HealthStatusManager();
    /** The server listens ({@link #serving} ran). */
    private boolean listening;
    /** Shutdown began: nothing turns SERVING again. */
    private boolean shutDown;
    /** The devices' service names. */
    private final List<String> devices = new ArrayList<>();

    DaemonHealth() {
        // until the devices are up, nothing serves (the manager's default for "" is SERVING)
        manager.setStatus(HealthStatusManager.SERVICE_NAME_ALL_SERVICES, ServingStatus.NOT_SERVING);
    }

    BindableService service() {
        return manager.getHealthService();
    }

    /**
     * The devices are open and the server listens. A peer's device follows its link from now on: NOT_SERVING while
     * the peer is unreachable, SERVING again when it is back (the overall service stays SERVING: the daemon's
     * other devices still work).
     */
    void serving(List<DeviceRuntime> devices) {
        for (DeviceRuntime d : devices) {
            device(d);
        }
        synchronized (this) {
            listening = true;
            if (!devices.isEmpty()) {
                manager.setStatus(HealthStatusManager.SERVICE_NAME_ALL_SERVICES, ServingStatus.SERVING);
            }
        }
    }

    /**
     * A device's service, following its reachability (also for a device that joins after the start); the overall
     * service turns SERVING with the first device of a daemon that started without one.
     */
    void device(DeviceRuntime d) {
        String name = serviceName(d.id().toString());
        Runnable update = () -> {
            synchronized (this) {
                if (!shutDown) {
                    manager.setStatus(name, d.isReachable() ? ServingStatus.SERVING : ServingStatus.NOT_SERVING);
                }
            }
        };
        synchronized (this) {
            devices.add(name);
        }
        d.watchReachability(update);
        update.run();
        synchronized (this) {
            if (listening && !shutDown) {
                manager.setStatus(HealthStatusManager.SERVICE_NAME_ALL_SERVICES, ServingStatus.SERVING);
            }
        }
    }

    /**
     * Shutdown began: every service NOT_SERVING, for good; the devices before the overall service, so that a
     * client that sees the daemon NOT_SERVING sees its devices so too.
     */
    synchronized void shuttingDown() {
        shutDown = true;
        for (String name : devices) {
            manager.setStatus(name, ServingStatus.NOT_SERVING);
        }
        manager.setStatus(HealthStatusManager.SERVICE_NAME_ALL_SERVICES, ServingStatus.NOT_SERVING);
        manager.enterTerminalState();
    }
}
