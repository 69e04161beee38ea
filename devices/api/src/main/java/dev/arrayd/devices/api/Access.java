package dev.arrayd.devices.api;

/** How a kernel parameter or command touches a buffer; the dependency tracker orders by it. */
public enum Access {
    READ(true, false),
    WRITE(false, true),
    READ_WRITE(true, true);

    private final boolean reads;
    private final boolean writes;

    Access(boolean reads, boolean writes) {
        this.reads = reads;
        this.writes = writes;
    }

    public boolean reads() {
        return reads;
    }

    public boolean writes() {
        return writes;
    }
}
