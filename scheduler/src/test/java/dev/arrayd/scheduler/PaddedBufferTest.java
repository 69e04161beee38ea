package dev.arrayd.scheduler;

import static dev.arrayd.scheduler.SchedulerFixture.I64;
import static dev.arrayd.scheduler.SchedulerFixture.arg;
import static dev.arrayd.scheduler.SchedulerFixture.sc;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.KernelArg;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Padded buffers and views, one example each: the padding holds its value on every replica and through
 * eviction, data commands address the interior unless they ask for the whole, kernels index the padded
 * array (and may write the padding), views share memory and outlive their base, and bad paddings and
 * dims are refused by name.
 */
class PaddedBufferTest extends TwoDevicesSession {

    @Override
    String sessionName() {
        return "padded";
    }

    /** i64 [3, 4] with padding (1, 1) on rows and (2, 0) on columns: memory [5, 6]. */
    private Buffer padded(long value, String device) {
        return sch.createBuffer(s, DType.I64, new long[] {3, 4}, new Padding(new long[] {1, 2}, new long[] {1, 0},
                KernelArg.Scalar.i64(value)), device, "p", MemoryMode.DEVICE);
    }

    private List<Event> submit(CommandSpec.Op... ops) throws Exception {
        List<CommandSpec> specs = new java.util.ArrayList<>();
        for (CommandSpec.Op op : ops) {
            specs.add(new CommandSpec(nextEvent++, null, 0, op));
        }
        List<Event> events = sch.submit(s, specs, null);
        MultiDeviceProperties.await(events);
        return events;
    }

    private static MemorySegment longs(long... v) {
        return MemorySegment.ofArray(v);
    }

    private long[] read(Buffer b, boolean whole) throws Exception {
        return MultiDeviceProperties.longs(submit(new CommandSpec.DownloadOp(b.handle(), 0, 0, Long.MAX_VALUE, null,
                whole)).getFirst());
    }

    /** The memory of {@link #padded} with {@code pad} in the padding and {@code interior} row-major inside. */
    private static long[] memory(long pad, long[] interior) {
        long[] m = new long[30];
        java.util.Arrays.fill(m, pad);
        for (int r = 0; r < 3; r++) {
            for (int c = 0; c < 4; c++) {
                m[(r + 1) * 6 + c + 2] = interior[r * 4 + c];
            }
        }
        return m;
    }

    @Test
    void aNewPaddedBufferHoldsItsValueInThePaddingAndZerosInside() throws Exception {
        Buffer p = padded(7, "null:0");
        assertEquals(30 * 8, p.sizeBytes(), "memory holds the padded array");
        assertEquals(30, p.elements(), "kernels index the padded array");
        assertArrayEquals(new long[] {3, 4}, p.dims());
        assertArrayEquals(new long[] {5, 6}, p.layout().storageDims());
        assertArrayEquals(new long[12], read(p, false), "the interior");
        assertArrayEquals(memory(7, new long[12]), read(p, true), "the whole padded array");
    }

    @Test
    void uploadsAndFillsAddressTheInteriorAndKeepThePadding() throws Exception {
        Buffer p = padded(-1, "null:0");
        long[] in = new long[12];
        for (int i = 0; i < 12; i++) {
            in[i] = 100 + i;
        }
        submit(new CommandSpec.UploadOp(p.handle(), 0, longs(in)));
        assertArrayEquals(in, read(p, false));
        assertArrayEquals(memory(-1, in), read(p, true));
        // a range that starts and ends inside rows: elements 3..8 of the interior
        submit(new CommandSpec.FillOp(p.handle(), KernelArg.Scalar.i64(5), 3, 6));
        for (int i = 3; i < 9; i++) {
            in[i] = 5;
        }
        assertArrayEquals(memory(-1, in), read(p, true));
        long[] part = MultiDeviceProperties.longs(submit(new CommandSpec.DownloadOp(p.handle(), 2 * 8, 5 * 8,
                Long.MAX_VALUE)).getFirst());
        assertArrayEquals(java.util.Arrays.copyOfRange(in, 2, 7), part, "a partial read of the interior");
    }

