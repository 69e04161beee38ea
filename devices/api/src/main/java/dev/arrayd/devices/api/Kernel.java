package dev.arrayd.devices.api;

/**
 * A compiled entry point, launchable on every device of the backend that compiled it.
 * Backends implement it; everybody else only passes it back in {@link DeviceCommand.Launch}.
 */
public interface Kernel {

    KernelSignature signature();

    /** Name of the backend that compiled it; a launch on another backend's device is refused. */
    String backend();

    default String name() {
        return signature().name();
    }
}
