package dev.arrayd.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.client.Access;
import dev.arrayd.client.ArraydClient;
import dev.arrayd.client.ArraydCommandException;
import dev.arrayd.client.BufferHandle;
import dev.arrayd.client.DType;
import dev.arrayd.client.Dialect;
import dev.arrayd.client.Event;
import dev.arrayd.client.EventResult;
import dev.arrayd.client.EventState;
import dev.arrayd.client.KernelHandle;
import dev.arrayd.client.KernelModuleSpec;
import dev.arrayd.client.KernelSpec;
import dev.arrayd.client.Launch;
import dev.arrayd.client.Session;
import dev.arrayd.proto.v1.GetStatsRequest;
import dev.arrayd.proto.v1.StatsServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The shutdown contract on a real process and a real SIGTERM, with a client's long work in flight:
 * health NOT_SERVING at once, new sessions and commands UNAVAILABLE, accepted work completes, exit 0
 * within the grace period.
 */
class GracefulShutdownTest {

    /** Sleeps {@code millis} on the device: long work whose length does not depend on the machine. */
    static final String SLEEPY = """
            struct timespec { long tv_sec; long tv_nsec; }; /* <time.h> is not among the allowed headers */
            int nanosleep(const struct timespec *req, struct timespec *rem);
            ARRAYD_KERNEL void sleepy(ARRAYD_ITEM, float *x, int32_t millis) {
                struct timespec d = { millis / 1000, (long) (millis % 1000) * 1000000L };
                nanosleep(&d, 0);
                x[0] = 42.0f;
            }
            """;
    static final KernelSpec SLEEPY_SIG = KernelSpec.entry("sleepy").buffer("x", DType.F32, Access.WRITE)
            .scalar("millis", DType.I32);

    static <T> T await(java.util.concurrent.CompletableFuture<T> f) throws Exception {
        return f.get(60, TimeUnit.SECONDS);
    }

    @Test
    void sigtermDrainsAcceptedWorkRefusesNewWorkAndExitsZero() throws Exception {
        long graceMillis = 20_000;
        try (DaemonProcess d = new DaemonProcess("--allow-native-source", "--shutdown-grace", "20s")) {
            ManagedChannel ch = ManagedChannelBuilder.forTarget(d.target()).usePlaintext().build();
            var health = HealthGrpc.newBlockingStub(ch);
            var stats = StatsServiceGrpc.newBlockingStub(ch);
            ArraydClient c = ArraydClient.connect(d.target());
            Session s = await(c.openSession("shutdown-it"));
            KernelHandle sleepy = await(s.compile(KernelModuleSpec.of(Dialect.C, SLEEPY, SLEEPY_SIG))).get("sleepy");
            BufferHandle x = await(s.createBuffer(DType.F32, 4));
            await(s.write(x, new float[4]).future()); // after this, nothing else of ours is pending
            assertEquals(ServingStatus.SERVING, check(health, ""));
            assertEquals(ServingStatus.SERVING, check(health, "arrayd.device.cpu:0"));

            Event longWork = s.launch(Launch.of(sleepy).global(1).args(x, 4000));
            // wait until the daemon has accepted it (it shows in the queue depth)
            while (stats.getStats(GetStatsRequest.getDefaultInstance()).getDevices(0).getQueues(0).getPendingCommands() == 0) {
                Thread.onSpinWait();
            }

            long t0 = System.nanoTime();
            d.process.toHandle().destroy(); // SIGTERM (Process.destroy() would close our end of its output)

            // 1. health goes NOT_SERVING at once, for the daemon and its devices
            while (check(health, "") != ServingStatus.NOT_SERVING) {
                Thread.onSpinWait();
            }
            assertEquals(ServingStatus.NOT_SERVING, check(health, "arrayd.device.cpu:0"));
            assertFalse(longWork.future().isDone(), "the long launch is still running");

            // 2. a new session and a new command are refused with UNAVAILABLE, saying why
            ExecutionException late = assertThrows(ExecutionException.class, () -> await(c.openSession("late")));
            Status st = Status.fromThrowable(late.getCause());
            assertEquals(Status.Code.UNAVAILABLE, st.getCode());
            assertTrue(st.getDescription().contains("shutting down"), st.toString());
            Event lateCommand = s.fill(x, 1f);
            ExecutionException refused = assertThrows(ExecutionException.class, () -> await(lateCommand.future()));
            ArraydCommandException ce = assertInstanceOf(ArraydCommandException.class, refused.getCause());
            assertEquals(Status.Code.UNAVAILABLE, ce.code(), ce.status().toString());

            // 3. the work accepted before SIGTERM completes
            EventResult r = await(longWork.future());
            assertEquals(EventState.SUCCEEDED, r.state());

            // 4. the daemon exits 0 within the grace period, having released everything
            assertTrue(d.process.waitFor(graceMillis + 5_000, TimeUnit.MILLISECONDS), "exited; output:\n" + d.output());
            long tookMillis = (System.nanoTime() - t0) / 1_000_000;
            assertEquals(0, d.process.exitValue(), d.output());
            assertTrue(tookMillis < graceMillis, "exit after " + tookMillis + " ms");
            String out = d.terminateOutput();
            assertTrue(out.contains("drained: every accepted command finished"), out);
            assertTrue(out.contains("arrayd stopped"), out);
            ch.shutdownNow();
            c.close();
        }
    }

    @Test
    void workStillRunningWhenTheGraceEndsFailsWithUnavailableAndTheDaemonStillExitsZero() throws Exception {
        try (DaemonProcess d = new DaemonProcess("--allow-native-source", "--shutdown-grace", "500ms")) {
            ArraydClient c = ArraydClient.connect(d.target());
            Session s = await(c.openSession("shutdown-it"));
            KernelHandle sleepy = await(s.compile(KernelModuleSpec.of(Dialect.C, SLEEPY, SLEEPY_SIG))).get("sleepy");
            BufferHandle x = await(s.createBuffer(DType.F32, 4));
            Event running = s.launch(Launch.of(sleepy).global(1).args(x, 3000));
            Event queued = s.launch(Launch.of(sleepy).global(1).args(x, 3000)); // after it on the stream
            ManagedChannel ch = ManagedChannelBuilder.forTarget(d.target()).usePlaintext().build();
            var stats = StatsServiceGrpc.newBlockingStub(ch);
            while (stats.getStats(GetStatsRequest.getDefaultInstance()).getDevices(0).getQueues(0).getPendingCommands() < 2) {
                Thread.onSpinWait(); // until both are accepted
            }
            d.process.toHandle().destroy();
            for (Event e : new Event[] {running, queued}) {
                ExecutionException ex = assertThrows(ExecutionException.class, () -> await(e.future()));
                ArraydCommandException ce = assertInstanceOf(ArraydCommandException.class, ex.getCause());
                assertEquals(Status.Code.UNAVAILABLE, ce.code(), ce.status().toString());
                assertTrue(ce.status().getDescription().contains("grace period"), ce.status().toString());
            }
            assertTrue(d.process.waitFor(30, TimeUnit.SECONDS), d.output());
            assertEquals(0, d.process.exitValue(), d.output());
            ch.shutdownNow();
            c.close();
        }
    }

    static ServingStatus check(HealthGrpc.HealthBlockingStub h, String service) {
        return h.withDeadlineAfter(10, TimeUnit.SECONDS).check(HealthCheckRequest.newBuilder().setService(service).build())
                .getStatus();
    }
}
