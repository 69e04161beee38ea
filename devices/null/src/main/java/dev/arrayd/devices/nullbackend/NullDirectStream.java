package dev.arrayd.devices.nullbackend;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.NativeStream;
import java.util.ArrayDeque;

/**
 * A null device's stream without a thread: a command completes on the caller's thread, inside
 * {@code submit} ({@link NullOptions.Completion#IMMEDIATE}), or when {@link NullDevice#drainAll()} takes it
 * ({@link NullOptions.Completion#MANUAL}, so that commands can be submitted while their dependencies are
 * still pending). What is left to measure on it is the scheduler. Single-threaded, like the benchmark
 * thread that drives it; no markers.
 */
final class NullDirectStream implements NativeStream {

    private record Queued(DeviceCommand command, CommandCallback callback) {}

    private final NullDevice device;
    private final boolean manual;
    private final ArrayDeque<Queued> queue = new ArrayDeque<>();
    private boolean closed;

    NullDirectStream(NullDevice device, boolean manual) {
        this.device = device;
        this.manual = manual;
    }

    @Override
    public DeviceId device() {
        return device.id();
    }

    @Override
    public void submit(DeviceCommand command, CommandCallback callback) {
        if (closed) {
            callback.failed(new ArraydException(ErrorCode.FAILED_PRECONDITION, "a stream of " + device.id()
                    + ": closed (expected: an open stream)"));
            return;
        }
        device.options().behaviour().handed(device, command);
        if (manual) {
            queue.add(new Queued(command, callback));
        } else {
            complete(command, callback, false);
        }
    }

    @Override
    public boolean tryRunInline(DeviceCommand command, CommandCallback callback) {
        if (manual || closed) {
            return false;
        }
        device.options().behaviour().handed(device, command);
        device.ranInline();
        complete(command, callback, true);
        return true;
    }

    /** Completes the queued commands (not those their completions queue meanwhile); returns how many. */
    int drain() {
        int n = queue.size();
        for (int i = 0; i < n; i++) {
            Queued q = queue.poll();
            complete(q.command(), q.callback(), false);
        }
        return n;
    }

    private void complete(DeviceCommand command, CommandCallback callback, boolean inline) {
        long nanos;
        try {
            nanos = device.run(command, inline);
        } catch (ArraydException e) {
            callback.failed(e);
            return;
        }
        callback.completed(nanos);
    }

    @Override
    public boolean isIdle() {
        return queue.isEmpty();
    }

    @Override
    public void close() {
        while (drain() > 0) {
            // completions may queue more
        }
        closed = true;
        device.closed(this);
    }
}
