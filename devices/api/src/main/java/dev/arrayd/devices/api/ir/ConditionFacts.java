package dev.arrayd.devices.api.ir;

import java.util.List;

/**
 * What a branch condition tells about integer expressions, for the range analysis of {@link IrValidator}: inside
 * {@code if (i < n)} the value of {@code i} is at most {@code n - 1}, and {@code n} at least {@code i + 1}; a
 * negation swaps the branch, {@code &&} (taken) and {@code ||} (not taken) apply both sides. What is learned goes
 * into a child scope's facts, and only for expressions whose value cannot change within a work-item's run
 * ({@link #stable}).
 */
final class ConditionFacts {

    /** What the analysis knows of expressions (the validator's pass). */
    interface Ranges {
        /** The type {@code e} was given, or null. */
        IrType type(Expr e);

        /** The range of {@code e} in scope {@code s} (computed without recording anything). */
        Range range(Expr e, IrScope s);

        /** Whether {@code var} is a mutable variable. */
        boolean mutable(String var);
    }

    private final Ranges ranges;

    ConditionFacts(Ranges ranges) {
        this.ranges = ranges;
    }

    /** {@code s}, knowing now that {@code cond} is {@code positive} (its facts added to it). */
    IrScope refine(IrScope s, Expr cond, boolean positive) {
        switch (cond) {
            case Expr.Unary u when u.op() == Expr.Unary.Op.NOT -> {
                return refine(s, u.operand(), !positive);
            }
            case Expr.Binary b when b.op() == Expr.Binary.Op.LOGICAL_AND && positive -> {
                return refine(refine(s, b.left(), true), b.right(), true);
            }
            case Expr.Binary b when b.op() == Expr.Binary.Op.LOGICAL_OR && !positive -> {
                return refine(refine(s, b.left(), false), b.right(), false);
            }
            case Expr.Binary b when b.op().isComparison() && ranges.type(b.left()) != null
                    && ranges.type(b.left()).isInteger() -> {
                Expr.Binary.Op op = positive ? b.op() : b.op().negated();
                Range l = ranges.range(b.left(), s);
                Range r = ranges.range(b.right(), s);
                switch (op) {
                    case LT -> lessThan(s, b.left(), l, b.right(), r, 1);
                    case LE -> lessThan(s, b.left(), l, b.right(), r, 0);
                    case GT -> lessThan(s, b.right(), r, b.left(), l, 1);
                    case GE -> lessThan(s, b.right(), r, b.left(), l, 0);
                    case EQ -> {
                        lessThan(s, b.left(), l, b.right(), r, 0);
                        lessThan(s, b.right(), r, b.left(), l, 0);
                    }
                    default -> { }
                }
                return s;
            }
            default -> {
                return s;
            }
        }
    }

    /** Learns {@code a <= b - gap}: a's upper bounds from b, b's lower bound from a. */
    private void lessThan(IrScope s, Expr a, Range ra, Expr b, Range rb, long gap) {
        if (stable(a)) {
            try {
                long hi = Math.subtractExact(rb.hi(), gap);
                s.facts.put(a, ra.intersect(new Range(Long.MIN_VALUE, hi,
                        Range.map(rb.uppers(), u -> u.addConstant(-gap)))));
            } catch (ArithmeticException e) {
                // nothing learned
            }
        }
        if (stable(b)) {
            try {
                long lo = Math.addExact(ra.lo(), gap);
                s.facts.put(b, rb.intersect(new Range(lo, Long.MAX_VALUE, List.of())));
            } catch (ArithmeticException e) {
                // nothing learned
            }
        }
    }

    /** Expressions whose value cannot change within a work-item's run: no loads, no mutable variables. */
    boolean stable(Expr e) {
        return switch (e) {
            case Expr.Const c -> true;
            case Expr.Param p -> true;
            case Expr.Var v -> !ranges.mutable(v.name());
            case Expr.Builtin b -> true;
            case Expr.Load l -> false;
            case Expr.Unary u -> stable(u.operand());
            case Expr.Binary b -> stable(b.left()) && stable(b.right());
            case Expr.Select x -> stable(x.condition()) && stable(x.ifTrue()) && stable(x.ifFalse());
            case Expr.Cast c -> stable(c.operand());
            case Expr.Fma f -> stable(f.a()) && stable(f.b()) && stable(f.c());
        };
    }
}
