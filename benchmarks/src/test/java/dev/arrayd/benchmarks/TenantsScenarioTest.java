package dev.arrayd.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code bench tenants} end to end, tiny (the flooding client is a real child process), and its block statistic. */
class TenantsScenarioTest {

    @Test
    @Timeout(180)
    void writesRoundTripsSummaryPlotAndResultLine(@TempDir Path dir) throws Exception {
        Path results = dir.resolve("run");
        BenchRun run = new BenchRun("tenants", "--in-process", "--iterations", "40", "--warmup", "0",
                "--warmup-seconds", "0", "--spin", "20000", "--out", results.toString());
        String f = "\\d+\\.\\d+";
        run.assertComplete(results, "RESULT tenants fairness_ratio=" + f + " polite_p50_alone_us=" + f
                + " polite_p99_alone_us=" + f + " polite_p50_flood_us=" + f + " polite_p99_flood_us=" + f
                + " p99_ratio=" + f + " p99_block_ratio=" + f, "polite.png");
        List<String[]> rows = BenchRun.csv(results.resolve("polite.csv"), "phase,iteration,micros", 3);
        assertEquals(80, rows.size());
        for (String[] r : rows) {
            assertTrue(Double.parseDouble(r[2]) > 0, String.join(",", r));
        }
    }

    @Test
    void aStallInOneBlockMovesOnePairNotTheMedian() {
        int block = 100;
        long[] alone = new long[10 * block];
        long[] flood = new long[10 * block];
        Arrays.fill(alone, 100_000);
        Arrays.fill(flood, 150_000);
        for (int i = 0; i < 5; i++) {
            alone[3 * block + i] = 4_000_000; // a 4 ms stall, five times in block 3 (its p99)
        }
        assertEquals(1.5, TenantsScenario.medianBlockP99Ratio(alone, flood, block), 1e-9);
        for (int b = 0; b < 10; b++) {
            for (int i = 0; i < 5; i++) {
                flood[b * block + i] = 600_000; // the flood's own tail, in every block
            }
        }
        assertEquals(6.0, TenantsScenario.medianBlockP99Ratio(alone, flood, block), 1e-9);
    }
}
