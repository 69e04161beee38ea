package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.NativeStream;
import dev.arrayd.devices.api.StreamMarker;
import dev.arrayd.devices.api.support.AfterMarkers;
import dev.arrayd.devices.api.support.CommandQueue;
import dev.arrayd.devices.api.support.StreamWorker;
import dev.arrayd.devices.api.support.ThreadConfined;
import java.util.ArrayDeque;

/**
 * An in-order arrayd stream on one non-blocking CUDA stream, served by one worker thread
 * ({@link StreamWorker}), the only thread that enqueues onto the CUDA stream. It takes submitted commands,
 * enqueues each asynchronously ({@link CudaEnqueuer}), keeps up to {@link #MAX_IN_FLIGHT} commands queued
 * on the GPU, and completes them oldest first: {@code cuEventSynchronize(end)}, then the callback, exactly
 * once, in submission order. A command refused before it reached CUDA (bad argument, unknown pool) fails
 * through its callback in order too. Chosen over {@code cuLaunchHostFunc} callbacks because those run on
 * a driver thread that must not call CUDA, and a callback of ours may (the scheduler releases dependents
 * from it).
 *
 * <h2>Cross-stream ordering on the GPU</h2>
 * {@link #mark()} records a {@link CudaMarker} (a {@code CUevent}) at the stream's current end;
 * {@link #submitAfter} makes another stream (of any CUDA device) wait for it with
 * {@code cuStreamWaitEvent} before its command, with no host round trip (the {@link NativeStream}
 * marker interface; the scheduler uses it for dependencies already on a stream).
 *
 * <h2>Inline</h2>
 * {@link #tryRunInline} runs a ready command on the calling thread, on a lane of its own
 * ({@link InlineLanes}): enqueued, waited for and reported there, with no hand-off to the worker and
 * back and one untimed event instead of a timed pair (together those cost 5–6 µs with a spinning waiter
 * and 12–18 µs with a parked one on an H200 host, beside the driver's 10 µs). It declines sequences, peer
 * copies, transfers larger than one staging chunk, commands whose staging is not free at once, and any
 * command when a lane cannot be had (the queued path then reports what went wrong).
 */
final class CudaStream extends StreamWorker {

    /** Commands queued on the GPU at once: deep enough to keep it busy, shallow enough to bound events held. */
    static final int MAX_IN_FLIGHT = 64;

    private final CudaDevice device;
    @ThreadConfined("worker")
    private final CudaEnqueuer enqueuer;
    @ThreadConfined("worker")
    private final ArrayDeque<CudaInFlight> inFlight = new ArrayDeque<>();

    /** The queue entry of {@link #mark()}: the worker records the marker's event at the stream's end. */
    private record MarkNode(CudaMarker marker) implements CommandCallback {
        @Override
        public void completed(long deviceNanos) {
        }

        @Override
        public void failed(ArraydException cause) {
        }
    }

    CudaStream(CudaDevice device, String name) {
        // the enqueuer's context is current on this worker: it lives as long as the stream (no idle retire)
        super(device.id(), name, "cuda" + device.id().ordinal(), DEFAULT_SPIN_NANOS, 0);
        this.device = device;
        this.enqueuer = new CudaEnqueuer(device, toString(), this::completeInFlight, true);
        start();
    }

    /** A {@code CUevent} recorded at the stream's current end (by the worker, in order). */
    @Override
    public StreamMarker mark() {
        CudaMarker marker = new CudaMarker();
        if (!offer(null, new MarkNode(marker))) {
            marker.retire(); // never recorded: waiters must not wait for it; the caller orders on the host
            return null;
        }
        return marker;
    }

    /** Markers of any CUDA stream, of any device: {@code cuStreamWaitEvent} takes events of other contexts. */
    @Override
    public boolean canWaitFor(StreamMarker marker) {
        return marker instanceof CudaMarker;
    }

    /** Its worker enqueues one device operation per entry: a sequence goes in part by part. */
    @Override
    protected boolean runsSequencesWhole() {
        return false;
    }

    /** Runs {@code command} here, beside the queue (it is ready: nothing queued here is needed before it). */
    @Override
    public boolean tryRunInline(DeviceCommand command, CommandCallback callback) {
        int needed = InlineLanes.stagingNeeded(command, device.staging().chunkBytes());
        if (needed < 0 || isClosing()) {
            return false;
        }
        CudaEnqueuer lane;
        try {
            lane = device.inline().borrow();
        } catch (RuntimeException e) {
            return false; // the context could not be made current: the queued path reports it
        }
        if (lane == null) {
            return false;
        }
        StagingPool.Buffer[] staging;
        CudaInFlight f;
        long nanos;
        try {
            try {
                staging = needed > 0 ? device.staging().tryAcquire(needed) : null;
            } catch (RuntimeException e) {
                return false; // pinned staging could not be allocated: the queued path reports it
            }
            if (needed > 0 && staging == null) {
                return false;
            }
            f = lane.start(command, callback, null, staging);
            nanos = lane.finish(f); // gives the staging back
        } finally {
            device.inline().giveBack(lane);
        }
        callBack(command, callback, nanos, f.failure);
        return true;
    }

    /** Submits {@code command} to start on the GPU only once every marker in {@code after} is reached. */
    @Override
    public void submitAfter(StreamMarker[] after, DeviceCommand command, CommandCallback callback) {
        submit(command, AfterMarkers.checked(this, after, callback, "the cuda backend"));
    }

    @Override
    protected void onClosed() {
        device.forget(this);
    }

    @Override
    protected void setUp() {
        enqueuer.open();
    }

    @Override
    protected void tearDown() {
        completeInFlight();
        enqueuer.close();
    }

    /** Enqueues what is waiting (up to MAX_IN_FLIGHT), then completes the oldest command. */
    @Override
    protected boolean work() {
        CommandQueue.Node node;
        while (inFlight.size() < MAX_IN_FLIGHT && (node = poll()) != null) {
            DeviceCommand command = node.command();
            CommandCallback callback = node.callback();
            node.release();
            CudaMarker mark = callback instanceof MarkNode m ? m.marker() : null;
            inFlight.add(enqueuer.start(command, callback, mark));
        }
        CudaInFlight oldest = inFlight.poll();
        if (oldest == null) {
            return false;
        }
        complete(oldest);
        return true;
    }

    /** Completes every command in flight, oldest first. */
    private void completeInFlight() {
        while (!inFlight.isEmpty()) {
            complete(inFlight.poll());
        }
    }

    /** Waits for {@code f}, then reports. Runs for every command exactly once, in submission order. */
    private void complete(CudaInFlight f) {
        long nanos = enqueuer.finish(f);
        complete(f.command, f.callback, nanos, f.failure);
    }
}
