package dev.arrayd.scheduler;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.KernelArg;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.StampedLock;
import org.junit.jupiter.api.Test;

/**
 * Session-local submissions ({@link SessionLocal}): registered beside other sessions' submissions under the submit
 * lock's read side, while everything that allocates, moves or shares goes under its write side; and what that
 * must not change: results, and the eviction order of the replicas they use.
 */
class SessionLocalTest {

    private static final int N = 256;

    private static CommandSpec launch(CompiledKernel k, long stream, CommandSpec.Arg... args) {
        return new CommandSpec(0, null, stream, new CommandSpec.LaunchOp(k.handle(), new long[] {N}, null, List.of(args), ""));
    }

    private static CommandSpec.Arg buf(Buffer b) {
        return new CommandSpec.BufferArg(b.handle());
    }

    private static CommandSpec.Arg sc(long v) {
        return new CommandSpec.ScalarArg(KernelArg.Scalar.i64(v));
    }

    private static CommandSpec upload(Buffer b, long[] data) {
        return new CommandSpec(0, null, 0, new CommandSpec.UploadOp(b.handle(), 0, MemorySegment.ofArray(data.clone())));
    }

    private static long[] read(Scheduler sch, Session s, Buffer b) throws Exception {
        List<Event> e = sch.submit(s, List.of(MultiDeviceProperties.download(b.handle())), null);
        MultiDeviceProperties.await(e);
        return MultiDeviceProperties.longs(e.getFirst());
    }

    /** Holds the read side and {@code s}'s claim on another thread, as a preempted session-local submission would. */
    private static Future<?> holdLocally(ExecutorService pool, SchedulerContext ctx, Session s, CountDownLatch held,
            CountDownLatch release) {
        return pool.submit(() -> {
            long stamp = ctx.lockShared();
            try {
                assertTrue(s.tryEnterLocal());
                try {
                    held.countDown();
                    release.await();
                } finally {
                    s.exitLocal();
                }
            } finally {
                ctx.unlockShared(stamp);
            }
            return null;
        });
    }

