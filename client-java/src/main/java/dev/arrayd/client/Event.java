package dev.arrayd.client;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * The event a command signals when it completes. The id is assigned when the command is enqueued, so a
 * later command can wait on it before it has been sent.
 *
 * <p>The future completes with an {@link EventResult} in state {@link EventState#SUCCEEDED}, or fails
 * with an {@link ArraydCommandException} carrying the daemon's {@code Status}. It completes on a gRPC
 * transport thread: hop with {@code thenApplyAsync} for heavy work. Completing or cancelling it yourself
 * has no effect on the daemon.
 *
 * @param id     the event id, unique and increasing within the session
 * @param future completes with the command
 */
public record Event(long id, CompletableFuture<EventResult> future) {
    public Event {
        if (id <= 0) {
            throw new IllegalArgumentException("id: " + id + " (expected: > 0)");
        }
        Objects.requireNonNull(future, "future");
    }
}
