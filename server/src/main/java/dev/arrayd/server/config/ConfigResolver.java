package dev.arrayd.server.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Resolves every key of {@link ArraydConfig#ALL}: flag &gt; environment &gt; file &gt; default.
 *
 * <p>The config file is plain text, one {@code key = value} per line; blank lines and lines starting
 * with {@code #} are ignored; the value is the rest of the line, trimmed (no quoting or escapes).
 * An unknown key in the file is an error (a typo must not silently fall back to a default).
 */
public final class ConfigResolver {

    private ConfigResolver() {}

    /**
     * @param flags      values given as flags, by key name (flags absent from the command line are absent here)
     * @param env        the environment (only {@code ARRAYD_<KEY>} variables are read)
     * @param configFile the file, or null
     * @throws ConfigException naming the key, the value, its origin and what was expected
     */
    public static ResolvedConfig resolve(Map<String, String> flags, Map<String, String> env, Path configFile) {
        Map<String, String> file = configFile == null ? Map.of() : readFile(configFile);
        Map<String, ConfigValue<?>> values = new LinkedHashMap<>();
        for (ConfigKey<?> key : ArraydConfig.ALL) {
            values.put(key.name(), value(key, flags, env, file, configFile));
        }
        // derived default: a test or benchmark daemon on "any port" must not collide on the metrics port
        ConfigValue<?> metrics = values.get(ArraydConfig.METRICS_PORT.name());
        if (metrics.source() == ConfigSource.DEFAULT && (Integer) values.get(ArraydConfig.PORT.name()).value() == 0) {
            values.put(metrics.key().name(), new ConfigValue<>(ArraydConfig.METRICS_PORT, 0, "0", ConfigSource.DEFAULT,
                    "default (port is 0)"));
        }
        return new ResolvedConfig(values);
    }

    private static <T> ConfigValue<T> value(ConfigKey<T> key, Map<String, String> flags, Map<String, String> env,
            Map<String, String> file, Path configFile) {
        String text;
        if ((text = flags.get(key.name())) != null) {
            return new ConfigValue<>(key, key.parse(text, "flag " + key.flag()), text, ConfigSource.FLAG,
                    "flag " + key.flag());
        }
        if ((text = env.get(key.envVar())) != null) {
            String origin = "environment " + key.envVar();
            return new ConfigValue<>(key, key.parse(text, origin), text, ConfigSource.ENVIRONMENT, origin);
        }
        if ((text = file.get(key.name())) != null) {
            String origin = "file " + configFile;
            return new ConfigValue<>(key, key.parse(text, origin), text, ConfigSource.FILE, origin);
        }
        return new ConfigValue<>(key, key.parse(key.defaultText(), "default"), key.defaultText(), ConfigSource.DEFAULT,
                "default");
    }

    static Map<String, String> readFile(Path path) {
        List<String> lines;
        try {
            lines = Files.readAllLines(path, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new ConfigException("--config: \"" + path + "\" (cannot read it: " + e + ")");
        }
        Map<String, String> known = ArraydConfig.ALL.stream().collect(Collectors.toMap(ConfigKey::name, ConfigKey::name));
        Map<String, String> out = new HashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            int eq = line.indexOf('=');
            String where = path + ":" + (i + 1);
            if (eq <= 0) {
                throw new ConfigException(where + ": \"" + line + "\" (expected: key = value, or a # comment)");
            }
            String key = line.substring(0, eq).strip();
            if (!known.containsKey(key)) {
                throw new ConfigException(where + ": unknown key \"" + key + "\" (expected one of: "
                        + String.join(", ", known.keySet().stream().sorted().toList()) + ")");
            }
            if (out.put(key, line.substring(eq + 1).strip()) != null) {
                throw new ConfigException(where + ": key \"" + key + "\" given twice");
            }
        }
        return out;
    }
}
