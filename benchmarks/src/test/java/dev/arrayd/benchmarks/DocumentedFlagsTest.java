package dev.arrayd.benchmarks;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every {@code --flag} the README and docs/ mention is a flag of some {@code arrayd} or {@code arrayd bench}
 * command (read from their help texts), or one of the other tools' flags listed here with their tool.
 */
class DocumentedFlagsTest {

    /** Flags of other programs that the docs show in their own command lines. */
    static final Map<String, String> FOREIGN = Map.ofEntries(
            Map.entry("--set", "helm install"),
            Map.entry("--strict", "helm lint"),
            Map.entry("--enable-native-access", "java"),
            Map.entry("--fmad", "NVRTC (nvcc's --fmad=false)"),
            Map.entry("--rm", "docker run"),
            Map.entry("--read-only", "docker run"),
            Map.entry("--tmpfs", "docker run"),
            Map.entry("--cap-drop", "docker run"),
            Map.entry("--no-install-recommends", "apt-get install"),
            Map.entry("--exclude-source-info", "buf build"));

    static final Pattern FLAG = Pattern.compile("(?<![\\w-])--[a-z][a-z0-9-]*");
    static final Pattern SUBCOMMAND = Pattern.compile("(?m)^  ([a-z][a-z-]*)\\s");

    static String capture(Function<PrintStream, Integer> run) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrintStream systemOut = System.out;
        PrintStream systemErr = System.err;
        PrintStream p = new PrintStream(out, true, StandardCharsets.UTF_8);
        System.setOut(p);
        System.setErr(p);
        try {
            run.apply(p);
        } finally {
            System.setOut(systemOut);
            System.setErr(systemErr);
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    static Set<String> flagsOf(String help) {
        Set<String> out = new TreeSet<>();
        Matcher m = FLAG.matcher(help);
        while (m.find()) {
            out.add(m.group());
        }
        return out;
    }

    static List<String> subcommands(String help) {
        int at = Math.max(help.indexOf("Commands:"), help.indexOf("Scenarios:"));
        List<String> out = new ArrayList<>();
        if (at >= 0) {
            Matcher m = SUBCOMMAND.matcher(help.substring(at));
            while (m.find()) {
                if (!m.group(1).equals("help")) {
                    out.add(m.group(1));
                }
            }
        }
        return out;
    }

    static Set<String> cliFlags() {
        Set<String> flags = new TreeSet<>();
        String root = capture(p -> dev.arrayd.cli.Main.run("--help"));
        flags.addAll(flagsOf(root));
        for (String sub : subcommands(root)) {
            flags.addAll(flagsOf(capture(p -> dev.arrayd.cli.Main.run(sub, "--help"))));
        }
        return flags;
    }

    static Set<String> knownFlags() {
        Set<String> known = new TreeSet<>();
        String root = capture(p -> dev.arrayd.cli.Main.run("--help"));
        known.addAll(flagsOf(root));
        for (String sub : subcommands(root)) {
            known.addAll(flagsOf(capture(p -> dev.arrayd.cli.Main.run(sub, "--help"))));
        }
        String bench = capture(p -> BenchMain.run(p, p, false, "--help"));
        known.addAll(flagsOf(bench));
        for (String sub : subcommands(bench)) {
            known.addAll(flagsOf(capture(p -> BenchMain.run(p, p, false, sub, "--help"))));
        }
        return known;
    }

    @Test
    void everyDocumentedFlagExists() throws IOException {
        Set<String> known = knownFlags();
        assertTrue(known.containsAll(List.of("--port", "--metrics-bind", "--target", "--filter", "--once")),
                "flags read from the help texts: " + known);
        Path root = Path.of("..");
        List<Path> docs = new ArrayList<>(List.of(root.resolve("README.md"), root.resolve("deploy/README.md")));
        try (Stream<Path> s = Files.list(root.resolve("docs"))) {
            s.filter(p -> p.toString().endsWith(".md")).sorted().forEach(docs::add);
        }
        Map<String, Set<String>> unknown = new TreeMap<>();
        for (Path doc : docs) {
            for (String flag : flagsOf(Files.readString(doc))) {
                if (!known.contains(flag) && !FOREIGN.containsKey(flag)) {
                    unknown.computeIfAbsent(flag, f -> new TreeSet<>()).add(root.relativize(doc).toString());
                }
            }
        }
        assertTrue(unknown.isEmpty(), "flags in the docs that no arrayd command has: " + unknown);
        // and the other way: every flag of an arrayd command (the benchmarks' knobs are in their --help) is in the
        // docs, as --flag or, for the daemon's settings, as a key of docs/configuration.md (each key is a flag)
        String all = String.join("\n", docs.stream().map(p -> {
            try {
                return Files.readString(p);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }).toList());
        Set<String> documented = flagsOf(all);
        Set<String> undocumented = new TreeSet<>();
        for (String flag : cliFlags()) {
            if (!documented.contains(flag) && !all.contains("| `" + flag.substring(2) + "` |")
                    && !List.of("--help", "--version").contains(flag)) {
                undocumented.add(flag);
            }
        }
        assertTrue(undocumented.isEmpty(), "arrayd flags that README.md and docs/ never mention: " + undocumented);
    }
}
