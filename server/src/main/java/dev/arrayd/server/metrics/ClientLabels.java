package dev.arrayd.server.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import java.util.Collection;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Bounded cardinality for the {@code client} label: the session's client name (not its tenant, which is
 * no label). The first {@code limit} distinct names get their own label value,
 * every later name is counted as {@code "other"}. Names are cut to 64 characters; an empty name is
 * {@code "unnamed"}. Looked up once per session, never per command.
 */
final class ClientLabels {

    static final String OTHER = "other";
    static final String UNNAMED = "unnamed";
    private static final int MAX_LENGTH = 64;

    private final MeterRegistry registry;
    private final int limit;
    private final ConcurrentHashMap<String, ClientMeters> named = new ConcurrentHashMap<>();
    private final ClientMeters other;

    ClientLabels(MeterRegistry registry, int limit) {
        this.registry = registry;
        this.limit = limit;
        this.other = new ClientMeters(registry, OTHER);
    }

    ClientMeters meters(String clientName) {
        String name = clientName == null || clientName.isBlank() ? UNNAMED
                : clientName.length() > MAX_LENGTH ? clientName.substring(0, MAX_LENGTH) : clientName;
        if (name.equals(OTHER)) {
            return other;
        }
        ClientMeters m = named.get(name);
        if (m != null) {
            return m;
        }
        synchronized (named) {
            m = named.get(name);
            if (m == null) {
                if (named.size() >= limit) {
                    return other;
                }
                m = new ClientMeters(registry, name);
                named.put(name, m);
            }
            return m;
        }
    }

    /** Every label value in use, "other" included. */
    Collection<ClientMeters> all() {
        var list = new java.util.ArrayList<ClientMeters>(named.values());
        list.add(other);
        return list;
    }
}
