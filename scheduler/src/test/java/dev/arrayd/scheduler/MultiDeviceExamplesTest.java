package dev.arrayd.scheduler;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.DeviceCommand;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Multi-device coherence, one example each: which transfer a stale replica gets, write-back on eviction,
 * streaming merges, prefetches. The random programs of {@link MultiDeviceProperties} check the results;
 * these check the mechanism.
 */
class MultiDeviceExamplesTest {

    private static final long[] DATA = {5, -6, 7, -8};

    private static CommandSpec upload(Buffer b, long[] data) {
        return new CommandSpec(0, null, 0, new CommandSpec.UploadOp(b.handle(), 0, MemorySegment.ofArray(data.clone())));
    }

    private static CommandSpec downloadOn(long stream, Buffer b) {
        return new CommandSpec(0, null, stream, new CommandSpec.DownloadOp(b.handle(), 0, 0, Long.MAX_VALUE));
    }

    private static long count(TestDevice d, Class<? extends DeviceCommand> kind) {
        return d.executed.stream().filter(kind::isInstance).count();
    }

    @Test
    void peersCopyDirectlyAndOtherDevicesStageThroughHostMemory() throws Exception {
        try (SchedulerFixture f = MultiDeviceProperties.peered(new SchedulerFixture(3))) {
            Scheduler sch = f.scheduler;
            Session s = sch.openSession("transfers", 60_000);
            Buffer b = sch.createBuffer(s, DType.I64, new long[] {4}, "null:0", "b", MemoryMode.DEVICE);
            MultiDeviceProperties.await(sch.submit(s, List.of(upload(b, DATA)), null));
            long on1 = sch.createStream(s, "null:1").handle();
            long on2 = sch.createStream(s, "null:2").handle();
            List<Event> reads = sch.submit(s, List.of(downloadOn(on1, b)), null);
            MultiDeviceProperties.await(reads);
            assertArrayEquals(DATA, MultiDeviceProperties.longs(reads.getFirst()));
            assertEquals(1, count(f.devices.get(1), DeviceCommand.PeerCopy.class), "null:1 copied from null:0 itself");
            assertEquals(Map.of("null:0", ReplicaState.SHARED, "null:1", ReplicaState.SHARED), sch.replicaStates(b));

            int downloadsOn0 = (int) count(f.devices.get(0), DeviceCommand.Download.class);
            int downloadsOn1 = (int) count(f.devices.get(1), DeviceCommand.Download.class);
            reads = sch.submit(s, List.of(downloadOn(on2, b)), null);
            MultiDeviceProperties.await(reads);
            assertArrayEquals(DATA, MultiDeviceProperties.longs(reads.getFirst()));
            assertEquals(0, count(f.devices.get(2), DeviceCommand.PeerCopy.class), "null:2 cannot copy from its peers");
            assertEquals(1, count(f.devices.get(2), DeviceCommand.Upload.class), "the second leg: an upload from the stage");
            assertEquals(downloadsOn0 + downloadsOn1 + 1, count(f.devices.get(0), DeviceCommand.Download.class)
                    + count(f.devices.get(1), DeviceCommand.Download.class), "one download into the stage");
            assertEquals(ReplicaState.SHARED, sch.replicaStates(b).get("null:2"));
            sch.closeSession(s);
        }
    }

    @Test
    void aHostedBufferReachesANonPeerDeviceThroughItsHostCopy() throws Exception {
        try (SchedulerFixture f = MultiDeviceProperties.peered(new SchedulerFixture(3))) {
            Scheduler sch = f.scheduler;
            Session s = sch.openSession("hosted", 60_000);
            Buffer b = sch.createBuffer(s, DType.I64, new long[] {4}, "null:0", "b", MemoryMode.HOSTED_CHANGED_ON_DEVICES);
            MultiDeviceProperties.await(sch.submit(s, List.of(upload(b, DATA)), null));
            assertEquals(Map.of("null:0", ReplicaState.MODIFIED), sch.replicaStates(b), "the write made the host copy stale");
            List<Event> reads = sch.submit(s, List.of(downloadOn(sch.createStream(s, "null:2").handle(), b)), null);
            MultiDeviceProperties.await(reads);
            assertArrayEquals(DATA, MultiDeviceProperties.longs(reads.getFirst()));
            assertEquals(Map.of("null:0", ReplicaState.SHARED, "null:2", ReplicaState.SHARED, "host", ReplicaState.SHARED),
                    sch.replicaStates(b), "the transfer refreshed the host copy, which stays");
            sch.closeSession(s);
        }
    }

