package dev.arrayd.scheduler;

import dev.arrayd.devices.api.support.GuardedBy;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelSignature;
import java.util.Map;
import java.util.Set;

/** A session's kernel handle: one entry point, compiled for one or more backends. */
public final class CompiledKernel {

    private final long handle;
    private final KernelSignature signature;
    private final Map<String, Kernel> byBackend;
    private final ModuleRef module;
    private final KernelCost cost = new KernelCost();
    // per device index; copied on growth, so a reader never sees a slot change once it is set
    private volatile KernelHistory[] history = new KernelHistory[0];
    volatile boolean destroyed;
    // the last launch template validated for this kernel: an identical launch shares it (immutable, so racing is harmless)
    volatile CommandTemplate.Launch lastTemplate;
    /** Per device index: the last launch op built for this kernel there (reused by an identical launch). */
    @GuardedBy("SchedulerContext.submitLock")
    private dev.arrayd.devices.api.DeviceCommand.Launch[] lastLaunch = new dev.arrayd.devices.api.DeviceCommand.Launch[2];

    CompiledKernel(long handle, KernelSignature signature, Map<String, Kernel> byBackend, ModuleRef module) {
        this.handle = handle;
        this.signature = signature;
        this.byBackend = Map.copyOf(byBackend);
        this.module = module;
    }

    public long handle() {
        return handle;
    }

    public String name() {
        return signature.name();
    }

    public KernelSignature signature() {
        return signature;
    }

    public Set<String> backends() {
        return byBackend.keySet();
    }

    Kernel forBackend(String backend) {
        return byBackend.get(backend);
    }

    ModuleRef module() {
        return module;
    }

    KernelCost cost() {
        return cost;
    }

    /** The last launch op of this kernel on device {@code deviceIndex}, or null. */
    @GuardedBy("SchedulerContext.submitLock")
    dev.arrayd.devices.api.DeviceCommand.Launch lastLaunch(int deviceIndex) {
        return deviceIndex < lastLaunch.length ? lastLaunch[deviceIndex] : null;
    }

    /** Remembers the launch op just built on device {@code deviceIndex}. */
    @GuardedBy("SchedulerContext.submitLock")
    void lastLaunch(int deviceIndex, dev.arrayd.devices.api.DeviceCommand.Launch op) {
        if (deviceIndex >= lastLaunch.length) {
            lastLaunch = java.util.Arrays.copyOf(lastLaunch, deviceIndex + 1);
        }
        lastLaunch[deviceIndex] = op;
    }

    /** Its execution-time history on device {@code deviceIndex} (see {@link DeviceRuntime#index()}). */
    KernelHistory history(int deviceIndex) {
        KernelHistory[] all = history;
        KernelHistory h = deviceIndex < all.length ? all[deviceIndex] : null;
        return h != null ? h : newHistory(deviceIndex);
    }

    private synchronized KernelHistory newHistory(int deviceIndex) {
        KernelHistory[] all = history;
        if (deviceIndex < all.length && all[deviceIndex] != null) {
            return all[deviceIndex];
        }
        KernelHistory[] grown = java.util.Arrays.copyOf(all, Math.max(all.length, deviceIndex + 1));
        grown[deviceIndex] = new KernelHistory();
        history = grown;
        return grown[deviceIndex];
    }
}
