package dev.arrayd.client;

/**
 * A launch argument standing for the merge buffer of the launch's stream (filled by
 * {@link Session#mergeCopy}); only for READ buffer parameters. Use {@link #INSTANCE}.
 */
public enum MergeBuffer {
    INSTANCE
}
