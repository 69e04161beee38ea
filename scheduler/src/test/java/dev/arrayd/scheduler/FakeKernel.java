package dev.arrayd.scheduler;

import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelSignature;
import java.lang.foreign.MemorySegment;
import java.util.List;

/** A kernel written in Java for {@link FakeDevice}. */
record FakeKernel(KernelSignature signature, Body body) implements Kernel {

    interface Body {
        void run(List<MemorySegment> buffers, List<Long> scalars, long[] global);
    }

    @Override
    public String backend() {
        return "fake";
    }
}
