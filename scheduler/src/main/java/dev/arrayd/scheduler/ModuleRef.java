package dev.arrayd.scheduler;

import dev.arrayd.devices.api.KernelModule;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Keeps compiled modules loaded while anything uses them: one reference per live kernel handle
 * and one per launch in flight. Unloading a module under a running launch would crash the
 * process, so the last release closes it.
 */
final class ModuleRef {

    private final List<KernelModule> modules;
    private final AtomicInteger refs;

    ModuleRef(List<KernelModule> modules, int initialRefs) {
        this.modules = List.copyOf(modules);
        this.refs = new AtomicInteger(initialRefs);
    }

    void retain() {
        if (refs.getAndIncrement() <= 0) {
            throw new IllegalStateException("module already unloaded");
        }
    }

    void release() {
        int left = refs.decrementAndGet();
        if (left == 0) {
            for (KernelModule m : modules) {
                m.close();
            }
        } else if (left < 0) {
            throw new IllegalStateException("module released more often than retained");
        }
    }

    int refCount() {
        return refs.get();
    }
}
