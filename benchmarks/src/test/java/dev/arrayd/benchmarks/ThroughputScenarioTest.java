package dev.arrayd.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code bench throughput} end to end against an in-process daemon, with tiny counts. */
class ThroughputScenarioTest {

    @Test
    @Timeout(30)
    void writesRoundsSummaryPlotAndResultLine(@TempDir Path dir) throws Exception {
        Path results = dir.resolve("run");
        BenchRun run = new BenchRun("throughput", "--in-process", "--iterations", "600", "--warmup", "100", "--warmup-seconds", "0",
                "--rounds", "3", "--window", "16", "--out", results.toString());
        run.assertComplete(results, "RESULT throughput launches_per_s=\\d+ echo_per_s=\\d+ ratio=\\d+\\.\\d{3}",
                "throughput.png");
        List<String[]> rounds = BenchRun.csv(results.resolve("throughput.csv"), "method,round,requests,seconds,per_s", 5);
        assertEquals(6, rounds.size());
        for (String[] r : rounds) {
            assertTrue(r[0].equals("launch") || r[0].equals("echo"));
            assertEquals(200, Integer.parseInt(r[2]));
            assertTrue(Double.parseDouble(r[4]) > 0);
        }
        List<String[]> summary = BenchRun.csv(results.resolve("summary.csv"),
                "method,rounds,median_per_s,min_per_s,max_per_s,median_ratio_to_echo", 6);
        assertEquals(List.of("launch", "echo"), summary.stream().map(r -> r[0]).toList());
        assertTrue(run.stderr().contains("throughput: round 3/3"), run.stderr());
    }
}
