package dev.arrayd.it;

import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Duration;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.Timestamp;
import dev.arrayd.proto.v1.Arg;
import dev.arrayd.proto.v1.Attach;
import dev.arrayd.proto.v1.AwaitStreamRequest;
import dev.arrayd.proto.v1.BufferServiceGrpc;
import dev.arrayd.proto.v1.CancelRequest;
import dev.arrayd.proto.v1.CloseSessionRequest;
import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.CommandBatch;
import dev.arrayd.proto.v1.Copy;
import dev.arrayd.proto.v1.CreateBufferRequest;
import dev.arrayd.proto.v1.CreateStreamRequest;
import dev.arrayd.proto.v1.DescribeBufferRequest;
import dev.arrayd.proto.v1.DestroyBufferRequest;
import dev.arrayd.proto.v1.DestroyGraphRequest;
import dev.arrayd.proto.v1.DestroyKernelRequest;
import dev.arrayd.proto.v1.DestroyStreamRequest;
import dev.arrayd.proto.v1.DeviceServiceGrpc;
import dev.arrayd.proto.v1.DiagnosticsServiceGrpc;
import dev.arrayd.proto.v1.Download;
import dev.arrayd.proto.v1.ExecuteRequest;
import dev.arrayd.proto.v1.ExecutionServiceGrpc;
import dev.arrayd.proto.v1.Fill;
import dev.arrayd.proto.v1.GetDeviceRequest;
import dev.arrayd.proto.v1.GetStatsRequest;
import dev.arrayd.proto.v1.KeepAliveRequest;
import dev.arrayd.proto.v1.KernelServiceGrpc;
import dev.arrayd.proto.v1.Launch;
import dev.arrayd.proto.v1.ListDevicesRequest;
import dev.arrayd.proto.v1.OpenSessionRequest;
import dev.arrayd.proto.v1.OpenSharedBufferRequest;
import dev.arrayd.proto.v1.Ping;
import dev.arrayd.proto.v1.QueryEventsRequest;
import dev.arrayd.proto.v1.ReadBufferRequest;
import dev.arrayd.proto.v1.RecordGraphRequest;
import dev.arrayd.proto.v1.ReplayGraphRequest;
import dev.arrayd.proto.v1.Scalar;
import dev.arrayd.proto.v1.ScalarValue;
import dev.arrayd.proto.v1.SessionServiceGrpc;
import dev.arrayd.proto.v1.ShareBufferRequest;
import dev.arrayd.proto.v1.SharingServiceGrpc;
import dev.arrayd.proto.v1.StatsServiceGrpc;
import dev.arrayd.proto.v1.SubmitRequest;
import dev.arrayd.proto.v1.Upload;
import dev.arrayd.proto.v1.WaitEventsRequest;
import dev.arrayd.proto.v1.WriteBufferRequest;
import io.grpc.MethodDescriptor;
import io.grpc.ServiceDescriptor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Tuple;

/**
 * Generators of hostile requests for the daemon, over every RPC: random bytes read as messages, valid messages
 * with bytes flipped, bytes that do not parse sent raw to every method, handles that are wrong or belong to
 * another tenant, sizes and offsets at the edges of 64-bit arithmetic, uint32 and uint64 values at 2^31, 2^32,
 * 2^63 and 2^64 - 1, names and labels of 100 kB, IR with nodes unset at every depth and nested past the limits
 * ({@link dev.arrayd.server.FuzzIr}), waits on the command itself, on later commands of its batch (a cycle) and on another
 * session's events, and another tenant's session token.
 *
 * <p>Generated messages name sessions and objects symbolically ({@link #OWN_SESSION}, {@link #ownBuffer}
 * …); {@link Names#resolve} puts in the real tokens and handles of the run when a request is sent, so
 * the generators need no daemon and a failing example reads the same in every run.
 */
final class FuzzRequests {

    private FuzzRequests() {}

    /** The fuzzing tenant's own session. */
    static final String OWN_SESSION = "$own";
    /** The session of the other tenant (its token, stolen). */
    static final String OTHER_SESSION = "$other";

