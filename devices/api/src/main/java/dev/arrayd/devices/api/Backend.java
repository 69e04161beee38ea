package dev.arrayd.devices.api;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Optional;

/**
 * A device family (cpu, opencl, cuda). A backend whose native library or toolchain is missing
 * reports itself unavailable with the reason; it never breaks the others.
 */
public interface Backend extends AutoCloseable {

    /** Lower-case name used in device ids. */
    String name();

    /** Empty when usable; otherwise why not (e.g. "libOpenCL.so.1 not found"). */
    Optional<String> unavailableReason();

    /**
     * Opens devices. {@code count} is the number the operator asked for (e.g. 2 for {@code cpu:2});
     * 0 means "all the backend finds" (or one, for backends that split a single resource).
     */
    List<Device> openDevices(int count);

    /** The compiler shared by every device of this backend. */
    KernelCompiler compiler();

    /**
     * Host memory that will be the source or destination of many transfers (a shared-memory region): a
     * backend whose copy engines reach page-locked memory directly may lock it now (CUDA registers it, so its
     * transfers skip staging), best effort. Returns what undoes it, to run once before the memory is unmapped.
     * The default does nothing.
     */
    default Runnable lockHostMemory(MemorySegment segment) {
        return () -> { };
    }

    /**
     * Devices found after {@link #openDevices} (a peer daemon that came up later): the backend calls
     * {@code listener} with each batch, on a thread of its own, before any of them is used. Registered once,
     * after {@link #openDevices}; the default never finds more.
     */
    default void onDevicesAdded(java.util.function.Consumer<List<Device>> listener) {
    }

    @Override
    void close();
}
