package dev.arrayd.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import dev.arrayd.proto.v1.Arg;
import dev.arrayd.proto.v1.AwaitStreamRequest;
import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.Copy;
import dev.arrayd.proto.v1.CreateBufferRequest;
import dev.arrayd.proto.v1.CloseSessionRequest;
import dev.arrayd.proto.v1.CompileRequest;
import dev.arrayd.proto.v1.CreateStreamRequest;
import dev.arrayd.proto.v1.DeviceServiceGrpc;
import dev.arrayd.proto.v1.GetDeviceRequest;
import dev.arrayd.proto.v1.GetStatsRequest;
import dev.arrayd.proto.v1.KernelServiceGrpc;
import dev.arrayd.proto.v1.OpenSessionRequest;
import dev.arrayd.proto.v1.StatsServiceGrpc;
import dev.arrayd.proto.v1.DataType;
import dev.arrayd.proto.v1.DescribeBufferRequest;
import dev.arrayd.proto.v1.DestroyBufferRequest;
import dev.arrayd.proto.v1.DestroyStreamRequest;
import dev.arrayd.proto.v1.Download;
import dev.arrayd.proto.v1.Fill;
import dev.arrayd.proto.v1.KeepAliveRequest;
import dev.arrayd.proto.v1.Launch;
import dev.arrayd.proto.v1.OpenSharedBufferRequest;
import dev.arrayd.proto.v1.QueryEventsRequest;
import dev.arrayd.proto.v1.ReadBufferRequest;
import dev.arrayd.proto.v1.Scalar;
import dev.arrayd.proto.v1.ShareBufferRequest;
import dev.arrayd.proto.v1.SubmitRequest;
import dev.arrayd.proto.v1.Upload;
import dev.arrayd.proto.v1.WaitEventsRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthGrpc;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * API fuzzing (in-process, fast): 100 000 generated hostile requests — random and mutated messages,
 * bytes that do not parse sent raw to every method, hostile IR ({@link FuzzIr}: unset nodes at every depth,
 * unknown enum numbers, nesting past the limits), unsigned values at 2^31 and 2^63 and beyond, names and
 * labels of 100 kB, wrong and foreign handles, another tenant's session token, huge sizes, cyclic and self
 * waits — from tenant {@code bob} against a daemon where {@code alice} owns a session with buffers. Every
 * request must be answered with a status that is not INTERNAL / UNKNOWN (a daemon bug) nor
 * DEADLINE_EXCEEDED (a hang), with a description of at most {@link StatusText#MAX_ENCODED_BYTES} bytes; the
 * daemon's log may grow by at most 2 lines a request; the daemon must stay SERVING, alice's data untouched,
 * and the pools empty once every session closes.
 */
class ApiFuzzProperties {

    static TenantFixture f;
    static TenantFixture.Client bob;
    static String bobSession;
    static String aliceSession;
    static long[] aliceBuffers;
    static long[] bobBuffers;
    static long bobKernel;
    static final AtomicLong requests = new AtomicLong();

    @BeforeContainer
    static void start() throws Exception {
        f = new TenantFixture(TenantFixture.ALICE + " alice\n" + TenantFixture.BOB
                + " bob memory=8MiB streams=4 inflight=2000 message=4MiB\n", SecurityOptions.NONE);
        var alice = f.client(TenantFixture.ALICE);
        bob = f.client(TenantFixture.BOB);
        aliceSession = alice.openSession(600_000);
        bobSession = bob.openSession(600_000);
        aliceBuffers = new long[4];
        bobBuffers = new long[4];
        for (int i = 0; i < 4; i++) {
            aliceBuffers[i] = alice.buffers.createBuffer(Protos.f32(aliceSession, 64)).getBuffer().getBuffer();
            bobBuffers[i] = bob.buffers.createBuffer(Protos.f32(bobSession, 64)).getBuffer().getBuffer();
        }
        var kernels = dev.arrayd.proto.v1.KernelServiceGrpc.newBlockingStub(bob.channel);
        bobKernel = kernels.compile(Protos.compile(bobSession, Protos.VADD, Protos.VADD_SIG)).getModules(0).getKernels(0)
                .getKernel();
    }

    @AfterContainer
    static void stop() throws Exception {
        assertTrue(requests.get() >= 100_000, "requests sent: " + requests.get());
        assertEquals("SERVING", HealthGrpc.newBlockingStub(bob.channel).check(HealthCheckRequest.getDefaultInstance())
                .getStatus().name());
        // alice's buffers all survived bob's attempts
        var alice = f.client(TenantFixture.ALICE);
        for (long h : aliceBuffers) {
            alice.buffers.describeBuffer(DescribeBufferRequest.newBuilder().setSession(aliceSession).setBuffer(h).build()).getBuffer();
        }
        f.close();
    }

    // ------------------------------------------------------------------ generators

    @Provide
    Arbitrary<String> sessions() {
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(12, Arbitraries.just("bob")),
                net.jqwik.api.Tuple.of(2, Arbitraries.just("alice")),
                net.jqwik.api.Tuple.of(1, Arbitraries.strings().ofMaxLength(40)),
                net.jqwik.api.Tuple.of(1, Arbitraries.just("")));
    }

    static Arbitrary<Long> handles() {
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(6, Arbitraries.integers().between(0, 3).map(i -> -1L - i)),   // bob's slot i
                net.jqwik.api.Tuple.of(3, Arbitraries.integers().between(0, 3).map(i -> -10L - i)),  // alice's slot i
                net.jqwik.api.Tuple.of(2, Arbitraries.longs()),
                net.jqwik.api.Tuple.of(1, Arbitraries.of(0L, Long.MAX_VALUE, 1L)));
    }

    static Arbitrary<Long> sizes() {
        return Arbitraries.oneOf(Arbitraries.longs().between(0, 512), Arbitraries.longs(),
                Arbitraries.of(Long.MAX_VALUE, Long.MIN_VALUE, 1L << 40, (1L << 31) - 1, -1L));
    }

    /** One axis of a padded buffer: {dim, left, right}, mostly small, sometimes absurd. */
    static Arbitrary<long[]> paddedDims() {
        Arbitrary<Long> pad = Arbitraries.oneOf(Arbitraries.longs().between(0, 3), Arbitraries.longs(),
                Arbitraries.of(Long.MAX_VALUE, Long.MIN_VALUE, 1L << 40, -1L));
        return Combinators.combine(Arbitraries.oneOf(Arbitraries.longs().between(1, 16), sizes()), pad, pad)
                .as((d, l, r) -> new long[] {d, l, r});
    }

    static Arbitrary<Long> events() {
        return Arbitraries.oneOf(Arbitraries.longs().between(0, 64), Arbitraries.longs(),
                Arbitraries.of(1L << 62, (1L << 62) - 1, Long.MAX_VALUE, Long.MIN_VALUE, -1L, 1L << 31, 1L << 32));
    }

    static Arbitrary<Scalar> scalars() {
        return Arbitraries.oneOf(Arbitraries.floats().map(v -> Scalar.newBuilder().setF32(v).build()),
                Arbitraries.integers().map(v -> Scalar.newBuilder().setI32(v).build()),
                Arbitraries.integers().map(v -> Scalar.newBuilder().setU8(v).build()),
                // uint32 past 2^31 (negative in Java) and past 255
                Arbitraries.of(Integer.MIN_VALUE, Integer.MIN_VALUE + 7, -1, 256).map(v -> Scalar.newBuilder().setU8(v).build()),
                Arbitraries.just(Scalar.getDefaultInstance()));
    }

    static Arbitrary<Command> commands() {
        Arbitrary<Command.Builder> op = Arbitraries.oneOf(
                Combinators.combine(handles(), sizes(), Arbitraries.integers().between(0, 300)).as((b, off, n) ->
                        Command.newBuilder().setUpload(Upload.newBuilder().setBuffer(b).setOffsetBytes(off)
                                .setData(ByteString.copyFrom(new byte[n])))),
                Combinators.combine(handles(), sizes(), sizes()).as((b, off, n) -> Command.newBuilder()
                        .setDownload(Download.newBuilder().setBuffer(b).setOffsetBytes(off).setSizeBytes(n))),
                Combinators.combine(handles(), handles(), sizes(), sizes(), sizes()).as((s, d, so, dof, n) ->
                        Command.newBuilder().setCopy(Copy.newBuilder().setSrc(s).setDst(d).setSrcOffsetBytes(so)
                                .setDstOffsetBytes(dof).setSizeBytes(n))),
                Combinators.combine(handles(), scalars(), sizes(), sizes()).as((b, v, o, n) -> Command.newBuilder()
                        .setFill(Fill.newBuilder().setBuffer(b).setValue(v).setOffsetElements(o).setCountElements(n))),
                Combinators.combine(Arbitraries.oneOf(Arbitraries.just(-100L), handles()),
                        sizes().list().ofMaxSize(4), handles().list().ofMaxSize(5), scalars())
                        .as((k, dims, bufs, sc) -> {
                            Launch.Builder l = Launch.newBuilder().setKernel(k).addAllGlobalDims(dims);
                            bufs.forEach(b -> l.addArgs(Arg.newBuilder().setBuffer(b)));
                            l.addArgs(Arg.newBuilder().setScalar(sc));
                            return Command.newBuilder().setLaunch(l);
                        }));
        return Combinators.combine(op, events(), events().list().ofMaxSize(4), Arbitraries.longs().between(0, 3))
                .as((c, ev, waits, stream) -> c.setEvent(ev).addAllWaitEvents(waits).setStream(stream == 0 ? 0 : -1 - stream)
                        .build());
    }

    @Provide
    Arbitrary<Message> requests() {
        Arbitrary<SubmitRequest> submit = commands().list().ofMaxSize(6)
                .map(cs -> SubmitRequest.newBuilder().addAllCommands(cs).build());
        Arbitrary<Message> mutated = Combinators.combine(submit, Arbitraries.integers().between(0, 1 << 20),
                Arbitraries.bytes()).as((s, at, b) -> {
                    byte[] raw = s.toByteArray();
                    if (raw.length > 0) {
                        raw[at % raw.length] ^= (byte) (b | 1);
                    }
                    try {
                        return SubmitRequest.parseFrom(raw);
                    } catch (InvalidProtocolBufferException e) {
                        return s;
                    }
                });
        Arbitrary<Message> random = Arbitraries.bytes().array(byte[].class).ofMaxSize(64).map(raw -> {
            try {
                return SubmitRequest.parseFrom(raw);
            } catch (InvalidProtocolBufferException e) {
                return SubmitRequest.getDefaultInstance();
            }
        });
        return Arbitraries.oneOf(submit.map(m -> m), submit.map(m -> m), mutated, random,
                Combinators.combine(Arbitraries.integers().between(0, 9), sizes().list().ofMaxSize(10))
                        .as((dt, dims) -> CreateBufferRequest.newBuilder().setDtypeValue(dt).addAllDims(dims).build()),
                // padded buffers: small and hostile dims and paddings, any value, sometimes one padding too few
                Combinators.combine(Arbitraries.integers().between(0, 9), paddedDims().list().ofMinSize(1).ofMaxSize(3),
                        Arbitraries.oneOf(scalars(), Arbitraries.just(Scalar.getDefaultInstance())), Arbitraries.of(true, false))
                        .as((dt, axes, v, short_) -> {
                            CreateBufferRequest.Builder b = CreateBufferRequest.newBuilder().setDtypeValue(dt);
                            for (int i = 0; i < axes.size(); i++) {
                                b.addDims(axes.get(i)[0]);
                                if (!(short_ && i == 0)) {
                                    b.addPadding(dev.arrayd.proto.v1.AxisPadding.newBuilder().setLeft(axes.get(i)[1])
                                            .setRight(axes.get(i)[2]));
                                }
                            }
                            return v.getValueCase() == Scalar.ValueCase.VALUE_NOT_SET ? b.build() : b.setPaddingValue(v).build();
                        }),
                Combinators.combine(handles(), sizes().list().ofMaxSize(4), Arbitraries.of(true, false))
                        .as((h, dims, whole) -> dev.arrayd.proto.v1.CreateViewRequest.newBuilder().setBase(h).addAllDims(dims)
                                .setWholePadded(whole).build()),
                handles().map(h -> DestroyBufferRequest.newBuilder().setBuffer(h).build()),
                handles().map(h -> DescribeBufferRequest.newBuilder().setBuffer(h).build()),
                Combinators.combine(handles(), sizes(), sizes(), Arbitraries.integers()).as((h, o, n, ch) ->
                        ReadBufferRequest.newBuilder().setBuffer(h).setOffsetBytes(o).setSizeBytes(n).setChunkBytes(ch).build()),
                events().list().ofMaxSize(8).map(e -> WaitEventsRequest.newBuilder().addAllEvents(e).build()),
                events().list().ofMaxSize(8).map(e -> QueryEventsRequest.newBuilder().addAllEvents(e).build()),
                Arbitraries.strings().ofMaxLength(12).map(d -> CreateStreamRequest.newBuilder().setDevice(d).build()),
                handles().map(h -> DestroyStreamRequest.newBuilder().setStream(h).build()),
                handles().map(h -> AwaitStreamRequest.newBuilder().setStream(h).build()),
                Arbitraries.just(KeepAliveRequest.getDefaultInstance()),
                Combinators.combine(handles(), Arbitraries.of(true, false)).as((h, ro) ->
                        ShareBufferRequest.newBuilder().setBuffer(h).setReadOnly(ro).build()),
                Arbitraries.strings().ofMaxLength(40).map(c -> OpenSharedBufferRequest.newBuilder().setCapability(c).build()));
    }

    // ------------------------------------------------------------------ the property

    /** Bytes sent raw as the request of method {@code method} (an index into the daemon's methods). */
    record Raw(int method, byte[] body) {
        @Override
        public String toString() {
            return "Raw[" + methods().get(method % methods().size()).getFullMethodName() + ", " + body.length + " bytes]";
        }
    }

    /** Every method the daemon serves, but those whose answer never ends by design. */
    static List<io.grpc.MethodDescriptor<?, ?>> methods() {
        List<io.grpc.MethodDescriptor<?, ?>> out = new java.util.ArrayList<>();
        for (var service : f.server.services()) {
            for (var m : service.getMethods()) {
                String name = m.getMethodDescriptor().getFullMethodName();
                if (!name.endsWith("/Watch") && !name.endsWith("/Source")) {
                    out.add(m.getMethodDescriptor());
                }
            }
        }
        return out;
    }

    static Arbitrary<Object> raws() {
        return Combinators.combine(Arbitraries.integers().between(0, 1000), Arbitraries.oneOf(
                Arbitraries.integers().between(1, 32).map(n -> {
                    byte[] b = new byte[n];
                    java.util.Arrays.fill(b, (byte) 0xff);
                    return b;
                }),
                Arbitraries.bytes().array(byte[].class).ofMinSize(1).ofMaxSize(64))).as(Raw::new);
    }

    static final String HUGE = "h".repeat(100_000);

    /** Requests that carry text: short, odd, or 100 kB. */
    static Arbitrary<Message> texts() {
        Arbitrary<String> text = Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(6, Arbitraries.strings().ofMaxLength(10)),
                net.jqwik.api.Tuple.of(1, Arbitraries.just(HUGE)));
        return Arbitraries.oneOf(
                text.map(t -> CreateBufferRequest.newBuilder().setDtype(DataType.DATA_TYPE_F32).addDims(4).setLabel(t).build()),
                text.map(t -> CreateStreamRequest.newBuilder().setDevice(t).build()),
                text.map(t -> GetDeviceRequest.newBuilder().setDevice(t).build()),
                text.map(t -> OpenSessionRequest.newBuilder().setClientName(t).build()),
                Arbitraries.of(Integer.MIN_VALUE, -1, 0, 3).map(n -> GetStatsRequest.newBuilder().setTopClients(n).build()));
    }

    @Provide
    Arbitrary<List<Object>> batches() {
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(10, requests().map(m -> (Object) m)),
                net.jqwik.api.Tuple.of(2, raws()),
                net.jqwik.api.Tuple.of(1, FuzzIr.compiles("").map(m -> (Object) m)),
                net.jqwik.api.Tuple.of(1, texts().map(m -> (Object) m))).list().ofSize(100);
    }

    @Property(tries = 1000, shrinking = ShrinkingMode.OFF, edgeCases = net.jqwik.api.EdgeCasesMode.NONE)
    void everyHostileRequestIsAnsweredWithAStatus(@ForAll("sessions") String who,
            @ForAll("batches") List<Object> batch) {
        String session = switch (who) {
            case "bob" -> bobSession;
            case "alice" -> aliceSession; // a token bob should never be able to use
            default -> who;
        };
        ch.qos.logback.classic.Logger root = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory
                .getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> lines =
                new ch.qos.logback.core.read.ListAppender<>();
        lines.start();
        root.addAppender(lines);
        try {
            for (Object m : batch) {
                Status s = m instanceof Raw raw ? raw(raw) : send(session, (Message) m);
                requests.incrementAndGet();
                assertTrue(s.getCode() != Status.Code.INTERNAL && s.getCode() != Status.Code.UNKNOWN
                        && s.getCode() != Status.Code.DEADLINE_EXCEEDED, () -> s + " for " + m);
                assertTrue(s.getDescription() == null
                        || StatusText.encodedBytes(s.getDescription(), s.getDescription().length()) <= StatusText.MAX_ENCODED_BYTES,
                        () -> "a description of " + s.getDescription().length() + " characters for " + m);
                if (session == aliceSession && !(m instanceof Raw) && !(m instanceof GetDeviceRequest)
                        && !(m instanceof GetStatsRequest) && !(m instanceof OpenSessionRequest)) {
                    assertTrue(s.getCode() == Status.Code.NOT_FOUND || s.getCode() == Status.Code.INVALID_ARGUMENT
                            || s.getCode() == Status.Code.RESOURCE_EXHAUSTED, () -> "alice's session used by bob: " + s
                            + " for " + m);
                }
            }
        } finally {
            root.detachAppender(lines);
        }
        assertTrue(lines.list.size() <= 2 * batch.size(), () -> "the log grew by " + lines.list.size()
                + " lines for " + batch.size() + " requests: " + lines.list.subList(0, Math.min(5, lines.list.size())));
    }

    /** Sends the raw bytes as the one request of their method, on bob's channel; the status the call ends with. */
    static Status raw(Raw r) {
        return RawCalls.call(bob.channel, methods().get(r.method() % methods().size()), r.body());
    }


    /** Bob's slot -1-i, alice's -10-i, kernel -100; stream -1-i = bob's slot (none exist: NOT_FOUND). */
    static long resolve(long h) {
        if (h <= -1 && h >= -4) {
            return bobBuffers[(int) (-1 - h)];
        }
        if (h <= -10 && h >= -13) {
            return aliceBuffers[(int) (-10 - h)];
        }
        return h == -100 ? bobKernel : h;
    }

    static Command resolve(Command c) {
        Command.Builder b = c.toBuilder();
        switch (c.getKindCase()) {
            case UPLOAD -> b.getUploadBuilder().setBuffer(resolve(c.getUpload().getBuffer()));
            case DOWNLOAD -> b.getDownloadBuilder().setBuffer(resolve(c.getDownload().getBuffer()));
            case COPY -> b.getCopyBuilder().setSrc(resolve(c.getCopy().getSrc())).setDst(resolve(c.getCopy().getDst()));
            case FILL -> b.getFillBuilder().setBuffer(resolve(c.getFill().getBuffer()));
            case LAUNCH -> {
                Launch.Builder l = b.getLaunchBuilder().setKernel(resolve(c.getLaunch().getKernel()));
                for (int i = 0; i < l.getArgsCount(); i++) {
                    if (l.getArgs(i).hasBuffer()) {
                        l.setArgs(i, Arg.newBuilder().setBuffer(resolve(l.getArgs(i).getBuffer())));
                    }
                }
            }
            default -> { }
        }
        return b.build();
    }

    static Status send(String session, Message m) {
        var deadline = 20L;
        try {
            var buffers = bob.buffers.withDeadlineAfter(deadline, TimeUnit.SECONDS);
            var exec = bob.exec.withDeadlineAfter(deadline, TimeUnit.SECONDS);
            switch (m) {
                case SubmitRequest r -> {
                    SubmitRequest.Builder b = r.toBuilder().setSession(session).clearCommands();
                    r.getCommandsList().forEach(c -> b.addCommands(resolve(c)));
                    var events = exec.submit(b.build()).getEventsList();
                    if (!events.isEmpty()) { // wait, so that in-flight commands stay bounded
                        exec.waitEvents(WaitEventsRequest.newBuilder().setSession(session).addAllEvents(events).build());
                    }
                }
                case CreateBufferRequest r -> {
                    long h = buffers.createBuffer(r.toBuilder().setSession(session).build()).getBuffer().getBuffer();
                    buffers.destroyBuffer(DestroyBufferRequest.newBuilder().setSession(session).setBuffer(h).build());
                }
                case DestroyBufferRequest r -> {
                    long h = resolve(r.getBuffer());
                    if (h == bobBuffers[0] || h == aliceBuffers[0]) {
                        h ^= 1; // keep one buffer of each for the other requests (and to check alice's survives)
                    }
                    buffers.destroyBuffer(r.toBuilder().setSession(session).setBuffer(h).build());
                }
                case dev.arrayd.proto.v1.CreateViewRequest r -> {
                    long v = buffers.createView(r.toBuilder().setSession(session).setBase(resolve(r.getBase())).build())
                            .getBuffer().getBuffer();
                    buffers.destroyBuffer(DestroyBufferRequest.newBuilder().setSession(session).setBuffer(v).build());
                }
                case DescribeBufferRequest r ->
                        buffers.describeBuffer(r.toBuilder().setSession(session).setBuffer(resolve(r.getBuffer())).build()).getBuffer();
                case ReadBufferRequest r -> buffers.readBuffer(r.toBuilder().setSession(session)
                        .setBuffer(resolve(r.getBuffer())).build()).forEachRemaining(x -> { });
                case WaitEventsRequest r -> exec.waitEvents(r.toBuilder().setSession(session).build());
                case QueryEventsRequest r -> exec.queryEvents(r.toBuilder().setSession(session).build());
                case CreateStreamRequest r -> {
                    long st = exec.createStream(r.toBuilder().setSession(session).build()).getStream();
                    exec.destroyStream(DestroyStreamRequest.newBuilder().setSession(session).setStream(st).build());
                }
                case DestroyStreamRequest r -> exec.destroyStream(r.toBuilder().setSession(session)
                        .setStream(resolve(r.getStream())).build());
                case AwaitStreamRequest r -> exec.awaitStream(r.toBuilder().setSession(session)
                        .setStream(resolve(r.getStream())).build());
                case KeepAliveRequest r -> bob.sessions.keepAlive(r.toBuilder().setSession(session).build());
                case ShareBufferRequest r -> bob.sharing.shareBuffer(r.toBuilder().setSession(session)
                        .setBuffer(resolve(r.getBuffer())).build());
                case OpenSharedBufferRequest r -> bob.sharing.openSharedBuffer(r.toBuilder().setSession(session).build());
                case CompileRequest r -> KernelServiceGrpc.newBlockingStub(bob.channel).withDeadlineAfter(60, TimeUnit.SECONDS)
                        .compile(r.toBuilder().setSession(session).build());
                case GetDeviceRequest r -> DeviceServiceGrpc.newBlockingStub(bob.channel)
                        .withDeadlineAfter(deadline, TimeUnit.SECONDS).getDevice(r).getDevice();
                case GetStatsRequest r -> StatsServiceGrpc.newBlockingStub(bob.channel)
                        .withDeadlineAfter(deadline, TimeUnit.SECONDS).getStats(r);
                case OpenSessionRequest r -> {
                    String s = bob.sessions.withDeadlineAfter(deadline, TimeUnit.SECONDS).openSession(r).getSession();
                    bob.sessions.closeSession(CloseSessionRequest.newBuilder().setSession(s).build());
                }
                default -> throw new AssertionError(m.getClass());
            }
            return Status.OK;
        } catch (StatusRuntimeException e) {
            return e.getStatus();
        }
    }
}