    @Test
    void thePaddingSurvivesTransfersToAnotherDeviceAndEviction() throws Exception {
        try (SchedulerFixture small = new SchedulerFixture(1, 4096, 1024)) {
            Scheduler sch = small.scheduler;
            Session s = sch.openSession("evict", 60_000);
            // budget 90% of 4096 bytes: one 2048-byte buffer at a time; [14, 14] padded by one on every side is 16 x 16
            Buffer p = sch.createBuffer(s, DType.I64, new long[] {14, 14}, new Padding(new long[] {1, 1},
                    new long[] {1, 1}, KernelArg.Scalar.i64(9)), "null:0", "p", MemoryMode.DEVICE);
            long[] in = new long[14 * 14];
            java.util.Arrays.fill(in, 4);
            MultiDeviceProperties.await(sch.submit(s, List.of(new CommandSpec(1, null, 0,
                    new CommandSpec.UploadOp(p.handle(), 0, longs(in)))), null));
            Buffer big = sch.createBuffer(s, DType.I64, new long[] {256}, "null:0", "big", MemoryMode.DEVICE);
            assertTrue(sch.devices().getFirst().evictions() >= 1, "the padded buffer was evicted");
            assertEquals(Map.of("host", ReplicaState.MODIFIED), sch.replicaStates(p), "written back whole");
            List<Event> e = sch.submit(s, List.of(new CommandSpec(2, null, 0,
                    new CommandSpec.DownloadOp(p.handle(), 0, 0, Long.MAX_VALUE, null, true))), null);
            MultiDeviceProperties.await(e);
            long[] whole = MultiDeviceProperties.longs(e.getFirst());
            for (int r = 0; r < 16; r++) {
                for (int c = 0; c < 16; c++) {
                    boolean inside = r >= 1 && r <= 14 && c >= 1 && c <= 14;
                    assertEquals(inside ? 4 : 9, whole[r * 16 + c], "row " + r + ", column " + c);
                }
            }
            sch.destroyBuffer(s, big.handle());
            sch.closeSession(s);
        }
        Buffer p = padded(3, "null:0");
        submit(new CommandSpec.CopyOp(p.handle(), 0, 0, 0, 0, "null:1", MergeMode.NONE));
        assertEquals(ReplicaState.SHARED, sch.replicaStates(p).get("null:1"));
        // a launch on null:1 reads the copy there: mix adds a (a zero buffer) to b = p over its whole memory
        Buffer zero = sch.createBuffer(s, DType.I64, new long[] {30}, "null:1", "zero", MemoryMode.DEVICE);
        submit(new CommandSpec.LaunchOp(k.get("mix").handle(), new long[] {30}, null, List.of(arg(zero), arg(p), sc(0)),
                "null:1"));
        long[] expect = memory(3, new long[12]);
        for (int i = 0; i < expect.length; i++) {
            expect[i] *= 3;
        }
        assertArrayEquals(expect, read(p, true), "the padding was on null:1 too");
    }

    @Test
    void kernelsIndexThePaddedArrayAndMayWriteThePadding() throws Exception {
        Buffer p = padded(7, "null:0");
        submit(new CommandSpec.LaunchOp(k.get("set").handle(), new long[] {30}, null, List.of(arg(p), sc(2)), "null:0"));
        long[] whole = read(p, true);
        for (int i = 0; i < 30; i++) {
            assertEquals(2L * i + 1, whole[i]);
        }
        assertEquals(2L * (1 * 6 + 2) + 1, read(p, false)[0], "the interior starts at row 1, column 2");
        ArraydException tooFar = assertThrows(ArraydException.class, () -> sch.submit(s, List.of(new CommandSpec(
                nextEvent++, null, 0, new CommandSpec.UploadOp(p.handle(), 8 * 8, longs(new long[5])))), null));
        assertEquals(ErrorCode.OUT_OF_RANGE, tooFar.code());
        assertTrue(tooFar.getMessage().contains("within the 96 interior bytes"), tooFar.getMessage());
    }

    @Test
    void copiesBetweenLayoutsMoveInteriorElements() throws Exception {
        Buffer p = padded(0, "null:0");
        Buffer q = sch.createBuffer(s, DType.I64, new long[] {2, 6}, new Padding(new long[] {0, 1}, new long[] {2, 1},
                KernelArg.Scalar.i64(-5)), "null:1", "q", MemoryMode.DEVICE);
        long[] in = new long[12];
        for (int i = 0; i < 12; i++) {
            in[i] = i + 1;
        }
        submit(new CommandSpec.UploadOp(p.handle(), 0, longs(in)));
        submit(new CommandSpec.CopyOp(p.handle(), q.handle(), 8, 16, 7 * 8));
        long[] expect = new long[12];
        System.arraycopy(in, 1, expect, 2, 7);
        assertArrayEquals(expect, read(q, false));
        long[] whole = read(q, true);
        assertEquals(4 * 8, whole.length);
        assertEquals(-5, whole[0], "q's padding kept");
        assertEquals(-5, whole[31]);
    }