    /** Runs {@code task} on a thread of its own; returns once that thread is parked in the submit lock. */
    private static <T> FutureTask<T> startAndAwaitParkedOnTheLock(Callable<T> task) {
        FutureTask<T> f = new FutureTask<>(task);
        Thread t = Thread.ofPlatform().name("waits-for-the-submit-lock").start(f);
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!parkedInTheSubmitLock(t)) {
            assertTrue(System.nanoTime() < until, "not parked in the submit lock: " + t.getState() + " "
                    + java.util.Arrays.toString(t.getStackTrace()));
            Thread.onSpinWait();
        }
        return f;
    }

    private static boolean parkedInTheSubmitLock(Thread t) {
        if (t.getState() != Thread.State.WAITING) {
            return false;
        }
        for (StackTraceElement e : t.getStackTrace()) {
            if (e.getClassName().equals(StampedLock.class.getName())) {
                return true;
            }
        }
        return false;
    }

    /** Sessions a and b; a's kernels, and its buffer x, written once on null:0 (current there). */
    private record TwoSessions(Scheduler sch, SchedulerContext ctx, Session a, Session b, Map<String, CompiledKernel> k,
            Buffer x) {

        static TwoSessions open(SchedulerFixture f) throws Exception {
            Scheduler sch = f.scheduler;
            Session a = sch.openSession("a", 60_000);
            Session b = sch.openSession("b", 60_000);
            Map<String, CompiledKernel> k = f.compileAll(a);
            Buffer x = sch.createBuffer(a, DType.I64, new long[] {N}, "null:0", "x", MemoryMode.DEVICE);
            MultiDeviceProperties.await(sch.submit(a, List.of(launch(k.get("set"), 0, buf(x), sc(2))), null));
            return new TwoSessions(sch, sch.context(), a, b, k, x);
        }

        void closeAndCheckFreed() throws InterruptedException {
            sch.closeSession(a);
            sch.closeSession(b);
            MultiDeviceProperties.assertAllFreed(sch);
        }
    }

    @Test
    void aSessionsOwnLaunchesPassAnotherSessionHeldUpMidSubmissionAndWhatAllocatesWaitsForIt() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (SchedulerFixture f = new SchedulerFixture(1)) {
            TwoSessions t = TwoSessions.open(f);
            Scheduler sch = t.sch();
            SchedulerContext ctx = t.ctx();
            Session a = t.a();
            Session b = t.b();
            Map<String, CompiledKernel> k = t.k();
            Buffer x = t.x();
            Map<String, CompiledKernel> kb = f.compileAll(b);
            Buffer xb = sch.createBuffer(b, DType.I64, new long[] {N}, "null:0", "xb", MemoryMode.DEVICE);

            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            Future<?> holder = holdLocally(pool, ctx, b, held, release);
            Future<Buffer> allocating;
            Future<Event> sameSession;
            try {
                assertTrue(held.await(10, TimeUnit.SECONDS));
                // a launch on a's own buffer, current on its device: registered while b is held up
                Future<Event> local = pool.submit(() -> sch.submit(a, launch(k.get("set"), 0, buf(x), sc(5)), null));
                MultiDeviceProperties.awaitOne(local.get(10, TimeUnit.SECONDS), "the session-local launch");
                // a new buffer needs memory (the write side): it waits until b's submission is done
                allocating = startAndAwaitParkedOnTheLock(() -> sch.createBuffer(a, DType.I64, new long[] {N}, "null:0",
                        "y", MemoryMode.DEVICE));
                assertFalse(allocating.isDone(), "allocated while another submission held the read side");
                // a second submission of b meanwhile takes the write side, which waits for the first
                sameSession = startAndAwaitParkedOnTheLock(() -> sch.submit(b, launch(kb.get("set"), 0, buf(xb), sc(6)),
                        null));
                assertFalse(sameSession.isDone(), "two session-local submissions of one session at once");
            } finally {
                release.countDown(); // (a failure must not leave the lock held for the fixture's close)
            }
            holder.get(10, TimeUnit.SECONDS);
            Buffer y = allocating.get(10, TimeUnit.SECONDS);
            MultiDeviceProperties.awaitOne(sameSession.get(10, TimeUnit.SECONDS), "b's launch");
            assertEquals(6L * 3 + 1, read(sch, b, xb)[3]);

            long[] want = new long[N];
            for (int i = 0; i < N; i++) {
                want[i] = 5L * i + 1;
            }
            assertArrayEquals(want, read(sch, a, x));
            assertArrayEquals(new long[N], read(sch, a, y));
            t.closeAndCheckFreed();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aBufferAnotherSessionHoldsIsNeverSessionLocal() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (SchedulerFixture f = new SchedulerFixture(1)) {
            TwoSessions t = TwoSessions.open(f);
            Scheduler sch = t.sch();
            Session a = t.a();
            Session b = t.b();
            Map<String, CompiledKernel> k = t.k();
            Buffer x = t.x();
            sch.importBuffer(b, x, false);

            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            Future<?> holder = holdLocally(pool, t.ctx(), b, held, release);
            Future<Event> launch;
            try {
                assertTrue(held.await(10, TimeUnit.SECONDS));
                launch = startAndAwaitParkedOnTheLock(() -> sch.submit(a, launch(k.get("set"), 0, buf(x), sc(3)), null));
                assertFalse(launch.isDone(), "a launch on a shared buffer registered beside another session's submission");
            } finally {
                release.countDown(); // (a failure must not leave the lock held for the fixture's close)
            }
            holder.get(10, TimeUnit.SECONDS);
            MultiDeviceProperties.awaitOne(launch.get(10, TimeUnit.SECONDS), "the launch on the shared buffer");
            assertEquals(3L * 7 + 1, read(sch, b, x)[7]);
            t.closeAndCheckFreed();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aBatchWhoseWriteOnOneDeviceMakesAReplicaOnAnotherStaleIsNotSessionLocal() throws Exception {
        try (SchedulerFixture f = new SchedulerFixture(2)) {
            Scheduler sch = f.scheduler;
            Session s = sch.openSession("two-devices", 60_000);
            Map<String, CompiledKernel> k = f.compileAll(s);
            long on0 = sch.createStream(s, "null:0").handle();
            long on1 = sch.createStream(s, "null:1").handle();
            Buffer x = sch.createBuffer(s, DType.I64, new long[] {N}, "null:0", "x", MemoryMode.DEVICE);
            Buffer y = sch.createBuffer(s, DType.I64, new long[] {N}, "null:1", "y", MemoryMode.DEVICE);
            MultiDeviceProperties.await(sch.submit(s, List.of(launch(k.get("set"), on0, buf(x), sc(2)),
                    launch(k.get("mix"), on1, buf(x), buf(y), sc(0))), null));
            // x is current on both devices now; the batch writes it on null:0, then reads it on null:1
            MultiDeviceProperties.await(sch.submit(s, List.of(launch(k.get("set"), on0, buf(x), sc(7)),
                    launch(k.get("mix"), on1, buf(x), buf(y), sc(0))), null));
            long[] got = read(sch, s, y);
            for (int i = 0; i < N; i++) {
                assertEquals((2L * i + 1) * 3 + 7L * i + 1, got[i], "y[" + i + "]");
            }
            sch.closeSession(s);
            MultiDeviceProperties.assertAllFreed(sch);
        }
    }

    @Test
    void replicasUsedBySessionLocalLaunchesAreEvictedAsRecentlyUsed() throws Exception {
        // budget 90% of 8192 bytes: three 2048-byte buffers on the device
        try (SchedulerFixture f = new SchedulerFixture(1, 8192, 2048)) {
            Scheduler sch = f.scheduler;
            Session s = sch.openSession("lru", 60_000);
            Map<String, CompiledKernel> k = f.compileAll(s);
            DeviceRuntime d = sch.devices().getFirst();
            Buffer x = sch.createBuffer(s, DType.I64, new long[] {N}, "null:0", "x", MemoryMode.DEVICE);
            Buffer y = sch.createBuffer(s, DType.I64, new long[] {N}, "null:0", "y", MemoryMode.DEVICE);
            Buffer z = sch.createBuffer(s, DType.I64, new long[] {N}, "null:0", "z", MemoryMode.DEVICE);
            // x, first in, is used last (a session-local launch, which leaves the LRU list as it is)
            MultiDeviceProperties.await(sch.submit(s, List.of(launch(k.get("set"), 0, buf(x), sc(4))), null));
            assertEquals(0, d.evictions());
            Buffer w = sch.createBuffer(s, DType.I64, new long[] {N}, "null:0", "w", MemoryMode.DEVICE);
            assertEquals(1, d.evictions());
            assertTrue(sch.replicaStates(x).containsKey("null:0"), "x, used last, was evicted: " + sch.replicaStates(x));
            assertFalse(sch.replicaStates(y).containsKey("null:0"), "y, least recently used, stayed: "
                    + sch.replicaStates(y));
            assertEquals(4L * 9 + 1, read(sch, s, x)[9]);
            assertArrayEquals(new long[N], read(sch, s, y));
            assertArrayEquals(new long[N], read(sch, s, z));
            assertArrayEquals(new long[N], read(sch, s, w));
            d.pool().checkInvariants();
            sch.closeSession(s);
            MultiDeviceProperties.assertAllFreed(sch);
        }
    }

    @Test
    void sessionsSubmittingAtOnceBesideEvictionsComputeWhatOneAtATimeWould() throws Exception {
        int sessions = 3;
        int rounds = 300;
        // budget 90% of 16384 bytes: seven 2048-byte buffers, for 3 x 2 launched ones and the evicting session's
        try (SchedulerFixture f = new SchedulerFixture(1, 16384, 2048)) {
            Scheduler sch = f.scheduler;
            ExecutorService pool = Executors.newFixedThreadPool(sessions + 1);
            // the sessions start their rounds only once the evicting session has made room beside all their buffers
            // (an eviction for sure), whatever the threads' timing
            CountDownLatch buffersMade = new CountDownLatch(sessions);
            CountDownLatch evictedOnce = new CountDownLatch(1);
            try {
                List<Future<long[]>> results = new ArrayList<>();
                for (int t = 0; t < sessions; t++) {
                    long seed = t + 1;
                    results.add(pool.submit(() -> {
                        Session s = sch.openSession("mix-" + seed, 60_000);
                        Map<String, CompiledKernel> k = f.compileAll(s);
                        Buffer in = sch.createBuffer(s, DType.I64, new long[] {N}, "null:0", "in", MemoryMode.DEVICE);
                        Buffer acc = sch.createBuffer(s, DType.I64, new long[] {N}, "null:0", "acc", MemoryMode.DEVICE);
                        long[] init = new long[N];
                        for (int i = 0; i < N; i++) {
                            init[i] = seed * 1000 + i;
                        }
                        MultiDeviceProperties.await(sch.submit(s, List.of(upload(in, init)), null));
                        buffersMade.countDown();
                        assertTrue(evictedOnce.await(60, TimeUnit.SECONDS), "the evicting session never made room");
                        Event last = null;
                        for (int r = 0; r < rounds; r++) {
                            List<CommandSpec> batch = List.of(launch(k.get("mix"), 0, buf(in), buf(acc), sc(r)),
                                    launch(k.get("mix"), 0, buf(acc), buf(in), sc(seed)));
                            List<Event> events = r % 2 == 0 ? sch.submit(s, batch, null)
                                    : List.of(sch.submit(s, batch.get(0), null), sch.submit(s, batch.get(1), null));
                            last = events.getLast();
                        }
                        MultiDeviceProperties.awaitOne(last, "the last launch of " + s);
                        long[] a = read(sch, s, acc);
                        long[] b = read(sch, s, in);
                        sch.closeSession(s);
                        long[] both = java.util.Arrays.copyOf(a, 2 * N);
                        System.arraycopy(b, 0, both, N, N);
                        return both;
                    }));
                }
                // another session keeps allocating, which evicts the others' replicas now and then
                Future<Integer> evicting = pool.submit(() -> {
                    Session s = sch.openSession("evicting", 60_000);
                    assertTrue(buffersMade.await(60, TimeUnit.SECONDS), "the sessions never made their buffers");
                    int made = 0;
                    while (made == 0 || !results.stream().allMatch(Future::isDone)) {
                        // two at a time: with the others' six, one more than the budget holds
                        Buffer t = sch.createBuffer(s, DType.I64, new long[] {N}, "null:0", "t", MemoryMode.DEVICE);
                        Buffer u = sch.createBuffer(s, DType.I64, new long[] {N}, "null:0", "u", MemoryMode.DEVICE);
                        MultiDeviceProperties.await(sch.submit(s, List.of(upload(t, new long[N]), upload(u, new long[N])),
                                null));
                        sch.destroyBuffer(s, t.handle());
                        sch.destroyBuffer(s, u.handle());
                        if (made++ == 0) {
                            assertTrue(sch.devices().getFirst().evictions() > 0, "eight buffers fit a budget of seven");
                            evictedOnce.countDown();
                        }
                    }
                    sch.closeSession(s);
                    return made;
                });
                for (int t = 0; t < sessions; t++) {
                    long seed = t + 1;
                    long[] in = new long[N];
                    long[] acc = new long[N];
                    for (int i = 0; i < N; i++) {
                        in[i] = seed * 1000 + i;
                    }
                    for (int r = 0; r < rounds; r++) {
                        for (int i = 0; i < N; i++) {
                            acc[i] = acc[i] * 3 + in[i] + r; // mix: b = b * 3 + a + k
                            in[i] = in[i] * 3 + acc[i] + seed;
                        }
                    }
                    long[] got = results.get(t).get(60, TimeUnit.SECONDS);
                    assertArrayEquals(acc, java.util.Arrays.copyOf(got, N), "acc of session " + seed);
                    assertArrayEquals(in, java.util.Arrays.copyOfRange(got, N, 2 * N), "in of session " + seed);
                }
                assertTrue(evicting.get(60, TimeUnit.SECONDS) > 0);
                assertTrue(sch.devices().getFirst().evictions() > 0, "nothing was evicted: the test checks less than it says");
                MultiDeviceProperties.assertAllFreed(sch);
            } finally {
                pool.shutdownNow();
            }
        }
    }
}
