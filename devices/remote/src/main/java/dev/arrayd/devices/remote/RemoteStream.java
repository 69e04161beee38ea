package dev.arrayd.devices.remote;

import dev.arrayd.client.BufferHandle;
import dev.arrayd.client.Event;
import dev.arrayd.client.EventResult;
import dev.arrayd.client.StreamHandle;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.NativeStream;
import dev.arrayd.devices.api.StreamMarker;
import dev.arrayd.devices.api.support.GuardedBy;
import dev.arrayd.proto.v1.FetchRequest;
import dev.arrayd.proto.v1.PeerServiceGrpc;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A stream of a peer's device: a stream of this daemon's session on the peer (made on first use, again after the
 * link was lost). Commands are sent as they come, without waiting for earlier ones, so a pipeline of commands
 * costs no round trip each; the peer keeps them in order. A command waits for another stream's
 * {@link RemoteMarker marker} of the same peer on the peer ({@code wait_events}; this daemon's session there is
 * opened so that such waits only order, see {@link PeerLink}), and for any other marker here ({@link #submitAfter}).
 *
 * <p>A copy from another peer's device is a fetch: this stream's peer reads the bytes from the other peer
 * ({@code PeerService.Fetch}), so they never pass through this daemon. It starts once the stream's earlier
 * commands are done, and later commands are sent once it is (the stream's {@code gate}). A peer that cannot
 * reach the other (not in its {@code peers}) gets the bytes staged through this daemon instead.
 *
 * <p>A command's deadline ({@link CommandCallback#startByNanos}) goes with it as the peer command's deadline (wall
 * clock: the daemons' clocks are assumed in step), so a command queued on the peer does not start late there
 * either; a fetch checks it before it starts.
 */
final class RemoteStream implements NativeStream {

    private static final Logger log = LoggerFactory.getLogger(RemoteStream.class);
    private static final StreamMarker[] NO_MARKERS = new StreamMarker[0];
    private static final CompletableFuture<Void> OPEN = CompletableFuture.completedFuture(null);

    private final RemoteDevice device;
    private final String name;
    private final AtomicInteger outstanding = new AtomicInteger();
    /** The peer events of each command sent and not finished, by its callback (what {@link #cancel} cancels). */
    private final java.util.Map<CommandCallback, Sent> sent = new java.util.concurrent.ConcurrentHashMap<>();

    /** The peer events of one command, in the connection they were sent through. */
    private record Sent(PeerLink.Connection c, List<Event> events) {}
    /** Sends of this stream, one at a time: the peer's order is the order they reach its session. */
    private final Object sendLock = new Object();
    @GuardedBy("sendLock")
    private StreamHandle handle;
    @GuardedBy("sendLock")
    private int handleGeneration;
    /** Done when commands may be sent: not while a fetch is in progress (later commands queue behind it). */
    @GuardedBy("sendLock")
    private CompletableFuture<Void> gate = OPEN;
    private volatile RemoteMarker end;
    /** Done when everything sent so far is done. */
    private volatile CompletableFuture<?> tail = OPEN;

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
        return m != null ? m : new RemoteMarker(this, 0, null, null);
    }

    /** Any remote stream's marker (see {@link #submitAfter}). */
    @Override
    public boolean canWaitFor(StreamMarker marker) {
        return marker instanceof RemoteMarker;
    }

    /**
     * A marker of this stream needs nothing: the peer runs the stream's commands in order. Another stream's that
     * stands for a peer event of the same peer goes with the command as a {@code wait_events} (which only orders
     * there). For any other (another peer's, a fetch, a command not sent yet), the command is sent once it is
     * reached (later commands of this stream queue behind it).
     */
    @Override
    public void submitAfter(StreamMarker[] after, DeviceCommand command, CommandCallback callback) {
        outstanding.incrementAndGet();
        CompletableFuture<Void> others = othersReached(after);
        synchronized (sendLock) {
            if (!gate.isDone() || others != null) {
                // not sent yet: the stream's end, for markers taken meanwhile, is reached once this command is done
                CompletableFuture<Void> done = new CompletableFuture<>();
                end = new RemoteMarker(this, 0, null, done);
                CompletableFuture<?> before = others == null ? gate : gate.thenCombine(others, (a, b) -> null);
                gate = before.thenComposeAsync(v -> {
                    RemoteMarker[] made = new RemoteMarker[1];
                    CompletableFuture<Void> next = send(after, command, callback, m -> made[0] = m);
                    if (made[0] == null) {
                        done.complete(null);
                    } else {
                        made[0].reached().thenRun(() -> done.complete(null));
                    }
                    return next;
                }, device.link().completions());
                return;
            }
            CompletableFuture<Void> sent = send(after, command, callback, m -> end = m);
            if (!sent.isDone()) {
                gate = sent;
            }
        }
    }

    /** Whether the peer waits for {@code m} itself: a peer event of another stream of the same peer. */
    private boolean onPeer(RemoteMarker m) {
        return m.stream() != this && m.event() != null && m.stream().device.link() == device.link();
    }

    /**
     * Null when every marker in {@code after} that the peer does not wait for ({@link #onPeer}, or this stream's) is
     * reached; else a future done once they are.
     */
    private CompletableFuture<Void> othersReached(StreamMarker[] after) {
        List<CompletableFuture<Void>> pending = null;
        for (StreamMarker m : after) {
            if (m instanceof RemoteMarker r && r.stream() != this && !onPeer(r) && !r.isReached()) {
                if (pending == null) {
                    pending = new ArrayList<>(after.length);
                }
                pending.add(r.reached());
            }
        }
        return pending == null ? null : CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new));
    }

    /**
     * Sends {@code command} (a fetch: starts it), giving {@code made} the marker reached once it is done (not called
     * when nothing was sent). The answer is done when later commands may be sent; it never fails: failures go to
     * {@code callback}, which is called exactly once.
     */
    private CompletableFuture<Void> send(StreamMarker[] after, DeviceCommand command, CommandCallback callback,
            Consumer<RemoteMarker> made) {
        PeerLink link = device.link();
        PeerLink.Connection c = null;
        List<CompletableFuture<EventResult>> parts;
        try {
            synchronized (sendLock) {
                c = link.connection();
                if (command instanceof DeviceCommand.PeerCopy pc && pc.srcDevice() instanceof RemoteDevice src
                        && src.link() != link) {
                    return fetch(c, pc, src, callback, made);
                }
                List<Long> waits = new ArrayList<>(after.length);
                for (StreamMarker m : after) {
                    if (m instanceof RemoteMarker r && onPeer(r) && r.generation() == c.generation()) {
                        waits.add(r.event().id());
                    }
                }
                PeerCommands out = new PeerCommands(device, c, stream(c).id(), waits,
                        PeerCommands.deadline(callback.startByNanos()));
                out.send(command);
                parts = out.parts();
                sent.put(callback, new Sent(c, out.events()));
                Event last = out.last();
                if (last != null) {
                    made.accept(new RemoteMarker(this, c.generation(), last, null));
                    tail = last.future();
                }
            }
        } catch (RuntimeException e) {
            done(callback, e instanceof ArraydException ae ? ae : c == null ? link.unavailable(e.toString()) : link.failure(c, e));
            return OPEN;
        }
        PeerLink.Connection conn = c;
        CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new)).whenCompleteAsync((v, t) -> {
            sent.remove(callback);
            if (t != null) {
                done(callback, link.failure(conn, t));
                return;
            }
            long nanos = 0;
            for (CompletableFuture<EventResult> p : parts) {
                nanos += p.join().deviceNanos();
            }
            outstanding.decrementAndGet();
            callback.completed(nanos);
        }, link.completions());
        return OPEN;
    }

    private void done(CommandCallback callback, ArraydException failure) {
        outstanding.decrementAndGet();
        callback.failed(failure);
    }

    /**
     * A copy from {@code src}, a device of another peer: this stream's peer fetches the bytes from that peer once
     * the stream's earlier commands are done. Done (the gate opens) when the bytes are in place.
     */
    @GuardedBy("sendLock")
    private CompletableFuture<Void> fetch(PeerLink.Connection c, DeviceCommand.PeerCopy pc, RemoteDevice src,
            CommandCallback callback, Consumer<RemoteMarker> made) {
        PeerLink.Connection from = src.link().connection();
        String capability = src.capability(from, pc.src());
        BufferHandle dst = device.buffer(c, pc.dst(), false, true);
        FetchRequest req = FetchRequest.newBuilder().setSession(c.session().id()).setBuffer(dst.id())
                .setOffsetBytes(pc.dst().offset()).setSizeBytes(pc.src().bytes()).setSourceTarget(src.link().target())
                .setSourceCapability(capability).setSourceOffsetBytes(pc.src().offset()).build();
        PeerLink link = device.link();
        // (every stage on the completions executor: a stage may wait for a peer's answer, which a link thread brings)
        CompletableFuture<Void> moved = tail.handle((v, t) -> null)
                .thenCompose(v -> {
                    long late = System.nanoTime() - callback.startByNanos();
                    if (late >= 0) {
                        return CompletableFuture.failedFuture(new ArraydException(ErrorCode.DEADLINE_EXCEEDED, "copy to "
                                + device.id() + ": deadline passed " + late / 1_000 + " µs ago, before the fetch "
                                + "from " + src.id() + " could start"));
                    }
                    return PeerReads.toCompletable(PeerServiceGrpc.newFutureStub(c.channel()).fetch(req));
                })
                .handleAsync((r, t) -> {
                    if (t == null) {
                        outstanding.decrementAndGet();
                        callback.completed(r.getNanos());
                        return OPEN;
                    }
                    ArraydException e = link.failure(c, t);
                    if (e.code() == ErrorCode.PERMISSION_DENIED || e.code() == ErrorCode.FAILED_PRECONDITION) {
                        if (link.stagesFrom(src.link().name())) {
                            log.info("peer {} cannot fetch from peer {} ({}): copies from {} to {} are staged through "
                                    + "this daemon", link.name(), src.link().name(), e.getMessage(), src.link().name(),
                                    link.name());
                        }
                        return staged(c, from, pc, src, callback);
                    }
                    done(callback, e);
                    return OPEN;
                }, link.completions()).thenCompose(f -> f);
        made.accept(new RemoteMarker(this, c.generation(), null, moved));
        tail = moved;
        return moved;
    }

    /** The copy through this daemon: a download from {@code src}'s peer, then an upload on this stream. */
    private CompletableFuture<Void> staged(PeerLink.Connection c, PeerLink.Connection from, DeviceCommand.PeerCopy pc,
            RemoteDevice src, CommandCallback callback) {
        MemorySegment stage = MemorySegment.ofArray(new byte[Math.toIntExact(pc.src().bytes())]);
        CompletableFuture<Void> out = new CompletableFuture<>();
        try {
            PeerCommands down = new PeerCommands(src, from, 0, List.of(), null);
            down.send(new DeviceCommand.Download(pc.src(), stage));
            CompletableFuture.allOf(down.parts().toArray(CompletableFuture[]::new)).thenComposeAsync(v -> {
                synchronized (sendLock) {
                    PeerCommands up = new PeerCommands(device, c, stream(c).id(), List.of(), null);
                    up.send(new DeviceCommand.Upload(stage, pc.dst()));
                    return CompletableFuture.allOf(up.parts().toArray(CompletableFuture[]::new));
                }
            }, device.link().completions()).whenCompleteAsync((v, t) -> {
                if (t != null) {
                    done(callback, device.link().failure(c, t));
                } else {
                    outstanding.decrementAndGet();
                    callback.completed(0);
                }
                out.complete(null);
            }, device.link().completions());
        } catch (RuntimeException e) {
            done(callback, e instanceof ArraydException ae ? ae : device.link().failure(c, e));
            out.complete(null);
        }
        return out;
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

    /** Cancels the command's events on the peer: one still waiting or queued there does not run. */
    @Override
    public void cancel(CommandCallback callback) {
        Sent s = sent.get(callback);
        if (s != null && s.c() == device.link().currentOrNull()) {
            s.c().session().cancel(s.events().toArray(Event[]::new));
        }
    }

    @Override
    public boolean isIdle() {
        return outstanding.get() == 0;
    }

    @Override
    public void close() {
        CompletableFuture<?> last;
        synchronized (sendLock) {
            last = gate.thenCompose(v -> tail);
        }
        try {
            last.handle((v, t) -> null).get(device.link().options().callTimeout().toMillis(), TimeUnit.MILLISECONDS);
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
