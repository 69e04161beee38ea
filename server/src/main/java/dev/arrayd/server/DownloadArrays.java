package dev.arrayd.server;

import dev.arrayd.devices.api.support.ByteArrayPool;
import java.util.function.IntFunction;

/**
 * The arrays inline downloads copy their bytes into (session-stream completions, {@code ReadBuffer} windows), used
 * again once their bytes are sent. A new 8 MiB array costs the JVM a pass of zeroing, heap regions of its own and a
 * collection when dropped, and a copy into it runs at a fraction of the speed of a copy into a kept one (2-9 against
 * 16 GB/s on the 2-core VM of docs/benchmarks.md).
 *
 * <p>Reuse is safe only on a transport that copies a message's bytes into its own buffers while the message is sent
 * (Netty does, inside {@code onNext}): one that hands the message object itself to the receiver (the in-process
 * transport the tests use) would let the next download overwrite bytes the receiver has not read yet, so there every
 * array is new and none is given back. Arrays of one length are kept (the windows', and the session-stream downloads'
 * of that length: the Python client's are); others are new each time. A taken array that is never given back (its
 * command failed, its stream ended) is left to the collector.
 */
final class DownloadArrays implements IntFunction<byte[]> {

    /** Bytes of a kept array: a {@code ReadBuffer} window, and a session-stream download that clients cut at this size. */
    static final int WINDOW_BYTES = 8 << 20;
    /** Arrays kept between uses (64 MiB). */
    static final int KEEP = 8;

    /** Null: none kept. */
    private final ByteArrayPool pool;

    private DownloadArrays(ByteArrayPool pool) {
        this.pool = pool;
    }

    /** Arrays kept for reuse: for a transport that copies a message's bytes while it is sent. */
    static DownloadArrays reused() {
        return new DownloadArrays(new ByteArrayPool(WINDOW_BYTES, KEEP));
    }

    /** New arrays every time, never reused: for a transport that passes messages by reference. */
    static DownloadArrays fresh() {
        return new DownloadArrays(null);
    }

    /** An array of {@code length} bytes whose contents are left over (the download overwrites them whole). */
    @Override
    public byte[] apply(int length) {
        return pool != null && length == pool.size() ? pool.take() : new byte[length];
    }

    /** An array of {@link #WINDOW_BYTES}, for a window whose first bytes a download fills. */
    byte[] window() {
        return apply(WINDOW_BYTES);
    }

    /**
     * {@code array}'s bytes have been sent (the transport holds its own copy) and nothing reads it any more: it may
     * be the next download's.
     */
    void sent(byte[] array) {
        if (pool != null && array.length == pool.size()) {
            pool.give(array);
        }
    }

    /** Arrays kept now (tests). */
    int kept() {
        return pool == null ? 0 : pool.kept();
    }
}
