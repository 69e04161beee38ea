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
}
