package dev.arrayd.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code bench transfer} end to end against an in-process daemon, with a small size spanning several chunks. */
class TransferScenarioTest {

    @Test
    @Timeout(30)
    void writesTransfersSummaryPlotAndResultLine(@TempDir Path dir) throws Exception {
        Path results = dir.resolve("run");
        // 5 MiB + 3 bytes: several upload chunks (1 MiB), two download chunks (4 MiB), a short last one
        BenchRun run = new BenchRun("transfer", "--in-process", "--iterations", "2", "--warmup", "1",
                "--size-bytes", Integer.toString((5 << 20) + 3), "--out", results.toString());
        String n = "\\d+";
        String r = "\\d+\\.\\d{3}";
        run.assertComplete(results, "RESULT transfer upload_MBps=" + n + " sink_MBps=" + n + " upload_ratio=" + r
                + " download_MBps=" + n + " source_MBps=" + n + " download_ratio=" + r + " memcpy_MBps=" + n
                // the benchmark's own daemon listens on a Unix socket: the transfers through a region come too
                + " region_upload_MBps=" + n + " region_upload_of_memcpy=" + r + " region_upload_of_tcp=\\d+\\.\\d"
                + " region_download_MBps=" + n + " region_download_of_memcpy=" + r
                + " region_download_of_tcp=\\d+\\.\\d"
                // and Session.write / read over the socket (through the staging region)
                + " staged_write_MBps=" + n + " staged_write_of_memcpy=" + r + " staged_read_MBps=" + n
                + " staged_read_of_memcpy=" + r
                // and a buffer living in a region (1 MiB: the sizes up to --size that hold whole f32s)
                + " zero_copy_us_1MiB=\\d+\\.\\d zero_copy_growth=1\\.00"
                + " zero_copy_download_us=\\d+\\.\\d region_upload_us=\\d+\\.\\d", "transfer.png", "zero_copy.png");
        List<String> methods = new java.util.ArrayList<>(TransferScenario.TCP_METHODS);
        methods.addAll(List.of(TransferScenario.REGION_UPLOAD, TransferScenario.REGION_DOWNLOAD,
                TransferScenario.STAGED_WRITE, TransferScenario.STAGED_READ));
        List<String[]> rows = BenchRun.csv(results.resolve("transfer.csv"), "method,round,bytes,MBps", 4);
        assertEquals(2 * methods.size(), rows.size());
        for (String[] row : rows) {
            assertTrue(methods.contains(row[0]), row[0]);
            assertEquals((5 << 20) + 3, Integer.parseInt(row[2]));
            assertTrue(Double.parseDouble(row[3]) > 0);
        }
        List<String[]> summary = BenchRun.csv(results.resolve("summary.csv"),
                "method,rounds,median_MBps,min_MBps,max_MBps,anchor,median_ratio_to_anchor", 7);
        assertEquals(methods, summary.stream().map(s -> s[0]).toList());
        assertEquals("sink", summary.getFirst()[5]);
        assertEquals("memcpy_in", summary.get(methods.indexOf(TransferScenario.REGION_UPLOAD))[5]);
        assertEquals("memcpy_in", summary.get(methods.indexOf(TransferScenario.STAGED_WRITE))[5]);
        assertEquals("memcpy_out", summary.get(methods.indexOf(TransferScenario.STAGED_READ))[5]);
        List<String[]> zero = BenchRun.csv(results.resolve("zero_copy.csv"), "method,bytes,rounds,median_us,min_us,max_us", 6);
        assertEquals(List.of("host_written+launch", "download_into_itself"), zero.stream().map(z -> z[0]).toList());
        for (String[] z : zero) {
            assertEquals(1 << 20, Integer.parseInt(z[1]));
            assertTrue(Double.parseDouble(z[3]) > 0, z[3]);
        }
    }

    @Test
    void rejectsAnEmptySize() {
        BenchRun run = new BenchRun("transfer", "--in-process", "--size", "0");
        assertEquals(2, run.rc);
        assertTrue(run.stderr().contains("--size: 0 bytes"), run.stderr());
    }
}
