package dev.arrayd.devices.api.support;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.Backend;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.ErrorCode;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What every backend does alike: it probes its native library or toolchain once ({@link #probe()}),
 * opens its devices once ({@link #open}; a second call is FAILED_PRECONDITION, a negative count
 * INVALID_ARGUMENT, an unavailable backend UNAVAILABLE with the probe's reason), and closes what it
 * opened (also when opening failed half way).
 *
 * @param <D> the backend's device class
 */
public abstract class AbstractBackend<D extends Device> implements Backend {

    private final String name;
    private final boolean opensWhenUnavailable;
    @GuardedBy("this")
    private Optional<String> unavailableReason; // probed once
    @GuardedBy("this")
    private final List<D> devices = new ArrayList<>();
    /** The open devices, for readers outside the lock (a compiler building for every open device). */
    private volatile List<D> openDevices = List.of();

    /**
     * @param opensWhenUnavailable whether devices open although the probe found a problem (the CPU: memory
     *                             and transfers work without the compiler the probe looks for)
     */
    protected AbstractBackend(String name, boolean opensWhenUnavailable) {
        this.name = name;
        this.opensWhenUnavailable = opensWhenUnavailable;
    }

    @Override
    public final String name() {
        return name;
    }

    @Override
    public final synchronized Optional<String> unavailableReason() {
        if (unavailableReason == null) {
            unavailableReason = probe();
        }
        return unavailableReason;
    }

    /** Why the backend cannot be used (empty when it can); called once, under this object's lock. */
    protected abstract Optional<String> probe();

    @Override
    public final synchronized List<Device> openDevices(int count) {
        if (count < 0) {
            throw ArraydException.invalid("count: " + count + " (expected: >= 0)");
        }
        Optional<String> reason = unavailableReason();
        if (reason.isPresent() && !opensWhenUnavailable) {
            throw new ArraydException(ErrorCode.UNAVAILABLE, name + " backend unavailable: " + reason.get());
        }
        if (!devices.isEmpty()) {
            throw new ArraydException(ErrorCode.FAILED_PRECONDITION,
                    "openDevices: " + name + " devices already open (expected: one call per backend)");
        }
        try {
            open(count, devices);
        } catch (RuntimeException e) {
            closeAll();
            throw e;
        }
        openDevices = List.copyOf(devices);
        return List.copyOf(devices);
    }

    /**
     * Opens {@code count} devices (0: what the backend finds, or one for backends that split a single
     * resource), adding each to {@code opened} as soon as it is open: whatever is there is closed if this
     * throws. Called once, under this object's lock.
     */
    protected abstract void open(int count, List<D> opened);

    /** The devices opened (empty before {@link #openDevices} and after {@link #close}). */
    protected final List<D> opened() {
        return openDevices;
    }

    /** Closes every device opened here, then whatever else the backend holds ({@link #closed()}). */
    @Override
    public final synchronized void close() {
        closeAll();
    }

    private void closeAll() {
        openDevices = List.of();
        try {
            for (D d : devices) {
                closeDevice(d);
            }
        } finally {
            devices.clear();
            closed();
        }
    }

    /** Closes one device (draining its streams, freeing its memory). */
    protected void closeDevice(D device) {
        device.close();
    }

    /** After the devices closed: what the backend holds beside them (contexts). */
    protected void closed() {
    }
}
