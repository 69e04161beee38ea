package dev.arrayd.devices.api.ir;

import java.util.ArrayList;
import java.util.List;

/**
 * What the range analysis knows about an integer value: it lies in {@code [lo, hi]}, is at most each
 * polynomial in {@code uppers} and at least each one in {@code lowers} (so {@code (y + 1) * row + x - row}
 * is provably not negative). Operations whose exact result could leave the value's type (where the
 * rendered code would wrap) give the type's full range with no symbolic bounds, so a wrapped index is
 * never "proven" in bounds.
 */
record Range(long lo, long hi, List<Poly> uppers, List<Poly> lowers) {

    /** More symbolic bounds than this are dropped (the first ones are the most useful: the refinements). */
    static final int MAX_UPPERS = 6;

    Range {
        // a bound that came out constant (w - w) tightens the numeric one instead of being dropped as known
        List<Poly> u = new ArrayList<>(uppers.size());
        for (Poly p : uppers) {
            if (p.isConstant()) {
                hi = Math.max(lo, Math.min(hi, p.constantValue()));
            } else if (u.size() < MAX_UPPERS) {
                u.add(p);
            }
        }
        List<Poly> w = new ArrayList<>(lowers.size());
        for (Poly p : lowers) {
            if (p.isConstant()) {
                lo = Math.min(hi, Math.max(lo, p.constantValue()));
            } else if (w.size() < MAX_UPPERS) {
                w.add(p);
            }
        }
        uppers = List.copyOf(u);
        lowers = List.copyOf(w);
    }

    /** No symbolic lower bounds. */
    Range(long lo, long hi, List<Poly> uppers) {
        this(lo, hi, uppers, List.of());
    }

    static Range of(long lo, long hi) {
        return new Range(lo, hi, List.of());
    }

    static Range top(IrType type) {
        return of(type.min(), type.max());
    }

    /** {@code [lo, hi]} if it fits {@code type}, else the full range: the C code would wrap. */
    static Range fit(IrType type, long lo, long hi, List<Poly> uppers) {
        return fit(type, lo, hi, uppers, List.of());
    }

    /** {@code [lo, hi]} with symbolic bounds if it fits {@code type}, else the full range. */
    static Range fit(IrType type, long lo, long hi, List<Poly> uppers, List<Poly> lowers) {
        if (lo < type.min() || hi > type.max() || lo > hi) {
            return top(type);
        }
        return new Range(lo, hi, uppers, lowers);
    }

    /** Every symbolic upper bound, the numeric one included. */
    List<Poly> allUppers() {
        List<Poly> out = new ArrayList<>(uppers.size() + 1);
        out.addAll(uppers);
        out.add(Poly.constant(hi));
        return out;
    }

    /** Every symbolic lower bound, the numeric one included. */
    List<Poly> allLowers() {
        List<Poly> out = new ArrayList<>(lowers.size() + 1);
        out.addAll(lowers);
        out.add(Poly.constant(lo));
        return out;
    }

    /** The lower bounds that are never negative, whatever the symbols ({@code symbols}: their bounds). */
    List<Poly> nonNegativeLowers(java.util.Map<String, long[]> symbols) {
        List<Poly> out = new ArrayList<>();
        for (Poly p : allLowers()) {
            try {
                if (p.addConstant(1).provablyPositive(symbols)) {
                    out.add(p);
                }
            } catch (ArithmeticException e) {
                // not usable
            }
        }
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
        List<Poly> w = new ArrayList<>(o.lowers);
        for (Poly p : lowers) {
            if (!w.contains(p)) {
                w.add(p);
            }
        }
        long l = Math.max(lo, o.lo);
        long h = Math.min(hi, o.hi);
        if (l > h) {
            // an unreachable branch: keep the old facts, which are sound either way
            return this;
        }
        return new Range(l, h, u, w);
    }

    /** The facts true of a value from either range. */
    Range join(Range o) {
        List<Poly> u = new ArrayList<>();
        for (Poly p : uppers) {
            if (o.uppers.contains(p)) {
                u.add(p);
            }
        }
        List<Poly> w = new ArrayList<>();
        for (Poly p : lowers) {
            if (o.lowers.contains(p)) {
                w.add(p);
            }
        }
        return new Range(Math.min(lo, o.lo), Math.max(hi, o.hi), u, w);
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
