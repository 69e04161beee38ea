package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.Backend;
import dev.arrayd.devices.api.ir.CRenderer;
import dev.arrayd.devices.api.ir.CheckedKernel;
import dev.arrayd.devices.api.ir.GroupPhases;
import dev.arrayd.devices.api.ir.IrDifferentialSuite;
import dev.arrayd.devices.api.ir.LaneBlocks;

/**
 * The shared random differential suite on the CPU backend, on the random kernels that can have a lane form, with it
 * ({@link LaneBlocks.Rule#ALWAYS}): the lane form runs every whole block of 16 items whose check passes. Three
 * threads per device cut the grid of 64 at 21 and 42, so blocks start unaligned and rows end in items run alone (the
 * work-group property runs its kernels, which have no lane form, on those three threads).
 */
class CpuIrLanesDifferentialProperties extends IrDifferentialSuite {

    @Override
    protected Backend createBackend() {
        return new CpuBackend(CpuOptions.defaults().withLanes(LaneBlocks.Rule.ALWAYS).withDeviceThreads(3));
    }

    @Override
    protected boolean accepts(CheckedKernel k) {
        // kernels with local arrays and barriers have no lane form: they run as they are, on three threads
        return GroupPhases.needed(k) || new CRenderer(LaneBlocks.Rule.ALWAYS).lanes(k) != null;
    }
}