    private static final long OWN_BUFFER = 0x0B0B_0000_0000_0000L;
    private static final long OTHER_BUFFER = 0x0A11_CE00_0000_0000L;
    private static final long OWN_KERNEL = 0x0B0B_0000_0000_1000L;
    private static final long OTHER_EVENT = 0x0A11_CE00_0000_2000L;
    static final int SLOTS = 4;

    static long ownBuffer(int slot) {
        return OWN_BUFFER + slot;
    }

    static long otherBuffer(int slot) {
        return OTHER_BUFFER + slot;
    }

    /** The kernel the fuzzing tenant compiled. */
    static long ownKernel() {
        return OWN_KERNEL;
    }

    static long otherEvent(int slot) {
        return OTHER_EVENT + slot;
    }

    /** One request: a unary message, a session stream, or a WriteBuffer stream. */
    sealed interface Request {}

    record Unary(Message message) implements Request {}

    /** Bytes sent as the one request message of {@code method}, as they are (they need not parse). */
    record Raw(MethodDescriptor<?, ?> method, byte[] body) implements Request {
        @Override
        public String toString() {
            return "Raw[" + method.getFullMethodName() + ", " + body.length + " bytes]";
        }
    }

    /** The messages of one session stream, which the client half-closes after the last. */
    record Stream(List<ExecuteRequest> messages) implements Request {}

    /** The chunks of one WriteBuffer call, half-closed after the last (none: half-closed at once). */
    record Write(List<WriteBufferRequest> chunks) implements Request {}

    /** The real tokens and handles of a run, by symbol. */
    record Names(Map<String, String> sessions, Map<Long, Long> handles) {

        /** {@code m} with every symbolic session and handle replaced, at any depth; other values kept. */
        @SuppressWarnings("unchecked")
        <M extends Message> M resolve(M m) {
            Message.Builder b = m.toBuilder();
            for (Map.Entry<FieldDescriptor, Object> e : m.getAllFields().entrySet()) {
                FieldDescriptor f = e.getKey();
                if (f.isRepeated()) {
                    List<Object> values = new ArrayList<>();
                    for (Object v : (List<Object>) e.getValue()) {
                        values.add(resolveValue(v));
                    }
                    b.setField(f, values);
                } else {
                    b.setField(f, resolveValue(e.getValue()));
                }
            }
            return (M) b.build();
        }

        private Object resolveValue(Object v) {
            return switch (v) {
                case Message inner -> resolve(inner);
                case Long l -> handles.getOrDefault(l, l);
                case String s -> sessions.getOrDefault(s, s);
                default -> v;
            };
        }
    }

    // ------------------------------------------------------------------ values

    static Arbitrary<String> sessions() {
        return Arbitraries.frequencyOf(
                Tuple.of(14, Arbitraries.just(OWN_SESSION)),
                Tuple.of(3, Arbitraries.just(OTHER_SESSION)),
                Tuple.of(1, Arbitraries.strings().ofMaxLength(40)),
                Tuple.of(1, Arbitraries.strings().withChars("0123456789abcdef").ofLength(32)), // looks like a token
                Tuple.of(1, Arbitraries.just("")));
    }

    /** Buffer handles: mostly the own tenant's, then the other tenant's, random, zero and the extremes. */
    static Arbitrary<Long> handles() {
        return Arbitraries.frequencyOf(
                Tuple.of(8, Arbitraries.integers().between(0, SLOTS - 1).map(FuzzRequests::ownBuffer)),
                Tuple.of(4, Arbitraries.integers().between(0, SLOTS - 1).map(FuzzRequests::otherBuffer)),
                Tuple.of(3, Arbitraries.longs()),
                Tuple.of(1, Arbitraries.of(0L, 1L, -1L, Long.MAX_VALUE, Long.MIN_VALUE)));
    }

    /** Sizes, offsets and counts: small, random, and at the edges of signed and unsigned 64 bits. */
    /** Deadlines: mostly none; else in range (past or future) or out of Timestamp's range. */
    static Arbitrary<Optional<Timestamp>> deadlines() {
        return Arbitraries.frequencyOf(
                Tuple.of(6, Arbitraries.just(Optional.<Timestamp>empty())),
                Tuple.of(4, Combinators.combine(Arbitraries.of(0L, 1L, -1L, 4_000_000_000L, 253_402_300_799L,
                        253_402_300_800L, -62_135_596_801L, Long.MAX_VALUE, Long.MIN_VALUE), nanos())
                        .as((s, n) -> Optional.of(Timestamp.newBuilder().setSeconds(s).setNanos(n).build()))));
    }

