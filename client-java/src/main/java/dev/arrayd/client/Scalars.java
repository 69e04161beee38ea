package dev.arrayd.client;

import dev.arrayd.proto.v1.Scalar;
import java.math.BigDecimal;
import java.math.BigInteger;

/** Boxes Java values into {@code Scalar}s of a declared dtype, with messages that name the bad value. */
final class Scalars {
    private Scalars() {
    }

    /**
     * Converts {@code value} to a scalar of {@code dtype}.
     *
     * @param what    the value's place, e.g. {@code "args[3]"}
     * @param forWhat what it is for, e.g. {@code "scalar parameter n of type i32"}
     */
    static Scalar of(Object value, DType dtype, String what, String forWhat) {
        if (!(value instanceof Number n)) {
            throw bad(what, value, "a number for " + forWhat);
        }
        return switch (dtype) {
            case F32, F16, BF16 -> Scalar.newBuilder().setF32(n.floatValue()).build();
            case F64 -> Scalar.newBuilder().setF64(n.doubleValue()).build();
            case I32 -> Scalar.newBuilder()
                    .setI32((int) integral(n, Integer.MIN_VALUE, Integer.MAX_VALUE, what, "i32", forWhat)).build();
            case I64 -> Scalar.newBuilder()
                    .setI64(integral(n, Long.MIN_VALUE, Long.MAX_VALUE, what, "i64", forWhat)).build();
            case U8 -> Scalar.newBuilder().setU8((int) integral(n, 0, 255, what, "u8", forWhat)).build();
        };
    }

    /** The value of a scalar the daemon sent (null when it has none). */
    static Number value(Scalar s) {
        return switch (s.getValueCase()) {
            case F32 -> s.getF32();
            case F64 -> s.getF64();
            case I32 -> s.getI32();
            case I64 -> s.getI64();
            case U8 -> s.getU8();
            case VALUE_NOT_SET -> null;
        };
    }

    private static long integral(Number n, long min, long max, String what, String type, String forWhat) {
        Long v = exactLong(n);
        if (v == null || v < min || v > max) {
            throw bad(what, n, "an integer in " + type + " range for " + forWhat);
        }
        return v;
    }

    private static Long exactLong(Number n) {
        if (n instanceof Integer || n instanceof Long || n instanceof Short || n instanceof Byte
                || n instanceof java.util.concurrent.atomic.AtomicInteger
                || n instanceof java.util.concurrent.atomic.AtomicLong) {
            return n.longValue();
        }
        try {
            if (n instanceof BigInteger b) {
                return b.longValueExact();
            }
            BigDecimal d = n instanceof BigDecimal bd ? bd : new BigDecimal(n.toString());
            return d.longValueExact();
        } catch (ArithmeticException | NumberFormatException e) {
            return null; // fractional, out of range, NaN or infinite
        }
    }

    static IllegalArgumentException bad(String what, Object value, String expected) {
        return new IllegalArgumentException(what + ": " + describe(value) + " (expected: " + expected + ")");
    }

    static String describe(Object value) {
        if (value == null) {
            return "null";
        }
        if (value instanceof CharSequence s) {
            return "\"" + s + "\"";
        }
        if (value instanceof BufferHandle b) {
            return "buffer " + b.id() + " of type " + b.dtype();
        }
        if (value instanceof Number) {
            return value.toString();
        }
        return value.getClass().getSimpleName() + " " + value;
    }
}
