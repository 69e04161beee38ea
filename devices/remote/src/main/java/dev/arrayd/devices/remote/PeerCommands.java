package dev.arrayd.devices.remote;

import dev.arrayd.client.BufferHandle;
import dev.arrayd.client.BufferRange;
import dev.arrayd.client.CommandOptions;
import dev.arrayd.client.Event;
import dev.arrayd.client.EventResult;
import dev.arrayd.client.KernelHandle;
import dev.arrayd.client.Launch;
import dev.arrayd.client.Session;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.MemRef;
import java.lang.foreign.MemorySegment;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A device command as the commands of a peer's session: the same work on the peer's memory, sent on one of
 * its streams. Data larger than one inline message goes in parts of {@link Session#MAX_UPLOAD_BYTES}, each a
 * command of its own, in order on the stream.
 */
final class PeerCommands {

    /** Largest part of an upload, a download or an expanded fill. */
    static final int PART = Session.MAX_UPLOAD_BYTES;

    private final RemoteDevice device;
    private final PeerLink.Connection c;
    private final long stream;
    private final List<CompletableFuture<EventResult>> parts = new ArrayList<>();
    private final List<Event> events = new ArrayList<>();
    private List<Long> waits;
    private Instant deadline;
    private Event last;

    /**
     * @param waits    peer events the first command waits for
     * @param deadline when the first command must have started on the peer; null for none
     */
    PeerCommands(RemoteDevice device, PeerLink.Connection c, long stream, List<Long> waits, Instant deadline) {
        this.device = device;
        this.c = c;
        this.stream = stream;
        this.waits = waits;
        this.deadline = deadline;
    }

    /** The wall-clock instant of {@code startByNanos} ({@link System#nanoTime()}); null for none (MAX_VALUE). */
    static Instant deadline(long startByNanos) {
        if (startByNanos == Long.MAX_VALUE) {
            return null;
        }
        return Instant.now().plusNanos(startByNanos - System.nanoTime());
    }

    /** The futures of what was sent, one per peer command (a download's completes once its bytes are copied). */
    List<CompletableFuture<EventResult>> parts() {
        return parts;
    }

    /** The peer events of the commands sent. */
    List<Event> events() {
        return events;
    }

    /** The peer event of the last command sent. */
    Event last() {
        return last;
    }

    /**
     * Only the first command waits for the markers and has the deadline; the stream orders the rest after it
     * (once the first started, so do the others).
     */
    private CommandOptions options() {
        CommandOptions o = new CommandOptions(waits, stream).deadline(deadline);
        waits = List.of();
        deadline = null;
        return o;
    }

    private void sent(Event e) {
        last = e;
        events.add(e);
        parts.add(e.future());
    }

    void send(DeviceCommand command) {
        Session s = c.session();
        switch (command) {
            case DeviceCommand.Launch l -> launch(l);
            case DeviceCommand.Upload u -> upload(u.src(), u.dst());
            case DeviceCommand.Download d -> download(d.src(), d.dst());
            case DeviceCommand.Copy cp -> sent(s.copy(read(cp.src()), cp.src().offset(), written(cp.dst()),
                    cp.dst().offset(), cp.src().bytes(), options()));
            case DeviceCommand.PeerCopy pc -> {
                if (!(pc.srcDevice() instanceof RemoteDevice src) || src.link() != device.link()) {
                    throw ArraydException.invalid(device.id() + ": peer copy from " + pc.srcDevice().id()
                            + " (expected: a device of peer " + device.link().name() + "; RemoteStream fetches "
                            + "from other peers)");
                }
                sent(s.copy(src.buffer(c, pc.src(), true, false), pc.src().offset(), written(pc.dst()), pc.dst().offset(),
                        pc.src().bytes(), options()));
            }
            case DeviceCommand.Fill f -> fill(f);
            case DeviceCommand.RingTransfer ring -> throw DeviceCommand.RingTransfer.unsupportedOn(device.id());
            case DeviceCommand.Sequence seq -> {
                for (int i = 0; i < seq.parts().size(); i++) {
                    send(seq.part(i));
                }
            }
        }
    }

    private BufferHandle read(MemRef ref) {
        return device.buffer(c, ref, true, false);
    }

    private BufferHandle written(MemRef ref) {
        return device.buffer(c, ref, false, true);
    }

    private void launch(DeviceCommand.Launch l) {
        if (!(l.kernel() instanceof RemoteKernel k)) {
            throw ArraydException.invalid(device.id() + ": kernel " + l.kernel().name() + " of backend "
                    + l.kernel().backend() + " (expected: one the remote backend compiled)");
        }
        KernelHandle h = k.handle(device.link(), c);
        Object[] args = new Object[l.args().size()];
        for (int i = 0; i < args.length; i++) {
            args[i] = switch (l.args().get(i)) {
                case KernelArg.Buffer b -> {
                    var access = k.signature().params().get(i).access();
                    yield new BufferRange(device.buffer(c, b.ref(), access.reads(), access.writes()), b.ref().offset(),
                            b.ref().bytes());
                }
                case KernelArg.Scalar sc -> scalar(sc);
            };
        }
        CommandOptions o = options();
        Launch launch = Launch.of(h).global(l.globalDims()).args(args).on(new dev.arrayd.client.StreamHandle(stream,
                device.peerDevice())).waitFor(o.waitFor().stream().map(PeerCommands::event).toArray(Event[]::new))
                .deadline(o.deadline());
        if (l.localDims() != null) {
            launch = launch.local(l.localDims());
        }
        sent(c.session().launch(launch));
    }

    /** A wait on a peer event by id (its future is never consulted). */
    private static Event event(long id) {
        return new Event(id, new CompletableFuture<>());
    }

    private static Number scalar(KernelArg.Scalar sc) {
        long v = sc.bits();
        return switch (sc.dtype()) {
            case F32 -> Float.intBitsToFloat((int) v);
            case F64 -> Double.longBitsToDouble(v);
            case I32, U8 -> (int) v;
            case I64 -> v;
            case F16, BF16 -> throw ArraydException.invalid("scalar of " + sc.dtype() + " (half types are storage only)");
        };
    }

    private void upload(MemorySegment src, MemRef dst) {
        BufferHandle b = written(dst);
        for (long off = 0; off < dst.bytes(); off += PART) {
            long len = Math.min(PART, dst.bytes() - off);
            sent(c.session().upload(b, dst.offset() + off, src.asSlice(off, len).asByteBuffer(), options()));
        }
    }

    private void download(MemRef src, MemorySegment dst) {
        BufferHandle b = read(src);
        for (long off = 0; off < src.bytes(); off += PART) {
            long len = Math.min(PART, src.bytes() - off);
            long at = off;
            Event e = c.session().download(b, src.offset() + off, len, options());
            last = e;
            events.add(e);
            parts.add(e.future().thenApply(r -> {
                MemorySegment.copy(MemorySegment.ofBuffer(r.data()), 0, dst, at, len);
                return r;
            }));
        }
    }

    private void fill(DeviceCommand.Fill f) {
        long pattern = f.pattern();
        int width = f.patternBytes();
        boolean oneByte = true;
        for (int i = 1; i < width; i++) {
            oneByte &= ((pattern >>> (8 * i)) & 0xff) == (pattern & 0xff);
        }
        BufferHandle b = written(f.dst());
        if (oneByte) {
            sent(c.session().fill(b, (int) (pattern & 0xff), f.dst().offset(), f.dst().bytes(), options()));
            return;
        }
        // a wider pattern: written as bytes, in parts (the slab is a byte buffer)
        int len = (int) Math.min(PART, f.dst().bytes());
        MemorySegment bytes = MemorySegment.ofArray(new byte[len]);
        for (int at = 0; at < len; at++) {
            bytes.set(java.lang.foreign.ValueLayout.JAVA_BYTE, at, (byte) (pattern >>> (8 * (at % width))));
        }
        for (long off = 0; off < f.dst().bytes(); off += PART) {
            long n = Math.min(PART, f.dst().bytes() - off);
            sent(c.session().upload(b, f.dst().offset() + off, bytes.asSlice(0, n).asByteBuffer(), options()));
        }
    }
}
