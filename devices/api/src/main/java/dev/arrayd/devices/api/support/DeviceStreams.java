package dev.arrayd.devices.api.support;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.NativeStream;
import java.util.ArrayList;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * A device's open streams and whether the device is closed: what every backend's {@code Device} keeps
 * for {@code newStream} and {@code close}. A stream made while the device closes is closed at once and
 * refused, so none outlives the device.
 */
public final class DeviceStreams<S extends NativeStream> {

    private final DeviceId device;
    private final Set<S> streams = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    public DeviceStreams(DeviceId device) {
        this.device = device;
    }

    /** Makes and registers a stream; FAILED_PRECONDITION once the device is closed. */
    public S open(Supplier<S> make) {
        checkOpen();
        S s = make.get();
        streams.add(s);
        if (closed) {
            s.close();
            checkOpen();
        }
        return s;
    }

    /** A stream that closed itself is forgotten. */
    public void forget(S s) {
        streams.remove(s);
    }

    /** FAILED_PRECONDITION naming the device once it is closed. */
    public void checkOpen() {
        if (closed) {
            throw new ArraydException(ErrorCode.FAILED_PRECONDITION, device + ": closed (expected: an open device)");
        }
    }

    public boolean isClosed() {
        return closed;
    }

    /**
     * Marks the device closed and closes every stream (each drains its queued work first). False when it
     * was closed already: the caller releases the device's resources only when this returns true.
     */
    public synchronized boolean closeAll() {
        if (closed) {
            return false;
        }
        closed = true;
        for (S s : new ArrayList<>(streams)) {
            s.close();
        }
        return true;
    }
}
