package dev.arrayd.cli;

import dev.arrayd.server.config.ArraydConfig;
import dev.arrayd.server.config.ConfigKey;
import dev.arrayd.server.config.ConfigResolver;
import dev.arrayd.server.config.ResolvedConfig;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParseResult;

/**
 * The flags of {@code serve} and {@code config}, generated from {@link ArraydConfig#ALL} (one flag per
 * key, plus {@code --config FILE}), and their resolution with the environment and the config file.
 * Flags are read as text and parsed by the key, so a bad flag gets the same message as a bad
 * environment variable or file line.
 */
final class ConfigFlags {

    private ConfigFlags() {}

    static void addTo(CommandSpec spec) {
        spec.addOption(OptionSpec.builder(ArraydConfig.CONFIG_FLAG).paramLabel("FILE").type(String.class)
                .description("Config file: `key = value` lines, # comments (default: the " + ArraydConfig.CONFIG_ENV
                        + " environment variable; none). Precedence: flags > ARRAYD_* environment > file > defaults.")
                .build());
        for (ConfigKey<?> key : ArraydConfig.ALL) {
            String dflt = key.defaultText().isEmpty() ? "none" : key.defaultText();
            OptionSpec.Builder b = OptionSpec.builder(key.flag()).type(String.class)
                    .paramLabel(key.isBoolean() ? "BOOL" : key.type().toUpperCase(java.util.Locale.ROOT).replace(':', '_'))
                    .description((key.doc().replace("`", "") + " (default: " + dflt + "; env " + key.envVar() + ")")
                            .replace("%", "%%"));
            if (key.isBoolean()) {
                b.arity("0..1").fallbackValue("true");
            }
            spec.addOption(b.build());
        }
    }

    /** Flags given on this command line, by key name, as text. */
    static Map<String, String> given(CommandSpec spec) {
        ParseResult pr = spec.commandLine().getParseResult();
        Map<String, String> flags = new HashMap<>();
        for (ConfigKey<?> key : ArraydConfig.ALL) {
            if (pr.hasMatchedOption(key.flag())) {
                flags.put(key.name(), pr.matchedOptionValue(key.flag(), ""));
            }
        }
        return flags;
    }

    static ResolvedConfig resolve(CommandSpec spec, Map<String, String> env) {
        ParseResult pr = spec.commandLine().getParseResult();
        String file = pr.hasMatchedOption(ArraydConfig.CONFIG_FLAG) ? pr.matchedOptionValue(ArraydConfig.CONFIG_FLAG, "")
                : env.get(ArraydConfig.CONFIG_ENV);
        return ConfigResolver.resolve(given(spec), env, file == null || file.isBlank() ? null : Path.of(file));
    }
}
