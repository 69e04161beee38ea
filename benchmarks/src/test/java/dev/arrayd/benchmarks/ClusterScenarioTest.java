package dev.arrayd.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bench cluster} end to end, tiny: the daemons it starts itself (a peer and an entry; two peers and an
 * entry; three one-thread peers, an entry and a daemon of two one-thread devices), every part measured, its files
 * written.
 */
class ClusterScenarioTest {

    @Test
    @Timeout(300)
    void writesLaunchCopyScalingSummaryPlotAndResultLine(@TempDir Path dir) throws Exception {
        Path results = dir.resolve("run");
        BenchRun run = new BenchRun("cluster", "--in-process", "--iterations", "2", "--warmup", "1", "--warmup-seconds", "0",
                "--size", "2", "--tasks", "3", "--iterations-per-task", "2000", "--out", results.toString());
        String f = "\\d+\\.\\d+";
        run.assertComplete(results, "RESULT cluster direct_us=" + f + " entry_us=" + f + " launch_ratio=" + f
                + " sidecar_ratio_100us=" + f + " sidecar_ratio_250us=" + f + " sidecar_ratio_500us=" + f + " copy_ms=" + f
                + " raw_ms=" + f + " copy_ratio=" + f + " speedup2=" + f + " speedup3=" + f + " local_speedup2=" + f, "cluster.png");
        List<String[]> launch = BenchRun.csv(results.resolve("launch.csv"), "path,round,median_us", 3);
        assertEquals(4, launch.size());
        for (String[] row : launch) {
            assertTrue(Double.parseDouble(row[2]) > 0, String.join(",", row));
        }
        List<String[]> copy = BenchRun.csv(results.resolve("copy.csv"), "method,round,bytes,ms,source_cpu_ms,receiver_cpu_ms", 6);
        assertEquals(4, copy.size());
        for (String[] row : copy) {
            // CPU time of each peer process over the transfer: read from the kernel, never negative
            assertTrue(Double.parseDouble(row[4]) >= 0 && Double.parseDouble(row[5]) >= 0, String.join(",", row));
        }
        // the sidecar-shaped launches: every delay, two rounds each, the path through the emulated network the slower
        List<String[]> sidecar = BenchRun.csv(results.resolve("sidecar.csv"), "one_way_us,round,direct_us,sidecar_us", 4);
        assertEquals(6, sidecar.size());
        for (String[] row : sidecar) {
            assertTrue(Double.parseDouble(row[2]) > 2 * Double.parseDouble(row[0]), "a round trip crosses the delay "
                    + "twice: " + String.join(",", row));
        }
        // 1, 2, 3 peers and 1, 2 devices of one daemon, two rounds each
        List<String[]> scaling = BenchRun.csv(results.resolve("scaling.csv"), "where,devices,round,tasks,tasks_per_s", 5);
        assertEquals(10, scaling.size());
        assertEquals(4, scaling.stream().filter(r -> r[0].equals("local")).count(), "the local anchor's rows");
    }
}
