package dev.arrayd.server;

import com.google.protobuf.UnsafeByteOperations;
import dev.arrayd.proto.v1.ReadBufferResponse;
import dev.arrayd.scheduler.Event;
import io.grpc.stub.ServerCallStreamObserver;
import java.util.List;
import java.util.concurrent.Semaphore;

/**
 * Streams the downloaded windows of one {@code ReadBuffer} call in chunks, on a virtual thread of its own: never on
 * the device's stream thread that completed the downloads (serializing the chunks there would keep the device from
 * its next command, and a reader's next window behind this one's sending), and only as fast as the call's flow
 * control lets chunks out (the call's ready handler wakes it), so a slow reader holds the window's bytes and no more.
 */
final class ReadBufferSender {

    private final ServerCallStreamObserver<ReadBufferResponse> out;
    private final Semaphore ready = new Semaphore(0);

    /** Must be made while the call's handler runs: it installs the call's ready handler. */
    ReadBufferSender(ServerCallStreamObserver<ReadBufferResponse> out) {
        this.out = out;
        out.setOnReadyHandler(ready::release);
    }

    /** Wakes a sender waiting for the transport (the call was cancelled). */
    void cancelled() {
        ready.release();
    }

    /**
     * Once the last of {@code windows} is done (they complete in order: one stream), runs {@code downloaded}, then
     * sends each window's bytes (its result) from {@code offset} in chunks of at most {@code chunk} bytes and
     * completes the call; or fails it with the first failed window's cause. Runs {@code finished} once nothing
     * more is sent (the windows' bytes are no longer needed).
     */
    void sendWhenDone(List<Event> windows, long offset, int chunk, Runnable downloaded, Runnable finished) {
        sendWhenDone(windows, null, 0, null, offset, chunk, downloaded, finished);
    }

    /**
     * As {@link #sendWhenDone(List, long, int, Runnable)} for one window downloaded into {@code into}, an array of
     * {@code arrays}: its first {@code bytes} bytes are sent, and it goes back once they are or the call ends.
     */
    void sendWhenDone(Event window, byte[] into, int bytes, DownloadArrays arrays, long offset, int chunk,
            Runnable downloaded, Runnable finished) {
        sendWhenDone(List.of(window), into, bytes, arrays, offset, chunk, downloaded, finished);
    }

    private void sendWhenDone(List<Event> windows, byte[] into, int bytes, DownloadArrays arrays, long offset, int chunk,
            Runnable downloaded, Runnable finished) {
        windows.getLast().onDone(last -> {
            downloaded.run();
            Thread.ofVirtual().name("arrayd-read-buffer").start(() -> {
                // before the call ends (a client's next call may count on it), or when sending stops otherwise
                Runnable done = new Runnable() {
                    private boolean ran;

                    @Override
                    public void run() {
                        if (!ran) {
                            ran = true;
                            if (into != null) {
                                arrays.sent(into); // (the download is done, and every message is sent)
                            }
                            finished.run();
                        }
                    }
                };
                try {
                    send(windows, into, bytes, offset, chunk, done);
                } finally {
                    done.run();
                }
            });
        });
    }

    private void send(List<Event> windows, byte[] into, int bytes, long offset, int chunk, Runnable done) {
        try {
            long at = offset;
            for (Event w : windows) {
                if (w.isFailed()) {
                    done.run();
                    Calls.fail(out, w.failure());
                    return;
                }
                byte[] data = into != null ? into : (byte[]) w.result();
                int length = into != null ? bytes : data.length;
                for (int o = 0; o < length || (o == 0 && length == 0); o += chunk) {
                    if (!awaitReady()) {
                        return;
                    }
                    int len = Math.min(chunk, length - o);
                    out.onNext(ReadBufferResponse.newBuilder().setOffsetBytes(at + o)
                            .setData(UnsafeByteOperations.unsafeWrap(data, o, len)).build());
                    if (length == 0) {
                        break;
                    }
                }
                at += length;
            }
            done.run();
            if (!out.isCancelled()) {
                out.onCompleted();
            }
        } catch (RuntimeException e) {
            done.run();
            Calls.fail(out, e);
        }
    }

    /** Waits until the transport takes more; false once the call is cancelled. */
    private boolean awaitReady() {
        while (!out.isCancelled()) {
            if (out.isReady()) {
                return true;
            }
            ready.acquireUninterruptibly();
        }
        return false;
    }
}
