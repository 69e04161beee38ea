package dev.arrayd.devices.api.ir;

import dev.arrayd.devices.api.DType;

/**
 * Value types of IR expressions. Buffers of f16 / bf16 hold storage types only: their elements are
 * loaded as {@link #F32} and stored from it, so there is no half value type.
 */
public enum IrType {
    BOOL(1, "bool"),
    U8(8, "u8"),
    I32(32, "i32"),
    I64(64, "i64"),
    F32(32, "f32"),
    F64(64, "f64");

    private final int bits;
    private final String wireName;

    IrType(int bits, String wireName) {
        this.bits = bits;
        this.wireName = wireName;
    }

    public int bits() {
        return bits;
    }

    public boolean isInteger() {
        return this == U8 || this == I32 || this == I64;
    }

    public boolean isFloat() {
        return this == F32 || this == F64;
    }

    public boolean isNumber() {
        return isInteger() || isFloat();
    }

    /** Smallest value of an integer type (0 for bool). */
    public long min() {
        return switch (this) {
            case I32 -> Integer.MIN_VALUE;
            case I64 -> Long.MIN_VALUE;
            default -> 0;
        };
    }

    /** Largest value of an integer type (1 for bool). */
    public long max() {
        return switch (this) {
            case BOOL -> 1;
            case U8 -> 255;
            case I32 -> Integer.MAX_VALUE;
            default -> Long.MAX_VALUE;
        };
    }

    /** The type an element of {@code dtype} has once loaded (f16 and bf16 compute in f32). */
    public static IrType ofElement(DType dtype) {
        return switch (dtype) {
            case F32, F16, BF16 -> F32;
            case F64 -> F64;
            case I32 -> I32;
            case I64 -> I64;
            case U8 -> U8;
        };
    }

    /** The value type of a scalar parameter or local array of {@code dtype}; null for the storage-only types. */
    public static IrType ofScalar(DType dtype) {
        return dtype == DType.F16 || dtype == DType.BF16 ? null : ofElement(dtype);
    }

    @Override
    public String toString() {
        return wireName;
    }
}
