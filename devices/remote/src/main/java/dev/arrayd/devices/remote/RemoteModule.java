package dev.arrayd.devices.remote;

import dev.arrayd.client.KernelHandle;
import dev.arrayd.client.KernelModuleSpec;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelModule;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A module compiled on the peers: its kernels' handles per peer, for the connection they were compiled in. A peer
 * that was unreachable at compile time, or whose link was lost since, compiles it at the first launch there.
 */
final class RemoteModule implements KernelModule {

    private record Compiled(int generation, Map<String, KernelHandle> handles) {}

    private final KernelModuleSpec spec;
    private final Map<PeerLink, Compiled> compiled = new ConcurrentHashMap<>();
    private List<Kernel> kernels = List.of();

    RemoteModule(KernelModuleSpec spec) {
        this.spec = spec;
    }

    void kernels(List<Kernel> kernels) {
        this.kernels = List.copyOf(kernels);
    }

    @Override
    public List<Kernel> kernels() {
        return kernels;
    }

    @Override
    public String diagnostics() {
        return "";
    }

    /** The kernels' handles on {@code link}'s peer in connection {@code c}, compiling there first when needed. */
    Map<String, KernelHandle> handles(PeerLink link, PeerLink.Connection c) {
        Compiled k = compiled.get(link);
        if (k != null && k.generation() == c.generation()) {
            return k.handles();
        }
        synchronized (this) {
            k = compiled.get(link);
            if (k == null || k.generation() != c.generation()) {
                k = new Compiled(c.generation(), link.await(c, c.session().compile(spec)));
                compiled.put(link, k);
            }
            return k.handles();
        }
    }

    @Override
    public void close() {
        compiled.forEach((link, k) -> {
            PeerLink.Connection c = link.currentOrNull();
            if (c != null && c.generation() == k.generation()) {
                k.handles().values().forEach(h -> c.session().destroy(h));
            }
        });
        compiled.clear();
    }
}
