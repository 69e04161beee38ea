package dev.arrayd.server.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The per-client ("tenant") meters of one {@code client} label value. Resolved once per session
 * (at open), so a command costs two counter increments and no lookup.
 */
public final class ClientMeters {

    final String label;
    final Counter commands;
    final Counter commandFailures;
    final Counter sessionsOpened;
    final AtomicInteger sessionsOpen = new AtomicInteger();

    ClientMeters(MeterRegistry registry, String label) {
        this.label = label;
        this.commands = Counter.builder("arrayd.client.commands").tag("client", label)
                .description("Commands finished, by client name (bounded: see metrics-client-limit)").register(registry);
        this.commandFailures = Counter.builder("arrayd.client.command.failures").tag("client", label)
                .description("Commands that did not succeed, by client name").register(registry);
        this.sessionsOpened = Counter.builder("arrayd.client.sessions.opened").tag("client", label)
                .description("Sessions opened, by client name").register(registry);
        Gauge.builder("arrayd.client.sessions", sessionsOpen, AtomicInteger::get).tag("client", label)
                .description("Open sessions, by client name").register(registry);
    }

    public String label() {
        return label;
    }

    public long commands() {
        return (long) commands.count();
    }

    public long commandFailures() {
        return (long) commandFailures.count();
    }

    public int sessionsOpen() {
        return sessionsOpen.get();
    }
}
