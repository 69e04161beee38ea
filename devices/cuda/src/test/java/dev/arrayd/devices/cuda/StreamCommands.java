package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.NativeStream;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Submitting commands to a stream and waiting for them, for the GPU tests of this package. */
final class StreamCommands {

    static final long TIMEOUT_SECONDS = 60;

    private StreamCommands() {}

    /** Submits {@code command}; the future completes with the device nanos or fails with the cause. */
    static CompletableFuture<Long> submit(NativeStream stream, DeviceCommand command) {
        CompletableFuture<Long> done = new CompletableFuture<>();
        stream.submit(command, new CommandCallback() {
            @Override
            public void completed(long deviceNanos) {
                done.complete(deviceNanos);
            }

            @Override
            public void failed(ArraydException cause) {
                done.completeExceptionally(cause);
            }
        });
        return done;
    }

    /** Waits for {@code future}; its failure is rethrown as it came (an ArraydException). */
    static long await(CompletableFuture<Long> future) {
        try {
            return future.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new AssertionError(e.getCause());
        } catch (TimeoutException e) {
            throw new AssertionError("command did not complete within " + TIMEOUT_SECONDS + " s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    static long run(NativeStream stream, DeviceCommand command) {
        return await(submit(stream, command));
    }
}
