package dev.arrayd.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code bench cuda --from}: what the GPU check kit wrote becomes a results folder, and the report shows it. */
class CudaCommandTest {

    /** The lines of a kit's output that the report reads, as CudaBench and run.sh print them. */
    private static void kitOutput(Path dir, String resultLine) throws Exception {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("summary.txt"), """
                arrayd GPU check, 2026-11-26T18:46:21Z on vm
                step runtime: ok (0 s)
                RESULT gpu-check cuda=available tests=ok outcome=ok seconds=34
                """);
        Files.writeString(dir.resolve("probe.txt"), """
                == runtime: /tmp/x/runtime/bin/java -version
                openjdk version "25.0.1" 2025-10-21 LTS
                gpu: NVIDIA H200, 580.159.04, 143771 MiB
                host: Intel(R) Xeon(R) Processor; 16 cores; 126 GiB; Linux 6.8.0-1024
                cuda: cuda:0 NVIDIA H200 (sm_90), 143155 MiB, 132 multiprocessors
                driver: CUDA 13.0
                nvrtc: libnvrtc.so.13 (NVRTC 13.0)
                """);
        Files.writeString(dir.resolve("bench.txt"), """
                device: cuda:0 (NVIDIA H200, compute capability 9.0, 132 SMs, 143155 MiB)
                launch round trip: arrayd inline 9.7 us, queued 24.1 us, raw JCuda 8.4 us (rounds [10.7] / [25.4] / [8.4])
                18:46:54.242 INFO  [main] CudaBackend - CUDA driver 13000 with 1 device(s)
                transfer sweep: lanes 1, chunk 4 MiB: upload 9.52 GB/s, download 15.11 GB/s
                transfer sweep: lanes 8, chunk 4 MiB: upload 44.36 GB/s, download 46.95 GB/s
                transfer sweep: lanes 8, chunk 2 MiB: upload 43.88 GB/s, download 37.84 GB/s
                ir matmul 2048x2048: tiled in local memory 7532 GFLOP/s (0.97 of the native tiled), one item per element 4998 GFLOP/s
                guards: vadd of 67108864 floats 299.8 us proven, 320.4 us guarded (ratio 1.07; device time)
                """ + resultLine + "\n");
    }

    private static final String RESULT = "RESULT cuda device=\"NVIDIA H200 (sm_90)\" launch_ratio=1.15 queued_launch_ratio=2.87 "
            + "h2d_ratio=0.69 d2h_ratio=0.80 matmul_GFLOPs=7778 ir_matmul_GFLOPs=7532 ir_matmul_of_native=0.97 guards_ratio=1.07 "
            + "launch_us=9.7 raw_launch_us=8.4 upload_GBps=37.68 raw_upload_GBps=54.88 download_GBps=43.59 "
            + "raw_download_GBps=54.75 locked_upload_GBps=53.16 locked_download_GBps=52.91 locked_h2d_ratio=0.97 "
            + "locked_d2h_ratio=0.97";

    @Test
    void theKitsFiguresBecomeATablePlotsAndTheGpuHostAsTheMachine(@TempDir Path dir) throws Exception {
        Path kit = dir.resolve("kit");
        kitOutput(kit, RESULT);
        Path results = dir.resolve("results");
        Path out = results.resolve("cuda-20261126-184621");
        BenchRun run = new BenchRun("cuda", "--from", kit.toString(), "--out", out.toString());
        assertEquals(0, run.rc, run.stderr());
        assertEquals(RESULT, run.lastLine());
        assertEquals(RESULT, Files.readString(out.resolve(RunFiles.RESULT)).trim());
        String section = Files.readString(out.resolve(RunFiles.SECTION));
        assertTrue(section.contains("| empty-kernel launch round trip, run on the caller's thread (a short ready launch) "
                + "| 9.7 µs | 8.4 µs | 1.15 | ≤ 1.5 |"), section);
        assertTrue(section.contains("| 53.2 GB/s | 54.9 GB/s | 0.97 |"), section);
        assertTrue(section.contains("| 8 | 2 MiB | 43.88 | 37.84 |"), section);
        assertTrue(section.contains("GPU: NVIDIA H200, 580.159.04, 143771 MiB; NVRTC: libnvrtc.so.13 (NVRTC 13.0)"), section);
        assertTrue(Files.size(out.resolve("cuda.png")) > 5_000, "a plot");
        assertTrue(Files.size(out.resolve("sweep.png")) > 5_000, "a plot");
        Machine m = Machine.read(out.resolve(RunFiles.MACHINE));
        assertEquals("Intel(R) Xeon(R) Processor", m.cpu());
        assertEquals(16, m.cores());
        assertEquals("2026-11-26", m.date());
        assertTrue(m.java().contains("25.0.1"), m.java());

        Path docs = dir.resolve("docs");
        BenchRun report = new BenchRun("report", "--results", results.toString(), "--docs", docs.toString());
        assertEquals(0, report.rc, report.stderr());
        String md = Files.readString(docs.resolve("benchmarks.md"));
        assertTrue(md.contains("## cuda: the CUDA backend on a GPU vs raw JCuda"), md);
        assertTrue(md.contains("](benchmarks/cuda.png)") && md.contains("](benchmarks/cuda-sweep.png)"), md);
        assertTrue(md.contains("**Machine:** 16 cores Intel(R) Xeon(R) Processor, 126 GiB, Linux 6.8.0-1024"), md);
    }

    @Test
    void aRunWithoutAGpuOrWithoutTheKitsFilesIsRefusedSayingWhy(@TempDir Path dir) throws Exception {
        Path kit = dir.resolve("kit");
        kitOutput(kit, "cuda benchmark skipped: no usable GPU here (CUDA driver library libcuda.so.1 not found)\n"
                + "RESULT cuda skipped=1");
        BenchRun skipped = new BenchRun("cuda", "--from", kit.toString(), "--out", dir.resolve("out").toString());
        assertEquals(BenchMain.EXIT_FAILED, skipped.rc);
        assertTrue(skipped.stderr().contains("the benchmark was skipped there (cuda benchmark skipped: no usable GPU here"),
                skipped.stderr());
        BenchRun empty = new BenchRun("cuda", "--from", dir.resolve("nowhere").toString());
        assertEquals(BenchMain.EXIT_FAILED, empty.rc);
        assertTrue(empty.stderr().contains("has no bench.txt (expected: the folder run.sh wrote)"), empty.stderr());
    }
}
