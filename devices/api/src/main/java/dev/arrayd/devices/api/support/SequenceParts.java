package dev.arrayd.devices.api.support;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.DeviceCommand;
import java.util.Objects;
import java.util.function.BiConsumer;

/**
 * A {@link DeviceCommand.Sequence} submitted part by part, for backends whose queue entries are single
 * device operations (OpenCL, CUDA): every part is its own entry of the in-order stream, and the caller's
 * callback runs once, with the last part's completion — with the parts' device time added up, or with the
 * first part's failure. Native waits ({@link AfterMarkers}) go with the first part.
 */
public final class SequenceParts {

    private SequenceParts() {
    }

    /**
     * Submits the parts of {@code sequence} in order through {@code submitOne} (the stream's own submit of
     * one command), checking each ({@link DeviceCommand.Sequence#part}); a refused part fails the whole.
     */
    public static void submit(DeviceCommand.Sequence sequence, CommandCallback callback,
            BiConsumer<DeviceCommand, CommandCallback> submitOne) {
        Objects.requireNonNull(callback, "callback");
        AfterMarkers head = callback instanceof AfterMarkers am ? am : null;
        Total total = new Total(head != null ? head.inner() : callback, sequence.parts().size());
        for (int i = 0; i < sequence.parts().size(); i++) {
            DeviceCommand part;
            try {
                part = sequence.part(i);
            } catch (ArraydException e) {
                total.failed(e);
                for (int rest = i + 1; rest < sequence.parts().size(); rest++) {
                    total.failed(e); // counted, so that the caller hears exactly once
                }
                return;
            }
            CommandCallback cb = i == 0 && head != null ? new AfterMarkers(total, head.after()) : total;
            submitOne.accept(part, cb);
        }
    }

    /** Counts the parts' completions; the last one reports to the caller. Called on the stream's one worker. */
    private static final class Total implements CommandCallback {
        private final CommandCallback caller;
        private int left;
        private long nanos;
        private ArraydException failure;

        Total(CommandCallback caller, int parts) {
            this.caller = caller;
            this.left = parts;
        }

        @Override
        public synchronized void completed(long deviceNanos) {
            nanos += deviceNanos;
            done();
        }

        @Override
        public synchronized void failed(ArraydException cause) {
            if (failure == null) {
                failure = cause;
            }
            done();
        }

        private void done() {
            if (--left > 0) {
                return;
            }
            if (failure != null) {
                caller.failed(failure);
            } else {
                caller.completed(nanos);
            }
        }
    }
}
