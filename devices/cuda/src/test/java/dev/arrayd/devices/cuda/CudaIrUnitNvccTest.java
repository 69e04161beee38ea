package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.ir.CheckedKernel;
import dev.arrayd.devices.api.ir.IrKernel;
import dev.arrayd.devices.api.ir.IrParam;
import dev.arrayd.devices.api.ir.IrSamples;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static dev.arrayd.devices.api.ir.IrDsl.bin;
import static dev.arrayd.devices.api.ir.IrDsl.f32;
import static dev.arrayd.devices.api.ir.IrDsl.gid;
import static dev.arrayd.devices.api.ir.IrDsl.load;
import static dev.arrayd.devices.api.ir.IrDsl.param;
import static dev.arrayd.devices.api.ir.IrDsl.store;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The assembled IR unit is valid CUDA C++ for the device compiler, checked without a GPU wherever the
 * CUDA toolkit's {@code nvcc} is on the PATH (NVRTC is the same front end; without nvcc this is skipped
 * with the reason): it compiles to PTX with the options NVRTC gets, and each entry point takes the
 * declared parameters plus the extents struct and the guard pointer.
 */
class CudaIrUnitNvccTest {

    @TempDir
    Path dir;

    /** Buffers of the storage-only and narrow types, converted on load and store. */
    static IrKernel halves() {
        return new IrKernel("halves", List.of(
                new IrParam.Buffer("h", DType.F16, Access.READ, null),
                new IrParam.Buffer("b", DType.BF16, Access.READ_WRITE, null),
                new IrParam.Buffer("u", DType.U8, Access.WRITE, null),
                new IrParam.Scalar("s", DType.U8, null, null),
                new IrParam.Scalar("d", DType.F64, null, null)), 1, List.of(), List.of(
                store("b", gid(0), load("h", gid(0))),
                store("u", gid(0), param("s"))));
    }

    /**
     * A kernel named as a function CUDA's headers declare, taking the minimum with {@code +0.0} and the maximum
     * with {@code -0.0}: plain comparisons there compile to {@code min.f32}/{@code max.f32}, which ignore the sign
     * of zero.
     */
    static IrKernel minOfSignedZeros() {
        return new IrKernel("min", List.of(
                new IrParam.Buffer("x", DType.F32, Access.READ, null),
                new IrParam.Buffer("out", DType.F32, Access.WRITE, null)), 1, List.of(), List.of(
                store("out", gid(0), bin(dev.arrayd.devices.api.ir.Expr.Binary.Op.MAX,
                        bin(dev.arrayd.devices.api.ir.Expr.Binary.Op.MIN, load("x", gid(0)), f32(0.0f)), f32(-0.0f)))));
    }

    @Test
    void theUnitCompilesToPtxWithAnEntryPerKernel() throws Exception {
        String nvcc = System.getenv().getOrDefault("NVCC", "nvcc");
        Assumptions.assumeTrue(runs(nvcc), () -> "no CUDA toolkit compiler here (\"" + nvcc + " --version\" does not run)");
        List<CheckedKernel> kernels = CudaIrAssemblerTest.checked(IrSamples.saxpy(), IrSamples.gatherUnchecked(),
                IrSamples.matmul(), IrSamples.groupSum(), halves(), minOfSignedZeros());
        Path unit = Files.writeString(dir.resolve("unit.cu"), CudaIrAssembler.assemble(kernels));
        List<String> command = new ArrayList<>(List.of(nvcc, "-ptx", "-arch=compute_80", "-std=c++17", "-lineinfo"));
        command.addAll(CudaIrAssembler.NVRTC_IR_OPTIONS);
        command.addAll(List.of("-o", "unit.ptx", unit.getFileName().toString()));
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        boolean done = p.waitFor(120, TimeUnit.SECONDS);
        String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!done) {
            p.destroyForcibly();
        }
        assertTrue(done && p.exitValue() == 0, () -> String.join(" ", command) + " failed:\n" + log);
        String ptx = Files.readString(dir.resolve("unit.ptx"));
        for (CheckedKernel k : kernels) {
            String symbol = CudaIrAssembler.ENTRY_PREFIX + k.name();
            Matcher entry = Pattern.compile("\\.entry " + symbol + "\\(([^)]*)\\)").matcher(ptx);
            assertTrue(entry.find(), () -> "no .entry " + symbol + " in the PTX");
            int params = entry.group(1).split(",").length;
            assertEquals(k.kernel().params().size() + 2, params, k.name() + ": declared parameters, extents, guard");
        }
        assertTrue(ptx.contains(".maxntid 256, 1, 1"), "group_sum's declared local size bounds its launch");
        assertTrue(!ptx.contains("fma.rn.f32"), "no contraction into fused multiply-adds (matmul, saxpy)");
        assertFalse(ptx.contains("min.f32") || ptx.contains("max.f32"), "min and max keep the sign of zero");
    }

    private static boolean runs(String command) {
        try {
            Process p = new ProcessBuilder(command, "--version").redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
