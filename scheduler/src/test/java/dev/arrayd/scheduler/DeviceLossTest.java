package dev.arrayd.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.Device;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A device that turns unreachable has lost its memory (a peer's, whose session ended): its copies of data current
 * elsewhere are forgotten, so the data is copied there again when needed; its only copies stay, as what they were.
 */
class DeviceLossTest {

    /** A device whose reachability the test turns off, telling the scheduler as a peer's link would. */
    private static final class Flaky extends DelegatingDevice {
        final List<Runnable> watchers = new CopyOnWriteArrayList<>();
        volatile boolean reachable = true;

        Flaky(Device d) {
            super(d);
        }

        void lose() {
            reachable = false;
            watchers.forEach(Runnable::run);
        }

        @Override
        public boolean isReachable() {
            return reachable;
        }

        @Override
        public void watchReachability(Runnable onChange) {
            watchers.add(onChange);
        }
    }

    @Test
    void copiesOfDataCurrentElsewhereAreForgottenAndOnlyCopiesStay() throws Exception {
        Flaky[] flaky = new Flaky[1];
        SchedulerFixture f = new SchedulerFixture(2, 1L << 24, 1L << 20, 0, System::nanoTime,
                (i, d) -> i == 0 ? (flaky[0] = new Flaky(d)) : d);
        try {
            Scheduler sch = f.scheduler;
            Session s = sch.openSession("loss", 10_000);
            String lost = sch.devices().get(0).id().toString();
            String other = sch.devices().get(1).id().toString();
            Buffer shared = sch.createBuffer(s, DType.I32, new long[] {256}, other, "", MemoryMode.DEVICE);
            Buffer only = sch.createBuffer(s, DType.I32, new long[] {256}, lost, "", MemoryMode.DEVICE);
            run(sch, s, new CommandSpec.UploadOp(shared.handle(), 0, MemorySegment.ofArray(new int[256]), false));
            run(sch, s, new CommandSpec.CopyOp(shared.handle(), 0, 0, 0, 0, lost, MergeMode.NONE)); // a replica there too
            run(sch, s, new CommandSpec.UploadOp(only.handle(), 0, MemorySegment.ofArray(new int[256]), false));
            run(sch, s, new CommandSpec.FillOp(only.handle(), dev.arrayd.devices.api.KernelArg.Scalar.i32(5), 0, 0, false));
            assertEquals(ReplicaState.SHARED, sch.replicaStates(shared).get(lost));
            assertEquals(ReplicaState.MODIFIED, sch.replicaStates(only).get(lost));

            flaky[0].lose(); // the watcher forgets on a thread of its own
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (sch.replicaStates(shared).get(lost) != ReplicaState.INVALID) {
                if (System.nanoTime() > until) {
                    throw new AssertionError("the lost device's copy is still " + sch.replicaStates(shared));
                }
                Thread.onSpinWait();
            }
            Map<String, ReplicaState> sharedNow = sch.replicaStates(shared);
            assertEquals(ReplicaState.INVALID, sharedNow.get(lost), sharedNow::toString);
            assertEquals(ReplicaState.MODIFIED, sharedNow.get(other), "the copy elsewhere is the only current one now");
            assertEquals(ReplicaState.MODIFIED, sch.replicaStates(only).get(lost), "an only copy stays what it was");
            sch.closeSession(s);
        } finally {
            f.close();
        }
    }

    private static void run(Scheduler sch, Session s, CommandSpec.Op op) throws Exception {
        Event e = sch.submit(s, List.of(new CommandSpec(0, null, 0, op, CommandSpec.NO_DEADLINE, null)), null).getFirst()
                .toFuture().get(10, TimeUnit.SECONDS);
        assertEquals(EventState.SUCCEEDED, e.state(), () -> String.valueOf(e.failure()));
    }
}
