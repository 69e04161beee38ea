package dev.arrayd.scheduler;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.nullbackend.NullDevice;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.MemRef;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.From;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.RandomDistribution;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * Multi-device coherence under random programs: three test devices (null:0 and null:1 copy from each
 * other directly, null:2 only through host memory), buffers of every memory mode (LOCAL ones as scratch
 * for one batch), default and created streams, launches placed by the client or by the scheduler,
 * fills, uploads, copies, prefetches, merge copies with the launches that read them, downloads,
 * buffers and streams destroyed and replaced while their work runs. Everything runs with real
 * concurrency and jittered timing, and must give exactly what running the commands one by one in
 * submission order on plain arrays gives — also when the devices are too small to hold the working
 * set and replicas are evicted all the time. Also: slab pool fences, and commands that cannot fit.
 */
class MultiDeviceProperties {

    static final int DEVICES = 3;
    /**
     * The modes a random buffer gets (HOSTED_CONSTANT ones are written once at setup, then only read); a mode index
     * of {@code MODES.size()} is a HOSTED_CHANGED_ON_DEVICES buffer that lives in host memory the program provides
     * (as a buffer in a client's region: null:0 uses that memory in place).
     */
    static final List<MemoryMode> MODES = List.of(MemoryMode.DEVICE, MemoryMode.HOSTED_CHANGED_ON_DEVICES,
            MemoryMode.HOSTED_VOLATILE, MemoryMode.HOSTED_CONSTANT);
    /** Bound on every wait: an event not done by then counts as a deadlock. */
    static final long TIMEOUT_S = 20;

    /**
     * A buffer of a random program.
     *
     * @param mode index into {@link #MODES}, or its size for a buffer in host memory
     * @param home device it is created on
     * @param wide twice as many elements as the others (merge buffers of both sizes on one stream, blocks of two sizes)
     * @param seed its initial contents when HOSTED_CONSTANT, and how they are written (upload, fill or launch)
     */
    record BufSpec(int mode, int home, boolean wide, long seed) {}

    /**
     * One step of a random program; every index is taken modulo what exists.
     *
     * @param kind  what it does (see {@link Program#step})
     * @param a     the buffer read
     * @param b     the buffer written
     * @param k     a scalar
     * @param place where it runs: 0-8 device {@code place / 3}, on its default stream ({@code % 3 == 0}, with an
     *              explicit device) or one of two created streams; 9-11 no stream and no device (the
     *              scheduler chooses, or the default stream of device {@code place - 9} for transfers that need one)
     * @param r1    range choice
     * @param r2    range choice, and which earlier event to wait for
     * @param flags bits 0-1: the batch ends here when 0; bit 2: wait for an earlier event; bit 3: a whole-buffer
     *              range (or STREAMING for a merge); bit 4: name the device of a created stream too
     */
    record Step(int kind, int a, int b, long k, int place, int r1, int r2, int flags) {}

    @Provide
    Arbitrary<BufSpec> bufSpecs() {
        return Combinators.combine(Arbitraries.integers().between(0, MODES.size()),
                Arbitraries.integers().between(0, DEVICES - 1), Arbitraries.of(false, false, true),
                Arbitraries.longs().between(-1000, 1000)).as(BufSpec::new);
    }

    @Provide
    Arbitrary<Step> steps() {
        return Combinators.combine(
                Arbitraries.integers().between(0, Program.KINDS - 1),
                Arbitraries.integers().between(0, 63),
                Arbitraries.integers().between(0, 63),
                Arbitraries.longs().between(-50, 50),
                Arbitraries.integers().between(0, 11),
                Arbitraries.integers().between(0, 63),
                Arbitraries.integers().between(0, 63),
                Arbitraries.integers().between(0, 31)).as(Step::new);
    }

    /** Programs of up to 60 steps, every length equally likely (long ones find more). */
    @Provide
    Arbitrary<List<Step>> programs() {
        return steps().list().ofMinSize(1).ofMaxSize(60).withSizeDistribution(RandomDistribution.uniform());
    }

    // ------------------------------------------------------------------ 1, 2: random programs

    /**
     * A random program on three devices gives, in every download and in the final contents of every buffer
     * read on every device, what the sequential model gives; every event completes within {@link #TIMEOUT_S}
     * (no deadlock) and succeeds; a write to a HOSTED_CONSTANT buffer after its first read is refused at submit with
     * FAILED_PRECONDITION; after every batch each buffer has one MODIFIED or several SHARED current
     * copies (a written HOSTED_CONSTANT one always on the host); peer copies only run between peers; every
     * pool keeps its invariants, and once the session is closed no device has a byte in use (the fixture
     * then checks that no slab, stream thread or module is left). With {@code closeEarly} the session is
     * closed right after the last batch, while its commands still run: they all still complete, correctly.
     */
    @Property(tries = 100, shrinking = ShrinkingMode.BOUNDED)
    void randomMultiDeviceProgramsMatchTheSequentialModel(
            @ForAll @Size(min = 2, max = 6) List<@From("bufSpecs") BufSpec> buffers,
            @ForAll("programs") List<Step> program, @ForAll boolean closeEarly) throws Exception {
        try (SchedulerFixture f = peered(new SchedulerFixture(DEVICES))) {
            Program p = new Program(f, 8, buffers);
            p.closeEarly = closeEarly;
            p.runChecked(program);
        }
    }

    /**
     * The same programs when null:2 joins while they run (a peer that came up): before, steps use null:0 and null:1
     * only; after, all three; every buffer made before is read back on it at the end, so each grows a replica slot for
     * it. Results, replica states and pools as above.
     */
    @Property(tries = 40, shrinking = ShrinkingMode.BOUNDED)
    void aDeviceJoiningMidProgramChangesNoResult(
            @ForAll @Size(min = 2, max = 6) List<@From("bufSpecs") BufSpec> buffers,
            @ForAll("programs") List<Step> program, @ForAll @IntRange(min = 0, max = 60) int joinAt) throws Exception {
        try (SchedulerFixture f = peered(SchedulerFixture.withLate(DEVICES, DEVICES - 1, 0))) {
            Program p = new Program(f, 8, buffers, DEVICES - 1);
            p.runChecked(program, joinAt);
        }
    }

    // ------------------------------------------------------------------ 3: eviction

    /**
     * Devices that hold about seven of the program's sixteen or more buffers: replicas are evicted (and
     * written back when they hold the only current data) all the time, and the results do not change.
     */
    @Property(tries = 40, shrinking = ShrinkingMode.BOUNDED)
    void evictionUnderPressureKeepsResultsCorrect(
            @ForAll @Size(min = 16, max = 20) List<@From("bufSpecs") BufSpec> buffers,
            @ForAll("programs") List<Step> program) throws Exception {
        // 64 i64 = 512-byte buffers (wide ones 1024); budget 90% of 4096 = 3686 bytes: at most 7 buffers a
        // device; 16 buffers are at least 8192 bytes, more than twice the budget of one device
        try (SchedulerFixture f = peered(new SchedulerFixture(DEVICES, 4096, 1024))) {
            Program p = new Program(f, 64, buffers);
            assertTrue(16L * 512 >= 2 * f.scheduler.devices().getFirst().pool().budgetBytes(), "working set");
            p.runChecked(program);
            long evictions = p.evictionsBeforeClose;
            assertTrue(evictions > 0, "replicas were evicted (per device: " + Arrays.toString(p.evictionsPerDevice) + ")");
        }
    }

