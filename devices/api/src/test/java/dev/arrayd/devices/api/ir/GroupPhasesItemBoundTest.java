package dev.arrayd.devices.api.ir;

import static dev.arrayd.devices.api.ir.IrDsl.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.DType;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Which runs of a phased kernel stop their item loop at an {@code if (local_id(0) < bound)}. */
class GroupPhasesItemBoundTest {

    private static CheckedKernel checked(IrKernel k) {
        return IrValidator.check(new IrModule(List.of(k)), "ir").getFirst();
    }

    /** A group of 64 items; {@code run} between two barriers inside a loop over {@code level}. */
    private static IrKernel kernel(Stmt... run) {
        List<Stmt> body = new java.util.ArrayList<>(List.of(run));
        body.add(new Stmt.Barrier());
        return new IrKernel("k", List.of(new IrParam.Buffer("x", DType.F32, Access.READ_WRITE, i64(64))), 1, List.of(64L),
                List.of(new Stmt.LocalArray("t", DType.F32, 64),
                        let("me", lid(0)),
                        store("t", lid(0), load("x", lid(0))),
                        new Stmt.Barrier(),
                        loop("level", i64(0), i64(3), body.toArray(Stmt[]::new)),
                        store("x", lid(0), load("t", lid(0)))));
    }

    private static List<Stmt> run(IrKernel k) {
        Stmt.For loop = (Stmt.For) k.body().get(4);
        return loop.body().subList(0, loop.body().size() - 1);
    }

    private static final Stmt ADD = new Stmt.Accumulate("t", lid(0), Stmt.Accumulate.Op.ADD, f32(1));

    @Test
    void theGroupSumsTreeReductionStopsAtItsStride() {
        CheckedKernel k = checked(IrSamples.groupSum());
        Stmt.For levels = (Stmt.For) k.kernel().body().get(3);
        GroupPhases.ItemBound b = GroupPhases.itemBound(k, levels.body().subList(0, 2));
        assertNotNull(b);
        assertEquals(1, b.lets().size(), "stride, computed at group level first");
        assertEquals(var("stride"), b.bound());
        String c = new CRenderer().render(List.of(k));
        assertTrue(c.contains("arrayd_lx < arrayd_lx_end"), c);
        assertTrue(c.contains("if (arrayd_lx_end > 256) arrayd_lx_end = 256;"), c);
    }

    @Test
    void boundsOfLetsLoopVariablesAndTheLocalIdThroughALet() {
        IrKernel viaLet = kernel(let("half", bin(Expr.Binary.Op.SHR, i64(32), var("level"))),
                when(lt(var("me"), var("half")), ADD));
        assertNotNull(GroupPhases.itemBound(checked(viaLet), run(viaLet)));
        IrKernel direct = kernel(when(lt(lid(0), sub(i64(40), var("level"))), ADD));
        assertNotNull(GroupPhases.itemBound(checked(direct), run(direct)));
    }

    @Test
    void runsThatAnItemBeyondTheBoundWouldStillChangeKeepTheirWholeLoop() {
        for (IrKernel k : List.of(
                // an else: items past the bound do something
                kernel(new Stmt.If(lt(lid(0), i64(8)), List.of(ADD), List.of(ADD))),
                // a bound that differs per item (it reads memory)
                kernel(when(lt(lid(0), cast(IrType.I64, load("x", i64(0)))), ADD)),
                // a let with a load before the if: a guard of a skipped item could fail
                kernel(let("v", load("x", lid(0))), when(lt(lid(0), i64(8)), ADD)),
                // another statement after the if
                kernel(when(lt(lid(0), i64(8)), ADD), ADD),
                // the test is on the item's position in another way
                kernel(when(lt(i64(8), lid(0)), ADD)))) {
            assertNull(GroupPhases.itemBound(checked(k), run(k)), k.body().get(4).toString());
        }
    }
}
