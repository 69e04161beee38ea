package dev.arrayd.devices.cuda;

/**
 * Which ordered device pairs have peer access enabled ({@code cuCtxEnablePeerAccess} succeeded at open):
 * {@code enabled[src][dst]} means a context of {@code src} may read {@code dst}'s memory, so
 * {@code cuMemcpyPeerAsync} runs over NVLink / PCIe directly instead of through host staging.
 */
record PeerAccess(boolean[][] enabled) {

    static final PeerAccess NONE = new PeerAccess(new boolean[0][0]);

    boolean enabled(int src, int dst) {
        return src < enabled.length && dst < enabled[src].length && enabled[src][dst];
    }
}
