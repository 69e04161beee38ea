package dev.arrayd.client;

/** How {@link Session#mergeCopy} fills a stream's merge buffer. */
public enum MergeMode {
    /** Copied into the stream's own merge buffer. */
    COPY,
    /** Read in place when the source is current on the stream's device; copied otherwise. */
    STREAMING
}
