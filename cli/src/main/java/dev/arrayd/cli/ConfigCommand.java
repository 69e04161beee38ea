package dev.arrayd.cli;

import dev.arrayd.server.config.ConfigException;
import dev.arrayd.server.config.ConfigValue;
import dev.arrayd.server.config.ResolvedConfig;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code arrayd config --print}: the effective value of every setting and where it came from, for
 * the same flags, environment and {@code --config} file that {@code serve} would get.
 */
@Command(name = "config", mixinStandardHelpOptions = true,
        description = "Print every daemon setting's effective value and its source (flag, environment, file, "
                + "default). Takes the same flags as serve.")
final class ConfigCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--print", description = "Print the effective configuration (the default action).")
    boolean print;

    @Override
    public Integer call() {
        ResolvedConfig cfg;
        try {
            cfg = ConfigFlags.resolve(spec, System.getenv());
        } catch (ConfigException e) {
            System.err.println("arrayd config: " + e.getMessage());
            return 2;
        }
        int w = 0;
        for (ConfigValue<?> v : cfg.all()) {
            w = Math.max(w, v.key().name().length());
        }
        System.out.printf("%-" + w + "s  %-24s  %s%n", "KEY", "VALUE", "SOURCE");
        for (ConfigValue<?> v : cfg.all()) {
            String shown = v.text().isEmpty() ? "(none)" : v.text();
            System.out.printf("%-" + w + "s  %-24s  %s%n", v.key().name(), shown, v.origin());
        }
        return 0;
    }
}
