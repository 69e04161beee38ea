package dev.arrayd.devices.api.support;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CommandCallback;

import java.util.concurrent.CompletableFuture;

/**
 * A command's completion as a future, for a caller that waits for one command (tools, benchmarks, tests): it
 * completes with the command's device nanoseconds, or exceptionally with the {@link ArraydException} it failed with.
 * Pass it as the command's callback: {@code stream.submit(command, done = new CommandFuture())}.
 */
public final class CommandFuture extends CompletableFuture<Long> implements CommandCallback {

    @Override
    public void completed(long deviceNanos) {
        complete(deviceNanos);
    }

    @Override
    public void failed(ArraydException cause) {
        completeExceptionally(cause);
    }
}
