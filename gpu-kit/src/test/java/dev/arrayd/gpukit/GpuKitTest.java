package dev.arrayd.gpukit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The GPU check kit as the build left it (target/gpu-kit): what it holds, and a whole run of its script
 * here. On a machine without a GPU the run goes to the end, says why CUDA is unavailable, and every step
 * that can run passes; where there is a GPU the same test runs the CUDA suites on it.
 */
class GpuKitTest {

    static final long LIMIT = 60L << 20;

    private static Path kit() {
        return Path.of(System.getProperty("arrayd.gpuKit", "target/gpu-kit"));
    }

    /** CONTENTS: "size path" per file, then "total N bytes". */
    private static Map<String, Long> contents() throws IOException {
        Map<String, Long> files = new HashMap<>();
        for (String line : Files.readAllLines(kit().resolve("CONTENTS"))) {
            if (line.startsWith("total ")) {
                continue;
            }
            int space = line.indexOf(' ');
            files.put(line.substring(space + 1), Long.parseLong(line.substring(0, space)));
        }
        return files;
    }

    private static String one(Map<String, Long> files, String prefix, String suffix) {
        List<String> hits = files.keySet().stream().filter(f -> f.startsWith(prefix) && f.endsWith(suffix)).toList();
        assertEquals(1, hits.size(), prefix + "*" + suffix + " in " + files.keySet());
        return hits.getFirst();
    }

    @Test
    void theKitHoldsTheRuntimeTheJarsAndTheScriptAndStaysUnderItsSize() throws IOException {
        Map<String, Long> files = contents();
        List<String> onDisk = new ArrayList<>();
        try (Stream<Path> walk = Files.walk(kit())) {
            walk.filter(Files::isRegularFile).map(p -> kit().relativize(p).toString()).filter(p -> !p.equals("CONTENTS"))
                    .forEach(onDisk::add);
        }
        assertEquals(files.keySet(), new java.util.HashSet<>(onDisk), "CONTENTS lists exactly the kit's files");
        long total = 0;
        for (Map.Entry<String, Long> f : files.entrySet()) {
            assertEquals(Files.size(kit().resolve(f.getKey())), f.getValue(), f.getKey());
            total += f.getValue();
        }
        assertTrue(total < LIMIT, "the kit is " + total + " bytes (expected: under 60 MiB)");
        assertTrue(Files.isExecutable(kit().resolve("run.sh")));
        assertTrue(files.containsKey("runtime.tar.gz"));
        one(files, "lib/arrayd-cli-", ".jar");
        one(files, "lib/arrayd-devices-cuda-", "-tests.jar");
        one(files, "lib/arrayd-devices-api-", "-tests.jar");
        one(files, "lib/junit-platform-console-standalone-", ".jar");
        one(files, "lib/jqwik-engine-", ".jar");
        assertFalse(files.keySet().stream().anyMatch(f -> f.startsWith("lib/junit-jupiter")),
                "JUnit's own jars stay out: the console launcher bundles them (two engines of one id would clash)");
        try (JarFile natives = new JarFile(kit().resolve(one(files, "lib/jcuda-natives-", "linux-x86_64.jar")).toFile())) {
            List<String> libs = natives.stream().map(e -> e.getName()).filter(n -> n.endsWith(".so")).toList();
            assertEquals(1, libs.size(), "only the driver binding: " + libs);
            assertTrue(libs.getFirst().startsWith("lib/libJCudaDriver-"), libs.getFirst());
        }
        try (JarFile cuda = new JarFile(kit().resolve(one(files, "lib/arrayd-devices-cuda-", "-tests.jar")).toFile())) {
            for (String c : List.of("CudaProbe", "CudaBench", "CudaDeviceConformanceTest", "CudaIrTest",
                    "CudaPeerCopyTest", "CudaFastPathsTest", "CudaIrDifferentialProperties")) {
                assertTrue(cuda.getEntry("dev/arrayd/devices/cuda/" + c + ".class") != null, c);
            }
        }
    }

    @Test
    @Timeout(480)
    void theScriptRunsToTheEndAndSaysWhereCudaStands(@TempDir Path out) throws Exception {
        ProcessBuilder pb = new ProcessBuilder("bash", kit().resolve("run.sh").toString())
                .redirectErrorStream(true).redirectOutput(out.resolve("console.txt").toFile());
        pb.environment().put("OUT", out.resolve("out").toString());
        Process p = pb.start();
        assertTrue(p.waitFor(450, TimeUnit.SECONDS), "run.sh within its time");
        String console = Files.readString(out.resolve("console.txt"));
        assertEquals(0, p.exitValue(), console);
        List<String> written;
        try (Stream<Path> files = Files.list(out.resolve("out"))) {
            written = files.map(f -> f.getFileName().toString()).sorted().toList();
        }
        assertEquals(List.of("bench.txt", "daemon.log", "demo.txt", "entry.log", "junit-reports.tar.gz", "junit.txt",
                "probe.txt", "summary.txt"), written, "at most 8 files, as a GPU machine's call returns");
        String summary = Files.readString(out.resolve("out/summary.txt"));
        for (String step : List.of("runtime", "probe", "tests", "demo-vadd", "demo-saxpy", "demo-sum", "demo-matmul",
                "demo-softmax", "demo-multi-device", "demo-remote", "bench")) {
            assertTrue(summary.contains("step " + step + ": ok"), step + " in\n" + summary);
        }
        assertTrue(summary.matches("(?s).*\\nRESULT gpu-check cuda=(available|unavailable) tests=ok outcome=ok seconds=\\d+\\n"),
                summary);
        if (summary.contains("cuda=unavailable")) {
            assertTrue(summary.contains("\ncuda: unavailable: "), "the reason is given:\n" + summary);
            assertTrue(summary.contains("cuda benchmark skipped: no usable GPU here ("), summary);
            assertTrue(summary.contains("daemon: serving cpu:2"), summary);
            assertTrue(summary.contains("entry daemon: serving pool/cpu:0"), summary);
        } else {
            assertTrue(summary.contains("entry daemon: serving pool/cuda:0"), summary);
        }
        assertTrue(summary.matches("(?s).*\nhost: [^\n]+; \\d+ cores; \\d+ GiB; Linux [^\n]+\n.*"),
                "the host, for bench cuda's report:\n" + summary);
        String junit = Files.readString(out.resolve("out/junit.txt"));
        assertTrue(junit.contains("0 tests failed"), junit);
    }
}