    @Test
    void evictionWritesBackTheOnlyCurrentCopyAndTheDataComesBack() throws Exception {
        // budget 90% of 4096 = 3686 bytes: one 2048-byte buffer at a time
        try (SchedulerFixture f = new SchedulerFixture(1, 4096, 1024)) {
            Scheduler sch = f.scheduler;
            Session s = sch.openSession("evict", 60_000);
            long[] av = new long[256];
            for (int i = 0; i < av.length; i++) {
                av[i] = i * 7L - 3;
            }
            Buffer a = sch.createBuffer(s, DType.I64, new long[] {256}, "null:0", "a", MemoryMode.DEVICE);
            MultiDeviceProperties.await(sch.submit(s, List.of(upload(a, av)), null));
            Buffer b = sch.createBuffer(s, DType.I64, new long[] {256}, "null:0", "b", MemoryMode.DEVICE);
            DeviceRuntime d = sch.devices().getFirst();
            assertEquals(1, d.evictions());
            assertEquals(Map.of("host", ReplicaState.MODIFIED), sch.replicaStates(a), "written back, then dropped");
            List<Event> reads = sch.submit(s, List.of(downloadOn(0, a), downloadOn(0, b)), null);
            MultiDeviceProperties.await(reads);
            assertArrayEquals(av, MultiDeviceProperties.longs(reads.get(0)));
            assertArrayEquals(new long[256], MultiDeviceProperties.longs(reads.get(1)));
            assertEquals(3, d.evictions(), "a and b took turns");
            d.pool().checkInvariants();
            sch.closeSession(s);
            assertEquals(0, d.pool().usedBytes());
        }
    }

    @Test
    void aStreamingMergeReadsACurrentSourceInPlaceAndCopiesAnyOther() throws Exception {
        try (SchedulerFixture f = MultiDeviceProperties.peered(new SchedulerFixture(3))) {
            Scheduler sch = f.scheduler;
            Session s = sch.openSession("merge", 60_000);
            Map<String, CompiledKernel> k = f.compileAll(s);
            Buffer here = sch.createBuffer(s, DType.I64, new long[] {4}, "null:1", "here", MemoryMode.DEVICE);
            Buffer there = sch.createBuffer(s, DType.I64, new long[] {4}, "null:2", "there", MemoryMode.DEVICE);
            Buffer sum = sch.createBuffer(s, DType.I64, new long[] {4}, "null:1", "sum", MemoryMode.DEVICE);
            MultiDeviceProperties.await(sch.submit(s, List.of(upload(here, DATA), upload(there, new long[] {1, 1, 1, 1})),
                    null));
            long st = sch.createStream(s, "null:1").handle();
            long copiesBefore = count(f.devices.get(1), DeviceCommand.Copy.class)
                    + count(f.devices.get(1), DeviceCommand.PeerCopy.class) + count(f.devices.get(1), DeviceCommand.Upload.class);
            CommandSpec acc = new CommandSpec(0, null, st, new CommandSpec.LaunchOp(k.get("acc").handle(), new long[] {4}, null,
                    List.of(new CommandSpec.MergeArg(), new CommandSpec.BufferArg(sum.handle())), ""));
            MultiDeviceProperties.await(sch.submit(s, List.of(
                    new CommandSpec(0, null, st, new CommandSpec.CopyOp(here.handle(), 0, 0, 0, 0, "", MergeMode.STREAMING)),
                    acc), null));
            assertEquals(copiesBefore, count(f.devices.get(1), DeviceCommand.Copy.class)
                    + count(f.devices.get(1), DeviceCommand.PeerCopy.class) + count(f.devices.get(1), DeviceCommand.Upload.class),
                    "read in place: nothing copied");
            MultiDeviceProperties.await(sch.submit(s, List.of(
                    new CommandSpec(0, null, st, new CommandSpec.CopyOp(there.handle(), 0, 0, 0, 0, "", MergeMode.STREAMING)),
                    acc, downloadOn(st, sum)), null));
            List<Event> r = sch.submit(s, List.of(downloadOn(st, sum), downloadOn(0, there)), null);
            MultiDeviceProperties.await(r);
            assertArrayEquals(new long[] {6, -5, 8, -7}, MultiDeviceProperties.longs(r.get(0)));
            assertArrayEquals(new long[] {1, 1, 1, 1}, MultiDeviceProperties.longs(r.get(1)));
            assertTrue(count(f.devices.get(1), DeviceCommand.Upload.class) > 0, "staged from null:2 into the merge buffer");
            assertEquals(Map.of("null:2", ReplicaState.MODIFIED), sch.replicaStates(there),
                    "the source was copied, not made current on null:1");
            sch.closeSession(s);
        }
    }

    @Test
    void aPrefetchMakesAReplicaCurrentWithoutChangingTheData() throws Exception {
        try (SchedulerFixture f = MultiDeviceProperties.peered(new SchedulerFixture(3))) {
            Scheduler sch = f.scheduler;
            Session s = sch.openSession("prefetch", 60_000);
            Buffer b = sch.createBuffer(s, DType.I64, new long[] {4}, "null:2", "b", MemoryMode.HOSTED_VOLATILE);
            MultiDeviceProperties.await(sch.submit(s, List.of(upload(b, DATA),
                    new CommandSpec(0, null, 0, new CommandSpec.CopyOp(b.handle(), 0, 0, 0, 0, "null:0", MergeMode.NONE))),
                    null));
            assertEquals(Map.of("null:0", ReplicaState.SHARED, "null:2", ReplicaState.SHARED, "host", ReplicaState.SHARED),
                    sch.replicaStates(b), "a whole upload of a HOSTED_VOLATILE buffer is kept on the host too");
            List<Event> r = sch.submit(s, List.of(downloadOn(sch.createStream(s, "null:0").handle(), b)), null);
            MultiDeviceProperties.await(r);
            assertArrayEquals(DATA, MultiDeviceProperties.longs(r.getFirst()));
            sch.closeSession(s);
        }
    }
}
