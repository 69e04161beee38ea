package dev.arrayd.client;

/**
 * Lifetime and coherence policy of a buffer; see the daemon's API reference ("Memory modes").
 * Every mode keeps replicas on the devices that use the buffer, moved there automatically.
 */
public enum MemoryMode {
    /** Lives on devices only; persists until destroyed. The default. */
    DEVICE,
    /** Written before its first read (in one or several parts), then read-only: a later write fails with FAILED_PRECONDITION. */
    HOSTED_CONSTANT,
    /** A host copy exists; devices change it; moves between devices go through the host copy. */
    HOSTED_CHANGED_ON_DEVICES,
    /** Changes on the host: each whole upload replaces the host copy and invalidates other devices. */
    HOSTED_VOLATILE,
    /** Scratch for one graph: the first batch or replay that uses it consumes the handle. */
    LOCAL
}
