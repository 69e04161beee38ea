package dev.arrayd.scheduler;

import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.api.DeviceInfo;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.NativeStream;

/**
 * A device as the scheduler sees it, doing what {@code d} does: tests override what they want reported
 * differently (a slow link's transfer figures, a peer's reachability).
 */
abstract class DelegatingDevice implements Device {

    final Device d;

    DelegatingDevice(Device d) {
        this.d = d;
    }

    @Override
    public DeviceId id() {
        return d.id();
    }

    @Override
    public DeviceInfo info() {
        return d.info();
    }

    @Override
    public String backend() {
        return d.backend();
    }

    @Override
    public boolean canCopyFrom(Device src) {
        return d.canCopyFrom(src instanceof DelegatingDevice w ? w.d : src);
    }

    @Override
    public void allocPool(int poolId, long bytes, long alignment) {
        d.allocPool(poolId, bytes, alignment);
    }

    @Override
    public void freePool(int poolId) {
        d.freePool(poolId);
    }

    @Override
    public void memsetZero(MemRef ref) {
        d.memsetZero(ref);
    }

    @Override
    public NativeStream newStream(String name) {
        return d.newStream(name);
    }

    @Override
    public void close() {
        d.close();
    }
}
