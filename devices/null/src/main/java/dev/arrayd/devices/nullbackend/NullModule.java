package dev.arrayd.devices.nullbackend;

import dev.arrayd.devices.api.support.RefCountedModule;
import java.util.concurrent.atomic.AtomicInteger;

/** A "compiled" module of the null backend: nothing native to unload; the compiler counts it while loaded. */
final class NullModule extends RefCountedModule {

    private final AtomicInteger loaded;

    NullModule(AtomicInteger loaded) {
        super("");
        this.loaded = loaded;
        loaded.incrementAndGet();
    }

    @Override
    protected void unload() {
        loaded.decrementAndGet();
    }
}
