package dev.arrayd.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.KernelArg;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A kernel destroyed while another thread of its session launches it: every launch either runs or is refused
 * NOT_FOUND, none finds its module unloaded between its checks and its registration.
 */
class KernelDestroyRaceTest {

    private static final int ROUNDS = 600;

    @Test
    void launchesOfAKernelBeingDestroyedRunOrAreRefusedAsNotFound() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (SchedulerFixture f = new SchedulerFixture(1)) {
            Scheduler sch = f.scheduler;
            Session s = sch.openSession("destroy-race", 60_000);
            Buffer x = sch.createBuffer(s, DType.I64, new long[] {4}, "null:0", "x", MemoryMode.DEVICE);
            int refused = 0;
            for (int round = 0; round < ROUNDS; round++) {
                Map<String, CompiledKernel> k = f.compileAll(s);
                for (String other : List.of("mix", "boom", "acc")) {
                    sch.destroyKernel(s, k.get(other).handle()); // "set" alone holds the module
                }
                CommandSpec launch = new CommandSpec(0, null, 0, new CommandSpec.LaunchOp(k.get("set").handle(),
                        new long[] {4}, null, List.of(new CommandSpec.BufferArg(x.handle()),
                        new CommandSpec.ScalarArg(KernelArg.Scalar.i64(round))), ""));
                CountDownLatch launched = new CountDownLatch(1);
                Future<Event> launcher = pool.submit(() -> {
                    Event last = null;
                    while (true) {
                        try {
                            last = sch.submit(s, launch, null);
                            launched.countDown();
                        } catch (ArraydException e) {
                            if (e.code() != ErrorCode.NOT_FOUND) {
                                throw e;
                            }
                            return last;
                        }
                    }
                });
                assertTrue(launched.await(10, TimeUnit.SECONDS));
                sch.destroyKernel(s, k.get("set").handle());
                Event last = launcher.get(10, TimeUnit.SECONDS); // (an IllegalStateException would surface here)
                MultiDeviceProperties.awaitOne(last, "round " + round);
                assertEquals(EventState.SUCCEEDED, last.state(), () -> String.valueOf(last.failure()));
                refused++;
            }
            assertEquals(ROUNDS, refused);
            sch.closeSession(s);
            MultiDeviceProperties.assertAllFreed(sch);
            assertEquals(0, f.loadedModules(), "a module outlived its kernels and launches");
        } finally {
            pool.shutdownNow();
        }
    }
}
