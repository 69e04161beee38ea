package dev.arrayd.devices.opencl;

import dev.arrayd.devices.api.support.SignalActions;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JVM's signal actions, taken before this process's first OpenCL call and put back after each call that may
 * initialize a driver: PoCL's CPU driver installs LLVM's crash handlers over the JVM's when it initializes its
 * devices, which would end the daemon at the next fault the JVM handles itself, and at SIGTERM without its shutdown
 * hooks ({@link SignalActions}).
 */
final class DriverSignals {

    private static final Logger log = LoggerFactory.getLogger(DriverSignals.class);

    /** Taken when this class initializes: by {@link ClDiscovery#platforms()}, before any OpenCL call. */
    private static final Optional<SignalActions> JVM = SignalActions.take();

    private DriverSignals() {}

    /** Makes sure this class has taken the JVM's actions; call before the first OpenCL call. */
    static void taken() {
        // (initializing the class takes them)
    }

    /** Puts the JVM's actions back where an OpenCL call replaced them (a no-op where nothing changed). */
    static void restore() {
        JVM.ifPresent(jvm -> {
            List<Integer> restored = jvm.restoreChanged();
            if (!restored.isEmpty()) {
                log.info("put back the JVM's handlers of signals {} that the OpenCL driver replaced", restored);
            }
        });
    }
}
