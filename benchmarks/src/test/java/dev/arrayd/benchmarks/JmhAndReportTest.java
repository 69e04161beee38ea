package dev.arrayd.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code bench jmh} (one benchmark, in this JVM, very short) and {@code bench report} over its results. */
class JmhAndReportTest {

    @Test
    @Timeout(60)
    void jmhWritesATableAndReportAssemblesTheDocs(@TempDir Path dir) throws Exception {
        Path results = dir.resolve("results");
        Path jmhDir = results.resolve("jmh-20260101-000000");
        BenchRun jmh = new BenchRun("jmh", "--forks", "0", "--warmup-ms", "0", "--measure-ms", "100",
                "--measurements", "1", "--filter", "EventBench\\.signalOneListener", "--out", jmhDir.toString());
        assertEquals(0, jmh.rc, jmh.stderr());
        assertTrue(jmh.lastLine().matches("RESULT jmh EventBench_signalOneListener_ns=\\d+\\.\\d"), jmh.lastLine());
        assertEquals(1, BenchRun.csv(jmhDir.resolve("jmh.csv"), "benchmark,score,error,unit,samples,bytes_per_op", 6).size());
        assertTrue(java.nio.file.Files.size(jmhDir.resolve("jmh.png")) > 1000, "a plot");
        // the command that repeats the run, without its results folder
        assertEquals("bin/arrayd bench jmh --filter 'EventBench\\.signalOneListener' --forks 0 --warmup-ms 0 "
                + "--measure-ms 100 --measurements 1", Files.readString(jmhDir.resolve(RunFiles.COMMAND)).strip());

        // an older and a newer throughput run: the report must take the newer one, and copy its plot
        Path latest = null;
        for (String stamp : new String[] {"20260101-000000", "20260102-000000"}) {
            latest = results.resolve("throughput-" + stamp);
            BenchRun t = new BenchRun("throughput", "--in-process", "--iterations", "40", "--warmup", "10", "--warmup-seconds", "0",
                    "--rounds", "1", "--window", "4", "--out", latest.toString());
            assertEquals(0, t.rc, t.stderr());
        }
        Files.writeString(latest.resolve(RunFiles.SECTION), Files.readString(latest.resolve(RunFiles.SECTION))
                + "\nnewest\n");
        Path docs = dir.resolve("docs");
        Files.createDirectories(docs.resolve("benchmarks-notes"));
        Files.writeString(docs.resolve("benchmarks-notes").resolve("throughput.md"), "### What it took\n\nhand-written");

        BenchRun report = new BenchRun("report", "--results", results.toString(), "--docs", docs.toString());
        assertEquals(0, report.rc, report.stderr());
        String md = Files.readString(docs.resolve("benchmarks.md"));
        assertTrue(md.contains("RESULT throughput launches_per_s="), md);
        assertTrue(md.contains("newest"), "the newest run: " + md);
        assertTrue(md.contains("hand-written"), "the notes: " + md);
        assertTrue(md.contains("RESULT jmh EventBench_signalOneListener_ns="), md);
        assertTrue(md.contains("](benchmarks/throughput.png)"), md);
        assertTrue(Files.size(docs.resolve("benchmarks").resolve("throughput.png")) > 5_000);
        assertTrue(md.contains("Not run yet: `bin/arrayd bench latency`"), md);
        assertTrue(!md.contains("**tenants**") && md.contains("Not run yet: `bin/arrayd bench tenants`"), md);
        // kernels has its own section now: not pending, just not run in this results folder
        assertTrue(!md.contains("**kernels**") && md.contains("Not run yet: `bin/arrayd bench kernels`"), md);
        assertTrue(md.contains("bin/arrayd bench throughput --in-process"), "the command: " + md);
    }
}
