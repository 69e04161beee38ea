package dev.arrayd.devices.api.ir;

import java.util.ArrayList;
import java.util.List;

/**
 * What the range analysis knows about an integer value: it lies in {@code [lo, hi]} and is at most
 * each polynomial in {@code uppers}. Operations whose exact result could leave the value's type
 * (where the rendered code would wrap) give the type's full range with no symbolic bounds, so a
 * wrapped index is never "proven" in bounds.
 */
record Range(long lo, long hi, List<Poly> uppers) {

    /** More symbolic bounds than this are dropped (the first ones are the most useful: the refinements). */
    static final int MAX_UPPERS = 6;

    Range {
        uppers = List.copyOf(uppers.size() > MAX_UPPERS ? uppers.subList(0, MAX_UPPERS) : uppers);
    }

    static Range of(long lo, long hi) {
        return new Range(lo, hi, List.of());
    }

    static Range top(IrType type) {
        return of(type.min(), type.max());
    }

    /** {@code [lo, hi]} if it fits {@code type}, else the full range: the C code would wrap. */
    static Range fit(IrType type, long lo, long hi, List<Poly> uppers) {
        if (lo < type.min() || hi > type.max() || lo > hi) {
            return top(type);
        }
        return new Range(lo, hi, uppers);
    }

    /** Every symbolic upper bound, the numeric one included. */
    List<Poly> allUppers() {
        List<Poly> out = new ArrayList<>(uppers.size() + 1);
        out.addAll(uppers);
        out.add(Poly.constant(hi));
        return out;
    }

    boolean nonNegative() {
        return lo >= 0;
    }

    /** The facts of both: the value satisfies this range and {@code o}. */
    Range intersect(Range o) {
        List<Poly> u = new ArrayList<>(o.uppers);
        for (Poly p : uppers) {
            if (!u.contains(p)) {
                u.add(p);
            }
        }
        long l = Math.max(lo, o.lo);
        long h = Math.min(hi, o.hi);
        if (l > h) {
            // an unreachable branch: keep the old facts, which are sound either way
            return this;
        }
        return new Range(l, h, u);
    }

    /** The facts true of a value from either range. */
    Range join(Range o) {
        List<Poly> u = new ArrayList<>();
        for (Poly p : uppers) {
            if (o.uppers.contains(p)) {
                u.add(p);
            }
        }
        return new Range(Math.min(lo, o.lo), Math.max(hi, o.hi), u);
    }

    static List<Poly> combine(List<Poly> a, List<Poly> b, java.util.function.BinaryOperator<Poly> op) {
        List<Poly> out = new ArrayList<>();
        for (Poly x : a) {
            for (Poly y : b) {
                if (x.isConstant() && y.isConstant()) {
                    continue; // the numeric bound already says it
                }
                try {
                    Poly r = op.apply(x, y);
                    if (!out.contains(r)) {
                        out.add(r);
                    }
                } catch (ArithmeticException e) {
                    // no symbolic bound from this pair
                }
                if (out.size() >= MAX_UPPERS) {
                    return out;
                }
            }
        }
        return out;
    }

    static List<Poly> map(List<Poly> a, java.util.function.UnaryOperator<Poly> op) {
        List<Poly> out = new ArrayList<>();
        for (Poly x : a) {
            try {
                out.add(op.apply(x));
            } catch (ArithmeticException e) {
                // dropped
            }
        }
        return out;
    }
}
