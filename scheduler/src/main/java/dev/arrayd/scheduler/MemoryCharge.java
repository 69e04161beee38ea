package dev.arrayd.scheduler;

/**
 * Device memory a session takes beyond the buffers it creates (the per-stream instances of a
 * {@link Sharing#PER_STREAM} buffer, made when a stream first uses it): the server checks it against
 * the tenant's memory quota.
 */
public interface MemoryCharge {

    /** No quota. */
    MemoryCharge NONE = new MemoryCharge() {
        @Override
        public void reserve(long bytes) {
        }

        @Override
        public void release(long bytes) {
        }
    };

    /** Takes {@code bytes}; throws RESOURCE_EXHAUSTED (naming the quota and its limit) when they do not fit. */
    void reserve(long bytes);

    /** Gives back what {@link #reserve} took. */
    void release(long bytes);
}
