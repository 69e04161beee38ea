package dev.arrayd.server;

import static dev.arrayd.server.Protos.buf;
import static dev.arrayd.server.Protos.f32;
import static dev.arrayd.server.Protos.i32;
import static dev.arrayd.server.Protos.launch;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import dev.arrayd.proto.v1.BufferInfo;
import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.CreateBufferRequest;
import dev.arrayd.proto.v1.DataType;
import dev.arrayd.proto.v1.DestroyBufferRequest;
import dev.arrayd.proto.v1.ListDevicesRequest;
import dev.arrayd.proto.v1.SubmitRequest;
import dev.arrayd.proto.v1.Upload;
import dev.arrayd.proto.v1.WaitEventsRequest;
import dev.arrayd.proto.v1.WriteBufferRequest;
import dev.arrayd.proto.v1.WriteBufferResponse;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Every kind of bad input gets a precise status naming the bad value, and the daemon keeps
 * serving afterwards (checked after each test by a successful launch in {@link #tearDown}).
 */
class BadInputTest {

    ServerFixture f;
    String session;
    long vadd;
    BufferInfo a;
    BufferInfo b;
    BufferInfo c;

    @BeforeEach
    void setUp() throws Exception {
        f = new ServerFixture(true);
        session = f.openSession();
        vadd = f.kernels.compile(Protos.compile(session, Protos.VADD, Protos.VADD_SIG)).getModules(0).getKernels(0).getKernel();
        a = f.buffers.createBuffer(f32(session, 16)).getBuffer();
        b = f.buffers.createBuffer(f32(session, 16)).getBuffer();
        c = f.buffers.createBuffer(f32(session, 16)).getBuffer();
    }

    @AfterEach
    void tearDown() throws Exception {
        // still serving: a correct launch runs and completes
        var events = f.exec.submit(SubmitRequest.newBuilder().setSession(session)
                .addCommands(launch(0, vadd, 16, buf(a.getBuffer()), buf(b.getBuffer()), buf(c.getBuffer()), i32(16))).build());
        var done = f.exec.waitEvents(WaitEventsRequest.newBuilder().setSession(session).addEvents(events.getEvents(0)).build());
        assertEquals(dev.arrayd.proto.v1.EventState.EVENT_STATE_SUCCEEDED, done.getCompletions(0).getState(), done.toString());
        assertTrue(f.devices.listDevices(ListDevicesRequest.getDefaultInstance()).getDevicesCount() > 0);
        f.close();
    }

    private void submit(Command... cmds) {
        SubmitRequest.Builder r = SubmitRequest.newBuilder().setSession(session);
        for (Command c : cmds) {
            r.addCommands(c);
        }
        f.exec.submit(r.build());
    }

    static void assertStatus(Status.Code code, String fragment, Executable call) {
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, call);
        assertEquals(code, e.getStatus().getCode(), e.getStatus().toString());
        assertTrue(String.valueOf(e.getStatus().getDescription()).contains(fragment),
                () -> "\"" + e.getStatus().getDescription() + "\" should contain \"" + fragment + "\"");
    }

    @Test
    void unknownAndDestroyedHandlesAreNotFound() {
        assertStatus(Status.Code.NOT_FOUND, "commands[0]: launch.kernel: kernel 0x1234 (not found in this session)",
                () -> submit(launch(0, 0x1234, 16, buf(a.getBuffer()), buf(b.getBuffer()), buf(c.getBuffer()), i32(16))));
        assertStatus(Status.Code.NOT_FOUND, "launch.args[1]: buffer 0x99 (not found in this session)",
                () -> submit(launch(0, vadd, 16, buf(a.getBuffer()), buf(0x99), buf(c.getBuffer()), i32(16))));
        BufferInfo gone = f.buffers.createBuffer(f32(session, 4)).getBuffer();
        f.buffers.destroyBuffer(DestroyBufferRequest.newBuilder().setSession(session).setBuffer(gone.getBuffer()).build());
        assertStatus(Status.Code.NOT_FOUND, "(not found in this session)",
                () -> submit(launch(0, vadd, 4, buf(gone.getBuffer()), buf(b.getBuffer()), buf(c.getBuffer()), i32(4))));
        assertStatus(Status.Code.NOT_FOUND, "(not found in this session)",
                () -> f.buffers.destroyBuffer(DestroyBufferRequest.newBuilder().setSession(session).setBuffer(gone.getBuffer()).build()));
        assertStatus(Status.Code.NOT_FOUND, "session: \"nope\" (not found or closed)",
                () -> f.buffers.createBuffer(f32("nope", 4)).getBuffer());
    }

    @Test
    void badDimsAreInvalidArgument() {
        assertStatus(Status.Code.INVALID_ARGUMENT, "dims[0]: -3 (expected: > 0)", () -> f.buffers.createBuffer(f32(session, -3)).getBuffer());
        assertStatus(Status.Code.INVALID_ARGUMENT, "dims[1]: 0 (expected: > 0)", () -> f.buffers.createBuffer(f32(session, 2, 0)).getBuffer());
        assertStatus(Status.Code.INVALID_ARGUMENT, "at most 2^62 bytes", () -> f.buffers.createBuffer(f32(session, 1L << 40, 1L << 40)).getBuffer());
        assertStatus(Status.Code.INVALID_ARGUMENT, "dims: [] (expected: 1 to 8 extents)", () -> f.buffers.createBuffer(f32(session)).getBuffer());
        assertStatus(Status.Code.INVALID_ARGUMENT, "dtype: DATA_TYPE_UNSPECIFIED",
                () -> f.buffers.createBuffer(CreateBufferRequest.newBuilder().setSession(session).addDims(4).build()).getBuffer());
        assertStatus(Status.Code.INVALID_ARGUMENT, "sharing: PER_STREAM with memory mode HOSTED_CONSTANT (expected: DEVICE",
                () -> f.buffers.createBuffer(f32(session, 4).toBuilder().setSharing(dev.arrayd.proto.v1.Sharing.SHARING_PER_STREAM)
                        .setMemoryMode(dev.arrayd.proto.v1.MemoryMode.MEMORY_MODE_HOSTED_CONSTANT).build()).getBuffer());
        assertStatus(Status.Code.RESOURCE_EXHAUSTED, "device cpu:0: cannot allocate",
                () -> f.buffers.createBuffer(f32(session, 1L << 30)).getBuffer());
        assertStatus(Status.Code.INVALID_ARGUMENT, "launch.global_dims[0]: 0 (expected: > 0)",
                () -> submit(launch(0, vadd, 0, buf(a.getBuffer()), buf(b.getBuffer()), buf(c.getBuffer()), i32(16))));
    }

    @Test
    void wrongSizesAndDtypesOnWriteAreRejected() throws Exception {
        assertStatus(Status.Code.OUT_OF_RANGE, "upload: bytes [0, +80) (expected: within the 64 bytes of buffer",
                () -> submit(Command.newBuilder().setUpload(Upload.newBuilder().setBuffer(a.getBuffer())
                        .setData(ByteString.copyFrom(new byte[80]))).build()));
        assertStatus(Status.Code.INVALID_ARGUMENT, "upload: 6 bytes at offset 0 (expected: whole f32 elements",
                () -> submit(Command.newBuilder().setUpload(Upload.newBuilder().setBuffer(a.getBuffer())
                        .setData(ByteString.copyFrom(new byte[6]))).build()));
        assertStatus(Status.Code.INVALID_ARGUMENT, "fill.value: i32 scalar (expected: f32 for a buffer of f32)",
                () -> submit(Command.newBuilder().setFill(dev.arrayd.proto.v1.Fill.newBuilder().setBuffer(a.getBuffer())
                        .setValue(dev.arrayd.proto.v1.Scalar.newBuilder().setI32(3))).build()));
        // the streaming write path
        CompletableFuture<WriteBufferResponse> done = new CompletableFuture<>();
        StreamObserver<WriteBufferRequest> w = f.buffersAsync.writeBuffer(observer(done));
        w.onNext(WriteBufferRequest.newBuilder().setSession(session).setBuffer(a.getBuffer()).setOffsetBytes(60)
                .setData(ByteString.copyFrom(new byte[8])).build());
        w.onCompleted();
        ExecutionException e = assertThrows(ExecutionException.class, () -> done.get(10, TimeUnit.SECONDS));
        Status s = Status.fromThrowable(e.getCause());
        assertEquals(Status.Code.OUT_OF_RANGE, s.getCode(), s.toString());
        assertTrue(s.getDescription().contains("bytes [60, +8)"), s.getDescription());
    }

    @Test
    void badLaunchArgumentsAreInvalidArgument() {
        assertStatus(Status.Code.INVALID_ARGUMENT, "launch.args: 3 given (expected: 4 for kernel vadd(f32[] a, f32[] b, f32[] c, i32 n))",
                () -> submit(launch(0, vadd, 16, buf(a.getBuffer()), buf(b.getBuffer()), buf(c.getBuffer()))));
        assertStatus(Status.Code.INVALID_ARGUMENT, "launch.args[3]: f32 scalar (expected: i32 scalar for parameter n)",
                () -> submit(launch(0, vadd, 16, buf(a.getBuffer()), buf(b.getBuffer()), buf(c.getBuffer()), f32(1))));
        assertStatus(Status.Code.INVALID_ARGUMENT, "launch.args[0]: i32 scalar (expected: buffer of f32 for parameter a)",
                () -> submit(launch(0, vadd, 16, i32(1), buf(b.getBuffer()), buf(c.getBuffer()), i32(16))));
        BufferInfo ints = f.buffers.createBuffer(f32(session, 16).toBuilder().setDtype(DataType.DATA_TYPE_I32).build()).getBuffer();
        assertStatus(Status.Code.INVALID_ARGUMENT, "(expected: buffer of f32 for parameter b)",
                () -> submit(launch(0, vadd, 16, buf(a.getBuffer()), buf(ints.getBuffer()), buf(c.getBuffer()), i32(16))));
    }

    @Test
    void waitsOnUnknownEventsAreNotFound() {
        assertStatus(Status.Code.NOT_FOUND, "wait_events[0]: event 4242 (not found in this session)",
                () -> submit(launch(0, vadd, 16, buf(a.getBuffer()), buf(b.getBuffer()), buf(c.getBuffer()), i32(16))
                        .toBuilder().addWaitEvents(4242).build()));
        assertStatus(Status.Code.NOT_FOUND, "events[0]: event 777 (not found in this session)",
                () -> f.exec.waitEvents(WaitEventsRequest.newBuilder().setSession(session).addEvents(777).build()));
    }

    @Test
    void compileErrorsCarryTheCompilersDiagnostics() {
        String broken = """
                ARRAYD_KERNEL void vadd(ARRAYD_ITEM, const float *a, const float *b, float *c, int32_t n) {
                    int64_t i = arrayd_global_id(0);
                    c[i] = a[i] + undefined_thing;
                }
                """;
        assertStatus(Status.Code.INVALID_ARGUMENT, "3:",
                () -> f.kernels.compile(Protos.compile(session, broken, Protos.VADD_SIG)));
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
                () -> f.kernels.compile(Protos.compile(session, broken, Protos.VADD_SIG)));
        assertTrue(e.getStatus().getDescription().contains("undefined_thing"), e.getStatus().getDescription());
    }

    @Test
    void nativeSourceIsRefusedUnlessAllowed() throws Exception {
        try (ServerFixture strict = new ServerFixture(false)) {
            String s = strict.openSession();
            assertStatus(Status.Code.PERMISSION_DENIED, "--allow-native-source",
                    () -> strict.kernels.compile(Protos.compile(s, Protos.VADD, Protos.VADD_SIG)));
        }
    }

    static <T> StreamObserver<T> observer(CompletableFuture<T> f) {
        return new StreamObserver<>() {
            @Override
            public void onNext(T value) {
                f.complete(value);
            }

            @Override
            public void onError(Throwable t) {
                f.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
                f.complete(null);
            }
        };
    }
}
