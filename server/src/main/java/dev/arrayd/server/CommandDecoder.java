package dev.arrayd.server;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.SlotRing;
import dev.arrayd.proto.v1.Arg;
import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.RegionRing;
import dev.arrayd.proto.v1.ReplayGraphRequest;
import dev.arrayd.scheduler.CommandSpec;
import dev.arrayd.scheduler.GraphReplay;
import dev.arrayd.scheduler.Priority;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

/**
 * The one place where wire commands become the scheduler's {@link CommandSpec}s: the batch size limit, each
 * command's wait limit, what the call allows (an assigned event id, a download), the call's deadline given
 * to every command, and error messages indexed by position ({@code commands[3].launch.args[1]: ...}).
 * Unary Submit, RecordGraph and the session stream all decode here; graph replays too ({@link #replay}).
 * Meaning (handles, shapes, ranges) is the scheduler's to check.
 */
final class CommandDecoder {

    /** Most commands in one Submit request or session-stream batch (the graph size limit). */
    static final int MAX_BATCH_COMMANDS = 16_384;
    /** Most events one command may wait on explicitly, and one WaitEvents / QueryEvents may name. */
    static final int MAX_WAIT_EVENTS = 4_096;

    /** What a call allows its commands. */
    enum Call {
        /** Unary Submit: an event id of 0 is assigned; no downloads (their bytes would only come back in a completion). */
        SUBMIT,
        /** The session stream: client-chosen event ids; downloads come back in the completions. */
        STREAM,
        /** RecordGraph: client-chosen event ids naming the commands inside the graph. */
        GRAPH
    }

    private CommandDecoder() {}

    /**
     * Decodes a batch.
     *
     * @param callDeadlineNanos the call's deadline on the scheduler's clock ({@link CommandSpec#NO_DEADLINE}
     *                          for none): it bounds each command's own
     */
    static List<CommandSpec> batch(List<Command> commands, Call call, long maxInlineBytes, long callDeadlineNanos) {
        return batch(commands, call, maxInlineBytes, callDeadlineNanos, null);
    }

    /** @param regions the session's shared-memory regions that uploads and downloads may name (null: none) */
    static List<CommandSpec> batch(List<Command> commands, Call call, long maxInlineBytes, long callDeadlineNanos,
            dev.arrayd.server.regions.RegionTable regions) {
        return batch(commands, call, maxInlineBytes, callDeadlineNanos, regions, null);
    }

    /** @param downloadArrays where inline downloads' arrays come from (null: new ones) */
    static List<CommandSpec> batch(List<Command> commands, Call call, long maxInlineBytes, long callDeadlineNanos,
            dev.arrayd.server.regions.RegionTable regions, IntFunction<byte[]> downloadArrays) {
        return batch(commands, call, maxInlineBytes, callDeadlineNanos, regions, downloadArrays, null);
    }

    /**
     * @param lifted the request's upload data left in its receive buffers (null: none): the command at index
     *               {@code i} whose {@code upload.data} was lifted takes {@code lifted.data(i)} as its data
     */
    static List<CommandSpec> batch(List<Command> commands, Call call, long maxInlineBytes, long callDeadlineNanos,
            dev.arrayd.server.regions.RegionTable regions, IntFunction<byte[]> downloadArrays, LiftedUploads lifted) {
        if (commands.size() > MAX_BATCH_COMMANDS) {
            throw new ArraydException(ErrorCode.RESOURCE_EXHAUSTED, "commands: " + commands.size()
                    + " in one batch (expected: at most " + MAX_BATCH_COMMANDS + ")");
        }
        List<CommandSpec> specs = new ArrayList<>(commands.size());
        for (int i = 0; i < commands.size(); i++) {
            try {
                specs.add(withDeadline(command(commands.get(i), call, maxInlineBytes, regions, downloadArrays,
                        lifted == null ? null : lifted.data(i)), callDeadlineNanos));
            } catch (ArraydException e) {
                throw new ArraydException(e.code(), "commands[" + i + "]: " + e.getMessage(), e);
            }
        }
        return specs;
    }

    /** Decodes one command (errors name its fields, not its place: {@link #batch} adds that). */
    static CommandSpec command(Command c, Call call, long maxInlineBytes) {
        return command(c, call, maxInlineBytes, null);
    }

    static CommandSpec command(Command c, Call call, long maxInlineBytes, dev.arrayd.server.regions.RegionTable regions) {
        return command(c, call, maxInlineBytes, regions, null, null);
    }

