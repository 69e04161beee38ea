package dev.arrayd.scheduler;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * Host memory a buffer lives in (a slice of a client's shared-memory region): the buffer's host copy is
 * this memory itself, and a device with unified memory (the CPU) uses it in place as its replica. The
 * client writes it directly and then says so with a host-written command; no bytes move.
 *
 * @param memory  the bytes, exactly the buffer's size, aligned for the devices that use it in place
 * @param release called once, after the buffer is freed and every command using the memory is done
 */
public record HostMemory(MemorySegment memory, Runnable release) {

    public HostMemory {
        Objects.requireNonNull(memory, "memory");
        Objects.requireNonNull(release, "release");
    }
}
