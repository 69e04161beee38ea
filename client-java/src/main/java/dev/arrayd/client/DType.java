package dev.arrayd.client;

/**
 * Element type of a buffer or scalar. Values on the wire and in host arrays are little-endian.
 */
public enum DType {
    /** IEEE-754 binary32. */
    F32(4, "f32"),
    /** IEEE-754 binary64. */
    F64(8, "f64"),
    /** Two's complement, 32 bit. */
    I32(4, "i32"),
    /** Two's complement, 64 bit. */
    I64(8, "i64"),
    /** Unsigned 8 bit. */
    U8(1, "u8"),
    /** IEEE-754 binary16, a storage type (kernels compute in f32). */
    F16(2, "f16"),
    /** bfloat16, a storage type (kernels compute in f32). */
    BF16(2, "bf16");

    private final int byteSize;
    private final String shortName;

    DType(int byteSize, String shortName) {
        this.byteSize = byteSize;
        this.shortName = shortName;
    }

    /** Bytes per element. */
    public int byteSize() {
        return byteSize;
    }

    /** The lower-case name used in messages, e.g. {@code "f32"}. */
    public String shortName() {
        return shortName;
    }

    @Override
    public String toString() {
        return shortName;
    }
}