    /** Durations: small, huge, negative and malformed ones. */
    static Arbitrary<Duration> durations() {
        return Combinators.combine(sizes(), nanos()).as((s, n) -> Duration.newBuilder().setSeconds(s).setNanos(n).build());
    }

    static Arbitrary<Integer> nanos() {
        return Arbitraries.frequencyOf(
                Tuple.of(6, Arbitraries.integers().between(0, 999_999_999)),
                Tuple.of(2, Arbitraries.of(-1, 1_000_000_000, Integer.MIN_VALUE, Integer.MAX_VALUE)));
    }

    static Arbitrary<Long> sizes() {
        return Arbitraries.frequencyOf(
                Tuple.of(6, Arbitraries.longs().between(0, 512)),
                Tuple.of(2, Arbitraries.longs()),
                Tuple.of(2, Arbitraries.of(-1L, Long.MAX_VALUE, Long.MIN_VALUE, 1L << 31, (1L << 31) - 1, 1L << 32,
                        1L << 40, 1L << 62, Long.MAX_VALUE / 4 + 1)));
    }

    /** Sessions other than the fuzzing tenant's own (for CloseSession, which must leave the own one open). */
    static Arbitrary<String> foreignSessions() {
        return Arbitraries.frequencyOf(
                Tuple.of(3, Arbitraries.just(OTHER_SESSION)),
                Tuple.of(1, Arbitraries.strings().ofMaxLength(40)),
                Tuple.of(1, Arbitraries.strings().withChars("0123456789abcdef").ofLength(32)),
                Tuple.of(1, Arbitraries.just("")));
    }

    private static final String HUGE_TEXT = "t".repeat(100_000);

    /** Free text (names, labels, devices): short, with odd characters, or 100 kB. */
    static Arbitrary<String> texts() {
        return Arbitraries.frequencyOf(
                Tuple.of(10, Arbitraries.strings().ofMaxLength(12)),
                Tuple.of(3, Arbitraries.of("", "cpu:0", "cpu:9", "opencl:0", "x", "line\nbreak", "cpu:-1", "cpu:99999999999")),
                Tuple.of(1, Arbitraries.just(HUGE_TEXT)));
    }

    /** uint32 wire values: small, and 2^31, 2^32 - 1 (as Java reads them). */
    static Arbitrary<Integer> u32s() {
        return Arbitraries.frequencyOf(
                Tuple.of(4, Arbitraries.integers().between(0, 300)),
                Tuple.of(1, Arbitraries.of(Integer.MIN_VALUE, -1, Integer.MAX_VALUE, 256, 65535, 65536)));
    }

    static Arbitrary<Long> events() {
        return Arbitraries.frequencyOf(
                Tuple.of(6, Arbitraries.longs().between(0, 48)),
                Tuple.of(2, Arbitraries.integers().between(0, SLOTS - 1).map(FuzzRequests::otherEvent)),
                Tuple.of(1, Arbitraries.longs()),
                Tuple.of(1, Arbitraries.of(1L << 62, (1L << 62) - 1, -1L, Long.MAX_VALUE)));
    }

    static Arbitrary<Scalar> scalars() {
        return Arbitraries.oneOf(
                Arbitraries.floats().map(v -> Scalar.newBuilder().setF32(v).build()),
                Arbitraries.doubles().map(v -> Scalar.newBuilder().setF64(v).build()),
                Arbitraries.integers().map(v -> Scalar.newBuilder().setI32(v).build()),
                Arbitraries.longs().map(v -> Scalar.newBuilder().setI64(v).build()),
                Arbitraries.integers().map(v -> Scalar.newBuilder().setU8(v).build()),
                Arbitraries.just(Scalar.getDefaultInstance()));
    }

