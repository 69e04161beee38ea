package dev.arrayd.cli;

import dev.arrayd.client.Access;
import dev.arrayd.client.BufferHandle;
import dev.arrayd.client.BufferOptions;
import dev.arrayd.client.DType;
import dev.arrayd.client.DeviceInfo;
import dev.arrayd.client.Event;
import dev.arrayd.client.GraphHandle;
import dev.arrayd.client.GraphRecorder;
import dev.arrayd.client.GraphReplay;
import dev.arrayd.client.Ir;
import dev.arrayd.client.IrExpr;
import dev.arrayd.client.IrKernelSpec;
import dev.arrayd.client.KernelHandle;
import dev.arrayd.client.KernelModuleSpec;
import dev.arrayd.client.Launch;
import dev.arrayd.client.MemoryMode;
import dev.arrayd.client.MergeBuffer;
import dev.arrayd.client.MergeMode;
import dev.arrayd.client.Session;
import dev.arrayd.client.StreamHandle;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code arrayd demo --scenario multi-device}: a data-parallel gradient step over the daemon's first
 * two devices, recorded once as a graph and replayed with new weights.
 *
 * <pre>
 *  x (HOSTED_CONSTANT, uploaded once) ──auto transfer──┐
 *  y0 on device 0                 y1 on device 1       │
 *  g0 = grad(x, y0, w) on dev 0   g1 = grad(x, y1, w) on dev 1
 *            merge buffer of a stream on dev 0  <── merge copy of g1
 *  g0 += merge                    (acc on that stream)
 * </pre>
 *
 * where {@code grad(x, y, w)[i] = x[i] * (w * x[i] - y[i])}, the gradient of {@code (w x - y)^2 / 2}
 * for each element. Every step is checked against plain Java.
 */
final class MultiDeviceDemo {

    private MultiDeviceDemo() {}

    /** g[i] = x[i] * (w * x[i] - y[i]) for i < n. */
    static IrKernelSpec grad() {
        return Ir.kernel("grad")
                .buffer("x", DType.F32, Access.READ, Ir.param("n"))
                .buffer("y", DType.F32, Access.READ, Ir.param("n"))
                .buffer("g", DType.F32, Access.WRITE, Ir.param("n"))
                .scalar("w", DType.F32)
                .scalar("n", DType.I64, 0, 1L << 40)
                .body(b -> {
                    IrExpr i = b.let("i", Ir.globalId(0));
                    b.when(i.lt(Ir.param("n")), then -> then.store("g", i,
                            Ir.load("x", i).mul(Ir.param("w").mul(Ir.load("x", i)).sub(Ir.load("y", i)))));
                });
    }

    /** g[i] += m[i] for i < n (m: the merge buffer). */
    static IrKernelSpec acc() {
        return Ir.kernel("acc")
                .buffer("m", DType.F32, Access.READ, Ir.param("n"))
                .buffer("g", DType.F32, Access.READ_WRITE, Ir.param("n"))
                .scalar("n", DType.I64, 0, 1L << 40)
                .body(b -> {
                    IrExpr i = b.let("i", Ir.globalId(0));
                    b.when(i.lt(Ir.param("n")), then -> then.store("g", i, Ir.load("g", i).add(Ir.load("m", i))));
                });
    }

