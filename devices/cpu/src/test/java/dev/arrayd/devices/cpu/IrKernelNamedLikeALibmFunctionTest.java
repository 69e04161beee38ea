package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.ir.IrKernel;
import dev.arrayd.devices.api.ir.IrParam;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.lang.foreign.ValueLayout;
import java.util.List;

import static dev.arrayd.devices.api.ir.IrDsl.*;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A valid IR kernel may be named {@code pow} (the validator accepts any C identifier not starting
 * with {@code arrayd} or {@code __}), but {@code CRenderer} emits the kernel under its IR name, so
 * gcc fails with "conflicting types for 'pow'" against math.h and the compile is INVALID_ARGUMENT.
 * Found by the shared differential suite (devices/api {@code IrDifferentialSuite}), whose first pow
 * example was a kernel named {@code pow}; OpenCL names its entries {@code arrayd_entry_<name>} and
 * compiles it.
 */
class IrKernelNamedLikeALibmFunctionTest {

    @RegisterExtension
    static final SharedCpuIrHarness SHARED = new SharedCpuIrHarness();

    private static CpuIrHarness h() {
        return SHARED.get();
    }

    @Test
    void aKernelNamedPowCompilesAndRuns() throws Exception {
        IrKernel pow = new IrKernel("pow", List.of(new IrParam.Buffer("out", DType.I32, Access.WRITE, i64(1))), 1,
                List.of(), List.of(when(lt(gid(0), i64(1)), store("out", gid(0), i32(7)))));
        Kernel k = h().compile(pow).getFirst();
        MemRef out = h().alloc(4);
        h().launch(k, new long[] {1}, null, List.of(new KernelArg.Buffer(out)));
        assertEquals(7, h().segment(out).get(ValueLayout.JAVA_INT, 0));
    }
}
