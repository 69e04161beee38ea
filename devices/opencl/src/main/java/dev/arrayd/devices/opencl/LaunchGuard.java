package dev.arrayd.devices.opencl;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ir.CheckedKernel;
import org.jocl.cl_mem;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The guard record of one launch of an IR kernel that kept a guard: the two-word device buffer the
 * kernel's guards write ({@code mem}, zero before the launch), and the host copy it is read back
 * into after the kernel ({@code words}). Word 0 is 0, or the guard id + 1 of the first guard that
 * caught an index; word 1 is that index (see {@link CheckedKernel#guardId}).
 *
 * @param extents element count of each buffer argument by parameter position, for the message
 */
record LaunchGuard(CheckedKernel kernel, long[] extents, cl_mem mem, MemorySegment words) {

    static final long BYTES = 2 * Long.BYTES;

    /** The launch's OUT_OF_RANGE failure once {@code words} holds the record, or null when no guard caught anything. */
    ArraydException failure() {
        long hit = words.get(ValueLayout.JAVA_LONG, 0);
        if (hit == 0) {
            return null;
        }
        return kernel.outOfRange((int) (hit - 1), words.get(ValueLayout.JAVA_LONG, Long.BYTES), extents);
    }
}
