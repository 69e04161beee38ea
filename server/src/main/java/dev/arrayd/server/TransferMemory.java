package dev.arrayd.server;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The daemon's budget for transfer data in its heap: the bytes of a session stream's inline uploads from the moment
 * their batch is read until their command is done, of its inline downloads (no region) from their submission until
 * their data is handed to the transport or their command fails, of a unary {@code Submit}'s inline uploads until
 * all of its commands are done, of a recorded graph's uploads until it is destroyed or its session ends, and of
 * {@code WriteBuffer} and {@code ReadBuffer} calls until they end. A
 * batch or call that would take the daemon past it is refused with RESOURCE_EXHAUSTED: without it one client queueing
 * many large transfers at once could exhaust the heap and end the daemon for every tenant. A session stream stops
 * reading well before (at 64 MiB of its own, or half the budget if less), so a client that reads what it downloads
 * meets the budget only when many sessions transfer at once.
 */
final class TransferMemory {

    /** The smallest automatic budget. */
    static final long MIN_AUTOMATIC_BYTES = 64L << 20;

    private final long limit;
    private final AtomicLong held = new AtomicLong();

    /** @param limit bytes; 0 = automatic: half of the JVM's largest heap, at least {@link #MIN_AUTOMATIC_BYTES} */
    TransferMemory(long limit) {
        if (limit < 0) {
            throw new IllegalArgumentException("transfer-memory: " + limit + " (expected: >= 0, 0 = automatic)");
        }
        this.limit = limit > 0 ? limit : Math.max(MIN_AUTOMATIC_BYTES, Runtime.getRuntime().maxMemory() / 2);
    }

    /**
     * What a command holds of the heap until it is done (an upload) or its data is sent (a download): an inline
     * upload's data, an inline download's size (the largest inline download when it reads to the end); 0 for
     * other commands and for transfers through a region.
     */
    static long heldBy(dev.arrayd.scheduler.CommandSpec spec) {
        return switch (spec.op()) {
            case dev.arrayd.scheduler.CommandSpec.DownloadOp d when d.into() == null ->
                    d.sizeBytes() > 0 ? Math.min(d.sizeBytes(), d.maxBytes()) : d.maxBytes();
            case dev.arrayd.scheduler.CommandSpec.UploadOp u when !u.data().isNative() -> u.data().byteSize();
            case dev.arrayd.scheduler.CommandSpec.ScatteredUploadOp u -> u.sizeBytes(); // (the transport's buffers)
            default -> 0;
        };
    }

    /** Takes {@code bytes} of the budget, or refuses them (nothing taken) with RESOURCE_EXHAUSTED naming {@code what}. */
    void hold(long bytes, String what) {
        long now;
        do {
            now = held.get();
            if (bytes > limit - now) {
                throw new ArraydException(ErrorCode.RESOURCE_EXHAUSTED, what + ": " + bytes + " bytes of transfer data "
                        + "(expected: at most " + Math.max(0, limit - now) + " now: the daemon holds " + now + " of its "
                        + "transfer-memory of " + limit + " bytes for uploads not yet run and downloads not yet sent; "
                        + "move less at once, or again once earlier transfers are done)");
            }
        } while (!held.compareAndSet(now, now + bytes));
    }

    /** Takes {@code bytes} whatever the budget says: data that exists already (a graph replay's downloads). */
    void holdAnyway(long bytes) {
        held.addAndGet(bytes);
    }

    /** Gives back {@code bytes} taken before. */
    void release(long bytes) {
        held.addAndGet(-bytes);
    }

    /** Bytes held now. */
    long held() {
        return held.get();
    }

    /** The budget in bytes. */
    long limit() {
        return limit;
    }
}
