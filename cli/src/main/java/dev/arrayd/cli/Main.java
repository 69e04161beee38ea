package dev.arrayd.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code arrayd <subcommand>}: the daemon and the client tools that talk to it. */
@Command(name = "arrayd", mixinStandardHelpOptions = true, versionProvider = Version.class,
        description = "A multi-device scheduling daemon: devices, streams, events and slab pools behind gRPC.",
        subcommands = {ServeCommand.class, DevicesCommand.class, DemoCommand.class, HealthCommand.class, StatsCommand.class,
                ConfigCommand.class, CommandLine.HelpCommand.class})
public final class Main implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs a command line and returns its exit code (for tests). */
    public static int run(String... args) {
        CommandLine cl = new CommandLine(new Main()).setCaseInsensitiveEnumValuesAllowed(true);
        // serve and config share the flags generated from the configuration keys
        ConfigFlags.addTo(cl.getSubcommands().get("serve").getCommandSpec());
        ConfigFlags.addTo(cl.getSubcommands().get("config").getCommandSpec());
        return cl.execute(args);
    }

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }
}
