package dev.arrayd.benchmarks.jmh;

import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.api.NativeStream;
import java.util.ArrayDeque;

/**
 * A stream that does nothing, in one of two ways. Immediate: a command completes inside
 * {@code submit} / {@code tryRunInline}, so a benchmark sees only the scheduler's own cost. Deferred:
 * commands queue until {@link #drain()} completes them (and whatever their completions release), so
 * commands can be submitted while their dependencies are still pending. Single-threaded, like a JMH
 * benchmark thread.
 */
final class NoOpStream implements NativeStream {

    private record Queued(DeviceCommand command, CommandCallback callback) {}

    private final DeviceId device;
    private final boolean deferred;
    private final ArrayDeque<Queued> queue = new ArrayDeque<>();

    NoOpStream(DeviceId device, boolean deferred) {
        this.device = device;
        this.deferred = deferred;
    }

    @Override
    public DeviceId device() {
        return device;
    }

    @Override
    public void submit(DeviceCommand command, CommandCallback callback) {
        if (deferred) {
            queue.add(new Queued(command, callback));
        } else {
            callback.completed(0);
        }
    }

    @Override
    public boolean tryRunInline(DeviceCommand command, CommandCallback callback) {
        if (deferred) {
            return false;
        }
        callback.completed(0);
        return true;
    }

    /** Completes queued commands until none is left; returns how many. */
    int drain() {
        int n = 0;
        Queued q;
        while ((q = queue.poll()) != null) {
            q.callback().completed(0);
            n++;
        }
        return n;
    }

    @Override
    public boolean isIdle() {
        return queue.isEmpty();
    }

    @Override
    public void close() {
        drain();
    }
}
