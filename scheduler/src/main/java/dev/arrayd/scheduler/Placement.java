package dev.arrayd.scheduler;

import dev.arrayd.devices.api.support.LaunchGrid;
import java.util.List;

/**
 * Where a launch that names no device and no stream runs: among the devices its kernel is compiled for
 * and its grid and dtypes fit, the one where it is expected to finish first — queued work there, plus
 * moving the arguments that are not current there ({@link Coherence#transferNanos}), plus the kernel's
 * own time from its history on that device ({@link KernelHistory}).
 *
 * <p>A launch is validated against a tentative device before the submit lock ({@link #tentative}) and
 * placed for real when it is tracked ({@link #place}), with the queues as the earlier commands of its
 * batch left them.
 */
final class Placement {

    private final SchedulerContext ctx;

    Placement(SchedulerContext ctx) {
        this.ctx = ctx;
    }

    /**
     * The device a launch to be placed is validated against: where its first buffer argument is current if
     * the launch fits there, else the first device it fits, else that preferred device (whose validation
     * then says what is wrong). No estimates: {@link #place} decides when the launch is tracked.
     */
    DeviceRuntime tentative(CompiledKernel k, Buffer[] args, long[] global, long[] local) {
        DeviceRuntime preferred = preferred(args);
        if (ctx.deviceCount() == 1 || global == null || (local != null && local.length != 0 && local.length != global.length)) {
            return preferred;
        }
        if (fits(k, preferred, global, local, args)) {
            return preferred;
        }
        for (DeviceRuntime d : ctx.devices()) {
            if (fits(k, d, global, local, args)) {
                return d;
            }
        }
        return preferred;
    }

    /** Where the first buffer argument is current; the first device when there is none. */
    DeviceRuntime preferred(Buffer[] args) {
        for (Buffer b : args) {
            if (b != null) {
                return b.preferredDevice();
            }
        }
        return ctx.first();
    }

    /** Where a launch goes, among the devices of {@code among} that it fits (see the class comment). */
    DeviceRuntime place(CompiledKernel k, Buffer[] args, long items, List<DeviceRuntime> among, long[] global,
            long[] local) {
        DeviceRuntime fallback = preferred(args);
        DeviceRuntime best = null;
        double bestFinish = Double.MAX_VALUE;
        for (int di = 0; di < among.size(); di++) {
            DeviceRuntime d = among.get(di);
            if (!fits(k, d, global, local, args)) {
                continue;
            }
            double finish = d.backlogNanos();
            for (Buffer b : args) {
                if (b != null) {
                    finish += Coherence.transferNanos(b, d); // writes too: a kernel may leave elements alone
                }
            }
            double exec = estimateNanos(k, d, items);
            if (!Double.isNaN(exec)) {
                finish += exec;
            }
            if (finish < bestFinish || (finish == bestFinish && d == fallback)) {
                best = d;
                bestFinish = finish;
            }
        }
        return best != null ? best : fallback;
    }

    /**
     * Expected nanoseconds of {@code items} work-items of {@code k} on {@code d}: its history there, or,
     * before it has one, the least of its other devices' (so that work queued on a device not measured
     * yet still counts); when it never ran anywhere, the device's average command time. Without that
     * last guess a kernel's first launches would all add nothing to any device's queued work and all go
     * to the same device (where the data is): a burst of new, independent tasks would run on one device
     * while the others idle until the first results came back (StarPU calibrates by spreading
     * uncalibrated tasks likewise).
     */
    double estimateNanos(CompiledKernel k, DeviceRuntime d, long items) {
        double est = k.history(d.index()).estimateNanos(items);
        if (!Double.isNaN(est)) {
            return est;
        }
        for (DeviceRuntime o : ctx.devices()) {
            if (o != d) {
                double e = k.history(o.index()).estimateNanos(items);
                if (!Double.isNaN(e) && (Double.isNaN(est) || e < est)) {
                    est = e;
                }
            }
        }
        return Double.isNaN(est) ? d.averageCommandNanos() : est;
    }

    /** Whether a launch validated for one device would also be valid on {@code d} (placement's candidates). */
    private boolean fits(CompiledKernel k, DeviceRuntime d, long[] global, long[] local, Buffer[] buffers) {
        if (k.forBackend(d.backend()) == null || !LaunchGrid.fits(global, local, d.gridLimits(),
                ctx.config().maxGridItems())) {
            return false;
        }
        for (Buffer b : buffers) {
            if (b != null && !d.info().dtypes().contains(b.dtype())) {
                return false;
            }
        }
        return true;
    }
}
