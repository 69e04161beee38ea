package dev.arrayd.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bench lanes} end to end, tiny: both kernels on every column (their outputs are checked against plain Java
 * inside the scenario, which fails on a difference), a row per kernel, column and run in lanes.csv.
 */
class LanesScenarioTest {

    private static final String F = "\\d+\\.\\d+";

    /** A kernel's fields, the PoCL ones only where there is an OpenCL device. */
    private static String fields(String k) {
        return k + "_lanes_GFLOPs=" + F + " " + k + "_items_GFLOPs=" + F + " " + k + "_lanes_speedup=" + F + "(?: " + k
                + "_pocl_GFLOPs=" + F + " " + k + "_pocl_c_GFLOPs=" + F + " " + k + "_lanes_of_pocl=" + F + " " + k
                + "_lanes_of_pocl_c=" + F + ")?";
    }

    @Test
    @Timeout(240)
    void writesTheTablePlotAndResultLine(@TempDir Path dir) throws Exception {
        Path results = dir.resolve("run");
        BenchRun run = new BenchRun("lanes", "--in-process", "--iterations", "2", "--warmup", "1", "--size", "48",
                "--length", "5000", "--out", results.toString());
        run.assertComplete(results, "RESULT lanes " + fields("matmul_naive") + " " + fields("conv33"), "lanes.png");
        List<String[]> rows = BenchRun.csv(results.resolve("lanes.csv"), "kernel,column,run,device_ms", 4);
        long columns = rows.stream().map(r -> r[1]).distinct().count();
        assertTrue(columns == 2 || columns == 4, "lanes, items, and pocl and pocl_c where there is OpenCL: " + columns);
        assertEquals(2 * 2 * columns, rows.size());
        for (String[] row : rows) {
            assertTrue(Double.parseDouble(row[3]) > 0, String.join(",", row));
        }
    }
}