    /** @param liftedData this command's upload data where it was left in the request's receive buffers, or null */
    private static CommandSpec command(Command c, Call call, long maxInlineBytes,
            dev.arrayd.server.regions.RegionTable regions, IntFunction<byte[]> downloadArrays,
            List<MemorySegment> liftedData) {
        long event = Wire.newEvent(c.getEvent(), "event");
        if (event == 0 && call != Call.SUBMIT) {
            throw ArraydException.invalid("event: 0 (expected: a client-chosen id >= 1 on the session stream)");
        }
        checkWaitCount(c.getWaitEventsCount(), "wait_events");
        CommandSpec.Op op = switch (c.getKindCase()) {
            case LAUNCH -> launch(c.getLaunch());
            case COPY -> {
                var k = c.getCopy();
                yield new CommandSpec.CopyOp(k.getSrc(), k.getDst(), Wire.size(k.getSrcOffsetBytes(), "copy.src_offset_bytes"),
                        Wire.size(k.getDstOffsetBytes(), "copy.dst_offset_bytes"), Wire.size(k.getSizeBytes(), "copy.size_bytes"),
                        k.getDevice(), ProtoCodec.mergeMode(k.getMerge()), k.getSrcStream(), k.getWholePadded());
            }
            case FILL -> {
                var f = c.getFill();
                if (!f.hasValue()) {
                    throw ArraydException.invalid("fill.value: unset (expected: a scalar of the buffer's dtype)");
                }
                yield new CommandSpec.FillOp(f.getBuffer(), ProtoCodec.scalar(f.getValue(), "fill.value"),
                        Wire.size(f.getOffsetElements(), "fill.offset_elements"),
                        Wire.size(f.getCountElements(), "fill.count_elements"), f.getWholePadded());
            }
            case UPLOAD -> {
                var u = c.getUpload();
                long dataBytes = liftedData != null ? CommandSpec.ScatteredUploadOp.sizeOf(liftedData) : u.getData().size();
                if (u.hasFromRing()) {
                    if (dataBytes != 0 || u.hasFromRegion()) {
                        throw ArraydException.invalid("upload: from_ring with " + (u.hasFromRegion() ? "from_region"
                                : "data (" + dataBytes + " bytes)") + " (expected: one of them)");
                    }
                    var r = u.getFromRing();
                    if (r.getSizeBytes() == 0) {
                        throw ArraydException.invalid("upload.from_ring.size_bytes: 0 (expected: > 0)");
                    }
                    yield new CommandSpec.RingOp(u.getBuffer(), Wire.size(u.getOffsetBytes(), "upload.offset_bytes"),
                            Wire.size(r.getSizeBytes(), "upload.from_ring.size_bytes"),
                            ring(regions(regions, call, "upload.from_ring"), r, "upload.from_ring"), true,
                            u.getWholePadded());
                }
                if (u.hasFromRegion()) {
                    if (dataBytes != 0) {
                        throw ArraydException.invalid("upload: both data (" + dataBytes + " bytes) and "
                                + "from_region (expected: one of them)");
                    }
                    var r = u.getFromRegion();
                    if (r.getSizeBytes() == 0) {
                        throw ArraydException.invalid("upload.from_region.size_bytes: 0 (expected: > 0)");
                    }
                    yield new CommandSpec.UploadOp(u.getBuffer(), Wire.size(u.getOffsetBytes(), "upload.offset_bytes"),
                            regions(regions, call, "upload.from_region").slice(r.getRegion(), r.getOffsetBytes(),
                                    r.getSizeBytes(), "upload.from_region"), u.getWholePadded());
                }
                if (dataBytes > maxInlineBytes) {
                    throw ArraydException.invalid("upload.data: " + dataBytes + " bytes (expected: at most "
                            + maxInlineBytes + " inline; use BufferService.WriteBuffer)");
                }
                if (liftedData != null) { // (only the session stream lifts data: never a graph's)
                    yield new CommandSpec.ScatteredUploadOp(u.getBuffer(), Wire.size(u.getOffsetBytes(),
                            "upload.offset_bytes"), liftedData, u.getWholePadded());
                }
                // a recorded graph keeps its data: a copy of its own, not a view that would keep the whole request
                // it came in alive (a request of 256 KiB or more is parsed into one array its fields view)
                MemorySegment data = call == Call.GRAPH ? MemorySegment.ofArray(u.getData().toByteArray())
                        : ProtoCodec.segment(u.getData());
                yield new CommandSpec.UploadOp(u.getBuffer(), Wire.size(u.getOffsetBytes(), "upload.offset_bytes"), data,
                        u.getWholePadded());
            }
            case DOWNLOAD -> {
                if (c.getDownload().hasIntoRing()) {
                    var d = c.getDownload();
                    if (d.hasIntoRegion()) {
                        throw ArraydException.invalid("download: both into_region and into_ring (expected: one of them)");
                    }
                    yield new CommandSpec.RingOp(d.getBuffer(), Wire.size(d.getOffsetBytes(), "download.offset_bytes"),
                            Wire.size(d.getSizeBytes(), "download.size_bytes"),
                            ring(regions(regions, call, "download.into_ring"), d.getIntoRing(), "download.into_ring"),
                            false, d.getWholePadded());
                }
                if (c.getDownload().hasIntoRegion()) {
                    var d = c.getDownload();
                    var r = d.getIntoRegion();
                    var table = regions(regions, call, "download.into_region");
                    var into = r.getSizeBytes() == 0
                            ? table.sliceFrom(r.getRegion(), r.getOffsetBytes(), "download.into_region")
                            : table.slice(r.getRegion(), r.getOffsetBytes(), r.getSizeBytes(), "download.into_region");
                    yield new CommandSpec.DownloadOp(d.getBuffer(), Wire.size(d.getOffsetBytes(), "download.offset_bytes"),
                            Wire.size(d.getSizeBytes(), "download.size_bytes"), into.byteSize(), into, d.getWholePadded());
                }
                if (call == Call.SUBMIT) {
                    throw ArraydException.invalid("download: not available in unary Submit (expected: the session"
                            + " stream, whose completion carries the data, or BufferService.ReadBuffer)");
                }
                var d = c.getDownload();
                // the size is checked against the limit once resolved (0 means "to the end")
                yield new CommandSpec.DownloadOp(d.getBuffer(), Wire.size(d.getOffsetBytes(), "download.offset_bytes"),
                        Wire.size(d.getSizeBytes(), "download.size_bytes"), maxInlineBytes, null, d.getWholePadded(),
                        downloadArrays);
            }
            case HOST_WRITTEN -> new CommandSpec.HostWrittenOp(c.getHostWritten().getBuffer());
            case KIND_NOT_SET -> throw ArraydException.invalid("kind: unset (expected: launch, copy, fill, upload, download"
                    + " or host_written)");
        };
        return new CommandSpec(event, Wire.events(c.getWaitEventsList(), "wait_events"), c.getStream(), op,
                CommandSpec.deadlineFromUnixNanos(ProtoTime.unixNanos(c.hasDeadline(), c.getDeadline(), "deadline")),
                Priority.fromWire(c.getPriorityValue()));
    }

