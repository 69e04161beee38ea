package dev.arrayd.devices.api;

/** Element types of buffers and scalars. F16 and BF16 are storage types: kernels compute in f32. */
public enum DType {
    F32(4, "float"),
    F64(8, "double"),
    I32(4, "int32_t"),
    I64(8, "int64_t"),
    U8(1, "uint8_t"),
    F16(2, "uint16_t"),
    BF16(2, "uint16_t");

    private final int byteSize;
    private final String cType;

    DType(int byteSize, String cType) {
        this.byteSize = byteSize;
        this.cType = cType;
    }

    /** Bytes per element. */
    public int byteSize() {
        return byteSize;
    }

    /** The C type a kernel sees for one element (storage types appear as their raw bits). */
    public String cType() {
        return cType;
    }

    public String wireName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
