package dev.arrayd.devices.cuda;

/**
 * How bytes move between two CUDA devices' memory (the choice is pure and tested; the copy is in
 * {@link CudaStream}).
 */
enum CopyPath {
    /** Same device: {@code cuMemcpyDtoDAsync}. */
    DEVICE_TO_DEVICE,
    /** Different devices that can access each other (peer access enabled at open): {@code cuMemcpyPeerAsync}. */
    PEER,
    /** Different devices without peer access: through pinned host staging, chunk by chunk. */
    STAGED;

    static CopyPath choose(int srcOrdinal, int dstOrdinal, boolean peerAccess) {
        if (srcOrdinal == dstOrdinal) {
            return DEVICE_TO_DEVICE;
        }
        return peerAccess ? PEER : STAGED;
    }

    /**
     * A {@link dev.arrayd.devices.api.DeviceCommand.PeerCopy} runs on the destination's stream, in the
     * destination's context: it goes direct only when that context may access the source's memory
     * ({@code peers.enabled(dst, src)}), which is not implied by the other direction.
     *
     * @throws IllegalArgumentException for a copy within one device (that is a {@code Copy})
     */
    static CopyPath forPeerCopy(int srcOrdinal, int dstOrdinal, PeerAccess peers) {
        if (srcOrdinal == dstOrdinal) {
            throw new IllegalArgumentException("peer copy within cuda:" + srcOrdinal + " (expected: two devices)");
        }
        return choose(srcOrdinal, dstOrdinal, peers.enabled(dstOrdinal, srcOrdinal));
    }
}