    /** The ring a transfer names, its geometry checked and its bytes inside its region. */
    private static SlotRing ring(dev.arrayd.server.regions.RegionTable regions, RegionRing r, String field) {
        if (r.getOffsetBytes() % 64 != 0) {
            throw ArraydException.invalid(field + ".offset_bytes: " + Long.toUnsignedString(r.getOffsetBytes())
                    + " (expected: a multiple of 64)");
        }
        long slotBytes = r.getSlotBytes();
        SlotRing.checkGeometry(slotBytes, r.getSlots(), field); // (before the size it implies is computed)
        MemorySegment bytes = regions.slice(r.getRegion(), r.getOffsetBytes(), SlotRing.bytesFor(slotBytes, r.getSlots()),
                field);
        return new SlotRing(bytes, slotBytes, r.getSlots(), SlotRing.DEFAULT_STALL_NANOS);
    }

    /** The session's regions for a command that names one; refused in graphs and where there are none. */
    private static dev.arrayd.server.regions.RegionTable regions(dev.arrayd.server.regions.RegionTable regions, Call call,
            String field) {
        if (call == Call.GRAPH) {
            throw ArraydException.invalid(field + ": regions are not available in recorded graphs (expected: inline "
                    + "data, or a graph without this command)");
        }
        if (regions == null) {
            throw new ArraydException(ErrorCode.FAILED_PRECONDITION, field + ": this call cannot name regions");
        }
        return regions;
    }

