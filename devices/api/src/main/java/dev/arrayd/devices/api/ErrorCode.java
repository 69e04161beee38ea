package dev.arrayd.devices.api;

/**
 * Error kinds shared by every layer below the server. The server maps them one to one to gRPC
 * status codes (same names), so the scheduler and backends never import gRPC.
 */
public enum ErrorCode {
    CANCELLED,
    UNKNOWN,
    INVALID_ARGUMENT,
    DEADLINE_EXCEEDED,
    NOT_FOUND,
    ALREADY_EXISTS,
    PERMISSION_DENIED,
    RESOURCE_EXHAUSTED,
    FAILED_PRECONDITION,
    ABORTED,
    OUT_OF_RANGE,
    UNIMPLEMENTED,
    INTERNAL,
    UNAVAILABLE,
    DATA_LOSS,
    /** No valid credentials (a peer daemon that refuses this one's token). */
    UNAUTHENTICATED
}
