package dev.arrayd.devices.api.ir;

/**
 * The IR's scalar operations on {@code long}-encoded values (see {@link IrInterpreter}); the
 * renderers emit C that computes exactly these.
 */
final class Ops {

    private Ops() {}

    /**
     * C's {@code pow} (IEEE 754 / C99 Annex F), which differs from {@link Math#pow} at ±1:
     * {@code pow(1, y)} is 1 for every y (NaN too), and {@code pow(-1, ±inf)} is 1.
     */
    static double pow(double x, double y) {
        if (x == 1.0 || (x == -1.0 && Double.isInfinite(y))) {
            return 1.0;
        }
        return Math.pow(x, y);
    }

    static long f32(float v) {
        return Float.floatToRawIntBits(v) & 0xffff_ffffL;
    }

    static long f64(double v) {
        return Double.doubleToRawLongBits(v);
    }

    static float asF32(long bits) {
        return Float.intBitsToFloat((int) bits);
    }

    static double asF64(long bits) {
        return Double.longBitsToDouble(bits);
    }

    /** Wraps an exact integer result into {@code t}. */
    static long wrap(IrType t, long v) {
        return switch (t) {
            case BOOL -> v & 1;
            case U8 -> v & 0xff;
            case I32 -> (int) v;
            default -> v;
        };
    }

    static long unary(Expr.Unary.Op op, IrType t, long a) {
        if (t == IrType.F32) {
            float x = asF32(a);
            return f32(switch (op) {
                case NEG -> -x;
                case ABS -> Math.abs(x);
                case SQRT -> (float) Math.sqrt(x);
                case EXP -> (float) Math.exp(x);
                case LOG -> (float) Math.log(x);
                case TANH -> (float) Math.tanh(x);
                case FLOOR -> (float) Math.floor(x);
                case CEIL -> (float) Math.ceil(x);
                case NOT -> throw new IllegalStateException("validated");
            });
        }
        if (t == IrType.F64) {
            double x = asF64(a);
            return f64(switch (op) {
                case NEG -> -x;
                case ABS -> Math.abs(x);
                case SQRT -> Math.sqrt(x);
                case EXP -> Math.exp(x);
                case LOG -> Math.log(x);
                case TANH -> Math.tanh(x);
                case FLOOR -> Math.floor(x);
                case CEIL -> Math.ceil(x);
                case NOT -> throw new IllegalStateException("validated");
            });
        }
        return switch (op) {
            case NEG -> wrap(t, -a);
            case ABS -> wrap(t, Math.abs(a));
            case NOT -> t == IrType.BOOL ? a ^ 1 : wrap(t, ~a);
            default -> throw new IllegalStateException("validated: " + op + " on " + t);
        };
    }

    static long binary(Expr.Binary.Op op, IrType t, long a, long b) {
        if (t == IrType.F32) {
            float x = asF32(a);
            float y = asF32(b);
            return switch (op) {
                case ADD -> f32(x + y);
                case SUB -> f32(x - y);
                case MUL -> f32(x * y);
                case DIV -> f32(x / y);
                case REM -> f32(x % y);
                case MIN -> f32(Float.isNaN(x) ? y : Float.isNaN(y) ? x : x < y ? x : y);
                case MAX -> f32(Float.isNaN(x) ? y : Float.isNaN(y) ? x : x > y ? x : y);
                case POW -> f32((float) pow(x, y));
                case EQ -> x == y ? 1 : 0;
                case NE -> x != y ? 1 : 0;
                case LT -> x < y ? 1 : 0;
                case LE -> x <= y ? 1 : 0;
                case GT -> x > y ? 1 : 0;
                case GE -> x >= y ? 1 : 0;
                default -> throw new IllegalStateException("validated: " + op + " on f32");
            };
        }
        if (t == IrType.F64) {
            double x = asF64(a);
            double y = asF64(b);
            return switch (op) {
                case ADD -> f64(x + y);
                case SUB -> f64(x - y);
                case MUL -> f64(x * y);
                case DIV -> f64(x / y);
                case REM -> f64(x % y);
                case MIN -> f64(Double.isNaN(x) ? y : Double.isNaN(y) ? x : x < y ? x : y);
                case MAX -> f64(Double.isNaN(x) ? y : Double.isNaN(y) ? x : x > y ? x : y);
                case POW -> f64(pow(x, y));
                case EQ -> x == y ? 1 : 0;
                case NE -> x != y ? 1 : 0;
                case LT -> x < y ? 1 : 0;
                case LE -> x <= y ? 1 : 0;
                case GT -> x > y ? 1 : 0;
                case GE -> x >= y ? 1 : 0;
                default -> throw new IllegalStateException("validated: " + op + " on f64");
            };
        }
        int mask = t.bits() - 1;
        return switch (op) {
            case ADD -> wrap(t, a + b);
            case SUB -> wrap(t, a - b);
            case MUL -> wrap(t, a * b);
            case DIV -> b == 0 ? 0 : b == -1 ? wrap(t, -a) : a / b;
            case REM -> b == 0 || b == -1 ? 0 : a % b;
            case MIN -> Math.min(a, b);
            case MAX -> Math.max(a, b);
            case AND -> a & b;
            case OR -> a | b;
            case XOR -> a ^ b;
            case SHL -> wrap(t, a << (b & mask));
            case SHR -> t == IrType.I64 ? a >> (b & 63) : wrap(t, a >> (b & mask));
            case EQ -> a == b ? 1 : 0;
            case NE -> a != b ? 1 : 0;
            case LT -> a < b ? 1 : 0;
            case LE -> a <= b ? 1 : 0;
            case GT -> a > b ? 1 : 0;
            case GE -> a >= b ? 1 : 0;
            default -> throw new IllegalStateException("validated: " + op + " on " + t);
        };
    }

    static long cast(IrType from, IrType to, long a) {
        if (from == to) {
            return a;
        }
        if (to == IrType.BOOL) {
            return switch (from) {
                case F32 -> asF32(a) != 0 ? 1 : 0;
                case F64 -> asF64(a) != 0 ? 1 : 0;
                default -> a != 0 ? 1 : 0;
            };
        }
        if (from.isFloat()) {
            double x = from == IrType.F32 ? asF32(a) : asF64(a);
            return switch (to) {
                case F32 -> f32(from == IrType.F32 ? asF32(a) : (float) x);
                case F64 -> f64(x);
                case I64 -> from == IrType.F32 ? (long) asF32(a) : (long) x;
                case I32 -> from == IrType.F32 ? (int) asF32(a) : (int) x;
                case U8 -> (from == IrType.F32 ? (int) asF32(a) : (int) x) & 0xff;
                default -> throw new IllegalStateException();
            };
        }
        // from an integer or bool: the value is exact in a long
        return switch (to) {
            case F32 -> f32((float) a);
            case F64 -> f64((double) a);
            default -> wrap(to, a);
        };
    }
}
