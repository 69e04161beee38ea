package dev.arrayd.client;

/** State of an event as the daemon reports it. */
public enum EventState {
    /** Accepted, not finished. */
    PENDING,
    SUCCEEDED,
    /** Failed; the result's code and message say why. Failure is sticky. */
    FAILED,
    /** A state this client version does not know. */
    UNKNOWN
}
