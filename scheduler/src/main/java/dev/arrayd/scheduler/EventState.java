package dev.arrayd.scheduler;

/** Life of an {@link Event}: PENDING, then SUCCEEDED or FAILED, once. */
public enum EventState {
    PENDING,
    SUCCEEDED,
    FAILED
}
