package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.DeviceCommand;
import java.util.ArrayDeque;

/**
 * What a command run on the caller's thread ({@link CudaStream#tryRunInline}) borrows: an enqueuer with a
 * CUDA stream of its own. A command is run inline only when it is ready, so it needs no order with what
 * the arrayd stream has queued; it is enqueued, waited for and reported on the calling thread, with no
 * thread hand-off: an empty kernel's round trip is then the driver's own plus about 2 µs (on an H200 host).
 *
 * <p>An inline lane's enqueuer is untimed: its single end event has timing disabled (recording a timed
 * pair costs about 4 µs on an H200), and the command's device time is the host time from enqueue to its
 * end, an upper bound. Lanes are kept for reuse (at most {@link #KEPT}) until the device closes.
 */
final class InlineLanes {

    /** Idle lanes kept; beyond that a returned lane is closed. */
    static final int KEPT = 16;

    private final CudaDevice device;
    private final ArrayDeque<CudaEnqueuer> idle = new ArrayDeque<>(); // guarded by this
    private boolean closed; // guarded by this

    InlineLanes(CudaDevice device) {
        this.device = device;
    }

    /**
     * Pinned staging buffers {@code command} needs when run inline, or -1 when it is not run inline: a
     * sequence or a peer copy, or a transfer of more than one staging chunk (it would hold the caller).
     */
    static int stagingNeeded(DeviceCommand command, long chunkBytes) {
        return switch (command) {
            case DeviceCommand.Launch l -> 0;
            case DeviceCommand.Copy c -> 0;
            case DeviceCommand.Fill f -> f.patternBytes() == 1 ? 0 : 1; // a misaligned fill goes through staging
            case DeviceCommand.Upload u -> u.dst().bytes() <= chunkBytes ? 1 : -1;
            case DeviceCommand.Download d -> d.src().bytes() <= chunkBytes ? 1 : -1;
            case DeviceCommand.PeerCopy p -> -1;
            case DeviceCommand.RingTransfer r -> -1;
            case DeviceCommand.Sequence s -> -1;
            case null -> -1;
        };
    }

    /** A lane with the device's context current on the calling thread, or null (closed, or a lane could not be set up). */
    CudaEnqueuer borrow() {
        CudaEnqueuer lane;
        synchronized (this) {
            if (closed) {
                return null;
            }
            lane = idle.poll();
        }
        device.makeCurrent();
        if (lane == null) {
            lane = new CudaEnqueuer(device, "an inline lane of " + device.id(), () -> { }, false);
            if (!lane.open()) {
                lane.close();
                return null;
            }
        }
        return lane;
    }

    void giveBack(CudaEnqueuer lane) {
        synchronized (this) {
            if (!closed && idle.size() < KEPT) {
                idle.push(lane);
                return;
            }
        }
        lane.close();
    }

    /** Closes the idle lanes; lanes given back later are closed then. Context must be current. */
    void close() {
        ArrayDeque<CudaEnqueuer> toClose;
        synchronized (this) {
            closed = true;
            toClose = new ArrayDeque<>(idle);
            idle.clear();
        }
        for (CudaEnqueuer lane : toClose) {
            lane.close();
        }
    }
}
