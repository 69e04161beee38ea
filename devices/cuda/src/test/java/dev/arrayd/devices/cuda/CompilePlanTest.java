package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.Dialect;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.KernelSignature;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.conformance.AbstractDeviceConformanceTest;
import dev.arrayd.devices.api.ir.IrKernel;
import dev.arrayd.devices.api.ir.IrModule;
import dev.arrayd.devices.api.ir.IrSamples;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** PTX / CUDA C / IR dispatch, refusals, NVRTC options and the content-hash key. */
class CompilePlanTest {

    private static final List<KernelSignature> VADD = List.of(AbstractDeviceConformanceTest.cannedSignature("vadd"));

    @Test
    void cudaCGoesToNvrtcWithThePreludeAndTheArchOption() {
        CompilePlan plan = CompilePlan.of(new KernelSource(Dialect.CUDA_C, CudaKernels.source("vadd"), VADD), Optional.empty());
        CompilePlan.Nvrtc nvrtc = assertInstanceOf(CompilePlan.Nvrtc.class, plan);
        assertTrue(nvrtc.unit().startsWith(CudaSourceAssembler.PRELUDE));
        assertTrue(nvrtc.unit().contains("#line 1 \"kernel.cu\"\n" + CudaKernels.source("vadd")));
        assertEquals(List.of("--std=c++17", "--generate-line-info", "--gpu-architecture=compute_86"), nvrtc.optionsFor("compute_86"));
        assertEquals("compute_90", CompilePlan.arch(9, 0));
        assertEquals(VADD, plan.entryPoints());
        assertEquals(List.of("vadd"), nvrtc.symbols());
    }

    @Test
    void ptxIsLoadedAsItIsAndNeedsNoNvrtc() {
        String ptx = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry vadd() { ret; }\n";
        CompilePlan plan = CompilePlan.of(new KernelSource(Dialect.PTX, ptx, VADD), Optional.of("NVRTC library libnvrtc.so.12 not found"));
        assertEquals(ptx, assertInstanceOf(CompilePlan.Ptx.class, plan).text());
    }

    @Test
    void cudaCWithoutNvrtcIsUnavailableNamingTheLibrary() {
        ArraydException e = assertThrows(ArraydException.class, () -> CompilePlan.of(
                new KernelSource(Dialect.CUDA_C, CudaKernels.source("vadd"), VADD), Optional.of("NVRTC library libnvrtc.so.12 not found")));
        assertEquals(ErrorCode.UNAVAILABLE, e.code());
        assertTrue(e.getMessage().contains("libnvrtc.so.12"), e::getMessage);
    }

    @Test
    void irIsRenderedWithItsWrappersForNvrtcWithoutContraction() {
        KernelSource source = KernelSource.ir(new IrModule(List.of(IrSamples.saxpy(), IrSamples.matmul())));
        CompilePlan.Nvrtc nvrtc = assertInstanceOf(CompilePlan.Nvrtc.class, CompilePlan.of(source, Optional.empty()));
        assertEquals(List.of(IrSamples.saxpy().signature(), IrSamples.matmul().signature()), nvrtc.entryPoints());
        assertEquals(List.of("saxpy", "matmul"), nvrtc.ir().stream().map(k -> k.name()).toList());
        // the module's functions are the launch wrappers, so an IR kernel may take a name CUDA's headers declare
        assertEquals(List.of("arrayd_entry_saxpy", "arrayd_entry_matmul"), nvrtc.symbols());
        assertEquals(CudaIrAssembler.assemble(nvrtc.ir()), nvrtc.unit());
        assertEquals(List.of("--std=c++17", "--generate-line-info", "--fmad=false", "--prec-div=true", "--prec-sqrt=true",
                "--ftz=false", "--gpu-architecture=compute_90"), nvrtc.optionsFor("compute_90"));
        // entry points may be given, but then they must be the kernels' own signatures
        KernelSource named = new KernelSource(Dialect.IR, "", List.of(IrSamples.saxpy().signature()),
                new IrModule(List.of(IrSamples.saxpy())));
        assertEquals(List.of(IrSamples.saxpy().signature()), CompilePlan.of(named, Optional.empty()).entryPoints());
        assertTrue(CompilePlan.of(new KernelSource(Dialect.CUDA_C, CudaKernels.source("vadd"), VADD), Optional.empty()) instanceof
                CompilePlan.Nvrtc c && c.ir().isEmpty(), "CUDA C has no IR");
    }