    /** Inline data: usually small, rarely past the tenant's 4 MiB message quota (one shared array). */
    static Arbitrary<ByteString> data() {
        return Arbitraries.frequencyOf(
                Tuple.of(600, Arbitraries.integers().between(0, 300).map(n -> ByteString.copyFrom(new byte[n]))),
                Tuple.of(1, Arbitraries.just(HUGE)));
    }

    private static final ByteString HUGE = ByteString.copyFrom(new byte[5 << 20]);

    // ------------------------------------------------------------------ commands

    static Arbitrary<Command.Builder> operations() {
        return Arbitraries.oneOf(
                Combinators.combine(handles(), sizes(), data()).as((b, off, d) -> Command.newBuilder()
                        .setUpload(Upload.newBuilder().setBuffer(b).setOffsetBytes(off).setData(d))),
                Combinators.combine(handles(), sizes(), sizes()).as((b, off, n) -> Command.newBuilder()
                        .setDownload(Download.newBuilder().setBuffer(b).setOffsetBytes(off).setSizeBytes(n))),
                Combinators.combine(handles(), handles(), sizes(), sizes(), sizes()).as((s, d, so, dof, n) ->
                        Command.newBuilder().setCopy(Copy.newBuilder().setSrc(s).setDst(d).setSrcOffsetBytes(so)
                                .setDstOffsetBytes(dof).setSizeBytes(n))),
                Combinators.combine(handles(), scalars(), sizes(), sizes()).as((b, v, o, n) -> Command.newBuilder()
                        .setFill(Fill.newBuilder().setBuffer(b).setValue(v).setOffsetElements(o).setCountElements(n))),
                Combinators.combine(Arbitraries.oneOf(Arbitraries.just(OWN_KERNEL), handles()),
                        sizes().list().ofMaxSize(4), handles().list().ofMaxSize(4), scalars().list().ofMaxSize(2))
                        .as((k, dims, bufs, scalars) -> {
                            Launch.Builder l = Launch.newBuilder().setKernel(k).addAllGlobalDims(dims);
                            bufs.forEach(b -> l.addArgs(Arg.newBuilder().setBuffer(b)));
                            scalars.forEach(s -> l.addArgs(Arg.newBuilder().setScalar(s)));
                            return Command.newBuilder().setLaunch(l);
                        }));
    }

    static Arbitrary<Command> commands() {
        return Combinators.combine(operations(), events(), events().list().ofMaxSize(4), Arbitraries.of(0L, 0L, 0L, 1L, -1L),
                deadlines(), Arbitraries.integers().between(0, 5))
                .as((c, event, waits, stream, deadline, priority) -> c.setEvent(event).addAllWaitEvents(waits)
                        .setStream(stream).setPriorityValue(priority).mergeFrom(deadline.map(d -> Command.newBuilder().setDeadline(d).build())
                                .orElse(Command.getDefaultInstance())).build());
    }

    /**
     * A batch whose commands wait in a circle: command i waits for the event of command i + 1, the last
     * for the first (or, for one command, for itself).
     */
    static Arbitrary<List<Command>> cyclicBatches() {
        return Combinators.combine(commands().list().ofMinSize(1).ofMaxSize(4), Arbitraries.longs().between(1, 40))
                .as((cs, base) -> {
                    List<Command> out = new ArrayList<>();
                    for (int i = 0; i < cs.size(); i++) {
                        out.add(cs.get(i).toBuilder().setEvent(base + i).clearWaitEvents()
                                .addWaitEvents(base + (i + 1) % cs.size()).build());
                    }
                    return out;
                });
    }

    static Arbitrary<List<Command>> batches() {
        return Arbitraries.frequencyOf(
                Tuple.of(4, commands().list().ofMaxSize(6)),
                Tuple.of(1, cyclicBatches()));
    }

    // ------------------------------------------------------------------ messages

