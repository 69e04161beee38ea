package dev.arrayd.benchmarks;

import dev.arrayd.cli.Target;
import dev.arrayd.server.ArraydServer;
import dev.arrayd.server.JitThreadPriority;
import dev.arrayd.server.ServerOptions;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
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
        return List.of(new LatencyScenario(), new ThroughputScenario(), new TransferScenario(), new TaskBenchScenario(),
                new KernelsScenario(), new IrScenario(), new LanesScenario(),
                new TenantsScenario(), new MultiDeviceScenario(), new ClusterScenario(), new PythonScenario(), new PaddingScenario());
    }

    /** Subcommands that are not scenarios: they start no daemon and run as plain picocli commands. */
    static List<Tool> tools() {
        return List.of(new JmhCommand(), new CudaCommand(), new ReportCommand());
    }

    /** This JVM's JIT compiler threads, lowered as the daemon's are: the client should not take the cores it measures. */
    static final JitThreadPriority OWN_JIT = new JitThreadPriority(ServerOptions.DEFAULT_JIT_NICE);

    public static void main(String[] args) {
        OWN_JIT.apply();
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
        for (Tool t : tools()) {
            cmd.addSubcommand(t);
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
        cmd.setExecutionStrategy(parsed -> execute(cmd, parsed, out, new Progress(err, interactive), args));
        try {
            return cmd.execute(args);
        } finally {
            // picocli prints usage with print(), which auto-flush does not cover
            outWriter.flush();
            errWriter.flush();
        }
    }

    private static int execute(CommandLine cmd, ParseResult parsed, PrintStream out, Progress progress, String[] args) {
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
        if (sub.getCommand() instanceof Tool tool) {
            try {
                return tool.run(out, progress);
            } catch (ParameterException e) {
                throw e;
            } catch (Exception e) {
                progress.clear();
                cmd.getErr().println("bench " + sub.getCommandName() + ": failed: " + e);
                e.printStackTrace(cmd.getErr());
                return EXIT_FAILED;
            }
        }
        Scenario scenario = (Scenario) sub.getCommand();
        BenchOptions o = scenario.options();
        Target target;
        try {
            o.iterations(1);
            o.warmup(0);
            target = o.target() == null ? null : Target.parseRemote(o.target());
            if (target != null && target.isUnix()) {
                throw new IllegalArgumentException("--target: \"" + o.target() + "\" (expected: host:port; the "
                        + "scenarios that compare the Unix socket with TCP measure it beside TCP when they start the "
                        + "daemon themselves)");
            }
        } catch (IllegalArgumentException e) {
            throw new ParameterException(sub, e.getMessage());
        }
        Report report;
        try {
            report = runScenario(scenario, target, progress, args);
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
    private static Report runScenario(Scenario scenario, Target target, Progress progress, String[] args)
            throws Exception {
        BenchOptions o = scenario.options();
        Path outDir = o.out() != null ? o.out()
                : Path.of("results", scenario.name() + "-" + LocalDateTime.now().format(STAMP));
        Files.createDirectories(outDir);
        Report report = runIn(scenario, target, progress, outDir);
        // What `bench report` assembles docs/benchmarks.md from.
        Files.writeString(outDir.resolve(RunFiles.RESULT), "RESULT " + scenario.name() + " " + report.result() + "\n");
        Files.writeString(outDir.resolve(RunFiles.COMMAND), "bin/arrayd bench " + String.join(" ", args) + "\n");
        Files.writeString(outDir.resolve(RunFiles.SECTION), report.section());
        Machine.describe(!scenario.usesDaemon() ? "none (the backends run in the benchmark's process)"
                : target == null ? (o.inProcess() ? "in-process" : "separate process") : "--target")
                .write(outDir.resolve(RunFiles.MACHINE));
        return report;
    }

    private static Report runIn(Scenario scenario, Target target, Progress progress, Path outDir) throws Exception {
        BenchOptions o = scenario.options();
        if (!scenario.daemonArgs().isEmpty() && (target != null || o.inProcess())) {
            throw new IllegalArgumentException("--daemon-arg " + scenario.daemonArgs() + ": only for the daemon the "
                    + "benchmark starts as a child process (not with --target or --in-process)");
        }
        if (!scenario.usesDaemon()) {
            return scenario.run(new BenchContext("127.0.0.1", 0, false, outDir, progress));
        }
        if (target != null) {
            return scenario.run(new BenchContext(target.host(), target.port(), false, outDir, progress));
        }
        // no progress line while the daemon starts: its log line would land in the middle of ours
        // the daemon listens on a Unix domain socket too, for the scenarios that compare it with TCP
        Path socketDir = Files.createTempDirectory("arrayd-bench-");
        Path socket = socketDir.resolve("arrayd.sock");
        try {
            if (o.inProcess()) {
                ServerOptions so = ServerOptions.defaults().withPort(0).withAllowNativeSource(scenario.nativeSource()).withUds(socket);
                if (scenario.daemonDevices() != null) {
                    so = so.withDevices(scenario.daemonDevices());
                }
                try (ArraydServer server = ArraydServer.start(so)) {
                    return scenario.run(new BenchContext("127.0.0.1", server.port(), true, outDir, progress, socket));
                } finally {
                    progress.clear();
                }
            }
            List<String> serveArgs = new ArrayList<>(List.of("--uds", socket.toString()));
            if (scenario.nativeSource()) {
                serveArgs.add("--allow-native-source");
            }
            if (scenario.daemonDevices() != null) {
                serveArgs.addAll(List.of("--devices", scenario.daemonDevices()));
            }
            serveArgs.addAll(scenario.daemonArgs());
            try (DaemonChild daemon = new DaemonChild(serveArgs)) {
                return scenario.run(new BenchContext("127.0.0.1", daemon.port(), false, outDir, progress, socket,
                        daemon.pid()));
            } finally {
                progress.clear();
            }
        } finally {
            Files.deleteIfExists(socket);
            Files.deleteIfExists(socketDir);
        }
    }
}
