package dev.arrayd.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.google.protobuf.ByteString;
import com.google.protobuf.util.Durations;
import dev.arrayd.devices.api.testing.ResourcesPerClass;
import dev.arrayd.proto.v1.Access;
import dev.arrayd.proto.v1.Arg;
import dev.arrayd.proto.v1.BufferServiceGrpc;
import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.CompileRequest;
import dev.arrayd.proto.v1.CreateBufferRequest;
import dev.arrayd.proto.v1.CreateStreamRequest;
import dev.arrayd.proto.v1.DataType;
import dev.arrayd.proto.v1.DeviceServiceGrpc;
import dev.arrayd.proto.v1.Dialect;
import dev.arrayd.proto.v1.ExecutionServiceGrpc;
import dev.arrayd.proto.v1.Fill;
import dev.arrayd.proto.v1.GetDeviceRequest;
import dev.arrayd.proto.v1.GetStatsRequest;
import dev.arrayd.proto.v1.IrBinary;
import dev.arrayd.proto.v1.IrBufferParam;
import dev.arrayd.proto.v1.IrBuiltin;
import dev.arrayd.proto.v1.IrCast;
import dev.arrayd.proto.v1.IrConst;
import dev.arrayd.proto.v1.IrExpr;
import dev.arrayd.proto.v1.IrIf;
import dev.arrayd.proto.v1.IrKernel;
import dev.arrayd.proto.v1.IrLet;
import dev.arrayd.proto.v1.IrModule;
import dev.arrayd.proto.v1.IrParam;
import dev.arrayd.proto.v1.IrScalarParam;
import dev.arrayd.proto.v1.IrStmt;
import dev.arrayd.proto.v1.IrStore;
import dev.arrayd.proto.v1.KernelModuleSource;
import dev.arrayd.proto.v1.KernelServiceGrpc;
import dev.arrayd.proto.v1.Upload;
import dev.arrayd.proto.v1.Launch;
import dev.arrayd.proto.v1.OpenSessionRequest;
import dev.arrayd.proto.v1.ReadBufferRequest;
import dev.arrayd.proto.v1.ReadBufferResponse;
import dev.arrayd.proto.v1.Scalar;
import dev.arrayd.proto.v1.SessionServiceGrpc;
import dev.arrayd.proto.v1.StatsServiceGrpc;
import dev.arrayd.proto.v1.SubmitRequest;
import dev.arrayd.proto.v1.WaitEventsRequest;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Requests a hostile client sends, through a real socket (so every request is serialized and parsed as a remote
 * one is): bytes that do not parse to every method, IR nested deep and too deep, IR with nodes left unset, huge
 * names and lists, and unsigned values past 2^31 and 2^63. Every answer must be a precise status that reaches
 * the client: INVALID_ARGUMENT / OUT_OF_RANGE / NOT_FOUND naming the field, never INTERNAL or UNKNOWN, never a
 * trailer too large to arrive.
 */
@ResourcesPerClass("one daemon on a real socket serves every test; its compile threads start with the first compile")
class HostileRequestsTest {

    static ArraydServer server;
    static ManagedChannel channel;
    static String session;

    @BeforeAll
    static void start() throws IOException {
        server = ArraydServer.start(ServerOptions.defaults().withPort(0).withMetricsPort(-1).withCpuMemoryBytes(64L << 20));
        channel = NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext().build();
        session = SessionServiceGrpc.newBlockingStub(channel).openSession(OpenSessionRequest.newBuilder()
                .setClientName("hostile").setLease(Durations.fromMillis(600_000)).build()).getSession();
    }

    @AfterAll
    static void stop() throws InterruptedException {
        channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        server.close();
    }

    /** Sends {@code body} as the one request of {@code method}, raw; the status the call ends with. */
    static Status raw(MethodDescriptor<?, ?> method, byte[] body) {
        return RawCalls.call(channel, method, body);
    }

    static Status status(Supplier<?> call) {
        try {
            Object r = call.get();
            if (r instanceof java.util.Iterator<?> it) {
                it.forEachRemaining(x -> { });
            }
            return Status.OK;
        } catch (StatusRuntimeException e) {
            return e.getStatus();
        }
    }