    private static CommandSpec.LaunchOp launch(dev.arrayd.proto.v1.Launch l) {
        List<CommandSpec.Arg> args = new ArrayList<>(l.getArgsCount());
        for (int i = 0; i < l.getArgsCount(); i++) {
            Arg a = l.getArgs(i);
            args.add(switch (a.getValueCase()) {
                case BUFFER -> new CommandSpec.BufferArg(a.getBuffer());
                case SCALAR -> new CommandSpec.ScalarArg(ProtoCodec.scalar(a.getScalar(), "launch.args[" + i + "].scalar"));
                case MERGE_BUFFER -> {
                    if (!a.getMergeBuffer()) {
                        throw ArraydException.invalid("launch.args[" + i + "].merge_buffer: false (expected: true, "
                                + "or a buffer or scalar)");
                    }
                    yield new CommandSpec.MergeArg();
                }
                case RANGE -> new CommandSpec.RangeArg(a.getRange().getBuffer(),
                        Wire.size(a.getRange().getOffsetBytes(), "launch.args[" + i + "].range.offset_bytes"),
                        Wire.size(a.getRange().getSizeBytes(), "launch.args[" + i + "].range.size_bytes"));
                case VALUE_NOT_SET -> throw ArraydException.invalid("launch.args[" + i
                        + "]: unset (expected: a buffer handle, a byte range, a scalar or merge_buffer)");
            });
        }
        return new CommandSpec.LaunchOp(l.getKernel(), Wire.dims(l.getGlobalDimsList(), "launch.global_dims"),
                Wire.dims(l.getLocalDimsList(), "launch.local_dims"), args, l.getDevice());
    }

    /**
     * Decodes what a replay changes; {@code allowAssigned} permits first_event 0 (unary calls). The call's
     * deadline bounds the replay's.
     */
    static GraphReplay replay(ReplayGraphRequest r, boolean allowAssigned, long callDeadlineNanos) {
        checkWaitCount(r.getWaitEventsCount(), "wait_events");
        long first = Wire.newEvent(r.getFirstEvent(), "first_event");
        if (first == 0 && !allowAssigned) {
            throw ArraydException.invalid("first_event: 0 (expected: a client-chosen id >= 1 on the session stream)");
        }
        Map<Long, Long> rebind = new HashMap<>();
        for (int i = 0; i < r.getRebindCount(); i++) {
            var b = r.getRebind(i);
            if (rebind.put(b.getFrom(), b.getTo()) != null) {
                throw ArraydException.invalid("rebind[" + i + "].from: buffer " + Long.toHexString(b.getFrom())
                        + " (rebound twice)");
            }
        }
        List<GraphReplay.ScalarValue> scalars = new ArrayList<>(r.getScalarsCount());
        for (int i = 0; i < r.getScalarsCount(); i++) {
            var v = r.getScalars(i);
            if (!v.hasValue()) {
                throw ArraydException.invalid("scalars[" + i + "].value: unset (expected: a scalar)");
            }
            int command = Wire.index(v.getCommand(), "scalars[" + i + "].command", MAX_BATCH_COMMANDS,
                    "the index of a command of the graph");
            int arg = Wire.index(v.getArg(), "scalars[" + i + "].arg", Integer.MAX_VALUE, "the index of a launch argument");
            scalars.add(new GraphReplay.ScalarValue(command, arg,
                    ProtoCodec.scalar(v.getValue(), "scalars[" + i + "].value")));
        }
        long deadline = Math.min(CommandSpec.deadlineFromUnixNanos(ProtoTime.unixNanos(r.hasDeadline(),
                r.getDeadline(), "deadline")), callDeadlineNanos);
        return new GraphReplay(first, Wire.events(r.getWaitEventsList(), "wait_events"), rebind, scalars, deadline);
    }

    /** At most {@link #MAX_WAIT_EVENTS} events named in {@code field}. */
    static void checkWaitCount(int n, String field) {
        if (n > MAX_WAIT_EVENTS) {
            throw ArraydException.invalid(field + ": " + n + " events (expected: at most " + MAX_WAIT_EVENTS + ")");
        }
    }

    /** The command with the earlier of its own deadline and {@code deadlineNanos}. */
    private static CommandSpec withDeadline(CommandSpec c, long deadlineNanos) {
        return deadlineNanos >= c.deadlineNanos() ? c
                : new CommandSpec(c.event(), c.waits(), c.stream(), c.op(), deadlineNanos, c.priority());
    }
}
