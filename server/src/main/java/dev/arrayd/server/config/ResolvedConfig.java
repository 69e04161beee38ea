package dev.arrayd.server.config;

import java.util.Collection;
import java.util.Map;

/** The effective value of every key, with where it came from. */
public final class ResolvedConfig {

    private final Map<String, ConfigValue<?>> values;

    ResolvedConfig(Map<String, ConfigValue<?>> values) {
        this.values = Map.copyOf(values);
        // keep ArraydConfig.ALL's order for printing
        this.ordered = ArraydConfig.ALL.stream().<ConfigValue<?>>map(k -> values.get(k.name())).toList();
    }

    private final java.util.List<ConfigValue<?>> ordered;

    @SuppressWarnings("unchecked")
    public <T> T get(ConfigKey<T> key) {
        return ((ConfigValue<T>) values.get(key.name())).value();
    }

    public ConfigValue<?> value(ConfigKey<?> key) {
        return values.get(key.name());
    }

    /** Every value, in {@link ArraydConfig#ALL}'s order. */
    public Collection<ConfigValue<?>> all() {
        return ordered;
    }
}
