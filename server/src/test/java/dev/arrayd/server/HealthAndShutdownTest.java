package dev.arrayd.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.proto.v1.EventCompletion;
import dev.arrayd.proto.v1.EventState;
import dev.arrayd.proto.v1.KernelParam;
import dev.arrayd.proto.v1.KernelSignature;
import dev.arrayd.proto.v1.ScalarParam;
import dev.arrayd.proto.v1.SubmitRequest;
import dev.arrayd.proto.v1.WaitEventsRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** grpc.health.v1 per device, and the shutdown contract when the grace period runs out. */
class HealthAndShutdownTest {

    /** Sleeps {@code millis} on the device: long work whose length does not depend on the machine. */
    static final String SLEEPY = """
            struct timespec { long tv_sec; long tv_nsec; }; /* <time.h> is not among the allowed headers */
            int nanosleep(const struct timespec *req, struct timespec *rem);
            ARRAYD_KERNEL void sleepy(ARRAYD_ITEM, float *x, int32_t millis) {
                struct timespec d = { millis / 1000, (long) (millis % 1000) * 1000000L };
                nanosleep(&d, 0);
                x[0] = 1.0f;
            }
            """;
    static final KernelSignature SLEEPY_SIG = KernelSignature.newBuilder().setName("sleepy")
            .addParams(Protos.buffer("x", dev.arrayd.proto.v1.DataType.DATA_TYPE_F32, dev.arrayd.proto.v1.Access.ACCESS_WRITE))
            .addParams(KernelParam.newBuilder().setName("millis").setScalar(ScalarParam.newBuilder()
                    .setDtype(dev.arrayd.proto.v1.DataType.DATA_TYPE_I32)))
            .build();

    static ServingStatus check(HealthGrpc.HealthBlockingStub h, String service) {
        return h.check(HealthCheckRequest.newBuilder().setService(service).build()).getStatus();
    }

    @Test
    void theDaemonAndEachDeviceServe() throws Exception {
        try (ServerFixture f = new ServerFixture(ServerOptions.defaults().withPort(0).withDevices("cpu:2")
                .withCpuMemoryBytes(64L << 20))) {
            var h = HealthGrpc.newBlockingStub(f.channel);
            assertEquals(ServingStatus.SERVING, check(h, ""));
            assertEquals(ServingStatus.SERVING, check(h, "arrayd.device.cpu:0"));
            assertEquals(ServingStatus.SERVING, check(h, "arrayd.device.cpu:1"));
            StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> check(h, "arrayd.device.cpu:9"));
            assertEquals(Status.Code.NOT_FOUND, e.getStatus().getCode());
        }
    }

    @Test
    void workLeftWhenTheGracePeriodEndsFailsWithUnavailable() throws Exception {
        // own threads: the common pool may have a single worker, and both tasks block
        var threads = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor();
        ServerFixture f = new ServerFixture(ServerOptions.defaults().withPort(0).withAllowNativeSource(true)
                .withCpuMemoryBytes(64L << 20).withShutdownGraceMillis(1500));
        var h = HealthGrpc.newBlockingStub(f.channel);
        String s = f.openSession();
        long kernel = f.kernels.compile(Protos.compile(s, SLEEPY, SLEEPY_SIG)).getModules(0).getKernels(0).getKernel();
        long x = f.buffers.createBuffer(Protos.f32(s, 4)).getBuffer().getBuffer();
        long event = f.exec.submit(SubmitRequest.newBuilder().setSession(s)
                .addCommands(Protos.launch(0, kernel, 1, Protos.buf(x), Protos.i32(4000))).build()).getEvents(0);
        CompletableFuture<EventCompletion> done = CompletableFuture.supplyAsync(() -> f.exec.waitEvents(
                WaitEventsRequest.newBuilder().setSession(s).addEvents(event).build()).getCompletions(0), threads);

        CompletableFuture<Void> closed = CompletableFuture.runAsync(f.server::close, threads);
        // health turns NOT_SERVING first; until then the checks below could race the shutdown
        while (check(h, "") != ServingStatus.NOT_SERVING) {
            Thread.onSpinWait();
        }
        assertEquals(ServingStatus.NOT_SERVING, check(h, "arrayd.device.cpu:0"));
        StatusRuntimeException late = assertThrows(StatusRuntimeException.class, f::openSession);
        assertEquals(Status.Code.UNAVAILABLE, late.getStatus().getCode());
        assertTrue(late.getStatus().getDescription().contains("shutting down"), late.getStatus().toString());
        StatusRuntimeException lateCommand = assertThrows(StatusRuntimeException.class, () -> f.exec.submit(
                SubmitRequest.newBuilder().setSession(s).addCommands(Protos.launch(0, kernel, 1, Protos.buf(x),
                        Protos.i32(1))).build()));
        assertEquals(Status.Code.UNAVAILABLE, lateCommand.getStatus().getCode());

        EventCompletion c = done.get(30, TimeUnit.SECONDS);
        assertEquals(EventState.EVENT_STATE_FAILED, c.getState());
        assertEquals(Status.Code.UNAVAILABLE.value(), c.getCode(), c.toString());
        assertTrue(c.getMessage().contains("grace period"), c.getMessage());
        assertFalse(f.server.scheduler().devices().isEmpty());
        closed.get(30, TimeUnit.SECONDS);
        f.channel.shutdownNow();
        threads.close();
    }
}
