package dev.arrayd.devices.api.support;

import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.api.StreamMarker;


/**
 * A {@link StreamWorker} whose worker executes each command itself, on the host (the CPU and null
 * backends), with {@link LatchMarker}s for native waits: a marker is a node in the queue that the worker
 * reaches once everything before it has run, and a command submitted after markers is preceded by the
 * worker blocking on each. Markers of any stream of the same {@code owner} (the backend that opened the
 * devices) can be waited for. A backend implements {@link #execute}.
 */
public abstract class HostStreamWorker extends StreamWorker {

    private final Object owner;
    private final String markerKind;

    /**
     * @param owner      whose streams may wait for this one's markers (the backend)
     * @param markerKind for messages, e.g. {@code "cpu marker"}
     */
    protected HostStreamWorker(DeviceId device, String name, String threadPrefix, long spinNanos, Object owner,
            String markerKind) {
        this(device, name, threadPrefix, spinNanos, DEFAULT_IDLE_RETIRE_NANOS, owner, markerKind);
    }

    /** @param idleRetireNanos see {@link StreamWorker#StreamWorker(DeviceId, String, String, long, long)} */
    protected HostStreamWorker(DeviceId device, String name, String threadPrefix, long spinNanos, long idleRetireNanos,
            Object owner, String markerKind) {
        super(device, name, threadPrefix, spinNanos, idleRetireNanos);
        this.owner = owner;
        this.markerKind = markerKind;
    }

    @Override
    public StreamMarker mark() {
        LatchMarker m = new LatchMarker(owner, markerKind);
        // refused by a closing stream: its last commands may still run, reaching a marker now would be too early
        return offer(null, m.node()) ? m : null;
    }

    @Override
    public boolean canWaitFor(StreamMarker marker) {
        return marker instanceof LatchMarker m && m.owner() == owner;
    }

    @Override
    public void submitAfter(StreamMarker[] after, DeviceCommand command, CommandCallback callback) {
        submit(command, AfterMarkers.checked(this, after, callback, "the backend of " + device()));
    }

    /** Takes one entry: reaches a marker, or waits for the command's markers, then {@link #execute}s it. */
    @Override
    protected final boolean work() {
        CommandQueue.Node node = poll();
        if (node == null) {
            return false;
        }
        DeviceCommand command = node.command();
        CommandCallback callback = node.callback();
        node.release();
        if (callback instanceof LatchMarker.Node mark) {
            countDone();
            mark.marker().reach();
            return true;
        }
        if (callback instanceof AfterMarkers waits) {
            for (StreamMarker m : waits.after()) {
                ((LatchMarker) m).await(); // before the command takes anything: a waiting stream holds nothing
            }
        }
        execute(command, callback);
        return true;
    }

    /**
     * On the worker: runs {@code command} and completes it, once ({@link #complete}, or {@link #countDone}
     * and a callback elsewhere).
     */
    protected abstract void execute(DeviceCommand command, CommandCallback callback);
}