    @Test
    void irNeedsNvrtcAndAValidModule() {
        KernelSource saxpy = KernelSource.ir(new IrModule(List.of(IrSamples.saxpy())));
        ArraydException missing = assertThrows(ArraydException.class,
                () -> CompilePlan.of(saxpy, Optional.of("NVRTC library libnvrtc.so.12 not found")));
        assertEquals(ErrorCode.UNAVAILABLE, missing.code());
        assertTrue(missing.getMessage().contains("IR") && missing.getMessage().contains("libnvrtc.so.12"), missing::getMessage);
        ArraydException empty = assertThrows(ArraydException.class, () -> CompilePlan.of(
                KernelSource.ir(new IrModule(List.of())), Optional.empty()));
        assertEquals(ErrorCode.INVALID_ARGUMENT, empty.code());
        ArraydException badName = assertThrows(ArraydException.class, () -> CompilePlan.of(KernelSource.ir(new IrModule(List.of(
                new IrKernel("arrayd_x", List.of(), 1, List.of(), List.of())))), Optional.empty()));
        assertEquals(ErrorCode.INVALID_ARGUMENT, badName.code());
        assertTrue(badName.getMessage().contains("\"arrayd_x\""), badName::getMessage);
        ArraydException wrongEntries = assertThrows(ArraydException.class, () -> CompilePlan.of(
                new KernelSource(Dialect.IR, "", VADD, new IrModule(List.of(IrSamples.saxpy()))), Optional.empty()));
        assertEquals(ErrorCode.INVALID_ARGUMENT, wrongEntries.code());
        assertTrue(wrongEntries.getMessage().startsWith("entryPoints: "), wrongEntries::getMessage);
    }

    @Test
    void otherDialectsAreRefused() {
        ArraydException c = assertThrows(ArraydException.class, () -> CompilePlan.of(
                new KernelSource(Dialect.OPENCL_C, "kernel void vadd() {}", VADD), Optional.empty()));
        assertEquals(ErrorCode.INVALID_ARGUMENT, c.code());
        assertEquals("dialect: OPENCL_C (expected: CUDA_C, PTX or IR for the cuda backend)", c.getMessage());
    }

    @Test
    void entryPointsMustBeDistinctIdentifiers() {
        KernelSignature bad = new KernelSignature("not-a-name", List.of());
        ArraydException e = assertThrows(ArraydException.class, () -> CompilePlan.of(
                new KernelSource(Dialect.CUDA_C, "", List.of(bad)), Optional.empty()));
        assertEquals("entryPoints[0].name: \"not-a-name\" (expected: a C identifier)", e.getMessage());
        ArraydException twice = assertThrows(ArraydException.class, () -> CompilePlan.of(
                new KernelSource(Dialect.PTX, ".entry", List.of(VADD.get(0), VADD.get(0))), Optional.empty()));
        assertTrue(twice.getMessage().startsWith("entryPoints[1]"), twice::getMessage);
        assertThrows(ArraydException.class, () -> CompilePlan.of(new KernelSource(Dialect.PTX, "x", List.of()), Optional.empty()));
    }

    @Test
    void theCacheKeyChangesWithSourceOptionsAndArchOnly() {
        CompilePlan.Nvrtc a = (CompilePlan.Nvrtc) CompilePlan.of(new KernelSource(Dialect.CUDA_C, CudaKernels.source("vadd"), VADD), Optional.empty());
        CompilePlan.Nvrtc same = (CompilePlan.Nvrtc) CompilePlan.of(new KernelSource(Dialect.CUDA_C, CudaKernels.source("vadd"), VADD), Optional.empty());
        CompilePlan.Nvrtc other = (CompilePlan.Nvrtc) CompilePlan.of(new KernelSource(Dialect.CUDA_C, CudaKernels.source("vadd") + " ", VADD), Optional.empty());
        assertEquals(a.keyFor("compute_80"), same.keyFor("compute_80"));
        assertNotEquals(a.keyFor("compute_80"), a.keyFor("compute_86"));
        assertNotEquals(a.keyFor("compute_80"), other.keyFor("compute_80"));
        assertEquals(64, a.keyFor("compute_80").hex().length());
        // length prefixes: moving a character between source and an option is a different key
        assertNotEquals(ModuleKey.of("ab", List.of("c"), "x"), ModuleKey.of("a", List.of("bc"), "x"));
        assertNotEquals(ModuleKey.of("a", List.of(), "x"), ModuleKey.of("a", List.of(""), "x"));
        // a known value, so the hash cannot drift silently (a drift would only cost recompiles, but should be deliberate)
        assertEquals(ModuleKey.of("src", List.of("--opt"), "compute_80"), ModuleKey.of("src", List.of("--opt"), "compute_80"));
    }

    @Test
    void moduleCacheEvictsTheLeastRecentlyUsed() {
        ModuleCache cache = new ModuleCache(2);
        ModuleKey k1 = ModuleKey.of("1", List.of(), "a");
        ModuleKey k2 = ModuleKey.of("2", List.of(), "a");
        ModuleKey k3 = ModuleKey.of("3", List.of(), "a");
        cache.put(k1, new ModuleCache.Entry("p1", "", List.of("f")));
        cache.put(k2, new ModuleCache.Entry("p2", "", List.of("f")));
        assertEquals("p1", cache.get(k1).ptx());
        cache.put(k3, new ModuleCache.Entry("p3", "", List.of("f")));
        assertEquals(null, cache.get(k2));
        assertEquals("p1", cache.get(k1).ptx());
        assertEquals(2, cache.hits());
        assertEquals(1, cache.misses());
        assertEquals(2, cache.size());
    }
}
