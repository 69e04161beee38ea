package dev.arrayd.client;

/** How a kernel accesses a buffer parameter; the daemon derives its hazard edges from it. */
public enum Access {
    READ,
    WRITE,
    READ_WRITE
}
