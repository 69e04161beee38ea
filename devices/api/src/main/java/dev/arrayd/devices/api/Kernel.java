package dev.arrayd.devices.api;

import dev.arrayd.devices.api.ir.CheckedKernel;

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

    /**
     * For a kernel compiled from the IR: the checked kernel, whose {@link CheckedKernel#checkLaunch} says what a
     * launch must satisfy (grid, scalar bounds, buffer extents), so that a scheduler can refuse a launch before it
     * runs. A kernel a compile cache found by its content carries only those launch checks
     * ({@link CheckedKernel#forLaunches}: not {@link CheckedKernel#renderable()}). Null for a kernel compiled from
     * native source.
     */
    default CheckedKernel ir() {
        return null;
    }
}
