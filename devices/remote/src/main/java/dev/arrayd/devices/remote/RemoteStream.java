package dev.arrayd.devices.remote;

import dev.arrayd.client.Event;
import dev.arrayd.client.EventResult;
import dev.arrayd.client.StreamHandle;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.api.NativeStream;
import dev.arrayd.devices.api.StreamMarker;
import dev.arrayd.devices.api.support.GuardedBy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A stream of a peer's device: a stream of this daemon's session on the peer (made on first use, again after the
 * link was lost). Commands are sent as they come, without waiting for earlier ones, so a pipeline of commands
 * costs no round trip each; the peer keeps them in order. Streams of the same peer wait for each other's
 * {@link RemoteMarker markers} on the peer.
 */
final class RemoteStream implements NativeStream {

    private static final Logger log = LoggerFactory.getLogger(RemoteStream.class);
    private static final StreamMarker[] NO_MARKERS = new StreamMarker[0];

    private final RemoteDevice device;
    private final String name;
    private final AtomicInteger outstanding = new AtomicInteger();
    /** Sends of this stream, one at a time: the peer's order is the order they reach its session. */
    private final Object sendLock = new Object();
    @GuardedBy("sendLock")
    private StreamHandle handle;
    @GuardedBy("sendLock")
    private int handleGeneration;
    private volatile RemoteMarker end;
    private volatile CompletableFuture<?> tail = CompletableFuture.completedFuture(null);

    RemoteStream(RemoteDevice device, String name) {
        this.device = device;
        this.name = name;
    }

    @Override
    public DeviceId device() {
        return device.id();
    }

    @Override
    public void submit(DeviceCommand command, CommandCallback callback) {
        submitAfter(NO_MARKERS, command, callback);
    }

    @Override
    public StreamMarker mark() {
        RemoteMarker m = end;
        return m != null ? m : new RemoteMarker(device.link(), 0, null);
    }

    @Override
    public boolean canWaitFor(StreamMarker marker) {
        return marker instanceof RemoteMarker m && m.link() == device.link();
    }

    @Override
    public void submitAfter(StreamMarker[] after, DeviceCommand command, CommandCallback callback) {
        outstanding.incrementAndGet();
        PeerLink link = device.link();
        PeerLink.Connection c = null;
        List<CompletableFuture<EventResult>> parts;
        try {
            c = link.connection();
            synchronized (sendLock) {
                List<Long> waits = new ArrayList<>(after.length);
                for (StreamMarker m : after) {
                    if (m instanceof RemoteMarker r && r.event() != null && r.generation() == c.generation()) {
                        waits.add(r.event().id());
                    }
                }
                PeerCommands sent = new PeerCommands(device, c, stream(c).id(), waits);
                sent.send(command);
                parts = sent.parts();
                Event last = sent.last();
                if (last != null) {
                    end = new RemoteMarker(link, c.generation(), last);
                    tail = last.future();
                }
            }
        } catch (ArraydException e) {
            outstanding.decrementAndGet();
            callback.failed(e);
            return;
        } catch (RuntimeException e) {
            outstanding.decrementAndGet();
            callback.failed(c == null ? link.unavailable(e.toString()) : link.failure(c, e));
            return;
        }
        PeerLink.Connection conn = c;
        CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new)).whenCompleteAsync((v, t) -> {
            outstanding.decrementAndGet();
            if (t != null) {
                callback.failed(link.failure(conn, t));
                return;
            }
            long nanos = 0;
            for (CompletableFuture<EventResult> p : parts) {
                nanos += p.join().deviceNanos();
            }
            callback.completed(nanos);
        }, link.completions());
    }

    /** The peer stream of connection {@code c}, made now when this stream has none there yet. */
    @GuardedBy("sendLock")
    private StreamHandle stream(PeerLink.Connection c) {
        if (handle == null || handleGeneration != c.generation()) {
            handle = device.link().await(c, c.session().createStream(device.peerDevice()));
            handleGeneration = c.generation();
        }
        return handle;
    }

    @Override
    public boolean isIdle() {
        return outstanding.get() == 0;
    }

    @Override
    public void close() {
        try {
            tail.handle((v, t) -> null).get(device.link().options().callTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            log.debug("stream {} of {}: its last command did not finish in time", name, device.id(), e);
        }
        synchronized (sendLock) {
            PeerLink.Connection c = device.link().currentOrNull();
            if (handle != null && c != null && c.generation() == handleGeneration) {
                c.session().destroyStream(handle);
            }
            handle = null;
        }
    }

    @Override
    public String toString() {
        return device.id() + "/" + name;
    }
}
