package dev.arrayd.devices.remote;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** {@link LostRanges} against a model: one flag per byte. */
class LostRangesTest {

    private static final int BYTES = 96;

    record Op(boolean write, int offset, int length) {}

    @Provide
    Arbitrary<List<Op>> ops() {
        Arbitrary<Op> op = Combinators.combine(Arbitraries.of(true, false), Arbitraries.integers().between(0, BYTES - 1),
                Arbitraries.integers().between(0, 40)).as((w, o, l) -> new Op(w, o, Math.min(l, BYTES - o)));
        return op.list().ofMaxSize(30);
    }

    @Property
    void agreesWithOneFlagPerByte(@ForAll("ops") List<Op> ops) {
        LostRanges lost = new LostRanges();
        lost.loseAll(BYTES);
        boolean[] model = new boolean[BYTES];
        java.util.Arrays.fill(model, true);
        for (Op op : ops) {
            if (op.write()) {
                lost.written(op.offset(), op.length());
                for (int i = op.offset(); i < op.offset() + op.length(); i++) {
                    model[i] = false;
                }
            } else {
                boolean any = false;
                for (int i = op.offset(); i < op.offset() + op.length(); i++) {
                    any |= model[i];
                }
                assertEquals(any, lost.overlaps(op.offset(), op.length()), op.toString());
            }
        }
        boolean any = false;
        for (boolean b : model) {
            any |= b;
        }
        assertEquals(!any, lost.isEmpty());
    }
}