    /** Runs the scenario; true when every step matched plain Java. */
    static boolean run(Session s, List<DeviceInfo> devices, int n) throws Exception {
        if (devices.size() < 2) {
            System.err.println("arrayd demo: --scenario multi-device needs two devices; the daemon has " + devices.size()
                    + " (start it with `bin/arrayd serve --devices cpu:2`, or `--devices cpu,opencl`)");
            return false;
        }
        String d0 = devices.get(0).id();
        String d1 = devices.get(1).id();
        float[] x = new float[n];
        float[] y0 = new float[n];
        float[] y1 = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = (i % 17) * 0.25f - 2f;
            y0[i] = (i % 5) - 2f;
            y1[i] = 1.5f - (i % 3);
        }
        BufferHandle bx = create(s, d0, MemoryMode.HOSTED_CONSTANT, n, "x");
        BufferHandle by0 = create(s, d0, MemoryMode.DEVICE, n, "y0");
        BufferHandle by1 = create(s, d1, MemoryMode.DEVICE, n, "y1");
        BufferHandle g0 = create(s, d0, MemoryMode.DEVICE, n, "g0");
        BufferHandle g1 = create(s, d1, MemoryMode.DEVICE, n, "g1");
        for (Event e : List.of(s.write(bx, x), s.write(by0, y0), s.write(by1, y1))) {
            e.future().get(60, TimeUnit.SECONDS);
        }
        Map<String, KernelHandle> k = s.compile(KernelModuleSpec.ir(grad()), KernelModuleSpec.ir(acc()))
                .get(120, TimeUnit.SECONDS);
        StreamHandle merge = s.createStream(d0).get(30, TimeUnit.SECONDS);

        GraphRecorder rec = s.graphRecorder();
        int grad0 = rec.launch(Launch.of(k.get("grad")).global(n).args(bx, by0, g0, 0f, (long) n).device(d0));
        int grad1 = rec.launch(Launch.of(k.get("grad")).global(n).args(bx, by1, g1, 0f, (long) n).device(d1));
        int copy = rec.mergeCopy(g1, merge, MergeMode.COPY, grad1);
        rec.launch(Launch.of(k.get("acc")).global(n).args(MergeBuffer.INSTANCE, g0, (long) n).on(merge), grad0, copy);
        GraphHandle step = s.recordGraph(rec).get(30, TimeUnit.SECONDS);
        System.out.printf(Locale.ROOT, "data-parallel gradient of %d f32 parameters over %s and %s: a graph of %d"
                + " commands, recorded once%n", n, d0, d1, step.size());

        boolean ok = true;
        for (float w : new float[] {0.5f, 1.0f, 1.5f}) {
            long t0 = System.nanoTime();
            List<Event> ev = s.replay(step, GraphReplay.defaults().scalar(grad0, 3, w).scalar(grad1, 3, w));
            ev.getLast().future().get(120, TimeUnit.SECONDS);
            float[] got = s.readFloats(g0).get(60, TimeUnit.SECONDS);
            long t1 = System.nanoTime();
            float[] want = new float[n];
            for (int i = 0; i < n; i++) {
                float a = x[i] * (w * x[i] - y0[i]);
                float b = x[i] * (w * x[i] - y1[i]);
                want[i] = a + b;
            }
            int bad = 0;
            for (int i = 0; i < n; i++) {
                if (Float.floatToIntBits(got[i]) != Float.floatToIntBits(want[i])) {
                    bad++;
                }
            }
            System.out.printf(Locale.ROOT, "  w = %.1f: g[1] = %.4f (plain Java %.4f); %s; replay + read %.1f ms%n", w,
                    got[Math.min(1, n - 1)], want[Math.min(1, n - 1)],
                    bad == 0 ? "all " + n + " elements match exactly" : bad + " elements differ", (t1 - t0) / 1e6);
            ok &= bad == 0;
        }
        System.out.println("  replicas of x (HOSTED_CONSTANT, written on " + d0 + "): " + s.replicas(bx).get(30, TimeUnit.SECONDS)
                + " — moved to " + d1 + " by the daemon");
        System.out.println("  replicas of g1: " + s.replicas(g1).get(30, TimeUnit.SECONDS)
                + " — the merge copy read it on " + d1 + " without leaving a replica on " + d0);
        System.out.println(ok ? "OK: the merged gradient matches plain Java at every step" : "FAILED: see above");
        s.destroy(step);
        return ok;
    }

    private static BufferHandle create(Session s, String device, MemoryMode mode, int n, String label) throws Exception {
        return s.createBuffer(DType.F32, new long[] {n}, BufferOptions.defaults().device(device).mode(mode).label(label))
                .get(30, TimeUnit.SECONDS);
    }
}