    static Arbitrary<Message> validMessages() {
        return Arbitraries.oneOf(
                Combinators.combine(sessions(), batches()).as((s, cs) -> SubmitRequest.newBuilder().setSession(s)
                        .addAllCommands(cs).build()),
                Combinators.combine(sessions(), Arbitraries.integers().between(0, 9), sizes().list().ofMaxSize(9),
                        Arbitraries.strings().ofMaxLength(8)).as((s, dt, dims, dev) -> CreateBufferRequest.newBuilder()
                        .setSession(s).setDtypeValue(dt).addAllDims(dims).setDevice(dev).build()),
                Combinators.combine(sessions(), handles()).as((s, h) ->
                        DestroyBufferRequest.newBuilder().setSession(s).setBuffer(h).build()),
                Combinators.combine(sessions(), handles()).as((s, h) ->
                        DescribeBufferRequest.newBuilder().setSession(s).setBuffer(h).build()),
                Combinators.combine(sessions(), handles(), sizes(), sizes(), Arbitraries.integers(),
                        events().list().ofMaxSize(3)).as((s, h, o, n, ch, w) -> ReadBufferRequest.newBuilder()
                        .setSession(s).setBuffer(h).setOffsetBytes(o).setSizeBytes(n).setChunkBytes(ch)
                        .addAllWaitEvents(w).build()),
                Combinators.combine(sessions(), events().list().ofMaxSize(8)).as((s, e) ->
                        WaitEventsRequest.newBuilder().setSession(s).addAllEvents(e).build()),
                Combinators.combine(sessions(), events().list().ofMaxSize(8)).as((s, e) ->
                        QueryEventsRequest.newBuilder().setSession(s).addAllEvents(e).build()),
                Combinators.combine(sessions(), Arbitraries.of("", "cpu:0", "cpu:9", "opencl:0", "x")).as((s, d) ->
                        CreateStreamRequest.newBuilder().setSession(s).setDevice(d).build()),
                Combinators.combine(sessions(), handles()).as((s, h) ->
                        DestroyStreamRequest.newBuilder().setSession(s).setStream(h).build()),
                Combinators.combine(sessions(), handles()).as((s, h) ->
                        AwaitStreamRequest.newBuilder().setSession(s).setStream(h).build()),
                sessions().map(s -> KeepAliveRequest.newBuilder().setSession(s).build()),
                Combinators.combine(sessions(), handles(), Arbitraries.of(true, false), Arbitraries.of("", "alice", "bob"))
                        .as((s, h, ro, t) -> ShareBufferRequest.newBuilder().setSession(s).setBuffer(h).setReadOnly(ro)
                                .setTenant(t).build()),
                Combinators.combine(sessions(), Arbitraries.strings().ofMaxLength(40)).as((s, c) ->
                        OpenSharedBufferRequest.newBuilder().setSession(s).setCapability(c).build()),
                Combinators.combine(sessions(), texts()).as((s, label) -> CreateBufferRequest.newBuilder().setSession(s)
                        .setDtype(dev.arrayd.proto.v1.DataType.DATA_TYPE_F32).addDims(16).setLabel(label).build()),
                Combinators.combine(sessions(), texts()).as((s, d) ->
                        CreateStreamRequest.newBuilder().setSession(s).setDevice(d).build()),
                texts().map(d -> GetDeviceRequest.newBuilder().setDevice(d).build()),
                Arbitraries.just(ListDevicesRequest.getDefaultInstance()),
                u32s().map(n -> GetStatsRequest.newBuilder().setTopClients(n).build()),
                Combinators.combine(texts(), durations(), sizes()).as((name, lease, receive) -> OpenSessionRequest.newBuilder()
                        .setClientName(name).setLease(lease).setMaxReceiveMessageBytes(receive).build()),
                foreignSessions().map(s -> CloseSessionRequest.newBuilder().setSession(s).build()),
                Combinators.combine(sessions(), events().list().ofMaxSize(6)).as((s, e) ->
                        CancelRequest.newBuilder().setSession(s).addAllEvents(e).build()),
                Combinators.combine(sessions(), batches()).as((s, cs) ->
                        RecordGraphRequest.newBuilder().setSession(s).addAllCommands(cs).build()),
                Combinators.combine(sessions(), handles(), events(), events().list().ofMaxSize(2), replayScalars(),
                        deadlines()).as((s, g, first, waits, scalars, deadline) ->
                        ReplayGraphRequest.newBuilder().setSession(s).setGraph(g).setFirstEvent(first)
                                .addAllWaitEvents(waits).addAllScalars(scalars)
                                .mergeFrom(deadline.map(d -> ReplayGraphRequest.newBuilder().setDeadline(d).build())
                                        .orElse(ReplayGraphRequest.getDefaultInstance())).build()),
                Combinators.combine(sessions(), handles()).as((s, g) ->
                        DestroyGraphRequest.newBuilder().setSession(s).setGraph(g).build()),
                Combinators.combine(sessions(), Arbitraries.longs()).as((s, k) ->
                        DestroyKernelRequest.newBuilder().setSession(s).setKernel(k).build()));
    }