    /**
     * Two sessions run their own random programs at once on small devices: each one's commands evict (and
     * write back) the other's replicas, and each still gets exactly its own sequential results.
     */
    @Property(tries = 15, shrinking = ShrinkingMode.BOUNDED)
    void evictionAcrossConcurrentSessionsKeepsEachOnesResults(
            @ForAll @Size(min = 8, max = 10) List<@From("bufSpecs") BufSpec> buffers1,
            @ForAll("programs") List<Step> program1,
            @ForAll @Size(min = 8, max = 10) List<@From("bufSpecs") BufSpec> buffers2,
            @ForAll("programs") List<Step> program2) throws Exception {
        try (SchedulerFixture f = peered(new SchedulerFixture(DEVICES, 4096, 1024))) {
            List<Program> programs = List.of(new Program(f, 64, buffers1), new Program(f, 64, buffers2));
            List<List<Step>> steps = List.of(program1, program2);
            List<java.util.concurrent.CompletableFuture<Void>> runs = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                Program p = programs.get(i);
                p.checkFreed = false; // the other session may still hold memory
                p.oneSession = false;
                List<Step> mine = steps.get(i);
                String name = "program-" + i;
                runs.add(java.util.concurrent.CompletableFuture.runAsync(() -> {
                    try {
                        p.runChecked(mine);
                    } catch (Exception e) {
                        throw new java.util.concurrent.CompletionException(e);
                    }
                }, r -> Thread.ofPlatform().name(name).start(r)));
            }
            try {
                for (var r : runs) {
                    r.get(2 * TIMEOUT_S, TimeUnit.SECONDS);
                }
            } catch (java.util.concurrent.ExecutionException e) {
                throw e.getCause() instanceof Exception x ? x : e;
            }
            assertAllFreed(f.scheduler);
            assertTrue(programs.get(1).evictionsBeforeClose > 0 || programs.get(0).evictionsBeforeClose > 0, "evictions");
        }
    }

    /**
     * A command whose own buffers do not fit its device's budget together fails with RESOURCE_EXHAUSTED
     * naming the device and the bytes; nothing it would have written changes, and the session goes on.
     */
    @Property(tries = 8, shrinking = ShrinkingMode.BOUNDED)
    void aCommandThatCannotFitFailsAloneWithResourceExhausted(@ForAll @IntRange(min = 0, max = DEVICES - 1) int device,
            @ForAll boolean acc, @ForAll boolean aHere, @ForAll @IntRange(min = 0, max = 3) int modeA,
            @ForAll @IntRange(min = 0, max = 2) int modeB) throws Exception {
        // budget 90% of 4096 = 3686 bytes: two 2048-byte buffers do not fit together, each alone does
        try (SchedulerFixture f = peered(new SchedulerFixture(DEVICES, 4096, 1024))) {
            Scheduler sch = f.scheduler;
            Session s = sch.openSession("exhausted", 60_000);
            Map<String, CompiledKernel> k = f.compileAll(s);
            String dev = "null:" + device;
            int n = 256;
            Buffer a = sch.createBuffer(s, DType.I64, new long[] {n}, aHere ? dev : "null:" + ((device + 1) % DEVICES),
                    "big-a", MODES.get(modeA));
            Buffer b = sch.createBuffer(s, DType.I64, new long[] {n}, dev, "big-b", MODES.get(modeB));
            Buffer small = sch.createBuffer(s, DType.I64, new long[] {8}, dev, "small", MemoryMode.DEVICE);
            long[] av = new long[n];
            long[] bv = new long[n];
            for (int i = 0; i < n; i++) {
                av[i] = 3 * i + 1;
                bv[i] = -i;
            }
            long[] sv = {1, 2, 3, 4, 5, 6, 7, 8};
            await(sch.submit(s, List.of(
                    new CommandSpec(0, null, 0, new CommandSpec.UploadOp(a.handle(), 0, MemorySegment.ofArray(av.clone()))),
                    new CommandSpec(0, null, 0, new CommandSpec.UploadOp(b.handle(), 0, MemorySegment.ofArray(bv.clone()))),
                    new CommandSpec(0, null, 0, new CommandSpec.UploadOp(small.handle(), 0, MemorySegment.ofArray(sv.clone())))),
                    null));
            CommandSpec.Op op = acc
                    ? new CommandSpec.LaunchOp(k.get("acc").handle(), new long[] {n}, null, List.of(
                            new CommandSpec.BufferArg(a.handle()), new CommandSpec.BufferArg(b.handle())), dev)
                    : new CommandSpec.LaunchOp(k.get("mix").handle(), new long[] {n}, null, List.of(
                            new CommandSpec.BufferArg(a.handle()), new CommandSpec.BufferArg(b.handle()),
                            new CommandSpec.ScalarArg(KernelArg.Scalar.i64(5))), dev);
            List<Event> ev = sch.submit(s, List.of(new CommandSpec(0, null, 0, op),
                    new CommandSpec(0, null, 0, new CommandSpec.FillOp(small.handle(), KernelArg.Scalar.i64(9), 1, 2))),
                    null);
            Event failed = ev.get(0);
            awaitOne(failed, "the command that cannot fit");
            assertEquals(EventState.FAILED, failed.state(), "a command needing 4096 bytes on a 3686-byte budget");
            ArraydException cause = failed.failure();
            assertEquals(ErrorCode.RESOURCE_EXHAUSTED, cause.code(), cause.getMessage());
            assertTrue(cause.getMessage().contains(dev), "names the device: " + cause.getMessage());
            assertTrue(cause.getMessage().contains("2048 bytes"), "names the bytes: " + cause.getMessage());
            Event next = ev.get(1);
            awaitOne(next, "the command after it");
            assertEquals(EventState.SUCCEEDED, next.state(), () -> "the next command: " + next.failure());
            sv[1] = 9;
            sv[2] = 9;
            // the session keeps working: everything reads back unchanged, and work that fits still runs there
            List<Event> after = sch.submit(s, List.of(
                    new CommandSpec(0, null, 0, new CommandSpec.LaunchOp(k.get("acc").handle(), new long[] {8}, null,
                            List.of(new CommandSpec.BufferArg(small.handle()), new CommandSpec.BufferArg(small.handle())), dev)),
                    download(a.handle()), download(b.handle()), download(small.handle())), null);
            await(after);
            for (int i = 0; i < 8; i++) {
                sv[i] *= 2;
            }
            assertArrayEquals(av, longs(after.get(1)), "a unchanged");
            assertArrayEquals(bv, longs(after.get(2)), "b unchanged");
            assertArrayEquals(sv, longs(after.get(3)), "small");
            // a buffer larger than the whole budget is refused at once
            ArraydException tooBig = assertThrows(ArraydException.class,
                    () -> sch.createBuffer(s, DType.I64, new long[] {512}, dev, "too-big", MemoryMode.DEVICE));
            assertEquals(ErrorCode.RESOURCE_EXHAUSTED, tooBig.code(), tooBig.getMessage());
            assertTrue(tooBig.getMessage().contains(dev) && tooBig.getMessage().contains("4096 bytes"), tooBig.getMessage());
            for (DeviceRuntime d : sch.devices()) {
                d.pool().checkInvariants();
            }
            sch.closeSession(s);
            assertAllFreed(sch);
        }
    }

    // ------------------------------------------------------------------ 4: slab pool fences

    /**
     * Random allocations, frees whose last users are still pending, and completions of those users on a
     * slab pool: bytes are conserved, live blocks never overlap, an allocation overlapping freed memory
     * reports exactly the still-pending users of that memory as fences, a slab with pending fences stays
     * on the device, and once everything is freed and done the pool gives its slabs back but one.
     *
     * @param ops per step: {@code < 0} free live block {@code -op - 1} (mod), with the next {@code -op % 3}
     *            new pending events as its users; {@code 0..9999} allocate {@code op} bytes;
     *            {@code >= 10000} complete pending event {@code op} (mod)
     */
    @Property(tries = 200)
    void fencesReportExactlyThePendingUsersOfReusedMemory(
            @ForAll @Size(min = 1, max = 120) List<@IntRange(min = -60, max = 12_000) Integer> ops) {
        NullDevice device = TestDevices.memoryOnly(1 << 20);
        SlabPool pool = new SlabPool(device, 64, 4096, 1 << 20);
        List<MemRef> live = new ArrayList<>();
        List<Event> pending = new ArrayList<>();
        record Fenced(MemRef range, List<Event> users) {}
        List<Fenced> freed = new ArrayList<>();
        long used = 0;
        long largestBlock = 0;
        long nextId = 1;
        for (int op : ops) {
            if (op < 0) {
                if (live.isEmpty()) {
                    continue;
                }
                MemRef r = live.remove(Math.floorMod(-op - 1, live.size()));
                List<Event> users = new ArrayList<>();
                for (int i = 0; i < -op % 3; i++) {
                    Event e = new Event(nextId++);
                    users.add(e);
                    pending.add(e);
                }
                if (-op % 5 == 0) {
                    users.add(Event.SUCCEEDED); // done users are no fences
                }
                pool.free(r, users);
                used -= r.bytes();
                freed.add(new Fenced(r, users));
            } else if (op < 10_000) {
                List<Event> fences = new ArrayList<>();
                MemRef r = pool.allocate(op, fences);
                assertEquals(0, r.offset() % 64, "aligned offset");
                assertTrue(r.bytes() >= Math.max(1, op) && r.bytes() % 64 == 0, "aligned size");
                Set<Event> expected = new HashSet<>();
                for (Fenced fz : freed) {
                    if (overlaps(fz.range(), r)) {
                        for (Event e : fz.users()) {
                            if (!e.isDone()) {
                                expected.add(e);
                            }
                        }
                    }
                }
                assertEquals(expected, new HashSet<>(fences), () -> "fences of " + r);
                assertTrue(fences.stream().noneMatch(Event::isDone), "only pending events are fences");
                live.add(r);
                used += r.bytes();
                largestBlock = Math.max(largestBlock, r.bytes());
            } else if (!pending.isEmpty()) {
                Event e = pending.remove(Math.floorMod(op, pending.size()));
                e.succeed(0, null);
            }
            pool.checkInvariants();
            assertEquals(used, pool.usedBytes(), "used bytes");
            assertEquals(pool.reservedBytes(), device.usedBytes(), "reserved bytes match the device's slabs");
            assertNoOverlap(live);
            for (Fenced fz : freed) {
                if (fz.users().stream().anyMatch(e -> !e.isDone())) {
                    assertTrue(device.hasPool(fz.range().poolId()),
                            "slab " + fz.range().poolId() + " kept while a fence on it is pending");
                }
            }
        }
        for (MemRef r : live) {
            pool.free(r);
        }
        for (Event e : pending) {
            e.succeed(0, null);
        }
        // all memory free and every user done: a new allocation sees no fence, and all the budget but one slab
        // (the one the pool keeps) can be had again: empty slabs go back to the device once their fences are done
        List<Event> fences = new ArrayList<>();
        MemRef last = pool.allocate(64, fences);
        assertEquals(List.of(), fences, "no fence is pending any more");
        pool.free(last);
        assertEquals(0, pool.usedBytes());
        SlabPoolStats before = pool.stats();
        assertTrue(before.slabs() <= 1, "empty slabs given back but one, once their users are done: " + before);
        long largestSlab = Math.max(4096, largestBlock);
        MemRef most = assertDoesNotThrow(() -> pool.allocate(pool.budgetBytes() - largestSlab),
                () -> "nothing in use, every fence done, and yet " + before.slabs() + " empty slabs ("
                        + before.reservedBytes() + " bytes) stay reserved");
        pool.free(most);
        pool.checkInvariants();
        pool.releaseAll();
        assertEquals(0, device.usedBytes());
    }

    // ------------------------------------------------------------------ bugs found, one example each
    // (named for the bug; those marked "fixed" were fixed in main while these tests were written and now
    // guard against its return)

    /**
     * Fixed. The HOSTED_CONSTANT check ran over the whole batch before any command of it was tracked, and
     * the buffer was only marked when a command was tracked: a write after the constant's first read, in
     * the batch of that read, was accepted (and ran, changing what later readers saw).
     */
    @Example
    void bugAWriteAfterTheFirstReadOfAHostedConstantBufferInOneBatchIsAccepted() throws Exception {
        try (SchedulerFixture f = peered(new SchedulerFixture(DEVICES))) {
            Scheduler sch = f.scheduler;
            Session s = sch.openSession("constant", 60_000);
            Buffer c = sch.createBuffer(s, DType.I64, new long[] {4}, "null:0", "c", MemoryMode.HOSTED_CONSTANT);
            List<CommandSpec> twoWrites = List.of(
                    new CommandSpec(1, null, 0, new CommandSpec.FillOp(c.handle(), KernelArg.Scalar.i64(1), 0, 0)),
                    new CommandSpec(2, null, 0, new CommandSpec.DownloadOp(c.handle(), 0, 0, Long.MAX_VALUE)),
                    new CommandSpec(3, null, 0, new CommandSpec.FillOp(c.handle(), KernelArg.Scalar.i64(2), 0, 0)));
            try {
                ArraydException e = assertThrows(ArraydException.class, () -> await(sch.submit(s, twoWrites, null)),
                        "a write to a HOSTED_CONSTANT buffer after its first read, in the batch of that read");
                assertEquals(ErrorCode.FAILED_PRECONDITION, e.code(), e.getMessage());
                assertTrue(e.getMessage().startsWith("commands[2]: "), e.getMessage());
            } finally {
                sch.closeSession(s);
            }
        }
    }

    /**
     * Fixed. A merge copy refused for memory (RESOURCE_EXHAUSTED) had already made a new, empty merge buffer
     * the stream's: a launch reading it in the same batch, or in any later one, made {@code submit} throw
     * INTERNAL ("merge buffer …: no current copy to read from") from the middle of the batch's second
     * pass. The commands of that batch tracked before it (here the refused merge copy) stayed registered and
     * never completed, and the stream's merge buffer stayed broken until a merge copy succeeded there.
     */
    @Example
    void bugALaunchReadingTheMergeBufferOfARefusedMergeCopyThrowsInternalAndStrandsItsBatch() throws Exception {
        // budget 90% of 4096 = 3686 bytes: a 2048-byte source and a 2048-byte merge buffer do not fit together
        try (SchedulerFixture f = peered(new SchedulerFixture(DEVICES, 4096, 1024))) {
            Scheduler sch = f.scheduler;
            Session s = sch.openSession("merge", 60_000);
            Map<String, CompiledKernel> k = f.compileAll(s);
            Buffer src = sch.createBuffer(s, DType.I64, new long[] {256}, "null:0", "src", MemoryMode.DEVICE);
            Buffer sum = sch.createBuffer(s, DType.I64, new long[] {256}, "null:1", "sum", MemoryMode.DEVICE);
            CommandSpec merge = new CommandSpec(1, null, 0, new CommandSpec.CopyOp(src.handle(), 0, 0, 0, 0, "null:0",
                    MergeMode.COPY));
            CommandSpec acc = new CommandSpec(2, null, 0, new CommandSpec.LaunchOp(k.get("acc").handle(), new long[] {256},
                    null, List.of(new CommandSpec.MergeArg(), new CommandSpec.BufferArg(sum.handle())), "null:0"));
            try {
                List<Event> ev = assertDoesNotThrow(() -> sch.submit(s, List.of(merge, acc), null),
                        "submit of [merge copy that cannot fit, launch reading the merge buffer]");
                awaitOne(ev.get(0), "the merge copy");
                awaitOne(ev.get(1), "the launch");
                assertEquals(ErrorCode.RESOURCE_EXHAUSTED, ev.get(0).failure().code(), String.valueOf(ev.get(0).failure()));
                assertEquals(EventState.FAILED, ev.get(1).state(), "the launch has no merge data to read");
                // the stream keeps working
                Event next = sch.submit(s, List.of(download(sum.handle())), null).getFirst();
                awaitOne(next, "a download after it");
                assertEquals(EventState.SUCCEEDED, next.state(), () -> String.valueOf(next.failure()));
                assertEquals(0, s.pendingEvents(), "nothing left pending");
            } finally {
                sch.abortPending(new ArraydException(ErrorCode.ABORTED, "end of test")); // what the bug left behind
                sch.closeSession(s);
            }
        }
    }

    /**
     * A merge copy refused for memory leaves the stream's merge buffer as the merge copy before it had
     * filled it: a launch reading the merge buffer after the refused merge copy runs, and silently reads the
     * earlier merge copy's data (here: {@code sum} gets {@code x} twice and never {@code y}; with a launch
     * as large as {@code y} it would read past the end of the old, smaller merge buffer). Found after the
     * fix for the INTERNAL above: the new merge buffer is no longer installed, but the old one stays.
     * Open: fails until fixed.
     */
    @Example
    void bugALaunchAfterARefusedMergeCopyReadsTheMergeBufferOfTheMergeCopyBefore() throws Exception {
        // budget 90% of 4096 = 3686 bytes: y (2048 bytes) and a merge buffer of its size do not fit together
        try (SchedulerFixture f = new SchedulerFixture(1, 4096, 1024)) {
            Scheduler sch = f.scheduler;
            Session s = sch.openSession("stale-merge", 60_000);
            Map<String, CompiledKernel> k = f.compileAll(s);
            Buffer x = sch.createBuffer(s, DType.I64, new long[] {8}, "null:0", "x", MemoryMode.DEVICE);
            Buffer y = sch.createBuffer(s, DType.I64, new long[] {256}, "null:0", "y", MemoryMode.DEVICE);
            Buffer sum = sch.createBuffer(s, DType.I64, new long[] {8}, "null:0", "sum", MemoryMode.DEVICE);
            CommandSpec acc = new CommandSpec(0, null, 0, new CommandSpec.LaunchOp(k.get("acc").handle(), new long[] {8},
                    null, List.of(new CommandSpec.MergeArg(), new CommandSpec.BufferArg(sum.handle())), "null:0"));
            List<Event> ev = sch.submit(s, List.of(
                    new CommandSpec(0, null, 0, new CommandSpec.FillOp(x.handle(), KernelArg.Scalar.i64(1), 0, 0)),
                    new CommandSpec(0, null, 0, new CommandSpec.FillOp(y.handle(), KernelArg.Scalar.i64(100), 0, 0)),
                    new CommandSpec(0, null, 0, new CommandSpec.CopyOp(x.handle(), 0, 0, 0, 0, "null:0", MergeMode.COPY)),
                    acc,
                    new CommandSpec(0, null, 0, new CommandSpec.CopyOp(y.handle(), 0, 0, 0, 0, "null:0", MergeMode.COPY)),
                    acc,
                    download(sum.handle())), null);
            try {
                for (Event e : ev) {
                    awaitOne(e, e.toString());
                }
                assertEquals(EventState.SUCCEEDED, ev.get(3).state(), () -> "the first acc: " + ev.get(3).failure());
                assertEquals(ErrorCode.RESOURCE_EXHAUSTED, ev.get(4).failure().code(), "the merge copy of y cannot fit");
                assertEquals(EventState.SUCCEEDED, ev.get(6).state(), () -> "the download: " + ev.get(6).failure());
                long[] once = {1, 1, 1, 1, 1, 1, 1, 1};
                assertArrayEquals(once, longs(ev.get(6)), "sum: x once (the launch after the refused merge copy does not "
                        + "read the merge copy before it)");
                assertEquals(EventState.FAILED, ev.get(5).state(), "the launch after the refused merge copy");
            } finally {
                sch.closeSession(s);
            }
        }
    }

    /**
     * Fixed. {@code SlabPool.free(ref, users)} recorded a fence before freeing, so freeing the last block of a
     * slab whose users were still running never gave the slab back — and nothing did later, when they
     * finished: the slab stayed reserved, empty, until the scheduler closed.
     */
    @Example
    void bugSlabsFreedWhileTheirLastUsersRunStayReservedForever() {
        NullDevice device = TestDevices.memoryOnly(1 << 20);
        SlabPool pool = new SlabPool(device, 64, 4096, 4 * 4096);
        MemRef a = pool.allocate(4096);
        MemRef b = pool.allocate(4096);
        MemRef c = pool.allocate(4096);
        Event readerOfA = new Event(1);
        Event readerOfB = new Event(2);
        pool.free(a, List.of(readerOfA));
        pool.free(b, List.of(readerOfB));
        readerOfA.succeed(0, null);
        readerOfB.succeed(0, null);
        pool.free(c);
        try {
            assertEquals(0, pool.usedBytes());
            assertTrue(pool.stats().slabs() <= 1, "empty slabs given back but one, once their users are done: "
                    + pool.stats());
            assertDoesNotThrow(() -> pool.free(pool.allocate(2 * 4096)), "two slabs' worth of an empty pool");
        } finally {
            pool.releaseAll();
        }
    }

    /**
     * Fixed. The same at the scheduler: buffers destroyed while their commands still ran left their slabs
     * reserved after those commands finished, and a later buffer that needed a new slab was refused with
     * RESOURCE_EXHAUSTED on a device with 0 bytes in use ("cannot allocate 2048 bytes: 0 of its budget
     * 3686 bytes in use, largest free block 1024 bytes"), though nothing was left to evict.
     */
    @Example
    void bugMemoryOfBuffersDestroyedWhileInUseIsNeverUsableForLargerBuffers() throws Exception {
        // budget 90% of 4096 = 3686 bytes, 1024-byte slabs
        try (SchedulerFixture f = new SchedulerFixture(1, 4096, 1024)) {
            Scheduler sch = f.scheduler;
            Session s = sch.openSession("stuck", 60_000);
            f.devices.getFirst().hold(); // their zero fills are still to run when they are destroyed
            List<Buffer> small = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                small.add(sch.createBuffer(s, DType.I64, new long[] {128}, "null:0", "small" + i, MemoryMode.DEVICE));
            }
            for (Buffer b : small) {
                sch.destroyBuffer(s, b.handle());
            }
            f.devices.getFirst().open();
            await(List.of(sch.stream(s, 0, "null:0").allWork()));
            SlabPool pool = sch.devices().getFirst().pool();
            assertEquals(0, pool.usedBytes());
            try {
                Buffer big = assertDoesNotThrow(
                        () -> sch.createBuffer(s, DType.I64, new long[] {256}, "null:0", "big", MemoryMode.DEVICE),
                        () -> "a 2048-byte buffer on an idle device with nothing in use: " + pool.stats());
                assertNotNull(big);
            } finally {
                sch.closeSession(s);
            }
        }
    }

    // ------------------------------------------------------------------ the program and its model

    /** A random program, the plain arrays it is checked against, and the checks. */
    static final class Program {

        static final int KINDS = 19;

        final SchedulerFixture f;
        final Scheduler sch;
        /** Devices the scheduler has now (null:0 ..); steps name only these. */
        private int present;
        final Session s;
        final Map<String, CompiledKernel> k;
        /** Elements of a narrow buffer; wide ones have twice as many. */
        final int n;
        final List<Buffer> bufs = new ArrayList<>();
        final List<MemoryMode> modes = new ArrayList<>();
        /** The host memory each buffer lives in, or null (see {@link #MODES}). */
        final List<MemorySegment> hostMemory = new ArrayList<>();
        final List<Integer> writable = new ArrayList<>();
        final List<Integer> constants = new ArrayList<>();
        final List<long[]> model = new ArrayList<>();
        /** [device][0] = 0 (the default stream), [device][1..2] created streams. */
        final long[][] streams = new long[DEVICES][3];
        long nextEvent = 1;
        final List<Long> issued = new ArrayList<>();
        final List<CommandSpec> batch = new ArrayList<>();
        final List<String> batchWhat = new ArrayList<>();
        final List<long[]> batchExpect = new ArrayList<>();
        final List<Event> all = new ArrayList<>();
        final List<String> allWhat = new ArrayList<>();
        final List<Event> downloads = new ArrayList<>();
        final List<long[]> expected = new ArrayList<>();
        final List<String> downloadWhat = new ArrayList<>();
        long evictionsBeforeClose;
        final long[] evictionsPerDevice = new long[DEVICES];
        /** Close the session right after the last batch, before its commands are done. */
        boolean closeEarly;
        /** Check that no device has memory in use once the session is closed (only with no other session). */
        boolean checkFreed = true;
        /** No other session evicts this one's replicas between two of its batches. */
        boolean oneSession = true;

        Program(SchedulerFixture f, int n, List<BufSpec> specs) {
            this(f, n, specs, DEVICES);
        }

        /** @param present how many of the devices the scheduler has now (the others join at {@link #join()}) */
        Program(SchedulerFixture f, int n, List<BufSpec> specs, int present) {
            this.f = f;
            this.sch = f.scheduler;
            this.n = n;
            this.present = present;
            this.s = sch.openSession("multi-device", 60_000);
            this.k = f.compileAll(s);
            for (int d = 0; d < present; d++) {
                streams[d][1] = sch.createStream(s, dev(d)).handle();
                streams[d][2] = sch.createStream(s, dev(d)).handle();
            }
            for (int i = 0; i < specs.size(); i++) {
                BufSpec spec = specs.get(i);
                boolean inHost = spec.mode() == MODES.size();
                MemoryMode mode = inHost ? MemoryMode.HOSTED_CHANGED_ON_DEVICES : MODES.get(spec.mode());
                if (i == 0 && mode == MemoryMode.HOSTED_CONSTANT) {
                    mode = MemoryMode.DEVICE; // at least one buffer to write to
                }
                modes.add(mode);
                (mode == MemoryMode.HOSTED_CONSTANT ? constants : writable).add(i);
                hostMemory.add(inHost ? MemorySegment.NULL : null); // (its memory comes with the buffer)
                bufs.add(null);
                model.add(null);
                create(i, live(spec.home()), spec.wide(), spec.seed());
            }
            flush();
        }

        /** The devices held back join the scheduler (see {@link SchedulerFixture#addLate()}): steps use them from now on. */
        void join() {
            f.addLate();
            for (int d = present; d < DEVICES; d++) {
                streams[d][1] = sch.createStream(s, dev(d)).handle();
                streams[d][2] = sch.createStream(s, dev(d)).handle();
            }
            present = DEVICES;
        }

        /** Device {@code d} of a step, among those present now. */
        private int live(int d) {
            return d % present;
        }

        static String dev(int d) {
            return "null:" + d;
        }

        /**
         * Creates buffer {@code i} (zeros; in new host memory of its size when it lives in host memory), and queues the
         * one write of a HOSTED_CONSTANT buffer.
         */
        private void create(int i, int home, boolean wide, long seed) {
            int len = wide ? 2 * n : n;
            Buffer b;
            if (hostMemory.get(i) != null) {
                MemorySegment memory = Arena.ofAuto().allocate(8L * len, 64); // zeros; kept alive by the buffer
                hostMemory.set(i, memory);
                b = sch.createBuffer(s, DType.I64, new long[] {len}, dev(home), "b" + i, modes.get(i),
                        new HostMemory(memory, () -> { }));
            } else {
                b = sch.createBuffer(s, DType.I64, new long[] {len}, dev(home), "b" + i, modes.get(i));
            }
            bufs.set(i, b);
            long[] m = new long[len];
            model.set(i, m);
            if (modes.get(i) != MemoryMode.HOSTED_CONSTANT) {
                return;
            }
            switch ((int) Math.floorMod(seed, 3L)) {
                case 0 -> {
                    long[] data = new long[len];
                    for (int j = 0; j < len; j++) {
                        data[j] = seed * 31 + j * j;
                    }
                    add(new CommandSpec.UploadOp(b.handle(), 0, MemorySegment.ofArray(data)), 0, null, "write b" + i + " (upload)");
                    System.arraycopy(data, 0, m, 0, len);
                }
                case 1 -> {
                    add(new CommandSpec.FillOp(b.handle(), KernelArg.Scalar.i64(seed), 0, 0), 0, null, "write b" + i + " (fill)");
                    Arrays.fill(m, seed);
                }
                default -> {
                    // a launch placed by the scheduler
                    add(new CommandSpec.LaunchOp(k.get("set").handle(), new long[] {len}, null, List.of(
                            new CommandSpec.BufferArg(b.handle()), new CommandSpec.ScalarArg(KernelArg.Scalar.i64(seed))),
                            ""), 0, null, "write b" + i + " (set)");
                    for (int j = 0; j < len; j++) {
                        m[j] = seed * j + 1;
                    }
                }
            }
        }

        /** Runs the program and every check; on failure, fails what is pending so that closing does not wait. */
        void runChecked(List<Step> program) throws Exception {
            runChecked(program, -1);
        }

        /** As {@link #runChecked(List)}, the held-back devices joining before step {@code joinAt} (or at the end). */
        void runChecked(List<Step> program, int joinAt) throws Exception {
            try {
                for (int i = 0; i < program.size(); i++) {
                    if (i == joinAt) {
                        join();
                    }
                    step(program.get(i));
                }
                if (present < DEVICES) {
                    join();
                }
                finish();
            } catch (Throwable t) {
                sch.abortPending(new ArraydException(ErrorCode.ABORTED, "the test failed"));
                throw t;
            }
        }

        private int any(int i) {
            return Math.floorMod(i, bufs.size());
        }

        private int writable(int i) {
            return writable.get(Math.floorMod(i, writable.size()));
        }

        private int len(int i) {
            return model.get(i).length;
        }

        /** Stream handle for a placement choice (0 = a default stream). */
        private long stream(int place) {
            int p = place % 12;
            return p >= 9 ? 0 : streams[live(p / 3)][p % 3];
        }

        /** Device id for a placement choice: named with default streams, optionally with created ones. */
        private String device(Step st) {
            int p = st.place() % 12;
            if (p >= 9) {
                return "";
            }
            return p % 3 == 0 || (st.flags() & 16) != 0 ? dev(live(p / 3)) : "";
        }

        /** For transfers, which need a device: as {@link #stream}, but 9-11 are the default streams of devices 0-2. */
        private String transferDevice(Step st) {
            int p = st.place() % 12;
            return p >= 9 ? dev(live(p - 9)) : device(st);
        }

        /** A range {off, len} within {@code size} elements: all of them when flag 8 is set. */
        private static int[] range(Step st, int size) {
            if ((st.flags() & 8) != 0) {
                return new int[] {0, size};
            }
            int off = st.r1() % size;
            int len = 1 + st.r2() % (size - off);
            return new int[] {off, len};
        }

        private static CommandSpec.Arg arg(Buffer b) {
            return new CommandSpec.BufferArg(b.handle());
        }

        private static CommandSpec.Arg scalar(long v) {
            return new CommandSpec.ScalarArg(KernelArg.Scalar.i64(v));
        }

        /**
         * One step. Kinds: 0-1 mix, 2 set, 3 fill, 4 upload, 5-6 copy, 7 prefetch, 8-9 merge copy and acc,
         * 10-11 download, 12 a refused second write to a HOSTED_CONSTANT buffer, 13 destroy a buffer and
         * create another in its place, 14 destroy a created stream and create another in its place, 15 a merge
         * copy, a write to its source, then the launch reading the merge buffer, 16 a LOCAL buffer as scratch
         * for one batch, 17 a download of a buffer in host memory into that memory, 18 the client writing that
         * memory (after the commands before are done) and saying so with a host-written command.
         */
        void step(Step st) {
            int kind = st.kind();
            long stream = stream(st.place());
            switch (kind) {
                case 0, 1 -> { // b = b * 3 + a + k over the shorter of the two
                    int a = any(st.a());
                    int b = writable(st.b());
                    int g = Math.min(len(a), len(b));
                    add(new CommandSpec.LaunchOp(k.get("mix").handle(), new long[] {g}, null, List.of(
                            arg(bufs.get(a)), arg(bufs.get(b)), scalar(st.k())), device(st)), stream, st,
                            "mix b" + a + " -> b" + b);
                    long[] av = model.get(a).clone();
                    long[] bv = model.get(b);
                    for (int i = 0; i < g; i++) {
                        bv[i] = bv[i] * 3 + av[i] + st.k();
                    }
                }
                case 2 -> { // b = k * i + 1
                    int b = writable(st.b());
                    add(new CommandSpec.LaunchOp(k.get("set").handle(), new long[] {len(b)}, null, List.of(
                            arg(bufs.get(b)), scalar(st.k())), device(st)), stream, st, "set b" + b);
                    for (int i = 0; i < len(b); i++) {
                        model.get(b)[i] = st.k() * i + 1;
                    }
                }
                case 3 -> {
                    int b = writable(st.b());
                    int[] r = range(st, len(b));
                    // count 0 = to the end
                    long count = r[0] + r[1] == len(b) && (st.r2() & 1) == 0 ? 0 : r[1];
                    add(new CommandSpec.FillOp(bufs.get(b).handle(), KernelArg.Scalar.i64(st.k()), r[0], count), stream, st,
                            "fill b" + b + " [" + r[0] + ", +" + r[1] + ")");
                    Arrays.fill(model.get(b), r[0], r[0] + r[1], st.k());
                }
                case 4 -> {
                    int b = writable(st.b());
                    int[] r = range(st, len(b));
                    long[] data = new long[r[1]];
                    for (int i = 0; i < data.length; i++) {
                        data[i] = st.k() * 1000 + i + r[0];
                    }
                    add(new CommandSpec.UploadOp(bufs.get(b).handle(), 8L * r[0], MemorySegment.ofArray(data)), stream, st,
                            "upload b" + b + " [" + r[0] + ", +" + r[1] + ")");
                    System.arraycopy(data, 0, model.get(b), r[0], r[1]);
                }
                case 5, 6 -> { // copy, on any devices
                    int a = any(st.a());
                    int b = writable(st.b());
                    int len;
                    int srcOff;
                    int dstOff;
                    if (a != b) {
                        int[] r = range(st, Math.min(len(a), len(b)));
                        len = r[1];
                        srcOff = r[0];
                        dstOff = (st.k() & 1) == 0 ? srcOff : (int) Math.floorMod(st.k(), (long) (len(b) - len + 1));
                    } else {
                        int size = len(a);
                        len = 1 + st.r2() % (size / 2);
                        srcOff = st.r1() % (size - len + 1);
                        List<Integer> ok = new ArrayList<>();
                        for (int o = 0; o <= size - len; o++) {
                            if (o + len <= srcOff || srcOff + len <= o) {
                                ok.add(o);
                            }
                        }
                        if (ok.isEmpty()) {
                            srcOff = 0;
                            dstOff = len;
                        } else {
                            dstOff = ok.get((st.r1() / 7 + st.r2()) % ok.size());
                        }
                    }
                    // size 0 = the rest of the source
                    long size = srcOff + len == len(a) && (st.r1() & 1) == 1 ? 0 : 8L * len;
                    add(new CommandSpec.CopyOp(bufs.get(a).handle(), bufs.get(b).handle(), 8L * srcOff, 8L * dstOff, size,
                            device(st), MergeMode.NONE), stream, st,
                            "copy b" + a + " [" + srcOff + ", +" + len + ") -> b" + b + " @" + dstOff);
                    long[] av = model.get(a).clone();
                    System.arraycopy(av, srcOff, model.get(b), dstOff, len);
                }
                case 7 -> { // prefetch
                    int a = any(st.a());
                    add(new CommandSpec.CopyOp(bufs.get(a).handle(), 0, 0, 0, 0, transferDevice(st), MergeMode.NONE),
                            stream, st, "prefetch b" + a + " to " + transferDevice(st));
                }
                case 8, 9 -> { // merge copy, then b += merge buffer on the same stream
                    int a = any(st.a());
                    int b = writable(st.b());
                    MergeMode mode = (st.flags() & 8) != 0 ? MergeMode.STREAMING : MergeMode.COPY;
                    String td = transferDevice(st);
                    int g = Math.min(len(a), len(b));
                    add(new CommandSpec.CopyOp(bufs.get(a).handle(), 0, 0, 0, 0, td, mode), stream, st,
                            "merge " + mode + " b" + a + " on " + (stream == 0 ? "the default stream" : "stream " + stream)
                                    + " " + td);
                    add(new CommandSpec.LaunchOp(k.get("acc").handle(), new long[] {g}, null, List.of(
                            new CommandSpec.MergeArg(), arg(bufs.get(b))), stream == 0 ? td : ""), stream, null,
                            "acc merge -> b" + b);
                    long[] av = model.get(a).clone();
                    for (int i = 0; i < g; i++) {
                        model.get(b)[i] += av[i];
                    }
                }
                case 10, 11 -> {
                    int a = any(st.a());
                    int[] r = range(st, len(a));
                    long size = r[0] + r[1] == len(a) && (st.r2() & 1) == 0 ? 0 : 8L * r[1];
                    add(new CommandSpec.DownloadOp(bufs.get(a).handle(), 8L * r[0], size, Long.MAX_VALUE), stream, st,
                            "download b" + a + " [" + r[0] + ", +" + r[1] + ")");
                    batchExpect.set(batchExpect.size() - 1, Arrays.copyOfRange(model.get(a), r[0], r[0] + r[1]));
                }
                case 12 -> refusedConstantWrite(st);
                case 13 -> { // the memory of a destroyed buffer is reused while its last commands may still run
                    flush();
                    int i = any(st.a());
                    sch.destroyBuffer(s, bufs.get(i).handle());
                    create(i, live(st.place() % DEVICES), (st.r1() & 1) == 1, st.k());
                }
                case 15 -> streamingMergeThenWriteThenAcc(st);
                case 16 -> localScratch(st);
                case 17 -> { // bytes of the buffer into the memory it lives in: a write of that memory, same bytes
                    int a = any(st.a());
                    MemorySegment memory = hostMemory.get(a);
                    if (memory == null) {
                        return;
                    }
                    int[] r = range(st, len(a));
                    long size = r[0] + r[1] == len(a) && (st.r2() & 1) == 0 ? 0 : 8L * r[1];
                    add(new CommandSpec.DownloadOp(bufs.get(a).handle(), 8L * r[0], size, Long.MAX_VALUE,
                            memory.asSlice(8L * r[0])), stream, st, "download b" + a + " [" + r[0] + ", +" + r[1]
                            + ") into its own memory");
                }
                case 18 -> hostWrite(st);
                default -> { // a stream (and its merge buffer) goes while its commands may still run
                    flush();
                    int d = live(st.place() % DEVICES);
                    int which = 1 + (st.r1() & 1);
                    sch.destroyStream(s, streams[d][which]);
                    streams[d][which] = sch.createStream(s, dev(d)).handle();
                }
            }
            if ((st.flags() & 3) == 0) {
                flush();
            }
        }

        /**
         * A merge copy, a write to its source, then the launch reading the merge buffer: a STREAMING merge of
         * a source current on the stream's device reads it in place, when the launch runs (after the write);
         * otherwise the merge buffer holds the source as it was at the merge copy.
         */
        private void streamingMergeThenWriteThenAcc(Step st) {
            if (!oneSession) {
                return; // another session's eviction could change the in-place decision after we look
            }
            flush();
            int a = any(st.a());
            int b = writable(st.b());
            int p = st.place() % 12;
            int d = live(p >= 9 ? p - 9 : p / 3);
            long stream = stream(st.place());
            String td = transferDevice(st);
            MergeMode mode = (st.flags() & 8) != 0 ? MergeMode.COPY : MergeMode.STREAMING;
            ReplicaState there = sch.replicaStates(bufs.get(a)).getOrDefault(dev(d), ReplicaState.INVALID);
            boolean inPlace = mode == MergeMode.STREAMING && there != ReplicaState.INVALID;
            int g = Math.min(len(a), len(b));
            long[] before = model.get(a).clone();
            add(new CommandSpec.CopyOp(bufs.get(a).handle(), 0, 0, 0, 0, td, mode), stream, st,
                    "merge " + mode + " b" + a + (inPlace ? " (in place)" : "") + " on " + dev(d));
            if (modes.get(a) != MemoryMode.HOSTED_CONSTANT) {
                int[] r = range(st, len(a));
                add(new CommandSpec.FillOp(bufs.get(a).handle(), KernelArg.Scalar.i64(st.k() + 100), r[0], r[1]),
                        stream(st.r1()), null, "fill b" + a + " [" + r[0] + ", +" + r[1] + ") between merge and acc");
                Arrays.fill(model.get(a), r[0], r[0] + r[1], st.k() + 100);
            }
            long[] merged = inPlace ? model.get(a).clone() : before;
            add(new CommandSpec.LaunchOp(k.get("acc").handle(), new long[] {g}, null, List.of(
                    new CommandSpec.MergeArg(), arg(bufs.get(b))), stream == 0 ? td : ""), stream, null,
                    "acc merge -> b" + b);
            for (int i = 0; i < g; i++) {
                model.get(b)[i] += merged[i];
            }
        }

        /**
         * A LOCAL buffer as scratch for one batch (a copy into it, a launch reading it, a download of it):
         * the batch consumes its handle, and its memory is reused while the batch may still run.
         */
        private void localScratch(Step st) {
            flush();
            int a = any(st.a());
            int b = writable(st.b());
            Buffer local = sch.createBuffer(s, DType.I64, new long[] {n}, dev(live(st.place() % DEVICES)), "local", MemoryMode.LOCAL);
            long[] lv = Arrays.copyOf(model.get(a), n);
            int g = Math.min(n, len(b));
            add(new CommandSpec.CopyOp(bufs.get(a).handle(), local.handle(), 0, 0, 8L * Math.min(n, len(a)), device(st),
                    MergeMode.NONE), stream(st.place()), st, "copy b" + a + " -> local");
            add(new CommandSpec.LaunchOp(k.get("mix").handle(), new long[] {g}, null, List.of(
                    arg(local), arg(bufs.get(b)), scalar(st.k())), (st.flags() & 8) != 0 ? "" : dev(live(st.r1() % DEVICES))),
                    0, null, "mix local -> b" + b);
            add(new CommandSpec.DownloadOp(local.handle(), 0, 0, Long.MAX_VALUE), stream(st.r2()), null, "download local");
            batchExpect.set(batchExpect.size() - 1, lv.clone());
            long[] bv = model.get(b);
            for (int i = 0; i < g; i++) {
                bv[i] = bv[i] * 3 + lv[i] + st.k();
            }
            flush();
            ArraydException gone = assertThrows(ArraydException.class, () -> sch.submit(s, List.of(new CommandSpec(
                    nextEvent++, null, 0, new CommandSpec.DownloadOp(local.handle(), 0, 0, Long.MAX_VALUE))), null),
                    "a LOCAL buffer after the batch that used it");
            assertEquals(ErrorCode.NOT_FOUND, gone.code(), gone.getMessage());
        }

        /**
         * The client writes the host memory a buffer lives in as the API asks: once every command submitted before is
         * done and the memory holds the buffer's current data (a download into it: from then on nothing writes it
         * back there, not even an eviction by another session), then submits a host-written command: its bytes
         * become the buffer's data.
         */
        private void hostWrite(Step st) {
            int b = writable(st.b());
            MemorySegment memory = hostMemory.get(b);
            if (memory == null) {
                return;
            }
            add(new CommandSpec.DownloadOp(bufs.get(b).handle(), 0, 0, Long.MAX_VALUE, memory), 0, null,
                    "download b" + b + " into its own memory before the client writes it");
            flush();
            for (int i = 0; i < all.size(); i++) {
                try {
                    awaitOne(all.get(i), allWhat.get(i));
                } catch (Exception e) {
                    throw new AssertionError(allWhat.get(i), e);
                }
            }
            assertTrue(sch.replicaStates(bufs.get(b)).get("host") != ReplicaState.INVALID,
                    "b" + b + ": its host memory is current after a download into it");
            long[] m = model.get(b);
            for (int i = 0; i < m.length; i++) {
                m[i] = st.k() * 7 + i;
                memory.setAtIndex(java.lang.foreign.ValueLayout.JAVA_LONG, i, m[i]);
            }
            add(new CommandSpec.HostWrittenOp(bufs.get(b).handle()), stream(st.place()), st, "host wrote b" + b);
        }

        /** A second write to a HOSTED_CONSTANT buffer refuses its whole batch at submit. */
        private void refusedConstantWrite(Step st) {
            if (constants.isEmpty()) {
                return;
            }
            flush();
            int c = constants.get(Math.floorMod(st.a(), constants.size()));
            int w = writable(st.b());
            long ch = bufs.get(c).handle();
            int g = Math.min(len(c), len(w));
            CommandSpec.Op bad = switch ((int) Math.floorMod(st.k(), 6L)) {
                case 0 -> new CommandSpec.FillOp(ch, KernelArg.Scalar.i64(1), 0, 0);
                case 1 -> new CommandSpec.UploadOp(ch, 0, MemorySegment.ofArray(new long[] {7}));
                case 2 -> new CommandSpec.LaunchOp(k.get("set").handle(), new long[] {len(c)}, null, List.of(
                        new CommandSpec.BufferArg(ch), scalar(3)), device(st));
                case 3 -> new CommandSpec.CopyOp(bufs.get(w).handle(), ch, 0, 0, 8L * g);
                case 4 -> new CommandSpec.CopyOp(ch, ch, 0, 8, 8);
                default -> new CommandSpec.LaunchOp(k.get("mix").handle(), new long[] {g}, null, List.of(
                        arg(bufs.get(w)), new CommandSpec.BufferArg(ch), scalar(3)), device(st));
            };
            // a read first (in this batch, so that the constant is read at least once): the write after it is refused
            List<CommandSpec> refused = List.of(
                    new CommandSpec(nextEvent++, null, 0, new CommandSpec.FillOp(bufs.get(w).handle(), KernelArg.Scalar.i64(-77), 0, 0)),
                    new CommandSpec(nextEvent++, null, 0, new CommandSpec.DownloadOp(ch, 0, 0, Long.MAX_VALUE)),
                    new CommandSpec(nextEvent++, null, stream(st.place()), bad));
            ArraydException e = assertThrows(ArraydException.class, () -> sch.submit(s, refused, null),
                    "a write to HOSTED_CONSTANT b" + c + " after its first read");
            assertEquals(ErrorCode.FAILED_PRECONDITION, e.code(), e.getMessage());
            assertTrue(e.getMessage().startsWith("commands[2]: ") && e.getMessage().contains("HOSTED_CONSTANT"),
                    e.getMessage());
            // nothing of the batch ran: the model is unchanged (the fill of b<w> never happens)
        }

        private void add(CommandSpec.Op op, long stream, Step st, String what) {
            long id = nextEvent++;
            long[] waits = null;
            if (st != null && (st.flags() & 4) != 0 && !issued.isEmpty()) {
                waits = new long[] {issued.get(st.r2() % issued.size())};
            }
            batch.add(new CommandSpec(id, waits, stream, op));
            batchWhat.add("event " + id + ": " + what + (waits == null ? "" : " (waits for " + waits[0] + ")"));
            batchExpect.add(null);
            issued.add(id);
        }

        void flush() {
            if (batch.isEmpty()) {
                return;
            }
            List<Event> events = sch.submit(s, List.copyOf(batch), null);
            assertEquals(batch.size(), events.size());
            for (int i = 0; i < events.size(); i++) {
                all.add(events.get(i));
                allWhat.add(batchWhat.get(i));
                if (batchExpect.get(i) != null) {
                    downloads.add(events.get(i));
                    expected.add(batchExpect.get(i));
                    downloadWhat.add(batchWhat.get(i));
                }
            }
            batch.clear();
            batchWhat.clear();
            batchExpect.clear();
            checkReplicaStates();
        }

        /** MSI: at least one current copy; a lone current copy is MODIFIED, several are all SHARED. */
        void checkReplicaStates() {
            for (int i = 0; i < bufs.size(); i++) {
                Map<String, ReplicaState> states = sch.replicaStates(bufs.get(i));
                long m = states.values().stream().filter(x -> x == ReplicaState.MODIFIED).count();
                long sh = states.values().stream().filter(x -> x == ReplicaState.SHARED).count();
                String where = "b" + i + " (" + modes.get(i) + "): " + states;
                assertTrue(m + sh >= 1, "no current copy of " + where);
                assertTrue(m == 0 ? sh >= 2 : m == 1 && sh == 0, "MSI states of " + where);
                if (modes.get(i) == MemoryMode.HOSTED_CONSTANT) {
                    assertNotNull(states.get("host"), "a written HOSTED_CONSTANT buffer keeps its host copy: " + where);
                    assertTrue(states.get("host") != ReplicaState.INVALID, "host copy of " + where);
                }
            }
        }

        void finish() throws Exception {
            flush();
            if (closeEarly) {
                sch.closeSession(s); // handles go now, memory after the commands already submitted
            }
            for (int i = 0; i < all.size(); i++) {
                Event e = all.get(i);
                awaitOne(e, allWhat.get(i));
                assertEquals(EventState.SUCCEEDED, e.state(), allWhat.get(i) + " failed: " + e.failure());
            }
            for (int i = 0; i < downloads.size(); i++) {
                assertArrayEquals(expected.get(i), longs(downloads.get(i)), downloadWhat.get(i));
            }
            if (closeEarly) {
                if (checkFreed) {
                    assertAllFreed(sch);
                }
                return;
            }
            // every buffer read back on every device (a created stream there), and on its preferred device
            List<CommandSpec> reads = new ArrayList<>();
            for (int d = 0; d < DEVICES; d++) {
                for (Buffer b : bufs) {
                    reads.add(new CommandSpec(nextEvent++, null, streams[d][1 + (d + reads.size()) % 2],
                            new CommandSpec.DownloadOp(b.handle(), 0, 0, Long.MAX_VALUE)));
                }
            }
            for (Buffer b : bufs) {
                reads.add(new CommandSpec(nextEvent++, null, 0, new CommandSpec.DownloadOp(b.handle(), 0, 0, Long.MAX_VALUE)));
            }
            List<Event> back = sch.submit(s, reads, null);
            for (int j = 0; j < back.size(); j++) {
                int i = j % bufs.size();
                String where = j / bufs.size() < DEVICES ? "null:" + j / bufs.size() : "its preferred device";
                Event e = back.get(j);
                awaitOne(e, "final read of b" + i);
                assertEquals(EventState.SUCCEEDED, e.state(), () -> "final read of b" + i + " on " + where + ": " + e.failure());
                assertArrayEquals(model.get(i), longs(e), "final contents of b" + i + " (" + modes.get(i) + ") read on " + where);
            }
            checkReplicaStates();
            for (DeviceRuntime d : sch.devices()) {
                d.pool().checkInvariants();
                evictionsPerDevice[d.index()] = d.evictions();
                evictionsBeforeClose += d.evictions();
            }
            // direct copies only between the two devices that can make them
            for (TestDevice d : f.devices) {
                for (DeviceCommand c : d.executed) {
                    if (c instanceof DeviceCommand.PeerCopy p) {
                        assertTrue(d.device.canCopyFrom(p.srcDevice()), d.id() + " ran a peer copy from " + p.srcDevice().id());
                    }
                }
            }
            sch.closeSession(s);
            if (checkFreed) {
                assertAllFreed(sch);
            }
        }
    }

    // ------------------------------------------------------------------ helpers

    static SchedulerFixture peered(SchedulerFixture f) {
        f.devices.get(0).peerCopies(true);
        f.devices.get(1).peerCopies(true);
        return f;
    }

    static CommandSpec download(long buffer) {
        return new CommandSpec(0, null, 0, new CommandSpec.DownloadOp(buffer, 0, 0, Long.MAX_VALUE));
    }

    static void await(List<Event> events) throws Exception {
        for (Event e : events) {
            awaitOne(e, e.toString());
            assertEquals(EventState.SUCCEEDED, e.state(), () -> e + ": " + e.failure());
        }
    }

    static void awaitOne(Event e, String what) throws Exception {
        try {
            e.toFuture().get(TIMEOUT_S, TimeUnit.SECONDS);
        } catch (TimeoutException t) {
            fail("not done after " + TIMEOUT_S + " s (deadlock?): " + what + " " + e);
        } catch (java.util.concurrent.ExecutionException ignored) {
            // failed: the caller checks the state
        }
    }

    /** After the session closed and its work finished: no device memory in use, pools consistent. */
    static void assertAllFreed(Scheduler sch) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_S);
        for (DeviceRuntime d : sch.devices()) {
            while (d.pool().usedBytes() != 0 && System.nanoTime() < until) {
                Thread.sleep(2);
            }
            d.pool().checkInvariants();
            assertEquals(0, d.pool().usedBytes(), d.id() + ": bytes still in use after the session closed");
        }
    }

    static boolean overlaps(MemRef a, MemRef b) {
        return a.poolId() == b.poolId() && a.offset() < b.offset() + b.bytes() && b.offset() < a.offset() + a.bytes();
    }

    static void assertNoOverlap(List<MemRef> live) {
        List<MemRef> sorted = new ArrayList<>(live);
        sorted.sort(Comparator.comparingInt(MemRef::poolId).thenComparingLong(MemRef::offset));
        for (int i = 1; i < sorted.size(); i++) {
            assertFalse(overlaps(sorted.get(i - 1), sorted.get(i)), sorted.get(i - 1) + " overlaps " + sorted.get(i));
        }
    }

    static long[] longs(Event e) {
        byte[] bytes = (byte[]) e.result();
        long[] out = new long[bytes.length / 8];
        ByteBuffer.wrap(bytes).order(ByteOrder.nativeOrder()).asLongBuffer().get(out);
        return out;
    }
}
