package dev.arrayd.devices.api.ir;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.KernelArg;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The launch-only view of a kernel that passed the validator (what a compile cache hit by content gives): every
 * launch check answers as the checked kernel's does, and nothing can be rendered from it.
 */
class CheckedKernelForLaunchesTest {

    private static List<IrKernel> kernels() {
        List<IrKernel> out = new ArrayList<>(List.of(IrSamples.saxpy(), IrSamples.gatherUnchecked(), IrSamples.matmul(),
                IrSamples.groupSum(), IrSamples.tiledMatmul(), IrSamples.vaddProven(), IrSamples.vaddGuarded()));
        for (long seed = 0; seed < 60; seed++) {
            out.add(RandomIrKernels.kernel(seed, seed % 2 == 0));
        }
        return out;
    }

    @Test
    void launchChecksAnswerAsTheCheckedKernelsDo() {
        Random r = new Random(7);
        for (IrKernel k : kernels()) {
            CheckedKernel checked = IrValidator.check(new IrModule(List.of(k)), "ir").getFirst();
            CheckedKernel view = CheckedKernel.forLaunches(k);
            assertTrue(checked.renderable());
            assertFalse(view.renderable());
            assertEquals(checked.usesBarrier(), view.usesBarrier(), k.name());
            assertEquals(GroupPhases.needed(checked), GroupPhases.needed(view), k.name());
            for (int i = 0; i < k.params().size(); i++) {
                String name = k.params().get(i).name();
                assertEquals(checked.paramIndex(name), view.paramIndex(name));
                assertEquals(checked.guardId(name), view.guardId(name));
            }
            for (Stmt s : k.body()) {
                if (s instanceof Stmt.LocalArray la) {
                    assertEquals(checked.localArray(la.name()), view.localArray(la.name()));
                    assertEquals(checked.guardId(la.name()), view.guardId(la.name()));
                }
            }
            for (int trial = 0; trial < 40; trial++) {
                int dims = 1 + r.nextInt(3);
                long[] global = new long[dims];
                for (int d = 0; d < dims; d++) {
                    global[d] = r.nextInt(4) == 0 ? 256L * (1 + r.nextInt(4)) : 1 + r.nextInt(600);
                }
                List<KernelArg> args = new ArrayList<>();
                long[] extents = new long[k.params().size()];
                for (int i = 0; i < k.params().size(); i++) {
                    if (k.params().get(i) instanceof IrParam.Scalar) {
                        args.add(KernelArg.Scalar.i64(r.nextInt(5) == 0 ? -r.nextInt(10) : r.nextInt(2000)));
                    } else {
                        args.add(null);
                        extents[i] = r.nextInt(3) == 0 ? r.nextInt(100) : r.nextInt(1 << 22);
                    }
                }
                String want = outcome(() -> checked.checkLaunch(global, null, args, extents));
                String got = outcome(() -> view.checkLaunch(global, null, args, extents));
                assertEquals(want, got, k.name() + " " + java.util.Arrays.toString(global));
            }
            ArraydException want = checked.outOfRange(0, 99, new long[k.params().size()]);
            assertEquals(want.getMessage(), view.outOfRange(0, 99, new long[k.params().size()]).getMessage());
        }
    }

    @Test
    void nothingCanBeRenderedFromTheView() {
        CheckedKernel view = CheckedKernel.forLaunches(IrSamples.saxpy());
        assertThrows(IllegalStateException.class, () -> view.guarded(new Object()));
        assertThrows(IllegalStateException.class, () -> view.type(new Expr.Param("n")));
        assertThrows(IllegalStateException.class, view::withAllGuards);
        assertThrows(IllegalStateException.class, view::varTypes);
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> new CRenderer().render(List.of(view)));
        assertTrue(e.getMessage().contains("saxpy"), e::getMessage);
    }

    private static String outcome(java.util.function.Supplier<long[]> check) {
        try {
            long[] local = check.get();
            return "ok " + (local == null ? "-" : java.util.Arrays.toString(local));
        } catch (ArraydException e) {
            return e.code() + " " + e.getMessage();
        }
    }
}
