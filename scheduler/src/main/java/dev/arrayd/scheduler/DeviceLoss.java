package dev.arrayd.scheduler;

/**
 * What a device that lost its memory's contents leaves behind (a peer's device whose link was lost: the session on
 * the peer that held its memory ended with it). A replica there that copied data current elsewhere becomes invalid,
 * so the next command that needs the data on that device copies it there again; a replica that was the only
 * current copy stays current (its bytes are gone: the device fails reads of them with DATA_LOSS, and nothing is
 * recomputed).
 */
final class DeviceLoss {

    private DeviceLoss() {}

    /** Invalidates {@code d}'s replicas of data current elsewhere ({@link Coherence#forgetCopiesOn}); returns how many. */
    static int forget(SchedulerContext ctx, DeviceRuntime d) {
        ctx.lockSubmit();
        try {
            return ReplicaStates.forgetCopiesOn(d);
        } finally {
            ctx.unlockSubmit();
        }
    }

    /**
     * Watches every device: when one turns unreachable, its copies of data current elsewhere are forgotten (on a
     * thread of its own: the watcher may run where the submit lock must not be taken).
     */
    static void watch(SchedulerContext ctx) {
        for (DeviceRuntime d : ctx.devices()) {
            watch(ctx, d);
        }
    }

    /** Watches one device (also one added after the start) as {@link #watch(SchedulerContext)} does. */
    static void watch(SchedulerContext ctx, DeviceRuntime d) {
        d.watchReachability(() -> {
            if (!d.isReachable()) {
                Thread.ofVirtual().name("arrayd-device-loss").start(() -> forget(ctx, d));
            }
        });
    }
}