    static Arbitrary<List<ScalarValue>> replayScalars() {
        return Combinators.combine(u32s(), u32s(), scalars()).as((c, a, v) ->
                ScalarValue.newBuilder().setCommand(c).setArg(a).setValue(v).build()).list().ofMaxSize(2);
    }

    /** Every method the daemon serves, but those whose answer never ends by design (Health.Watch, Source). */
    static final List<MethodDescriptor<?, ?>> METHODS = methods();

    private static List<MethodDescriptor<?, ?>> methods() {
        List<MethodDescriptor<?, ?>> out = new ArrayList<>();
        for (ServiceDescriptor sd : List.of(DeviceServiceGrpc.getServiceDescriptor(), SessionServiceGrpc.getServiceDescriptor(),
                BufferServiceGrpc.getServiceDescriptor(), KernelServiceGrpc.getServiceDescriptor(),
                ExecutionServiceGrpc.getServiceDescriptor(), SharingServiceGrpc.getServiceDescriptor(),
                DiagnosticsServiceGrpc.getServiceDescriptor(), StatsServiceGrpc.getServiceDescriptor(),
                io.grpc.health.v1.HealthGrpc.getServiceDescriptor(),
                io.grpc.reflection.v1.ServerReflectionGrpc.getServiceDescriptor(),
                io.grpc.reflection.v1alpha.ServerReflectionGrpc.getServiceDescriptor())) {
            for (MethodDescriptor<?, ?> m : sd.getMethods()) {
                if (!m.getFullMethodName().endsWith("/Watch") && !m.getFullMethodName().endsWith("/Source")) {
                    out.add(m);
                }
            }
        }
        return List.copyOf(out);
    }

    /** Bytes that do not parse (0xff runs, random, a valid message cut short) to any method. */
    static Arbitrary<Request> raws() {
        Arbitrary<byte[]> bodies = Arbitraries.oneOf(
                Arbitraries.integers().between(1, 64).map(n -> {
                    byte[] b = new byte[n];
                    java.util.Arrays.fill(b, (byte) 0xff);
                    return b;
                }),
                Arbitraries.bytes().array(byte[].class).ofMinSize(1).ofMaxSize(96),
                Combinators.combine(validMessages(), Arbitraries.integers().between(1, 8)).as((m, cut) -> {
                    byte[] raw = m.toByteArray();
                    return java.util.Arrays.copyOf(raw, Math.max(0, raw.length - cut));
                }));
        return Combinators.combine(Arbitraries.of(METHODS), bodies).as(Raw::new);
    }

    /** A valid message with one to three bytes of its encoding changed, read back as its own type. */
    static Arbitrary<Message> mutated() {
        return Combinators.combine(validMessages(), Arbitraries.integers().between(0, Integer.MAX_VALUE).list()
                .ofMinSize(1).ofMaxSize(3), Arbitraries.bytes()).as((m, at, x) -> {
                    byte[] raw = m.toByteArray();
                    if (raw.length == 0) {
                        return m;
                    }
                    for (int i : at) {
                        raw[i % raw.length] ^= (byte) (x | 1);
                    }
                    return parseOr(m, raw);
                });
    }

