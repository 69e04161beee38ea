package dev.arrayd.client;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What changes in one replay of a graph. Immutable; start from {@link #defaults()}.
 *
 * @param waitFor events the graph's root commands wait for
 * @param rebind  buffer used when recording → buffer to use instead (same dtype and size)
 * @param scalars new scalar argument values
 * @param deadline when every command of the replay must have started (combined with each one's own); null = none
 */
public record GraphReplay(List<Event> waitFor, Map<BufferHandle, BufferHandle> rebind, List<Scalar> scalars,
                          java.time.Instant deadline) {

    /** Scalar argument {@code arg} of the launch at position {@code command} of the graph takes {@code value}. */
    public record Scalar(int command, int arg, Number value) {}

    public GraphReplay {
        waitFor = List.copyOf(waitFor);
        rebind = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(rebind));
        scalars = List.copyOf(scalars);
    }

    public static GraphReplay defaults() {
        return new GraphReplay(List.of(), Map.of(), List.of(), null);
    }

    public GraphReplay waitFor(Event... events) {
        List<Event> next = new ArrayList<>(waitFor);
        next.addAll(List.of(events));
        return new GraphReplay(next, rebind, scalars, deadline);
    }

    public GraphReplay rebind(BufferHandle recorded, BufferHandle replacement) {
        Map<BufferHandle, BufferHandle> next = new LinkedHashMap<>(rebind);
        next.put(recorded, replacement);
        return new GraphReplay(waitFor, next, scalars, deadline);
    }

    /**
     * This replay of {@code graph} as the request of session {@code session}, checked against the graph: rebound
     * buffers like the recorded ones, scalars at scalar parameters of its launches (IllegalArgumentException
     * naming the entry otherwise).
     */
    dev.arrayd.proto.v1.ReplayGraphRequest.Builder request(String session, GraphHandle graph) {
        var req = dev.arrayd.proto.v1.ReplayGraphRequest.newBuilder().setSession(session).setGraph(graph.id());
        for (Event e : waitFor) {
            req.addWaitEvents(e.id());
        }
        if (deadline != null) {
            req.setDeadline(Protos.timestamp(deadline));
        }
        rebind.forEach((from, to) -> {
            if (from.dtype() != to.dtype() || from.sizeBytes() != to.sizeBytes()) {
                throw new IllegalArgumentException("rebind: buffer " + to.id() + " (expected: " + from.dtype() + " of "
                        + from.sizeBytes() + " bytes, like buffer " + from.id() + ")");
            }
            req.addRebind(dev.arrayd.proto.v1.BufferRebind.newBuilder().setFrom(from.id()).setTo(to.id()));
        });
        for (int i = 0; i < scalars.size(); i++) {
            GraphReplay.Scalar sv = scalars.get(i);
            String what = "scalars[" + i + "]";
            if (sv.command() < 0 || sv.command() >= graph.size() || graph.kernels().get(sv.command()) == null) {
                throw new IllegalArgumentException(what + ".command: " + sv.command()
                        + " (expected: the position of a launch in the graph)");
            }
            List<KernelSpec.Param> params = graph.kernels().get(sv.command()).signature().params();
            if (sv.arg() < 0 || sv.arg() >= params.size() || !(params.get(sv.arg()) instanceof KernelSpec.ScalarParam p)) {
                throw new IllegalArgumentException(what + ".arg: " + sv.arg() + " (expected: a scalar parameter of "
                        + graph.kernels().get(sv.command()).signature().name() + ")");
            }
            req.addScalars(dev.arrayd.proto.v1.ScalarValue.newBuilder().setCommand(sv.command()).setArg(sv.arg())
                    .setValue(Scalars.of(sv.value(), p.dtype(), what, "scalar parameter " + p.name() + " of type "
                            + p.dtype())));
        }
        return req;
    }

    public GraphReplay scalar(int command, int arg, Number value) {
        List<Scalar> next = new ArrayList<>(scalars);
        next.add(new Scalar(command, arg, value));
        return new GraphReplay(waitFor, rebind, next, deadline);
    }

    /** Every command of the replay must have started by {@code deadline} (null: no deadline). */
    public GraphReplay deadline(java.time.Instant deadline) {
        return new GraphReplay(waitFor, rebind, scalars, deadline);
    }
}
