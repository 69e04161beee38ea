package dev.arrayd.devices.api.ir;

import java.util.Objects;

/**
 * An IR expression. Nodes are immutable records, so equal subtrees compare equal: the range analysis
 * relies on that to carry facts learned from a condition ({@code i < n}) to the same expression
 * inside the branch.
 */
public sealed interface Expr {

    /**
     * A typed constant. {@code bits} holds the value: 0 / 1 for bool, the value for integers (u8 in
     * 0..255, i32 sign-extended), the raw IEEE bits for f32 (low 32) and f64.
     */
    record Const(IrType type, long bits) implements Expr {
        public Const {
            Objects.requireNonNull(type, "type");
        }

        public static Const bool(boolean v) {
            return new Const(IrType.BOOL, v ? 1 : 0);
        }

        public static Const u8(int v) {
            return new Const(IrType.U8, v & 0xff);
        }

        public static Const i32(int v) {
            return new Const(IrType.I32, v);
        }

        public static Const i64(long v) {
            return new Const(IrType.I64, v);
        }

        public static Const f32(float v) {
            return new Const(IrType.F32, Float.floatToRawIntBits(v) & 0xffff_ffffL);
        }

        public static Const f64(double v) {
            return new Const(IrType.F64, Double.doubleToRawLongBits(v));
        }
    }

    /** A scalar parameter by name. */
    record Param(String name) implements Expr {}

    /** A let or loop variable by name. */
    record Var(String name) implements Expr {}

    /** A work-item coordinate (i64) in dimension {@code dim}. */
    record Builtin(Kind kind, int dim) implements Expr {
        public enum Kind { GLOBAL_ID, GLOBAL_SIZE, LOCAL_ID, LOCAL_SIZE, GROUP_ID, NUM_GROUPS }
    }

    /** {@code array[index]}: a buffer parameter or a local array. */
    record Load(String array, Expr index) implements Expr {}

    record Unary(Op op, Expr operand) implements Expr {
        public enum Op {
            NEG, NOT, ABS, SQRT, EXP, LOG, TANH, FLOOR, CEIL;

            /** Operators defined on floats only. */
            public boolean isMath() {
                return this != NEG && this != NOT && this != ABS;
            }
        }
    }

    record Binary(Op op, Expr left, Expr right) implements Expr {
        public enum Op {
            ADD, SUB, MUL, DIV, REM, MIN, MAX, POW, AND, OR, XOR, SHL, SHR,
            EQ, NE, LT, LE, GT, GE, LOGICAL_AND, LOGICAL_OR;

            public boolean isComparison() {
                return ordinal() >= EQ.ordinal() && ordinal() <= GE.ordinal();
            }

            public boolean isLogical() {
                return this == LOGICAL_AND || this == LOGICAL_OR;
            }

            public boolean isBitwise() {
                return this == AND || this == OR || this == XOR;
            }

            public boolean isShift() {
                return this == SHL || this == SHR;
            }

            /** The comparison that holds exactly when this one does not; itself for any other operator. */
            public Op negated() {
                return switch (this) {
                    case LT -> GE;
                    case LE -> GT;
                    case GT -> LE;
                    case GE -> LT;
                    case EQ -> NE;
                    case NE -> EQ;
                    default -> this;
                };
            }
        }
    }

    /** {@code condition ? ifTrue : ifFalse}; only the chosen operand is evaluated. */
    record Select(Expr condition, Expr ifTrue, Expr ifFalse) implements Expr {}

    record Cast(IrType to, Expr operand) implements Expr {}

    /** {@code a * b + c}, rounded once. */
    record Fma(Expr a, Expr b, Expr c) implements Expr {}
}
