package dev.arrayd.benchmarks.jmh;

import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.nullbackend.NullBackend;
import dev.arrayd.scheduler.SlabPool;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Slab pool allocate + free of one block (best fit, merging neighbours on free), in an empty pool and
 * in one holding 4096 live blocks of mixed sizes with holes between them.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class SlabPoolBench {

    private static final int SIZES = 1024;

    private SlabPool empty;
    private SlabPool fragmented;
    private final long[] sizes = new long[SIZES];
    private int next;

    @Setup
    public void setUp() {
        SplittableRandom rnd = new SplittableRandom(42);
        for (int i = 0; i < SIZES; i++) {
            sizes[i] = 64L << rnd.nextInt(12); // 64 B .. 128 KiB
        }
        // a device per pool: pool ids are a device's (the two pools would both take id 1 of one device)
        List<Device> devices = new NullBackend(SchedulerFixture.deviceOptions(false)).openDevices(2);
        empty = new SlabPool(devices.get(0), 64, 64L << 20, 1L << 40);
        fragmented = new SlabPool(devices.get(1), 64, 64L << 20, 1L << 40);
        List<MemRef> live = new ArrayList<>();
        for (int i = 0; i < 8192; i++) {
            live.add(fragmented.allocate(sizes[rnd.nextInt(SIZES)]));
        }
        for (int i = 0; i < live.size(); i += 2) {
            fragmented.free(live.get(i)); // every other block: holes of many sizes
        }
    }

    private long size() {
        return sizes[next++ & (SIZES - 1)];
    }

    @Benchmark
    public MemRef allocFreeEmpty() {
        MemRef r = empty.allocate(size());
        empty.free(r);
        return r;
    }

    @Benchmark
    public MemRef allocFreeFragmented() {
        MemRef r = fragmented.allocate(size());
        fragmented.free(r);
        return r;
    }
}
