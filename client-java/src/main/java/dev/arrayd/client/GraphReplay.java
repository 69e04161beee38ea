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
 */
public record GraphReplay(List<Event> waitFor, Map<BufferHandle, BufferHandle> rebind, List<Scalar> scalars) {

    /** Scalar argument {@code arg} of the launch at position {@code command} of the graph takes {@code value}. */
    public record Scalar(int command, int arg, Number value) {}

    public GraphReplay {
        waitFor = List.copyOf(waitFor);
        rebind = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(rebind));
        scalars = List.copyOf(scalars);
    }

    public static GraphReplay defaults() {
        return new GraphReplay(List.of(), Map.of(), List.of());
    }

    public GraphReplay waitFor(Event... events) {
        List<Event> next = new ArrayList<>(waitFor);
        next.addAll(List.of(events));
        return new GraphReplay(next, rebind, scalars);
    }

    public GraphReplay rebind(BufferHandle recorded, BufferHandle replacement) {
        Map<BufferHandle, BufferHandle> next = new LinkedHashMap<>(rebind);
        next.put(recorded, replacement);
        return new GraphReplay(waitFor, next, scalars);
    }

    public GraphReplay scalar(int command, int arg, Number value) {
        List<Scalar> next = new ArrayList<>(scalars);
        next.add(new Scalar(command, arg, value));
        return new GraphReplay(waitFor, rebind, next);
    }
}
