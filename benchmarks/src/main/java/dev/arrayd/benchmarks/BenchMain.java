package dev.arrayd.benchmarks;

import dev.arrayd.server.ArraydServer;
import dev.arrayd.server.ServerOptions;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * {@code arrayd bench <scenario> [options]}: runs one benchmark scenario and writes its results folder.
 *
 * <p>Unless {@code --target} names a running daemon, a daemon is started in this process on 127.0.0.1
 * (any free port, native kernel source allowed) and stopped afterwards; its log goes to stderr. The
 * scenario's report is printed once the daemon has stopped, so the {@code RESULT} line really is the
 * last line of stdout. Exit codes: 0 done, 1 the run failed, 2 bad command line (an unknown scenario
 * included).
 */
@Command(name = "bench", synopsisSubcommandLabel = "<scenario>",
        description = {"Runs a benchmark scenario against an in-process daemon (or --target) and writes a results "
                + "folder: CSVs and plots.",
                "The last line of stdout is 'RESULT <scenario> key=value ...'.",
                "Run 'bench <scenario> --help' for a scenario's options."},
        commandListHeading = "%nScenarios:%n")
public final class BenchMain {

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help message and exit.")
    boolean help;

    static final int EXIT_OK = 0;
    static final int EXIT_FAILED = 1;
    static final int EXIT_USAGE = 2;

    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss");

    /** Every scenario, in the order {@code --help} lists them. */
    static List<Scenario> scenarios() {
        return List.of(new LatencyScenario());
    }

    public static void main(String[] args) {
        System.exit(run(System.out, System.err, Progress.stderrIsTerminal(), args));
    }

    /**
     * Runs a command line and returns its exit code.
     *
     * @param interactive whether {@code err} is a terminal that can show a rewritten progress line
     */
    public static int run(PrintStream out, PrintStream err, boolean interactive, String... args) {
        // The plots are drawn with AWT off screen; a daemon host has no display.
        System.setProperty("java.awt.headless", "true");
        CommandLine cmd = new CommandLine(new BenchMain());
        for (Scenario s : scenarios()) {
            cmd.addSubcommand(s.name(), s);
        }
        cmd.setCaseInsensitiveEnumValuesAllowed(true); // after adding them: it applies to existing subcommands
        PrintWriter outWriter = new PrintWriter(out, true);
        PrintWriter errWriter = new PrintWriter(err, true);
        cmd.setOut(outWriter);
        cmd.setErr(errWriter);
        // picocli's own handler leaves the usage out when it has a suggestion; we always show it
        cmd.setParameterExceptionHandler((e, ignored) -> {
            CommandLine at = e.getCommandLine();
            at.getErr().println(e.getMessage());
            UnmatchedArgumentException.printSuggestions(e, at.getErr());
            at.usage(at.getErr());
            return EXIT_USAGE;
        });
        cmd.setExecutionStrategy(parsed -> execute(cmd, parsed, out, new Progress(err, interactive)));
        try {
            return cmd.execute(args);
        } finally {
            // picocli prints usage with print(), which auto-flush does not cover
            outWriter.flush();
            errWriter.flush();
        }
    }

    private static int execute(CommandLine cmd, ParseResult parsed, PrintStream out, Progress progress) {
        Integer help = CommandLine.executeHelpRequest(parsed);
        if (help != null) {
            return help;
        }
        if (!parsed.hasSubcommand()) {
            cmd.getErr().println("bench: missing <scenario>");
            cmd.usage(cmd.getErr());
            return EXIT_USAGE;
        }
        CommandLine sub = parsed.subcommand().commandSpec().commandLine();
        Scenario scenario = (Scenario) sub.getCommand();
        BenchOptions o = scenario.options();
        HostPort target;
        try {
            o.iterations(1);
            o.warmup(0);
            target = o.target() == null ? null : HostPort.parse(o.target());
        } catch (IllegalArgumentException e) {
            throw new ParameterException(sub, e.getMessage());
        }
        Report report;
        try {
            report = runScenario(scenario, target, progress);
        } catch (ParameterException e) {
            throw e;
        } catch (Exception e) {
            progress.clear();
            cmd.getErr().println("bench " + scenario.name() + ": failed: " + e);
            e.printStackTrace(cmd.getErr());
            return EXIT_FAILED;
        }
        report.lines().forEach(out::println);
        out.println("RESULT " + scenario.name() + " " + report.result());
        out.flush();
        return EXIT_OK;
    }

    /** Prepares the results folder and the daemon, runs the scenario, and stops the daemon again. */
    private static Report runScenario(Scenario scenario, HostPort target, Progress progress) throws Exception {
        BenchOptions o = scenario.options();
        Path outDir = o.out() != null ? o.out()
                : Path.of("results", scenario.name() + "-" + LocalDateTime.now().format(STAMP));
        Files.createDirectories(outDir);
        if (target != null) {
            return scenario.run(new BenchContext(target.host(), target.port(), false, outDir, progress));
        }
        // no progress line while the daemon starts: its log line would land in the middle of ours
        if (o.inProcess()) {
            try (ArraydServer server = ArraydServer.start(
                    ServerOptions.defaults().withPort(0).withAllowNativeSource(true))) {
                return scenario.run(new BenchContext("127.0.0.1", server.port(), true, outDir, progress));
            } finally {
                progress.clear();
            }
        }
        try (DaemonChild daemon = new DaemonChild(List.of("--allow-native-source"))) {
            return scenario.run(new BenchContext("127.0.0.1", daemon.port(), false, outDir, progress));
        } finally {
            progress.clear();
        }
    }
}
