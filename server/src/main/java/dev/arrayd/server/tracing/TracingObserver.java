package dev.arrayd.server.tracing;

import dev.arrayd.scheduler.CommandKind;
import dev.arrayd.scheduler.CommandObserver;
import dev.arrayd.scheduler.CommandOutcome;
import dev.arrayd.scheduler.DeviceRuntime;
import dev.arrayd.scheduler.SchedulerObserver;
import dev.arrayd.scheduler.Session;
import dev.arrayd.scheduler.StreamKind;

/**
 * The scheduler's observer with command spans beside another observer's work (the metrics): the
 * other one as it is when tracing is off, both when it is on.
 */
public final class TracingObserver implements SchedulerObserver {

    private final SchedulerObserver inner;
    private final CommandSpans spans;

    private TracingObserver(SchedulerObserver inner, CommandSpans spans) {
        this.inner = inner;
        this.spans = spans;
    }

    public static SchedulerObserver wrap(SchedulerObserver inner, Tracing tracing) {
        return tracing.enabled() ? new TracingObserver(inner, new CommandSpans(tracing.tracer())) : inner;
    }

    @Override
    public CommandObserver sessionOpened(Session session) {
        CommandObserver a = inner.sessionOpened(session);
        CommandObserver b = spans.forSession(session);
        return new CommandObserver() {
            @Override
            public Object commandSubmitted() {
                return b.commandSubmitted();
            }

            @Override
            public void commandFinished(CommandKind kind, String kernel, DeviceRuntime device, StreamKind stream,
                    CommandOutcome outcome, long waitNanos, long deviceNanos, long bytes, Object submission) {
                a.commandFinished(kind, kernel, device, stream, outcome, waitNanos, deviceNanos, bytes, null);
                b.commandFinished(kind, kernel, device, stream, outcome, waitNanos, deviceNanos, bytes, submission);
            }
        };
    }

    @Override
    public void sessionClosed(Session session) {
        inner.sessionClosed(session);
    }

    @Override
    public void deviceAdded(dev.arrayd.scheduler.DeviceRuntime device) {
        inner.deviceAdded(device);
    }

    @Override
    public void compiled(String backend, long nanos, boolean succeeded) {
        inner.compiled(backend, nanos, succeeded);
    }
}
