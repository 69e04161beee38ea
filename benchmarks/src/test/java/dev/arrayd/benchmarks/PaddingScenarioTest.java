package dev.arrayd.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bench padding} end to end, tiny: both stencils on a small grid (their outputs are compared inside the
 * scenario, which fails on a difference), and views of a 1 and a 2 MiB buffer that add no device memory.
 */
class PaddingScenarioTest {

    @Test
    @Timeout(180)
    void writesStencilAndReshapeTablesPlotAndResultLine(@TempDir Path dir) throws Exception {
        Path results = dir.resolve("run");
        BenchRun run = new BenchRun("padding", "--in-process", "--iterations", "2", "--warmup", "1", "--warmup-seconds", "0", "--size", "64",
                "--view-sizes", "1,2", "--view-warmup", "5", "--out", results.toString());
        String f = "\\d+\\.\\d+";
        run.assertComplete(results, "RESULT padding padded_ms=" + f + " guarded_ms=" + f + " speedup=" + f
                + " small_MiB=1 large_MiB=2 view_small_us=" + f + " view_large_us=" + f + " view_bytes_moved=0"
                + " copy_large_ms=" + f, "padding.png");
        List<String[]> stencil = BenchRun.csv(results.resolve("stencil.csv"), "run,padded_ms,guarded_ms", 3);
        assertEquals(2, stencil.size());
        for (String[] row : stencil) {
            assertTrue(Double.parseDouble(row[1]) > 0 && Double.parseDouble(row[2]) > 0, String.join(",", row));
        }
        assertEquals(2 * PaddingScenario.VIEWS, BenchRun.csv(results.resolve("reshape.csv"), "bytes,view,create_view_us", 3)
                .size());
    }
}
