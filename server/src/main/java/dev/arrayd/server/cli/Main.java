package dev.arrayd.server.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code arrayd <subcommand>}: the daemon and the client tools that talk to it. */
@Command(name = "arrayd", mixinStandardHelpOptions = true, versionProvider = Version.class,
        description = "A multi-device scheduling daemon: devices, streams, events and slab pools behind gRPC.",
        subcommands = {ServeCommand.class, DevicesCommand.class, DemoCommand.class, CommandLine.HelpCommand.class})
public final class Main implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs a command line and returns its exit code (for tests). */
    public static int run(String... args) {
        return new CommandLine(new Main()).setCaseInsensitiveEnumValuesAllowed(true).execute(args);
    }

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }
}
