package dev.arrayd.client;

import java.util.List;

/**
 * A recorded graph: replay it with {@link Session#replay}.
 *
 * @param id       the daemon's graph handle
 * @param kernels  per command of the graph, its kernel (null for a data command): replays convert new
 *                 scalar values to the parameter's dtype with it
 */
public record GraphHandle(long id, List<KernelHandle> kernels) {
    public GraphHandle {
        kernels = java.util.Collections.unmodifiableList(new java.util.ArrayList<>(kernels));
    }

    /** Number of commands. */
    public int size() {
        return kernels.size();
    }
}
