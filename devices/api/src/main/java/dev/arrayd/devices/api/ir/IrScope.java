package dev.arrayd.devices.api.ir;

import java.util.HashMap;
import java.util.Map;

/** The validator's variables and learned facts of one block; lookups walk out to the enclosing blocks. */
final class IrScope {

    /** A let or loop variable: its type, whether it may change, whether it is the same in every work-item, its range. */
    record Var(IrType type, boolean mutable, boolean uniform, Range range) {}

    final IrScope parent;
    final Map<String, Var> vars = new HashMap<>();
    final Map<Expr, Range> facts = new HashMap<>();

    IrScope(IrScope parent) {
        this.parent = parent;
    }

    Var lookup(String name) {
        for (IrScope s = this; s != null; s = s.parent) {
            Var v = s.vars.get(name);
            if (v != null) {
                return v;
            }
        }
        return null;
    }

    Range fact(Expr e) {
        Range r = null;
        for (IrScope s = this; s != null; s = s.parent) {
            Range f = s.facts.get(e);
            if (f != null) {
                r = r == null ? f : r.intersect(f);
            }
        }
        return r;
    }
}
