package dev.arrayd.benchmarks.jmh;

import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.api.DeviceInfo;
import dev.arrayd.devices.api.Dialect;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.NativeStream;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * An in-memory device with no memory behind its slabs and {@link NoOpStream}s: what is left to measure
 * is the scheduler. One shared stream (suggestedStreams = 1), so a session's default stream is known.
 */
final class NoOpDevice implements Device {

    static final String BACKEND = "noop";

    private final DeviceId id;
    private final boolean deferred;
    private final List<NoOpStream> streams = new ArrayList<>();

    NoOpDevice(boolean deferred) {
        this(deferred, 0);
    }

    NoOpDevice(boolean deferred, int ordinal) {
        this.deferred = deferred;
        this.id = new DeviceId(BACKEND, ordinal);
    }

    @Override
    public DeviceId id() {
        return id;
    }

    @Override
    public DeviceInfo info() {
        return new DeviceInfo(id, "no-op", 1L << 40, 1, 1024, List.of(1024L, 1024L, 1024L), 0, 64,
                EnumSet.allOf(DType.class), 1, true, Set.of(Dialect.C), 3);
    }

    @Override
    public void allocPool(int poolId, long bytes, long alignment) {
        // nothing behind it: the slab pool's bookkeeping is what is measured
    }

    @Override
    public void freePool(int poolId) {
    }

    @Override
    public void memsetZero(MemRef ref) {
    }

    @Override
    public NativeStream newStream(String name) {
        NoOpStream s = new NoOpStream(id, deferred);
        streams.add(s);
        return s;
    }

    /** Completes everything queued on every stream (deferred mode), repeating until all are idle. */
    int drainAll() {
        int n = 0;
        boolean more = true;
        while (more) {
            more = false;
            for (NoOpStream s : streams) {
                int k = s.drain();
                n += k;
                more |= k > 0;
            }
        }
        return n;
    }

    @Override
    public void close() {
        drainAll();
    }
}
