package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.ir.CheckedKernel;
import dev.arrayd.devices.api.ir.CudaRenderer;
import dev.arrayd.devices.api.ir.IrKernel;
import dev.arrayd.devices.api.ir.IrModule;
import dev.arrayd.devices.api.ir.IrParam;
import dev.arrayd.devices.api.ir.IrSamples;
import dev.arrayd.devices.api.ir.IrValidator;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The NVRTC unit of an IR module: the renderer's kernels as device functions, then the launch wrappers. */
class CudaIrAssemblerTest {

    static List<CheckedKernel> checked(IrKernel... kernels) {
        return IrValidator.check(new IrModule(List.of(kernels)), "ir");
    }

    @Test
    void theRenderedKernelBecomesAnInlinedBodyAndTheWrapperIsTheEntryPoint() {
        List<CheckedKernel> saxpy = checked(IrSamples.saxpy());
        String unit = CudaIrAssembler.assemble(saxpy);
        String rendered = new CudaRenderer().render(saxpy);
        assertTrue(unit.startsWith("#line 1 \"ir.cu\"\n"), unit);
        assertTrue(unit.contains("static __device__ __forceinline__ void arrayd_body_saxpy(const float p_a, const float *p_x, "
                + "float *p_y, const arrayd_i64 p_n, const arrayd_i64 *arrayd_ext, arrayd_i64 *arrayd_guard) {"), unit);
        String wrappers = unit.substring(unit.indexOf("#line 1 \"arrayd-launch.cu\"\n"));
        assertEquals("""
                #line 1 "arrayd-launch.cu"
                struct arrayd_ext_saxpy { arrayd_i64 n[4]; };
                extern "C" __global__ void arrayd_entry_saxpy(const float a0, const float *a1, float *a2, const arrayd_i64 a3, \
                const struct arrayd_ext_saxpy arrayd_ext, arrayd_i64 *arrayd_guard) {
                    arrayd_body_saxpy(a0, a1, a2, a3, arrayd_ext.n, arrayd_guard);
                }
                """, wrappers);
        // the only kernel head left is the wrapper's; everything else is the renderer's text unchanged
        assertEquals(1, count(unit, "__global__"));
        assertEquals(rendered.replace("extern \"C\" __global__ void saxpy(",
                "static __device__ __forceinline__ void arrayd_body_saxpy("),
                unit.substring("#line 1 \"ir.cu\"\n".length(), unit.indexOf("#line 1 \"arrayd-launch.cu\"")));
        assertEquals(unit, CudaIrAssembler.assemble(checked(IrSamples.saxpy())), "deterministic: the module cache keys on it");
    }

    @Test
    void everyKernelOfAModuleGetsItsWrapperAndADeclaredGroupSizeBoundsTheLaunch() {
        String unit = CudaIrAssembler.assemble(checked(IrSamples.saxpy(), IrSamples.gatherUnchecked(), IrSamples.matmul(),
                IrSamples.groupSum()));
        for (String name : List.of("saxpy", "gather", "matmul", "group_sum")) {
            assertEquals(1, count(unit, "void arrayd_body_" + name + "("), name);
            assertEquals(1, count(unit, "struct arrayd_ext_" + name + " {"), name);
        }
        assertEquals(4, count(unit, "extern \"C\" __global__ void "));
        assertTrue(unit.contains("extern \"C\" __global__ void __launch_bounds__(256) arrayd_entry_group_sum(const float *a0, float *a1, "
                + "const struct arrayd_ext_group_sum arrayd_ext, arrayd_i64 *arrayd_guard) {"), unit);
        assertTrue(unit.contains("struct arrayd_ext_matmul { arrayd_i64 n[6]; };"), unit);
        assertTrue(unit.contains("arrayd_entry_matmul(const float *a0, const float *a1, float *a2, const arrayd_i32 a3, const arrayd_i32 a4, "
                + "const arrayd_i32 a5, "), unit);
        assertFalse(unit.contains("__launch_bounds__(256) saxpy"), "no declared local size: the launch chooses");
    }

    @Test
    void aKernelWithoutParametersStillHasAnExtentsStruct() {
        IrKernel none = new IrKernel("nothing", List.of(), 1, List.of(), List.of());
        String wrapper = CudaIrAssembler.wrapper(checked(none).getFirst());
        assertEquals("""
                struct arrayd_ext_nothing { arrayd_i64 n[1]; };
                extern "C" __global__ void arrayd_entry_nothing(const struct arrayd_ext_nothing arrayd_ext, arrayd_i64 *arrayd_guard) {
                    arrayd_body_nothing(arrayd_ext.n, arrayd_guard);
                }
                """, wrapper);
    }

    @Test
    void writableBuffersAreNotConstAndStorageTypesHaveThePackedWidths() {
        IrKernel k = new IrKernel("halves", List.of(
                new IrParam.Buffer("h", DType.F16, Access.READ, null),
                new IrParam.Buffer("b", DType.BF16, Access.READ_WRITE, null),
                new IrParam.Buffer("u", DType.U8, Access.WRITE, null),
                new IrParam.Scalar("s", DType.U8, null, null),
                new IrParam.Scalar("d", DType.F64, null, null)), 1, List.of(), List.of());
        String wrapper = CudaIrAssembler.wrapper(checked(k).getFirst());
        assertTrue(wrapper.contains("arrayd_entry_halves(const arrayd_u16 *a0, arrayd_u16 *a1, arrayd_u8 *a2, const arrayd_u8 a3, "
                + "const double a4, "), wrapper);
        // PackedArgs passes a scalar at dtype.byteSize() bytes: the wrapper's parameter must be exactly that wide
        assertEquals("float", dev.arrayd.devices.api.ir.CLikeRenderer.storageType(DType.F32));
        assertEquals("double", dev.arrayd.devices.api.ir.CLikeRenderer.storageType(DType.F64));
        assertEquals("arrayd_i32", dev.arrayd.devices.api.ir.CLikeRenderer.storageType(DType.I32));
        assertEquals("arrayd_i64", dev.arrayd.devices.api.ir.CLikeRenderer.storageType(DType.I64));
        assertEquals("arrayd_u8", dev.arrayd.devices.api.ir.CLikeRenderer.storageType(DType.U8));
    }

    @Test
    void aRendererWhoseKernelHeadChangedIsCaughtHere() {
        IllegalStateException missing = assertThrows(IllegalStateException.class,
                () -> CudaIrAssembler.asDeviceFunction("__global__ void saxpy(", "saxpy"));
        assertTrue(missing.getMessage().contains("no kernel head \"extern \"C\" __global__ void saxpy(\""), missing::getMessage);
        String twice = "extern \"C\" __global__ void k() {}\nextern \"C\" __global__ void k() {}\n";
        IllegalStateException two = assertThrows(IllegalStateException.class, () -> CudaIrAssembler.asDeviceFunction(twice, "k"));
        assertTrue(two.getMessage().contains("more than one"), two::getMessage);
        // a kernel whose name is a prefix of another's is not confused with it
        assertEquals("extern \"C\" __global__ void kk() {}\nstatic __device__ __forceinline__ void arrayd_body_k() {}\n",
                CudaIrAssembler.asDeviceFunction("extern \"C\" __global__ void kk() {}\nextern \"C\" __global__ void k() {}\n", "k"));
    }

    private static int count(String text, String part) {
        int n = 0;
        for (int at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + 1)) {
            n++;
        }
        return n;
    }
}
