package dev.arrayd.scheduler;

/**
 * How a merge copy fills a stream's merge buffer (OCANNL's {@code device_to_device ~into_merge_buffer}).
 * COPY: the bytes are copied into a buffer of the stream's own. STREAMING: the consumer reads the
 * source in place when its current data is already on the stream's device (no copy; the launch then
 * reads the source as it is when the launch runs), and falls back to COPY otherwise.
 */
public enum MergeMode {
    NONE, COPY, STREAMING
}
