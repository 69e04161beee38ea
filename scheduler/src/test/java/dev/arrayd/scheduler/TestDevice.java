package dev.arrayd.scheduler;

import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.nullbackend.NullDevice;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.ToLongFunction;

/**
 * One null device of {@link TestDevices}, with the controls the scheduler's tests use: a gate that stops
 * commands from starting, jitter that shakes out missing ordering edges, simulated device time, and the
 * log of what it was handed and ran.
 */
final class TestDevice {

    final NullDevice device;
    /** Every command in the order it started executing. */
    final ConcurrentLinkedQueue<DeviceCommand> executed = new ConcurrentLinkedQueue<>();
    /** Every command handed to this device (submitted or offered inline), in order. */
    final ConcurrentLinkedQueue<DeviceCommand> handed = new ConcurrentLinkedQueue<>();
    // The gate: while held, nothing starts executing (workers wait, inline runs are declined).
    private final Object gate = new Object();
    private boolean held;
    private volatile boolean jitter = true;
    // whether every inline run is accepted while the gate is open (else one in two, at random)
    private volatile boolean everyInlineRun;
    // Controllable cost: when set, a command costs this many nanoseconds of device time (spun, and
    // reported as its device time), one command at a time across the whole device, like a saturated
    // single compute unit. Null: commands cost what they take, streams run in parallel.
    private volatile ToLongFunction<DeviceCommand> cost;
    private final Object computeUnit = new Object();

    TestDevice(NullDevice device) {
        this.device = device;
    }

    DeviceId id() {
        return device.id();
    }

    /** Stops commands from starting until {@link #open()}. */
    void hold() {
        synchronized (gate) {
            held = true;
        }
    }

    void open() {
        synchronized (gate) {
            held = false;
            gate.notifyAll();
        }
    }

    boolean isHeld() {
        synchronized (gate) {
            return held;
        }
    }

    void jitter(boolean on) {
        jitter = on;
    }

    /** Accepts every inline run while the gate is open (else it accepts one in two, at random). */
    void acceptEveryInlineRun(boolean on) {
        everyInlineRun = on;
    }

    boolean acceptsEveryInlineRun() {
        return everyInlineRun;
    }

    /** Gives every command {@code nanos} of device time, one at a time (see {@link #cost}); null = real. */
    void cost(ToLongFunction<DeviceCommand> nanos) {
        cost = nanos;
    }

    /** Whether other test devices may copy straight into this one (else the scheduler stages through host memory). */
    void peerCopies(boolean on) {
        device.setPeerCopies(on);
    }

    long allocatedBytes() {
        return device.usedBytes();
    }

    int openStreams() {
        return device.workerThreads();
    }

    int inlineRuns() {
        return device.inlineRuns();
    }

    int nativeWaits() {
        return device.nativeWaits();
    }

    /** On a worker: jitter, the gate; then the command, through the compute unit when costs are simulated. */
    long run(DeviceCommand command, boolean inline, Runnable work) {
        if (!inline) {
            if (jitter) {
                int spins = java.util.concurrent.ThreadLocalRandom.current().nextInt(200);
                for (int i = 0; i < spins; i++) {
                    Thread.onSpinWait();
                }
                if (java.util.concurrent.ThreadLocalRandom.current().nextInt(8) == 0) {
                    Thread.yield();
                }
            }
            passGate();
        }
        executed.add(command);
        ToLongFunction<DeviceCommand> c = cost;
        if (c == null) {
            long t0 = System.nanoTime();
            work.run();
            return System.nanoTime() - t0;
        }
        long nanos = c.applyAsLong(command);
        synchronized (computeUnit) {
            long t0 = System.nanoTime();
            work.run();
            while (System.nanoTime() - t0 < nanos) {
                Thread.onSpinWait();
            }
        }
        return nanos;
    }

    private void passGate() {
        boolean interrupted = false;
        synchronized (gate) {
            while (held) {
                try {
                    gate.wait();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return device.toString();
    }
}
