package dev.arrayd.devices.cuda;

/**
 * How a host transfer is cut into pinned-staging chunks: chunk {@code i} covers
 * {@code [i * chunkBytes, min((i + 1) * chunkBytes, total))}. Two staging buffers alternate, so the
 * host copy of chunk {@code i + 1} overlaps the DMA of chunk {@code i}.
 */
record ChunkPlan(long totalBytes, long chunkBytes) {

    ChunkPlan {
        if (totalBytes < 0 || chunkBytes <= 0) {
            throw new IllegalArgumentException("ChunkPlan(" + totalBytes + ", " + chunkBytes + ")");
        }
    }

    int count() {
        return (int) ((totalBytes + chunkBytes - 1) / chunkBytes);
    }

    long offset(int i) {
        return i * chunkBytes;
    }

    long length(int i) {
        return Math.min(chunkBytes, totalBytes - offset(i));
    }

    /** Staging buffers a transfer holds at once: one for a single chunk, otherwise two (double buffering). */
    int buffersNeeded() {
        return Math.min(2, count());
    }
}
