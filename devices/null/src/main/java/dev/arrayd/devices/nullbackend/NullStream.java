package dev.arrayd.devices.nullbackend;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.StreamMarker;
import dev.arrayd.devices.api.support.LatchMarker;
import dev.arrayd.devices.api.support.HostStreamWorker;

/**
 * A null device's stream with a worker thread ({@link NullOptions.Completion#WORKER}): commands run in
 * order on the worker, markers are {@link dev.arrayd.devices.api.support.LatchMarker}s (waited for by the
 * worker before the command that waits), and a command offered inline runs on the caller's thread when the
 * behaviour accepts it. The smallest complete stream ({@link HostStreamWorker}): a new backend's stream
 * starts from here.
 */
final class NullStream extends HostStreamWorker {

    private final NullDevice device;

    NullStream(NullDevice device, String name) {
        super(device.id(), name, "null" + device.id().ordinal(), DEFAULT_SPIN_NANOS, device.owner(), "null marker");
        this.device = device;
        start();
    }

    @Override
    public void submitAfter(StreamMarker[] after, DeviceCommand command, CommandCallback callback) {
        device.waitedNatively();
        super.submitAfter(after, command, callback);
    }

    @Override
    public void submit(DeviceCommand command, CommandCallback callback) {
        device.options().behaviour().handed(device, command);
        super.submit(command, callback);
    }

    @Override
    public boolean tryRunInline(DeviceCommand command, CommandCallback callback) {
        if (isClosing() || !device.options().behaviour().acceptsInline(device, command)) {
            return false;
        }
        device.options().behaviour().handed(device, command);
        device.ranInline();
        long nanos = 0;
        ArraydException failure = null;
        try {
            nanos = device.run(command, true);
        } catch (RuntimeException e) {
            failure = failure(command, e);
        }
        callBack(command, callback, nanos, failure);
        return true;
    }

    @Override
    protected void threadStarted() {
        device.workerStarted();
    }

    @Override
    protected void threadEnded() {
        device.workerEnded();
    }

    @Override
    protected void onClosed() {
        device.forget(this);
    }

    @Override
    protected void execute(DeviceCommand command, CommandCallback callback) {
        long nanos = 0;
        ArraydException failure = null;
        try {
            nanos = device.run(command, false);
        } catch (RuntimeException e) {
            failure = failure(command, e);
        }
        complete(command, callback, nanos, failure);
    }

    private ArraydException failure(DeviceCommand command, RuntimeException e) {
        return e instanceof ArraydException a ? a
                : new ArraydException(ErrorCode.INTERNAL, describe(command) + " failed on " + device.id() + ": " + e, e);
    }
}
