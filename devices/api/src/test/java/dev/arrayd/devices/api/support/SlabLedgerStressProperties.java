package dev.arrayd.devices.api.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.MemRef;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * The lock-free side of {@link SlabLedger} ({@link PoolTable} swapped whole under a lock, read without
 * one) under real threads: while writers allocate and free pools, readers look slabs up. A stable pool
 * (allocated before and never freed) is always found whole; a pool in flux is found whole or refused as
 * not allocated, never half made; the bytes in use end as the model says.
 */
class SlabLedgerStressProperties {

    private record TestSlab(int poolId, long bytes) implements PoolTable.Slab {}

    @Property(tries = 20)
    void readersSeeWholeSlabsWhileWritersChangeTheTable(@ForAll @IntRange(min = 1, max = 3) int writers,
            @ForAll @IntRange(min = 1, max = 3) int readers, @ForAll @IntRange(min = 100, max = 3_000) int rounds)
            throws Exception {
        SlabLedger<TestSlab> ledger = new SlabLedger<>("stress:0", Long.MAX_VALUE / 2);
        int stable = 8;
        for (int id = 1; id <= stable; id++) {
            int pool = id;
            ledger.allocate(pool, 4096L * pool, 64, remaining -> new TestSlab(pool, 4096L * pool));
        }
        AtomicBoolean done = new AtomicBoolean();
        AtomicReference<Throwable> problem = new AtomicReference<>();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < writers; w++) {
            int base = 1000 * (w + 1); // each writer its own pool ids
            threads.add(Thread.ofPlatform().name("writer-" + w).start(() -> {
                await(start);
                try {
                    for (int r = 0; r < rounds; r++) {
                        int pool = base + r % 50;
                        long bytes = 64L * (pool % 7 + 1);
                        if (ledger.find(pool) == null) {
                            ledger.allocate(pool, bytes, 64, remaining -> new TestSlab(pool, bytes));
                        } else {
                            ledger.remove(pool);
                        }
                    }
                } catch (Throwable t) {
                    problem.compareAndSet(null, t);
                }
            }));
        }
        for (int rd = 0; rd < readers; rd++) {
            threads.add(Thread.ofPlatform().name("reader-" + rd).start(() -> {
                await(start);
                int i = 0;
                while (!done.get()) {
                    try {
                        int id = 1 + i % stable;
                        TestSlab s = ledger.slab(new MemRef(id, 0, 64), "ref", -1);
                        if (s.poolId() != id || s.bytes() != 4096L * id) {
                            problem.compareAndSet(null, new AssertionError("stable pool " + id + " read as " + s));
                        }
                        int flux = 1000 * (1 + i % writers) + i % 50;
                        try {
                            TestSlab f = ledger.slab(new MemRef(flux, 0, 64), "ref", -1);
                            if (f.poolId() != flux || f.bytes() != 64L * (flux % 7 + 1)) {
                                problem.compareAndSet(null, new AssertionError("pool " + flux + " read as " + f));
                            }
                        } catch (ArraydException notThere) {
                            if (notThere.code() != ErrorCode.INVALID_ARGUMENT) {
                                problem.compareAndSet(null, notThere);
                            }
                        }
                    } catch (Throwable t) {
                        problem.compareAndSet(null, t);
                    }
                    i++;
                }
            }));
        }
        start.countDown();
        for (int w = 0; w < writers; w++) {
            threads.get(w).join(TimeUnit.SECONDS.toMillis(60));
        }
        done.set(true);
        for (Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis(60));
        }
        assertNull(problem.get());
        long expected = 0;
        for (int id = 1; id <= stable; id++) {
            expected += 4096L * id;
        }
        for (int w = 0; w < writers; w++) {
            for (int p = 0; p < 50; p++) {
                int pool = 1000 * (w + 1) + p;
                // rounds r with r % 50 == p alternate allocate, free: allocated when their count is odd
                int times = rounds / 50 + (p < rounds % 50 ? 1 : 0);
                if (times % 2 == 1) {
                    expected += 64L * (pool % 7 + 1);
                }
            }
        }
        assertEquals(expected, ledger.usedBytes(), "bytes in use");
        for (TestSlab s : ledger.removeAll()) {
            assertEquals(s.poolId() >= 1000 ? 64L * (s.poolId() % 7 + 1) : 4096L * s.poolId(), s.bytes());
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