    @Test
    void viewsShareMemoryAndOutliveTheirBase() throws Exception {
        Buffer p = padded(1, "null:0");
        Buffer flat = sch.createView(s, p.handle(), new long[] {30}, true, "flat");
        Buffer same = sch.createView(s, p.handle(), new long[] {3, 4}, false, "same");
        assertEquals(p, flat.storage());
        assertTrue(same.isPadded());
        long[] in = new long[12];
        java.util.Arrays.fill(in, 8);
        submit(new CommandSpec.UploadOp(same.handle(), 0, longs(in)));
        assertArrayEquals(memory(1, in), read(flat, false), "a whole view reads the padded array as plain elements");
        sch.destroyBuffer(s, p.handle());
        submit(new CommandSpec.LaunchOp(k.get("set").handle(), new long[] {30}, null, List.of(arg(flat), sc(1)), "null:1"));
        long[] after = read(same, false);
        assertEquals(1 * 8 + 1, after[0], "a launch on another device through one view, read through the other");
        long used = sch.devices().get(0).pool().usedBytes() + sch.devices().get(1).pool().usedBytes();
        assertTrue(used > 0, "the memory stays while views hold it");
        sch.destroyBuffer(s, flat.handle());
        sch.destroyBuffer(s, same.handle());
        assertEquals(0, sch.devices().get(0).pool().usedBytes() + sch.devices().get(1).pool().usedBytes(),
                "gone with the last view");
    }

    @Test
    void aViewOfAPaddedInteriorRegroupsOnlyTheAxesOutsideThePadding() throws Exception {
        Buffer b = sch.createBuffer(s, DType.I64, new long[] {2, 3, 4}, new Padding(new long[] {0, 0, 1},
                new long[] {0, 0, 1}, null), "null:0", "b", MemoryMode.DEVICE);
        Buffer v = sch.createView(s, b.handle(), new long[] {6, 4}, false, "");
        assertArrayEquals(new long[] {0, 1}, v.layout().left());
        long[] in = new long[24];
        for (int i = 0; i < 24; i++) {
            in[i] = i;
        }
        submit(new CommandSpec.UploadOp(v.handle(), 0, longs(in)));
        assertArrayEquals(in, read(b, false), "the same interior, row-major");
        ArraydException moved = assertThrows(ArraydException.class,
                () -> sch.createView(s, b.handle(), new long[] {2, 12}, false, ""));
        assertEquals(ErrorCode.INVALID_ARGUMENT, moved.code());
        assertTrue(moved.getMessage().startsWith("dims: [2, 12]"), moved.getMessage());
    }

    @Test
    void badPaddingsAndViewsAreRefusedByName() {
        KernelArg.Scalar one = KernelArg.Scalar.i64(1);
        ArraydException axes = assertThrows(ArraydException.class, () -> sch.createBuffer(s, DType.I64,
                new long[] {3, 4}, new Padding(new long[] {1}, new long[] {1}, one), "", "", MemoryMode.DEVICE));
        assertTrue(axes.getMessage().startsWith("padding: 1 axes (expected: 2"), axes.getMessage());
        ArraydException negative = assertThrows(ArraydException.class, () -> sch.createBuffer(s, DType.I64,
                new long[] {3}, new Padding(new long[] {-1}, new long[] {0}, one), "", "", MemoryMode.DEVICE));
        assertTrue(negative.getMessage().startsWith("padding[0]: (-1, 0)"), negative.getMessage());
        ArraydException huge = assertThrows(ArraydException.class, () -> sch.createBuffer(s, DType.I64,
                new long[] {3}, new Padding(new long[] {Long.MAX_VALUE / 2}, new long[] {0}, one), "", "",
                MemoryMode.DEVICE));
        assertEquals(ErrorCode.INVALID_ARGUMENT, huge.code());
        ArraydException dtype = assertThrows(ArraydException.class, () -> sch.createBuffer(s, DType.I64,
                new long[] {3}, new Padding(new long[] {1}, new long[] {0}, KernelArg.Scalar.f32(1)), "", "",
                MemoryMode.DEVICE));
        assertTrue(dtype.getMessage().startsWith("padding.value: f32 scalar (expected: i64"), dtype.getMessage());
        Buffer b = sch.createBuffer(s, DType.I64, new long[] {3}, "", "", MemoryMode.DEVICE);
        ArraydException count = assertThrows(ArraydException.class, () -> sch.createView(s, b.handle(),
                new long[] {2, 2}, false, ""));
        assertTrue(count.getMessage().startsWith("dims: [2, 2] (4 elements; expected: 3"), count.getMessage());
        ArraydException missing = assertThrows(ArraydException.class, () -> sch.createView(s, 12345, new long[] {3},
                false, ""));
        assertEquals(ErrorCode.NOT_FOUND, missing.code());
    }
}
