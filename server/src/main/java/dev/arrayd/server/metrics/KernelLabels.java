package dev.arrayd.server.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The opt-in {@code kernel} label ({@code metrics-kernel-limit} above 0): launches and device time per
 * kernel name, bounded like the client label. The first {@code limit} distinct names get their own
 * label value, every later one counts as {@code "other"}; names are cut to 64 characters. Two series
 * per label value (counters only: a histogram per kernel would multiply the series by its buckets). A
 * finished launch costs one map lookup and two increments.
 */
final class KernelLabels {

    static final String OTHER = "other";
    private static final int MAX_LENGTH = 64;

    /** The meters of one label value. */
    record Meters(Counter launches, Counter deviceSeconds) {

        static Meters of(MeterRegistry registry, String label) {
            return new Meters(Counter.builder("arrayd.kernel.launches").tag("kernel", label)
                    .description("Launches finished, any outcome, by kernel name (opt-in: metrics-kernel-limit)")
                    .register(registry),
                    Counter.builder("arrayd.kernel.device").baseUnit("seconds").tag("kernel", label)
                            .description("Device time of the launches that succeeded, by kernel name").register(registry));
        }

        void record(boolean succeeded, long deviceNanos) {
            launches.increment();
            if (succeeded) {
                deviceSeconds.increment(deviceNanos / 1e9);
            }
        }
    }

    private final MeterRegistry registry;
    private final int limit;
    private final ConcurrentHashMap<String, Meters> named = new ConcurrentHashMap<>(); // by label value
    private volatile boolean full; // every label value is taken: new names count as "other"
    private final Meters other;

    KernelLabels(MeterRegistry registry, int limit) {
        this.registry = registry;
        this.limit = limit;
        this.other = Meters.of(registry, OTHER);
    }

    Meters meters(String kernel) {
        String name = kernel.length() > MAX_LENGTH ? kernel.substring(0, MAX_LENGTH) : kernel;
        Meters m = named.get(name);
        if (m != null) {
            return m;
        }
        if (full || name.equals(OTHER)) {
            return other;
        }
        synchronized (named) {
            m = named.get(name);
            if (m == null) {
                if (named.size() >= limit) {
                    full = true;
                    return other;
                }
                m = Meters.of(registry, name);
                named.put(name, m);
            }
            return m;
        }
    }
}
