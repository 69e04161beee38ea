package dev.arrayd.devices.api.ir;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Integer ranges the validator's range analysis derives without a scope: of a binary operation from its operands'
 * ranges (bounds and the symbolic bounds they carry; the whole type's range where nothing tighter is proven or
 * the arithmetic would overflow), and of the work-item built-ins.
 */
final class IntRanges {

    private IntRanges() {}

    /** @param symbols the ranges of the symbols bounds may name (grid sizes, scalar parameters) */
static Range binary(Expr.Binary.Op op, IrType t, Range a, Range b, Map<String, long[]> symbols) {
        try {
            return switch (op) {
                case ADD -> Range.fit(t, Math.addExact(a.lo(), b.lo()), Math.addExact(a.hi(), b.hi()),
                        Range.combine(a.allUppers(), b.allUppers(), Poly::add),
                        Range.combine(a.allLowers(), b.allLowers(), Poly::add));
                case SUB -> {
                    // a - b is at most (an upper bound of a) - (a lower bound of b), at least the other way round
                    List<Poly> u = new ArrayList<>(Range.map(a.uppers(), x -> x.addConstant(-b.lo())));
                    u.addAll(Range.combine(a.uppers(), b.lowers(), Poly::subtract));
                    yield Range.fit(t, Math.subtractExact(a.lo(), b.hi()), Math.subtractExact(a.hi(), b.lo()), u,
                            Range.combine(a.allLowers(), b.allUppers(), Poly::subtract));
                }
                case MUL -> {
                    long[] c = {Math.multiplyExact(a.lo(), b.lo()), Math.multiplyExact(a.lo(), b.hi()),
                            Math.multiplyExact(a.hi(), b.lo()), Math.multiplyExact(a.hi(), b.hi())};
                    long lo = Math.min(Math.min(c[0], c[1]), Math.min(c[2], c[3]));
                    long hi = Math.max(Math.max(c[0], c[1]), Math.max(c[2], c[3]));
                    boolean both = a.nonNegative() && b.nonNegative();
                    List<Poly> u = both ? Range.combine(a.allUppers(), b.allUppers(), Poly::multiply) : List.of();
                    // x >= p >= 0 and y >= q >= 0 give x * y >= p * q; a lower bound that may be negative gives nothing
                    List<Poly> w = both ? Range.combine(a.nonNegativeLowers(symbols), b.nonNegativeLowers(symbols),
                            Poly::multiply) : List.of();
                    yield Range.fit(t, lo, hi, u, w);
                }
                case DIV -> a.nonNegative() && b.lo() >= 1
                        ? Range.of(a.lo() / b.hi(), a.hi() / b.lo()) : Range.top(t);
                case REM -> {
                    if (a.nonNegative() && b.lo() >= 1) {
                        List<Poly> u = new ArrayList<>(a.uppers());
                        u.addAll(Range.map(b.uppers(), x -> x.addConstant(-1)));
                        yield new Range(0, Math.min(a.hi(), b.hi() - 1), u);
                    }
                    yield Range.top(t);
                }
                case MIN -> {
                    List<Poly> u = new ArrayList<>(a.uppers());
                    u.addAll(b.uppers());
                    yield new Range(Math.min(a.lo(), b.lo()), Math.min(a.hi(), b.hi()), u);
                }
                case MAX -> {
                    List<Poly> w = new ArrayList<>(a.lowers());
                    w.addAll(b.lowers());
                    yield new Range(Math.max(a.lo(), b.lo()), Math.max(a.hi(), b.hi()), List.of(), w);
                }
                case AND -> a.nonNegative() || b.nonNegative()
                        ? Range.of(0, Math.min(a.nonNegative() ? a.hi() : Long.MAX_VALUE, b.nonNegative() ? b.hi() : Long.MAX_VALUE))
                        : Range.top(t);
                case SHL -> b.lo() == b.hi() && b.lo() >= 0 && b.lo() < t.bits() - 1 && a.nonNegative()
                        ? Range.fit(t, Math.multiplyExact(a.lo(), 1L << b.lo()), Math.multiplyExact(a.hi(), 1L << b.lo()),
                        Range.map(a.uppers(), x -> x.scale(1L << b.lo())))
                        : Range.top(t);
                case SHR -> a.nonNegative() && b.lo() >= 0 && b.hi() < t.bits()
                        ? Range.of(a.lo() >> b.hi(), a.hi() >> b.lo()) : Range.top(t);
                default -> Range.top(t);
            };
        } catch (ArithmeticException e) {
            return Range.top(t);
        }
    }

    /** The range of a work-item built-in of a kernel whose declared work-group size is {@code localSize} (or empty). */
    static Range builtin(Expr.Builtin b, List<Long> localSize) {
        int d = b.dim();
        Poly gs = Poly.symbol("$gs" + d);
        boolean declaredLocal = !localSize.isEmpty();
        long l = declaredLocal ? localSize.get(d) : IrValidator.MAX_GROUP_SIZE;
        Poly ls = declaredLocal ? Poly.constant(l) : Poly.symbol("$ls" + d);
        return switch (b.kind()) {
            case GLOBAL_ID, GROUP_ID -> new Range(0, IrValidator.MAX_GLOBAL_SIZE - 1, List.of(gs.addConstant(-1)));
            case GLOBAL_SIZE, NUM_GROUPS -> new Range(1, IrValidator.MAX_GLOBAL_SIZE, List.of(gs), List.of(gs));
            case LOCAL_ID -> new Range(0, l - 1, declaredLocal ? List.of() : List.of(ls.addConstant(-1)));
            case LOCAL_SIZE -> declaredLocal ? Range.of(l, l) : new Range(1, l, List.of(ls), List.of(ls));
        };
    }
}
