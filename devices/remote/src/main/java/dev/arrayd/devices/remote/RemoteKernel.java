package dev.arrayd.devices.remote;

import dev.arrayd.client.KernelHandle;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelSignature;
import dev.arrayd.devices.api.ir.CheckedKernel;

/** An entry point of a {@link RemoteModule}: compiled on each peer, launched there by its handle. */
final class RemoteKernel implements Kernel {

    private final RemoteModule module;
    private final KernelSignature signature;
    private final CheckedKernel ir;

    RemoteKernel(RemoteModule module, KernelSignature signature, CheckedKernel ir) {
        this.module = module;
        this.signature = signature;
        this.ir = ir;
    }

    @Override
    public KernelSignature signature() {
        return signature;
    }

    @Override
    public String backend() {
        return RemoteBackend.NAME;
    }

    @Override
    public CheckedKernel ir() {
        return ir;
    }

    /** Its handle on the peer of {@code link} in connection {@code c} (compiled there now if it is not yet). */
    KernelHandle handle(PeerLink link, PeerLink.Connection c) {
        return module.handles(link, c).get(signature.name());
    }
}
