package dev.arrayd.devices.api.ir;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * A polynomial with integer coefficients over non-negative symbols (scalar parameters with
 * {@code min >= 0}, global and local sizes): the symbolic bounds of the range analysis. A product
 * such as {@code (m - 1) * k + k - 1 = m*k - 1} is what proves {@code a[row * k + col]} within an
 * extent of {@code m * k}. Arithmetic is exact; an overflow throws {@link ArithmeticException},
 * which the analysis reads as "no symbolic bound".
 */
final class Poly {

    /** Monomial ("" for the constant, else symbol names sorted and joined by '*') to coefficient. */
    private final TreeMap<String, Long> terms;

    private Poly(TreeMap<String, Long> terms) {
        this.terms = terms;
    }

    static Poly constant(long c) {
        TreeMap<String, Long> t = new TreeMap<>();
        if (c != 0) {
            t.put("", c);
        }
        return new Poly(t);
    }

    static Poly symbol(String name) {
        TreeMap<String, Long> t = new TreeMap<>();
        t.put(name, 1L);
        return new Poly(t);
    }

    boolean isConstant() {
        return terms.isEmpty() || (terms.size() == 1 && terms.containsKey(""));
    }

    /** The constant term (the whole value of a constant polynomial). */
    long constantValue() {
        return terms.getOrDefault("", 0L);
    }

    Poly add(Poly o) {
        TreeMap<String, Long> t = new TreeMap<>(terms);
        for (Map.Entry<String, Long> e : o.terms.entrySet()) {
            long sum = Math.addExact(t.getOrDefault(e.getKey(), 0L), e.getValue());
            if (sum == 0) {
                t.remove(e.getKey());
            } else {
                t.put(e.getKey(), sum);
            }
        }
        return new Poly(t);
    }

    Poly addConstant(long c) {
        return add(constant(c));
    }

    Poly scale(long c) {
        TreeMap<String, Long> t = new TreeMap<>();
        if (c != 0) {
            for (Map.Entry<String, Long> e : terms.entrySet()) {
                t.put(e.getKey(), Math.multiplyExact(e.getValue(), c));
            }
        }
        return new Poly(t);
    }

    Poly subtract(Poly o) {
        return add(o.scale(-1));
    }

    Poly multiply(Poly o) {
        Poly out = constant(0);
        for (Map.Entry<String, Long> a : terms.entrySet()) {
            for (Map.Entry<String, Long> b : o.terms.entrySet()) {
                TreeMap<String, Long> t = new TreeMap<>();
                t.put(mergeMonomials(a.getKey(), b.getKey()), Math.multiplyExact(a.getValue(), b.getValue()));
                out = out.add(new Poly(t));
            }
        }
        return out;
    }

    private static String mergeMonomials(String a, String b) {
        if (a.isEmpty()) {
            return b;
        }
        if (b.isEmpty()) {
            return a;
        }
        ArrayList<String> names = new ArrayList<>(Arrays.asList(a.split("\\*")));
        Collections.addAll(names, b.split("\\*"));
        Collections.sort(names);
        return String.join("*", names);
    }

    /**
     * Whether the polynomial is at least 1 for every value of its symbols within {@code bounds}
     * (symbol to inclusive [lo, hi], lo >= 0): a positive term is at least its monomial's smallest
     * value, a negative one at least its largest. Sound, not complete.
     */
    boolean provablyPositive(Map<String, long[]> bounds) {
        try {
            long least = 0;
            for (Map.Entry<String, Long> e : terms.entrySet()) {
                long coef = e.getValue();
                long mono = monomialValue(e.getKey(), bounds, coef < 0);
                least = Math.addExact(least, Math.multiplyExact(coef, mono));
            }
            return least >= 1;
        } catch (ArithmeticException | IllegalStateException e) {
            return false;
        }
    }

    private static long monomialValue(String monomial, Map<String, long[]> bounds, boolean largest) {
        if (monomial.isEmpty()) {
            return 1;
        }
        long v = 1;
        for (String s : monomial.split("\\*")) {
            long[] b = bounds.get(s);
            if (b == null || b[0] < 0) {
                throw new IllegalStateException("symbol " + s + " is not known to be non-negative");
            }
            v = Math.multiplyExact(v, largest ? b[1] : b[0]);
        }
        return v;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Poly p && p.terms.equals(terms);
    }

    @Override
    public int hashCode() {
        return terms.hashCode();
    }

    @Override
    public String toString() {
        if (terms.isEmpty()) {
            return "0";
        }
        StringBuilder s = new StringBuilder();
        for (Map.Entry<String, Long> e : terms.descendingMap().entrySet()) {
            long c = e.getValue();
            if (!s.isEmpty()) {
                s.append(c < 0 ? " - " : " + ");
                c = Math.abs(c);
            }
            s.append(e.getKey().isEmpty() ? Long.toString(c) : (c == 1 ? "" : c == -1 ? "-" : c + "*") + e.getKey());
        }
        return s.toString();
    }
}