    static void assertRefused(Status.Code code, String fragment, Status s) {
        assertEquals(code, s.getCode(), () -> "status " + s);
        assertTrue(s.getDescription() != null && s.getDescription().contains(fragment),
                () -> "expected \"" + fragment + "\" in: " + s.getDescription());
        assertTrue(StatusText.encodedBytes(s.getDescription(), s.getDescription().length()) <= StatusText.MAX_ENCODED_BYTES,
                () -> "description of " + s.getDescription().length() + " characters");
    }

    // ------------------------------------------------------------------ requests that do not parse

    @Test
    void bytesThatDoNotParseAreInvalidArgumentOnEveryMethodWithBoundedLogging() {
        Logger logger = (Logger) LoggerFactory.getLogger(RequestParser.class);
        ListAppender<ILoggingEvent> lines = new ListAppender<>();
        lines.start();
        logger.addAppender(lines);
        try {
            byte[] garbage = new byte[16];
            Arrays.fill(garbage, (byte) 0xff);
            byte[] truncated = SubmitRequest.newBuilder().setSession("s").addCommands(Command.newBuilder().setEvent(7))
                    .build().toByteArray();
            truncated = Arrays.copyOf(truncated, truncated.length - 1);
            // large ones too: from RequestParser.ALIASED_BYTES on, a request is parsed from an array of its own
            byte[] largeGarbage = new byte[RequestParser.ALIASED_BYTES + 100];
            Arrays.fill(largeGarbage, (byte) 0xff);
            byte[] largeTruncated = SubmitRequest.newBuilder().setSession("s").addCommands(Command.newBuilder().setEvent(7)
                    .setUpload(Upload.newBuilder().setBuffer(1).setData(ByteString.copyFrom(
                            new byte[RequestParser.ALIASED_BYTES])))).build().toByteArray();
            largeTruncated = Arrays.copyOf(largeTruncated, largeTruncated.length - 1);
            int methods = 0;
            long t0 = System.nanoTime();
            for (ServerServiceDefinition service : server.services()) {
                for (ServerMethodDefinition<?, ?> m : service.getMethods()) {
                    for (byte[] body : List.of(garbage, truncated, largeGarbage, largeTruncated)) {
                        Status s = raw(m.getMethodDescriptor(), body);
                        assertRefused(Status.Code.INVALID_ARGUMENT, "does not parse", s);
                    }
                    methods++;
                }
            }
            long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0);
            assertTrue(methods >= 30, "methods: " + methods);
            // one line per second at most (the first one, then a count of those left out)
            assertTrue(lines.list.size() <= seconds + 2, "log lines: " + lines.list.size() + " for " + 4 * methods
                    + " bad requests in " + seconds + " s");
            assertTrue(lines.list.stream().allMatch(e -> e.getThrowableProxy() == null), "no stack traces");
        } finally {
            logger.detachAppender(lines);
        }
    }

    // ------------------------------------------------------------------ IR nesting and unset nodes

    static IrExpr f32(float v) {
        return IrExpr.newBuilder().setConstant(IrConst.newBuilder().setF32(v)).build();
    }

    static IrExpr add(IrExpr a, IrExpr b) {
        return IrExpr.newBuilder().setBinary(IrBinary.newBuilder().setOp(IrBinary.Op.OP_ADD).setLeft(a).setRight(b)).build();
    }

    static IrExpr gid() {
        return IrExpr.newBuilder().setBuiltin(IrBuiltin.newBuilder().setKind(IrBuiltin.Kind.KIND_GLOBAL_ID)).build();
    }

    static IrStmt store(IrExpr value) {
        return IrStmt.newBuilder().setStore(IrStore.newBuilder().setArray("y").setIndex(gid()).setValue(value)).build();
    }

    /** A kernel {@code y[gid] = ...} with these statements as its body. */
    static CompileRequest kernel(List<IrStmt> body) {
        IrKernel k = IrKernel.newBuilder().setName("k").setGridDims(1)
                .addParams(IrParam.newBuilder().setName("y").setBuffer(IrBufferParam.newBuilder().setDtype(DataType.DATA_TYPE_F32)
                        .setAccess(Access.ACCESS_WRITE)))
                .addAllBody(body).build();
        return CompileRequest.newBuilder().setSession(session).addModules(KernelModuleSource.newBuilder()
                .setDialect(Dialect.DIALECT_IR).setIr(IrModule.newBuilder().addKernels(k))).build();
    }

    /** {@code ((1 + 1) + 1) + ...}, {@code depth} levels of expressions. */
    static IrExpr sum(int depth) {
        IrExpr e = f32(1);
        for (int i = 1; i < depth; i++) {
            e = add(e, f32(1));
        }
        return e;
    }

    /** Runs kernel {@code k} on a 4-element buffer; its first element. */
    static float run(long kernel) {
        var buffers = BufferServiceGrpc.newBlockingStub(channel);
        var exec = ExecutionServiceGrpc.newBlockingStub(channel);
        long y = buffers.createBuffer(CreateBufferRequest.newBuilder().setSession(session).setDtype(DataType.DATA_TYPE_F32).addDims(4)
                .build()).getBuffer().getBuffer();
        long ev = exec.submit(SubmitRequest.newBuilder().setSession(session).addCommands(Command.newBuilder()
                .setLaunch(Launch.newBuilder().setKernel(kernel).addGlobalDims(4).addArgs(Arg.newBuilder().setBuffer(y))))
                .build()).getEvents(0);
        exec.waitEvents(WaitEventsRequest.newBuilder().setSession(session).addEvents(ev).build());
        var chunks = buffers.readBuffer(ReadBufferRequest.newBuilder().setSession(session).setBuffer(y).build());
        ReadBufferResponse c = chunks.next();
        chunks.forEachRemaining(x -> { });
        return ByteBuffer.wrap(c.getData().toByteArray()).order(ByteOrder.LITTLE_ENDIAN).getFloat(0);
    }

    @Test
    void deeplyNestedIrWithinTheLimitCompilesAndRuns() {
        var kernels = KernelServiceGrpc.newBlockingStub(channel);
        // 200 levels: a store, then a sum of 199 additions (two messages per level on the wire)
        long k = kernels.compile(kernel(List.of(store(sum(200))))).getModules(0).getKernels(0).getKernel();
        assertEquals(200f, run(k));
        // 48 nested ifs around the store
        IrStmt s = store(f32(3));
        for (int i = 0; i < 48; i++) {
            s = IrStmt.newBuilder().setBranch(IrIf.newBuilder().setCondition(IrExpr.newBuilder()
                    .setConstant(IrConst.newBuilder().setBool(true))).addThenBody(s)).build();
        }
        long nested = kernels.compile(kernel(List.of(s))).getModules(0).getKernels(0).getKernel();
        assertEquals(3f, run(nested));
    }

    @Test
    void irNestedTooDeepIsInvalidArgument() {
        var kernels = KernelServiceGrpc.newBlockingStub(channel);
        assertRefused(Status.Code.INVALID_ARGUMENT, "levels deep (expected: at most " + IrCodec.MAX_DEPTH,
                status(() -> kernels.compile(kernel(List.of(store(sum(IrCodec.MAX_DEPTH + 10)))))));
        // past the parser's nesting limit: refused before any IR is read
        assertRefused(Status.Code.INVALID_ARGUMENT, "nested deeper than " + RequestParser.NESTING_LIMIT,
                status(() -> kernels.compile(kernel(List.of(store(sum(RequestParser.NESTING_LIMIT)))))));
    }

    /** The nesting limit holds for a request large enough to be parsed from an array of its own. */
    @Test
    void irNestedTooDeepInALargeRequestIsInvalidArgument() {
        var kernels = KernelServiceGrpc.newBlockingStub(channel);
        CompileRequest deep = kernel(List.of(store(sum(RequestParser.NESTING_LIMIT))));
        CompileRequest large = deep.toBuilder().setUnknownFields(com.google.protobuf.UnknownFieldSet.newBuilder()
                .addField(1000, com.google.protobuf.UnknownFieldSet.Field.newBuilder()
                        .addLengthDelimited(ByteString.copyFrom(new byte[RequestParser.ALIASED_BYTES])).build())
                .build()).build();
        assertTrue(large.getSerializedSize() >= RequestParser.ALIASED_BYTES);
        assertRefused(Status.Code.INVALID_ARGUMENT, "nested deeper than " + RequestParser.NESTING_LIMIT,
                status(() -> kernels.compile(large)));
    }

    @Test
    void unsetAndUnknownIrNodesNameTheirPath() {
        var kernels = KernelServiceGrpc.newBlockingStub(channel);
        String at = "modules[0].ir.kernels[0].body";
        assertRefused(Status.Code.INVALID_ARGUMENT, at + "[0]: unset (expected: one of let",
                status(() -> kernels.compile(kernel(List.of(IrStmt.getDefaultInstance())))));
        assertRefused(Status.Code.INVALID_ARGUMENT, at + "[0].store.value.constant: no value set",
                status(() -> kernels.compile(kernel(List.of(store(IrExpr.newBuilder()
                        .setConstant(IrConst.getDefaultInstance()).build()))))));
        assertRefused(Status.Code.INVALID_ARGUMENT, at + "[0].store.value: unset (expected: one of constant",
                status(() -> kernels.compile(kernel(List.of(store(IrExpr.getDefaultInstance()))))));
        assertRefused(Status.Code.INVALID_ARGUMENT, at + "[0].store.value.binary.op: 99 (expected: one of",
                status(() -> kernels.compile(kernel(List.of(store(IrExpr.newBuilder().setBinary(IrBinary.newBuilder()
                        .setOpValue(99).setLeft(f32(1)).setRight(f32(1))).build()))))));
        assertRefused(Status.Code.INVALID_ARGUMENT, at + "[0].store.value.binary.right: unset",
                status(() -> kernels.compile(kernel(List.of(store(IrExpr.newBuilder().setBinary(IrBinary.newBuilder()
                        .setOp(IrBinary.Op.OP_ADD).setLeft(f32(1))).build()))))));
        assertRefused(Status.Code.INVALID_ARGUMENT, at + "[0].store.value.cast.dtype: DATA_TYPE_F16 (expected: DATA_TYPE_U8, I32, I64, F32 or F64",
                status(() -> kernels.compile(kernel(List.of(store(IrExpr.newBuilder().setCast(IrCast.newBuilder()
                        .setDtype(DataType.DATA_TYPE_F16).setOperand(f32(1))).build()))))));
        assertRefused(Status.Code.INVALID_ARGUMENT, at + "[0].let.value: unset",
                status(() -> kernels.compile(kernel(List.of(IrStmt.newBuilder().setLet(IrLet.newBuilder().setName("v"))
                        .build())))));
        assertRefused(Status.Code.INVALID_ARGUMENT, "kernels[0].params[0]: unset (expected: buffer or scalar)",
                status(() -> kernels.compile(CompileRequest.newBuilder().setSession(session).addModules(
                        KernelModuleSource.newBuilder().setDialect(Dialect.DIALECT_IR).setIr(IrModule.newBuilder().addKernels(
                                IrKernel.newBuilder().setName("k").setGridDims(1).addParams(IrParam.newBuilder()
                                        .setName("p"))))).build())));
    }

    // ------------------------------------------------------------------ echoes of user input are bounded

    @Test
    void hugeNamesAndListsComeBackBoundedAndArrive() {
        String huge = "d".repeat(100_000);
        assertRefused(Status.Code.INVALID_ARGUMENT, "(100000 characters)",
                status(() -> DeviceServiceGrpc.newBlockingStub(channel).getDevice(GetDeviceRequest.newBuilder()
                        .setDevice(huge).build()).getDevice()));
        assertRefused(Status.Code.INVALID_ARGUMENT, "(100000 characters)",
                status(() -> ExecutionServiceGrpc.newBlockingStub(channel).createStream(CreateStreamRequest.newBuilder()
                        .setSession(session).setDevice(huge).build())));
        CreateBufferRequest.Builder dims = CreateBufferRequest.newBuilder().setSession(session).setDtype(DataType.DATA_TYPE_F32);
        for (int i = 0; i < 100_000; i++) {
            dims.addDims(1);
        }
        assertRefused(Status.Code.INVALID_ARGUMENT, "(100000 values)",
                status(() -> BufferServiceGrpc.newBlockingStub(channel).createBuffer(dims.build()).getBuffer()));
        assertRefused(Status.Code.INVALID_ARGUMENT, "label: \"" + "l".repeat(64) + "…\" (20000 characters) (expected: at most 256",
                status(() -> BufferServiceGrpc.newBlockingStub(channel).createBuffer(CreateBufferRequest.newBuilder()
                        .setSession(session).setDtype(DataType.DATA_TYPE_F32).addDims(4).setLabel("l".repeat(20_000)).build()).getBuffer()));
        assertRefused(Status.Code.INVALID_ARGUMENT, "client_name: ",
                status(() -> SessionServiceGrpc.newBlockingStub(channel).openSession(OpenSessionRequest.newBuilder()
                        .setClientName("c".repeat(100_000)).build())));
        // a kernel name of 1 MB
        String name = "k".repeat(1 << 20);
        assertRefused(Status.Code.INVALID_ARGUMENT, "(1048576 characters)",
                status(() -> KernelServiceGrpc.newBlockingStub(channel).compile(CompileRequest.newBuilder()
                        .setSession(session).addModules(KernelModuleSource.newBuilder().setDialect(Dialect.DIALECT_IR)
                                .setIr(IrModule.newBuilder().addKernels(IrKernel.newBuilder().setName(name).setGridDims(1)
                                        .addBody(store(f32(1)))))).build())));
    }

    // ------------------------------------------------------------------ unsigned values as unsigned

    @Test
    void unsignedValuesAreCheckedAndShownAsUnsigned() {
        var buffers = BufferServiceGrpc.newBlockingStub(channel);
        var exec = ExecutionServiceGrpc.newBlockingStub(channel);
        long b = buffers.createBuffer(CreateBufferRequest.newBuilder().setSession(session).setDtype(DataType.DATA_TYPE_U8).addDims(16)
                .build()).getBuffer().getBuffer();
        for (int u8 : new int[] {256, Integer.MIN_VALUE + 7, -1}) {
            assertRefused(Status.Code.INVALID_ARGUMENT, "fill.value.u8: " + Integer.toUnsignedString(u8) + " (expected: 0..255)",
                    status(() -> exec.submit(SubmitRequest.newBuilder().setSession(session).addCommands(Command.newBuilder()
                            .setFill(Fill.newBuilder().setBuffer(b).setValue(Scalar.newBuilder().setU8(u8)))).build())));
        }
        assertRefused(Status.Code.INVALID_ARGUMENT, "events[0]: 18446744073709551615",
                status(() -> exec.waitEvents(WaitEventsRequest.newBuilder().setSession(session).addEvents(-1L).build())));
        assertRefused(Status.Code.OUT_OF_RANGE, "offset_bytes: 18446744073709551615",
                status(() -> buffers.readBuffer(ReadBufferRequest.newBuilder().setSession(session).setBuffer(b)
                        .setOffsetBytes(-1L).build())));
        assertRefused(Status.Code.INVALID_ARGUMENT, "event: 9223372036854775808",
                status(() -> exec.submit(SubmitRequest.newBuilder().setSession(session).addCommands(Command.newBuilder()
                        .setEvent(Long.MIN_VALUE).setFill(Fill.newBuilder().setBuffer(b)
                                .setValue(Scalar.newBuilder().setU8(1)))).build())));
        assertRefused(Status.Code.INVALID_ARGUMENT, "deadline: {seconds: 0, nanos: -1}",
                status(() -> exec.submit(SubmitRequest.newBuilder().setSession(session).addCommands(Command.newBuilder()
                        .setDeadline(com.google.protobuf.Timestamp.newBuilder().setNanos(-1)).setFill(Fill.newBuilder()
                                .setBuffer(b).setValue(Scalar.newBuilder().setU8(1)))).build())));
        assertRefused(Status.Code.INVALID_ARGUMENT, "deadline: {seconds: 253402300800, nanos: 0}",
                status(() -> exec.submit(SubmitRequest.newBuilder().setSession(session).addCommands(Command.newBuilder()
                        .setDeadline(com.google.protobuf.Timestamp.newBuilder().setSeconds(253_402_300_800L))
                        .setFill(Fill.newBuilder().setBuffer(b).setValue(Scalar.newBuilder().setU8(1)))).build())));
        assertRefused(Status.Code.INVALID_ARGUMENT, "lease: {seconds: -1, nanos: 0}",
                status(() -> SessionServiceGrpc.newBlockingStub(channel).openSession(OpenSessionRequest.newBuilder()
                        .setLease(com.google.protobuf.Duration.newBuilder().setSeconds(-1)).build())));
        // a valid uint32 is not refused: "as many as there are"
        assertEquals(Status.Code.OK, status(() -> StatsServiceGrpc.newBlockingStub(channel).getStats(
                GetStatsRequest.newBuilder().setTopClients(-1).build())).getCode());
    }

    // ------------------------------------------------------------------ streams

    static long streamThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().contains("-stream-")).count();
    }

    @Test
    void streamsAreBoundedByTheDefaultQuotaAndAnIdleStreamHoldsNoThread() {
        var exec = ExecutionServiceGrpc.newBlockingStub(channel);
        String own = SessionServiceGrpc.newBlockingStub(channel).openSession(OpenSessionRequest.newBuilder()
                .setClientName("streams").setLease(Durations.fromMillis(600_000)).build()).getSession();
        long before = streamThreads();
        List<Long> streams = new ArrayList<>();
        try {
            for (int i = 0; i < dev.arrayd.server.auth.Quotas.DEFAULT_STREAMS; i++) {
                streams.add(exec.createStream(CreateStreamRequest.newBuilder().setSession(own).build()).getStream());
            }
            assertRefused(Status.Code.RESOURCE_EXHAUSTED, "streams",
                    status(() -> exec.createStream(CreateStreamRequest.newBuilder().setSession(own).build())));
            assertTrue(streamThreads() <= before, "threads of " + streams.size() + " idle streams: "
                    + (streamThreads() - before));
        } finally {
            SessionServiceGrpc.newBlockingStub(channel).closeSession(dev.arrayd.proto.v1.CloseSessionRequest.newBuilder()
                    .setSession(own).build());
        }
    }

    // ------------------------------------------------------------------ launches refused before they run

    @Test
    void aLaunchOutsideTheKernelsDeclaredBoundsIsRefusedAtSubmissionAndPoisonsNothing() {
        var kernels = KernelServiceGrpc.newBlockingStub(channel);
        var buffers = BufferServiceGrpc.newBlockingStub(channel);
        var exec = ExecutionServiceGrpc.newBlockingStub(channel);
        IrKernel k = IrKernel.newBuilder().setName("bounded").setGridDims(1)
                .addParams(IrParam.newBuilder().setName("y").setBuffer(IrBufferParam.newBuilder().setDtype(DataType.DATA_TYPE_F32)
                        .setAccess(Access.ACCESS_WRITE)))
                .addParams(IrParam.newBuilder().setName("n").setScalar(IrScalarParam.newBuilder().setDtype(DataType.DATA_TYPE_I64)
                        .setMin(0).setMax(10)))
                .addBody(store(f32(5))).build();
        long kernel = kernels.compile(CompileRequest.newBuilder().setSession(session).addModules(KernelModuleSource
                .newBuilder().setDialect(Dialect.DIALECT_IR).setIr(IrModule.newBuilder().addKernels(k))).build())
                .getModules(0).getKernels(0).getKernel();
        long y = buffers.createBuffer(CreateBufferRequest.newBuilder().setSession(session).setDtype(DataType.DATA_TYPE_F32).addDims(4)
                .build()).getBuffer().getBuffer();
        Command launch = Command.newBuilder().setLaunch(Launch.newBuilder().setKernel(kernel).addGlobalDims(4)
                .addArgs(Arg.newBuilder().setBuffer(y)).addArgs(Arg.newBuilder().setScalar(Scalar.newBuilder().setI64(11))))
                .build();
        assertRefused(Status.Code.INVALID_ARGUMENT, "commands[0]: launch.args[1]: 11 for n (expected: <= 10",
                status(() -> exec.submit(SubmitRequest.newBuilder().setSession(session).addCommands(launch).build())));
        Command twoDims = launch.toBuilder().setLaunch(launch.getLaunch().toBuilder().addGlobalDims(2)
                .setArgs(1, Arg.newBuilder().setScalar(Scalar.newBuilder().setI64(1)))).build();
        assertRefused(Status.Code.INVALID_ARGUMENT, "launch.global_dims: [4, 2] (expected: 1 dims",
                status(() -> exec.submit(SubmitRequest.newBuilder().setSession(session).addCommands(twoDims).build())));
        // y is no one's failed output: reading it succeeds
        List<Status> reads = new ArrayList<>();
        reads.add(status(() -> buffers.readBuffer(ReadBufferRequest.newBuilder().setSession(session).setBuffer(y).build())));
        assertEquals(List.of(Status.OK), reads);
    }
}
