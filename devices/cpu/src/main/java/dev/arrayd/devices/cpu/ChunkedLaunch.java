package dev.arrayd.devices.cpu;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/** One launch split into chunks of its grid ({@link GridSplitter}), each run through the kernel's trampoline. */
final class ChunkedLaunch extends ChunkedWork {

    private final MethodHandle trampoline;
    private final ArgBlock block;

    ChunkedLaunch(MethodHandle trampoline, ArgBlock block, int chunks) {
        super(chunks);
        this.trampoline = trampoline;
        this.block = block;
    }

    @Override
    void chunk(int index) throws Throwable {
        MemorySegment range = block.range(index);
        trampoline.invokeExact(range, block.args());
    }
}
