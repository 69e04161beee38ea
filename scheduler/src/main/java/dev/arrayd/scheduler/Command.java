package dev.arrayd.scheduler;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.ErrorCode;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One submitted command on its way to a device. It counts its unfinished dependencies (starting
 * at one, the submitter's own hold, so it cannot start before submission is over); the last one
 * to finish hands it to its native stream, or fails it if a data dependency failed.
 *
 * <p>Data dependencies (explicit waits, read-after-write) pass failure on; ordering-only ones
 * (write-after-read, write-after-write, stream order) only delay.
 */
final class Command implements EventListener, CommandCallback {

    private final Event event;
    private final Session session;
    private final Stream stream;
    private final DeviceCommand op;
    private final Object result;
    private final ModuleRef module;
    private final boolean fastPath;
    private final KernelCost cost;
    private final long items;
    private final CommandKind kind;
    private final long submittedNanos; // for the observer's wait time only
    private final AtomicInteger unfinished = new AtomicInteger(1);
    private final AtomicReference<ArraydException> depFailure = new AtomicReference<>();
    private final EventListener orderOnly = this::orderDone;

    /**
     * @param fastPath run on the thread that makes it ready (expected to be short)
     * @param cost     where a launch records what it cost, or null
     * @param items    work-items of a launch
     */
    Command(Event event, Session session, Stream stream, DeviceCommand op, Object result, ModuleRef module,
            boolean fastPath, KernelCost cost, long items) {
        this.event = event;
        this.session = session;
        this.stream = stream;
        this.op = op;
        this.result = result;
        this.module = module;
        this.fastPath = fastPath;
        this.cost = cost;
        this.items = items;
        this.kind = CommandKind.of(op);
        this.submittedNanos = System.nanoTime();
        stream.device().commandSubmitted(stream.kind());
    }

    Event event() {
        return event;
    }

    /** Adds a dependency that passes failure on. Only before {@link #release()}. */
    void dependOnData(Event dep) {
        if (dep == Event.SUCCEEDED || dep == event) {
            return;
        }
        unfinished.incrementAndGet();
        dep.onDone(this);
    }

    /** Adds a dependency that only orders. Only before {@link #release()}. */
    void dependOnOrder(Event dep) {
        if (dep == Event.SUCCEEDED || dep == event || dep.isDone()) {
            return;
        }
        unfinished.incrementAndGet();
        dep.onDone(orderOnly);
    }

    /** Drops the submitter's hold: from here on the command starts when its dependencies are done. */
    void release() {
        if (unfinished.decrementAndGet() == 0) {
            start();
        }
    }

    @Override
    public void onEvent(Event dep) {
        if (dep.isFailed()) {
            depFailure.compareAndSet(null, DependencyFailedException.of(dep));
        }
        orderDone(dep);
    }

    private void orderDone(Event dep) {
        if (unfinished.decrementAndGet() == 0) {
            start();
        }
    }

    private void start() {
        if (event.isDone()) {
            // failed from outside before it ran (shutdown aborted it): do not run it any more
            failed(event.failure());
            return;
        }
        ArraydException failure = depFailure.get();
        if (failure != null) {
            failed(failure); // trampolined: a long chain of failures is a loop, not a recursion
            return;
        }
        if (fastPath) {
            // Short and ready: run it here. Its completion may make other short commands ready on
            // this thread; the trampoline runs those after this one instead of nesting them.
            Trampoline.run(this::runHereOrQueue);
            return;
        }
        queue();
    }

    private void runHereOrQueue() {
        if (!stream.nativeStream().tryRunInline(op, this)) {
            queue();
        }
    }

    private void queue() {
        try {
            stream.nativeStream().submit(op, this);
        } catch (RuntimeException e) {
            failed(e instanceof ArraydException a ? a
                    : new ArraydException(ErrorCode.INTERNAL, "submit to " + stream + " failed: " + e, e));
        }
    }

    @Override
    public void completed(long deviceNanos) {
        if (cost != null) {
            cost.record(deviceNanos, items);
        }
        Trampoline.run(() -> {
            // observers before the event fires: whoever sees the event done also sees it counted
            finish(event.isDone() ? CommandOutcome.ABORTED : CommandOutcome.SUCCEEDED, deviceNanos);
            event.succeed(deviceNanos, result);
            session.settled(event);
        });
    }

    @Override
    public void failed(ArraydException cause) {
        Trampoline.run(() -> {
            finish(event.isDone() ? CommandOutcome.ABORTED
                    : cause instanceof DependencyFailedException ? CommandOutcome.DEPENDENCY_FAILED
                    : CommandOutcome.FAILED, 0);
            event.fail(cause);
            session.settled(event);
        });
    }

    /** Exactly once per command: the device called back (or the command was failed before running). */
    private void finish(CommandOutcome outcome, long deviceNanos) {
        if (module != null) {
            module.release();
        }
        StreamKind sk = stream.kind();
        stream.device().commandFinished(sk);
        long wait = Math.max(0, System.nanoTime() - submittedNanos - deviceNanos);
        session.observer.commandFinished(kind, stream.device(), sk, outcome, wait, deviceNanos,
                kind.isTransfer() ? items : 0);
    }
}
