package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.ir.CheckedKernel;
import java.lang.foreign.MemorySegment;
import jcuda.driver.CUevent;

/**
 * One command between its enqueue and its callback, owned by its stream's worker: the two events around
 * what was enqueued for it (their elapsed time is its device time), the pinned staging and the module it
 * holds until it completes, an IR launch's guard slot, a download's last chunks still in staging, and a
 * failure found while enqueuing, reported in turn like any completion.
 */
final class CudaInFlight {

    final DeviceCommand command;
    final CommandCallback callback;
    /** A marker recorded at this place of the stream ({@code mark()}), retired when it completes; else null. */
    final CudaMarker mark;
    final long enqueuedNanos = System.nanoTime();
    CUevent start;
    CUevent end;
    ArraydException failure;
    StagingPool.Buffer[] staging;
    CudaKernelModule module;
    // an IR launch: its checked kernel, its extents and its guard slot (-1 for every other command)
    CheckedKernel irKernel;
    IrLaunch ir;
    int guardSlot = -1;
    // a download's tail: chunks [copyFrom, plan.count()) wait in staging until the end event
    MemorySegment copyTo;
    ChunkPlan plan;
    int copyFrom;

    CudaInFlight(DeviceCommand command, CommandCallback callback, CudaMarker mark) {
        this.command = command;
        this.callback = callback;
        this.mark = mark;
    }
}
