package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.KernelParam;
import dev.arrayd.devices.api.KernelSignature;
import dev.arrayd.devices.api.Quote;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CSourceAssemblerTest {

    private static final KernelSignature VADD = new KernelSignature("vadd", List.of(
            KernelParam.buffer("a", DType.F32, Access.READ),
            KernelParam.buffer("b", DType.F64, Access.READ_WRITE),
            KernelParam.buffer("c", DType.BF16, Access.WRITE),
            KernelParam.scalar("n", DType.I32),
            KernelParam.scalar("s", DType.U8)));

    @Test
    void trampolineCastsEachArgumentToItsDeclaredType() {
        String c = CSourceAssembler.trampoline(VADD);
        assertTrue(c.startsWith("void arrayd_run_vadd(const int64_t *range, void **args) {\n"), c);
        assertTrue(c.contains("    const float *p0 = (const float *)args[0];\n"), c);
        assertTrue(c.contains("    double *p1 = (double *)args[1];\n"), c);
        assertTrue(c.contains("    uint16_t *p2 = (uint16_t *)args[2];\n"), c);
        assertTrue(c.contains("    const int32_t p3 = *(const int32_t *)args[3];\n"), c);
        assertTrue(c.contains("    const uint8_t p4 = *(const uint8_t *)args[4];\n"), c);
        assertTrue(c.contains("vadd(&item, p0, p1, p2, p3, p4);"), c);
    }

    @Test
    void aHoistedTrampolineRunsAFailedBlockInItsOwnGuardedFunction() {
        String c = CSourceAssembler.trampoline(VADD, true, true, "MARK ");
        int guarded = c.indexOf("MARK static __attribute__((noinline)) void arrayd_guarded_vadd(const int64_t *range, void **args) {\n");
        int run = c.indexOf("MARK void ARRAYD_RUN(vadd)(const int64_t *range, void **args) {\n");
        assertTrue(guarded >= 0 && guarded < run, c);
        // the fallback calls the kernel with its guards on, the trampoline with them off once the block is checked
        assertTrue(c.substring(guarded, run).contains("arrayd_k_vadd(&item, p0, p1, p2, p3, p4, ext, guard, arrayd_one, 0);"), c);
        String trampoline = c.substring(run);
        assertTrue(trampoline.contains("arrayd_ok_vadd(&box, lo, hi, p0, p1, p2, p3, p4, ext)) {"), trampoline);
        assertTrue(trampoline.contains("arrayd_k_vadd(&item, p0, p1, p2, p3, p4, ext, guard, arrayd_one, 1);"), trampoline);
        // the 1 that booleans convert with, opaque to gcc, is set before the loops (see CRenderer#cast)
        int one = trampoline.indexOf("    int32_t arrayd_one = 1;\n    __asm__(\"\" : \"+r\"(arrayd_one));\n");
        assertTrue(one >= 0 && one < trampoline.indexOf("for ("), trampoline);
        assertTrue(trampoline.contains("} else {\n        arrayd_guarded_vadd(range, args);\n    }"), trampoline);
        assertTrue(!trampoline.contains(", 0);"), "no guarded copy of the kernel in the trampoline itself: " + trampoline);
    }

    @Test
    void trampolineLoopsZYXWithXInnermost() {
        String c = CSourceAssembler.trampoline(VADD);
        int z = c.indexOf("for (int64_t z = range[2]; z < range[5]; z++)");
        int y = c.indexOf("for (int64_t y = range[1]; y < range[4]; y++)");
        int x = c.indexOf("for (int64_t x = range[0]; x < range[3]; x++)");
        assertTrue(z >= 0 && z < y && y < x, c);
        assertTrue(c.contains("const int64_t gs0 = range[6], gs1 = range[7], gs2 = range[8];"), c);
        assertTrue(c.contains("const int64_t ls0 = range[9], ls1 = range[10], ls2 = range[11];"), c);
    }

    @Test
    void trampolineOfAKernelWithoutParameters() {
        String c = CSourceAssembler.trampoline(new KernelSignature("empty", List.of()));
        assertTrue(c.contains("empty(&item);"), c);
        assertTrue(!c.contains("args["), c);
    }

    @Test
    void userSourceIsIncludedFromItsOwnFile() {
        String unit = CSourceAssembler.assemble(List.of(VADD));
        assertTrue(unit.startsWith(CSourceAssembler.HEADER), unit);
        assertTrue(unit.contains("#include \"kernel.c\"\n#line 1 \"arrayd-trampolines.c\"\nvoid arrayd_run_vadd("), unit);
        for (String include : List.of("<stdint.h>", "<stddef.h>", "<math.h>", "<string.h>")) {
            assertTrue(unit.contains("#include " + include), include);
        }
        assertTrue(unit.contains("#define ARRAYD_KERNEL static inline"), unit);
    }

    @Test
    void entryPointNamesMustBeCIdentifiers() {
        for (String bad : List.of("1abc", "a-b", "", "vadd(", "x y", "ä")) {
            ArraydException e = assertThrows(ArraydException.class,
                    () -> CSourceAssembler.trampoline(new KernelSignature(bad, List.of())));
            assertEquals(ErrorCode.INVALID_ARGUMENT, e.code());
            assertTrue(e.getMessage().contains(Quote.string(bad)), e::getMessage);
        }
        CSourceAssembler.checkIdentifier("_ok_9", "name");
    }
}