    /** Random bytes read as one of the request types (its default instance when they do not parse). */
    static Arbitrary<Message> random() {
        List<Message> types = List.of(SubmitRequest.getDefaultInstance(), CreateBufferRequest.getDefaultInstance(),
                ReadBufferRequest.getDefaultInstance(), WaitEventsRequest.getDefaultInstance(),
                DescribeBufferRequest.getDefaultInstance(), ShareBufferRequest.getDefaultInstance());
        return Combinators.combine(Arbitraries.of(types), Arbitraries.bytes().array(byte[].class).ofMaxSize(96),
                Arbitraries.of(true, false)).as((type, raw, own) -> {
                    Message m = parseOr(type, raw);
                    // keep a session that exists half of the time, or every such request stops at NOT_FOUND
                    var session = m.getDescriptorForType().findFieldByName("session");
                    return own ? m.toBuilder().setField(session, OWN_SESSION).build() : m;
                });
    }

    private static Message parseOr(Message like, byte[] raw) {
        try {
            return like.getParserForType().parseFrom(raw);
        } catch (InvalidProtocolBufferException e) {
            return like.getDefaultInstanceForType();
        }
    }

    // ------------------------------------------------------------------ requests

    /** A session stream: usually attach, then batches and pings; sometimes out of order. */
    static Arbitrary<Request> streams() {
        Arbitrary<ExecuteRequest> batch = Combinators.combine(Arbitraries.longs(), batches()).as((id, cs) ->
                ExecuteRequest.newBuilder().setBatch(CommandBatch.newBuilder().setBatchId(id).addAllCommands(cs)).build());
        Arbitrary<ExecuteRequest> other = Arbitraries.oneOf(
                Arbitraries.longs().map(n -> ExecuteRequest.newBuilder().setPing(Ping.newBuilder().setNonce(n)).build()),
                sessions().map(s -> ExecuteRequest.newBuilder().setAttach(Attach.newBuilder().setSession(s)).build()),
                Arbitraries.just(ExecuteRequest.getDefaultInstance()));
        Arbitrary<List<ExecuteRequest>> rest = Arbitraries.frequencyOf(Tuple.of(5, batch), Tuple.of(1, other))
                .list().ofMaxSize(4);
        return Combinators.combine(sessions(), rest, Arbitraries.integers().between(0, 9)).as((s, msgs, skipAttach) -> {
            List<ExecuteRequest> all = new ArrayList<>();
            if (skipAttach != 0) {
                all.add(ExecuteRequest.newBuilder().setAttach(Attach.newBuilder().setSession(s)).build());
            }
            all.addAll(msgs);
            return new Stream(all);
        });
    }

    /** A WriteBuffer call: chunks at random offsets, sometimes naming other sessions or buffers midway. */
    static Arbitrary<Request> writes() {
        Arbitrary<WriteBufferRequest> chunk = Combinators.combine(sessions(), handles(), sizes(), data(),
                events().list().ofMaxSize(2), events()).as((s, b, off, d, w, e) -> WriteBufferRequest.newBuilder()
                .setSession(s).setBuffer(b).setOffsetBytes(off).setData(d).addAllWaitEvents(w).setEvent(e).build());
        Arbitrary<WriteBufferRequest> same = Combinators.combine(sizes(), data()).as((off, d) ->
                WriteBufferRequest.newBuilder().setOffsetBytes(off).setData(d).build());
        return Combinators.combine(chunk, Arbitraries.frequencyOf(Tuple.of(4, same), Tuple.of(1, chunk))
                .list().ofMaxSize(3), Arbitraries.integers().between(0, 19)).as((first, more, none) -> {
                    if (none == 0) {
                        return new Write(List.of());
                    }
                    List<WriteBufferRequest> all = new ArrayList<>();
                    all.add(first);
                    all.addAll(more);
                    return new Write(all);
                });
    }

    /** Every kind of request, mostly unary. */
    static Arbitrary<Request> requests() {
        Function<Arbitrary<Message>, Arbitrary<Request>> unary = a -> a.map(Unary::new);
        return Arbitraries.frequencyOf(
                Tuple.of(10, unary.apply(validMessages())),
                Tuple.of(4, unary.apply(mutated())),
                Tuple.of(2, unary.apply(random())),
                Tuple.of(2, streams()),
                Tuple.of(2, writes()),
                Tuple.of(3, raws()),
                Tuple.of(2, unary.apply(dev.arrayd.server.FuzzIr.compiles(OWN_SESSION).map(m -> m))));
    }
}
