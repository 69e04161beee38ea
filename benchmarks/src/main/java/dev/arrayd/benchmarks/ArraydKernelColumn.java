package dev.arrayd.benchmarks;

import dev.arrayd.client.BufferHandle;
import dev.arrayd.client.BufferOptions;
import dev.arrayd.client.DType;
import dev.arrayd.client.Dialect;
import dev.arrayd.client.Event;
import dev.arrayd.client.EventResult;
import dev.arrayd.client.KernelHandle;
import dev.arrayd.client.KernelModuleSpec;
import dev.arrayd.client.KernelSpec;
import dev.arrayd.client.Launch;
import dev.arrayd.client.Session;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The kernels run through a daemon on one of its devices: native source in the device's dialect, buffers
 * on that device, launches on the session stream, each run waited for by the benchmark thread as a
 * client would ({@code future().get()}).
 */
final class ArraydKernelColumn implements KernelColumn {

    private final String key;
    private final String label;
    private final Session session;
    private final String device;
    private final Map<String, KernelHandle> kernels;
    private final Launch empty;
    private final List<BufferHandle> buffers = new ArrayList<>();
    private List<Launch> launches = List.of();

    /**
     * Compiles every kernel for {@code backend} ({@code "cpu"}: C; {@code "opencl"}: OpenCL C) and runs
     * them on {@code device}.
     */
    ArraydKernelColumn(String key, String label, Session session, String backend, String device) throws Exception {
        this(key, label, session, KernelModuleSpec.of(backend.equals("opencl") ? Dialect.OPENCL_C : Dialect.C,
                backend.equals("opencl") ? BenchKernels.OPENCL_SOURCE : BenchKernels.C_SOURCE,
                BenchKernels.SPECS.toArray(KernelSpec[]::new)).backend(backend), device);
    }

    /** Compiles {@code module} (the same entry points as {@link BenchKernels}, e.g. {@link IrBenchKernels}) and runs it on {@code device}. */
    ArraydKernelColumn(String key, String label, Session session, KernelModuleSpec module, String device) throws Exception {
        this.key = key;
        this.label = label;
        this.session = session;
        this.device = device;
        kernels = session.compile(module).get(120, TimeUnit.SECONDS);
        empty = Launch.of(kernels.get(BenchKernels.EMPTY)).global(1).device(device);
    }

    @Override
    public String key() {
        return key;
    }

    @Override
    public String label() {
        return label;
    }

    @Override
    public void prepare(KernelWorkload w) throws Exception {
        dropBuffers();
        for (float[] init : w.buffers()) {
            buffers.add(session.createBuffer(DType.F32, new long[] {init.length}, BufferOptions.defaults().device(device))
                    .get(60, TimeUnit.SECONDS));
        }
        List<Launch> ls = new ArrayList<>();
        for (KernelWorkload.Pass p : w.passes()) {
            Object[] args = new Object[p.args().size()];
            for (int i = 0; i < args.length; i++) {
                Object a = p.args().get(i);
                args[i] = a instanceof KernelWorkload.Buf(int index) ? buffers.get(index) : a;
            }
            ls.add(Launch.of(kernels.get(p.entry())).global(p.global()).args(args).device(device));
        }
        launches = List.copyOf(ls);
    }

    @Override
    public float[] runOnceAndRead(KernelWorkload w) throws Exception {
        for (int i = 0; i < buffers.size(); i++) {
            session.write(buffers.get(i), w.buffers().get(i));
        }
        run();
        return session.readFloats(buffers.get(w.output())).get(120, TimeUnit.SECONDS);
    }

    @Override
    public LaunchTime run() throws Exception {
        long t0 = System.nanoTime();
        if (launches.size() == 1) {
            EventResult r = session.launch(launches.getFirst()).future().get();
            return new LaunchTime(System.nanoTime() - t0, r.deviceNanos());
        }
        // a multi-pass kernel leaves as one batch; the passes are ordered by their buffers' hazards
        List<Event> events = session.launchAll(launches);
        long device = 0;
        for (Event e : events) {
            device += e.future().get().deviceNanos();
        }
        return new LaunchTime(System.nanoTime() - t0, device);
    }

    @Override
    public long emptyRoundTripNanos() throws Exception {
        long t0 = System.nanoTime();
        session.launch(empty).future().get();
        return System.nanoTime() - t0;
    }

    private void dropBuffers() throws Exception {
        for (BufferHandle b : buffers) {
            session.destroy(b).get(60, TimeUnit.SECONDS);
        }
        buffers.clear();
        launches = List.of();
    }

    @Override
    public void close() throws Exception {
        dropBuffers();
    }
}
