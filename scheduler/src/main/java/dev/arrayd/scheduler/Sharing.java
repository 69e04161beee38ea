package dev.arrayd.scheduler;

/**
 * For a {@link MemoryMode#DEVICE} buffer: whether the streams that use it share one array (OCANNL's
 * {@code Shared_cross_streams}) or each has its own ({@code Per_stream}).
 *
 * <ul>
 *   <li>{@link #SHARED}: one logical array; commands of different streams on it are ordered by their
 *       read/write hazards.</li>
 *   <li>{@link #PER_STREAM}: each stream that uses the buffer gets its own instance on that stream's
 *       device, zeroed when first used; a command reads and writes the instance of the stream it runs
 *       on, so commands of different streams never wait for each other on it. A copy may read another
 *       stream's instance ({@code src_stream}), ordered after that stream's writes to it: that is how
 *       per-stream partial results are merged. An instance is freed with its stream or its buffer, and
 *       its bytes count against the session's memory quota when it is made.</li>
 * </ul>
 */
public enum Sharing {
    SHARED, PER_STREAM
}
