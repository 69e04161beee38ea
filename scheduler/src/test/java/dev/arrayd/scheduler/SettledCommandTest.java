package dev.arrayd.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.devices.api.DType;
import java.lang.foreign.MemorySegment;
import java.lang.ref.WeakReference;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A command is its own event, and its event outlives it (the stream's tail, the buffer's last writer, whoever
 * waited): once settled it must not keep what it ran alive, above all an upload's data.
 */
class SettledCommandTest {

    @Test
    void aSettledUploadNoLongerHoldsItsData() throws Exception {
        try (SchedulerFixture f = new SchedulerFixture(1)) {
            Scheduler sch = f.scheduler;
            Session s = sch.openSession("settled", 60_000);
            Buffer b = sch.createBuffer(s, DType.I64, new long[] {1 << 16}, "null:0", "b", MemoryMode.DEVICE);
            long[] data = new long[1 << 16];
            data[7] = 42;
            WeakReference<long[]> held = new WeakReference<>(data);
            Event e = sch.submit(s, new CommandSpec(0, null, 0, new CommandSpec.UploadOp(b.handle(), 0,
                    MemorySegment.ofArray(data))), null);
            data = null;
            e.toFuture().get(10, TimeUnit.SECONDS);
            assertEquals(EventState.SUCCEEDED, e.state());
            assertTrue(e instanceof Command, "a submitted command is its own event");
            f.devices.forEach(d -> { // the test devices' own logs of what they were handed and ran
                d.handed.clear();
                d.executed.clear();
            });
            for (int i = 0; i < 20 && held.get() != null; i++) {
                System.gc();
            }
            assertTrue(held.get() == null, "the settled upload (still referenced as an event) let its data go");
            assertEquals(42, f.readI64(s, b, 0, 0)[7]);
        }
    }

    @Test
    void aDownloadsEventCarriesItsResultOnlyOnceItSucceeded() throws Exception {
        try (SchedulerFixture f = new SchedulerFixture(1)) {
            Scheduler sch = f.scheduler;
            Session s = sch.openSession("result", 60_000);
            Buffer b = sch.createBuffer(s, DType.I64, new long[] {4}, "null:0", "b", MemoryMode.DEVICE);
            Event up = sch.submit(s, new CommandSpec(0, null, 0, new CommandSpec.UploadOp(b.handle(), 0,
                    MemorySegment.ofArray(new long[] {1, 2, 3, 4}))), null);
            up.toFuture().get(10, TimeUnit.SECONDS);
            assertNull(up.result(), "an upload produces nothing");
            Event down = sch.submit(s, List.of(new CommandSpec(0, null, 0, new CommandSpec.DownloadOp(b.handle(), 0, 0, Long.MAX_VALUE))),
                    null).getFirst();
            down.toFuture().get(10, TimeUnit.SECONDS);
            assertEquals(EventState.SUCCEEDED, down.state());
            Object r = down.result();
            assertTrue(r instanceof byte[], "a download's result is its bytes: " + r);
            assertEquals(3, MemorySegment.ofArray((byte[]) r).getAtIndex(SchedulerFixture.I64, 2));
            assertSame(r, down.result(), "the same result every time it is asked for");
            assertNull(down.failure());
        }
    }
}
