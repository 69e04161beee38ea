package dev.arrayd.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bench multidevice} end to end, tiny: the two daemons it starts itself (one and two one-thread
 * CPU devices) and the transfer comparison on the cpu:2 daemon.
 */
class MultiDeviceScenarioTest {

    @Test
    @Timeout(180)
    void writesScalingTransfersSummaryPlotAndResultLine(@TempDir Path dir) throws Exception {
        Path results = dir.resolve("run");
        BenchRun run = new BenchRun("multidevice", "--in-process", "--iterations", "2", "--warmup", "1", "--warmup-seconds", "0",
                "--graphs", "4", "--iterations-per-task", "2000", "--size", "1", "--out", results.toString());
        String f = "\\d+\\.\\d+";
        run.assertComplete(results, "RESULT multidevice one_tasks_per_s=" + f + " two_tasks_per_s=" + f + " speedup=" + f
                + " explicit_ms=" + f + " auto_ms=" + f + " auto_ratio=" + f, "multidevice.png");
        List<String[]> scaling = BenchRun.csv(results.resolve("scaling.csv"), "config,round,tasks,tasks_per_s,device_busy", 5);
        assertEquals(4, scaling.size());
        for (String[] row : scaling) {
            assertTrue(Double.parseDouble(row[3]) > 0, String.join(",", row));
            double busy = Double.parseDouble(row[4]);
            assertTrue(busy > 0 && busy <= 1.5, "device time over round time: " + String.join(",", row));
        }
        assertEquals(4, BenchRun.csv(results.resolve("transfer.csv"), "method,round,bytes,ms", 4).size());
    }
}
