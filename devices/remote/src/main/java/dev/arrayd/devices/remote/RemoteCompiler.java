package dev.arrayd.devices.remote;

import dev.arrayd.client.IrKernelSpec;
import dev.arrayd.client.KernelModuleSpec;
import dev.arrayd.client.KernelSpec;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.Dialect;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelCompiler;
import dev.arrayd.devices.api.KernelModule;
import dev.arrayd.devices.api.KernelParam;
import dev.arrayd.devices.api.KernelSignature;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.ir.CheckedKernel;
import dev.arrayd.devices.api.ir.IrKernel;
import dev.arrayd.devices.api.ir.IrValidator;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * Compiles a module on every reachable peer (each peer builds it for its own devices, under its own rules: a peer
 * without {@code allow-native-source} refuses native source). The IR is checked here too, so launches on a peer's
 * device are checked before they are sent, as on this host's devices.
 */
final class RemoteCompiler implements KernelCompiler {

    private final List<PeerLink> links;

    RemoteCompiler(List<PeerLink> links) {
        this.links = links;
    }

    @Override
    public Set<Dialect> dialects() {
        return EnumSet.allOf(Dialect.class);
    }

    @Override
    public KernelModule compile(KernelSource source) {
        List<CheckedKernel> checked = source.dialect() == Dialect.IR ? IrValidator.check(source.ir(), "ir") : List.of();
        RemoteModule module = new RemoteModule(spec(source));
        List<Kernel> kernels = new ArrayList<>();
        for (int i = 0; i < source.entryPoints().size(); i++) {
            kernels.add(new RemoteKernel(module, source.entryPoints().get(i), checked.isEmpty() ? null : checked.get(i)));
        }
        module.kernels(kernels);
        int compiledOn = 0;
        ArraydException unreachable = null;
        try {
            for (PeerLink link : links) {
                PeerLink.Connection c;
                try {
                    c = link.connection();
                } catch (ArraydException e) {
                    unreachable = e; // compiled there at its first launch, once it is back
                    continue;
                }
                module.handles(link, c);
                compiledOn++;
            }
        } catch (RuntimeException e) {
            module.close();
            throw e;
        }
        if (compiledOn == 0 && unreachable != null) {
            throw new ArraydException(ErrorCode.UNAVAILABLE, "no peer reachable to compile on: " + unreachable.getMessage());
        }
        return module;
    }

    /** The module as a client sends it. */
    static KernelModuleSpec spec(KernelSource source) {
        List<KernelSpec> entries = source.entryPoints().stream().map(RemoteCompiler::entry).toList();
        if (source.dialect() == Dialect.IR) {
            List<IrKernel> ir = source.ir().kernels();
            IrKernelSpec[] specs = new IrKernelSpec[ir.size()];
            for (int i = 0; i < specs.length; i++) {
                specs[i] = new IrKernelSpec(IrEncoder.kernel(ir.get(i)), entries.get(i));
            }
            return KernelModuleSpec.ir(specs);
        }
        return new KernelModuleSpec(dev.arrayd.client.Dialect.valueOf(source.dialect().name()), source.source(), entries, "");
    }

    private static KernelSpec entry(KernelSignature sig) {
        KernelSpec k = KernelSpec.entry(sig.name());
        for (KernelParam p : sig.params()) {
            dev.arrayd.client.DType t = dev.arrayd.client.DType.valueOf(p.dtype().name());
            k = p.isBuffer() ? k.buffer(p.name(), t, dev.arrayd.client.Access.valueOf(p.access().name())) : k.scalar(p.name(), t);
        }
        return k;
    }
}
