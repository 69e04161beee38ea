package dev.arrayd.devices.opencl;

import dev.arrayd.devices.api.ir.CheckedKernel;
import dev.arrayd.devices.api.ir.IrModule;
import dev.arrayd.devices.api.ir.IrSamples;
import dev.arrayd.devices.api.ir.IrValidator;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The program text of IR modules, without a driver: runs everywhere, so that a change of the
 * renderer's output that the head rewrite no longer understands fails here even where OpenCL tests
 * are skipped.
 */
class IrProgramAssemblerTest {

    private static final List<CheckedKernel> KERNELS = IrValidator.check(new IrModule(List.of(
            IrSamples.saxpy(), IrSamples.gatherUnchecked(), IrSamples.groupSum())), "ir");

    @Test
    void eachKernelBecomesAnEntryTakingSlabOffsetAndCountPerBuffer() {
        String text = IrProgramAssembler.assemble(KERNELS);
        assertTrue(text.startsWith("#line 1 \"arrayd-ir.cl\"\n#pragma OPENCL FP_CONTRACT OFF\n"), text);
        assertTrue(text.contains("__kernel void arrayd_entry_saxpy(const float p_a, __global uchar *arrayd_b1, ulong arrayd_o1, "
                + "long arrayd_n1, __global uchar *arrayd_b2, ulong arrayd_o2, long arrayd_n2, const long p_n) {\n"
                + "    const __global float *p_x = (const __global float *)(arrayd_b1 + arrayd_o1);\n"
                + "    __global float *p_y = (__global float *)(arrayd_b2 + arrayd_o2);\n"
                + "    const arrayd_i64 arrayd_ext[4] = {0, arrayd_n1, arrayd_n2, 0};\n"), text);
        assertTrue(text.contains("void arrayd_entry_gather(__global uchar *arrayd_b0, ulong arrayd_o0, long arrayd_n0, "
                + "__global uchar *arrayd_b1, ulong arrayd_o1, long arrayd_n1, __global arrayd_i64 *arrayd_guard) {"), text);
        assertFalse(text.contains("void saxpy(") || text.contains("void gather(") || text.contains("void group_sum("), text);
    }

    @Test
    void localArraysAreDeclaredFirstZeroedAndFencedOnce() {
        String text = IrProgramAssembler.assemble(List.of(KERNELS.get(2)));
        String entry = text.substring(text.indexOf("__kernel __attribute__((reqd_work_group_size(256, 1, 1))) void arrayd_entry_group_sum("));
        int declared = entry.indexOf("    __local float l_tile[256];\n");
        int zeroed = entry.indexOf("l_tile[arrayd_z] = 0;\n");
        int fenced = entry.indexOf("    barrier(CLK_LOCAL_MEM_FENCE);\n");
        int firstUse = entry.indexOf("l_tile[((arrayd_i64)get_local_id(0))] =");
        assertTrue(declared > 0 && declared < zeroed && zeroed < fenced && fenced < firstUse, entry);
        assertEquals(declared, entry.lastIndexOf("    __local float l_tile[256];\n"), "declared once: " + entry);
    }

    @Test
    void argumentLayoutMatchesTheText() {
        assertArrayEquals(new int[] {0, 1, 4, 7}, IrProgramAssembler.argIndexes(KERNELS.get(0)));
        assertEquals(-1, IrProgramAssembler.guardArg(KERNELS.get(0)), "saxpy: every access proven");
        assertArrayEquals(new int[] {0, 3}, IrProgramAssembler.argIndexes(KERNELS.get(1)));
        assertEquals(6, IrProgramAssembler.guardArg(KERNELS.get(1)));
    }

    @Test
    void theTextIsAFunctionOfTheModule() {
        assertEquals(IrProgramAssembler.assemble(KERNELS), IrProgramAssembler.assemble(
                IrValidator.check(new IrModule(List.of(IrSamples.saxpy(), IrSamples.gatherUnchecked(), IrSamples.groupSum())), "ir")));
    }
}
