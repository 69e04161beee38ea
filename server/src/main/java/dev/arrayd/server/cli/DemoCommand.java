package dev.arrayd.server.cli;

import dev.arrayd.client.Access;
import dev.arrayd.client.ArraydClient;
import dev.arrayd.client.BufferHandle;
import dev.arrayd.client.DType;
import dev.arrayd.client.Dialect;
import dev.arrayd.client.Event;
import dev.arrayd.client.EventResult;
import dev.arrayd.client.KernelHandle;
import dev.arrayd.client.KernelModuleSpec;
import dev.arrayd.client.KernelSpec;
import dev.arrayd.client.Launch;
import dev.arrayd.client.Session;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code arrayd demo}: uploads two arrays, compiles and launches a vector add, reads the result
 * back, checks every element and prints it with the time each step took.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "Run an example client: vector add on a running daemon (started with --allow-native-source).")
final class DemoCommand implements Callable<Integer> {

    static final String VADD_SOURCE = """
            ARRAYD_KERNEL void vadd(ARRAYD_ITEM, const float *a, const float *b, float *c, int32_t n) {
                int64_t i = arrayd_global_id(0);
                if (i < n) c[i] = a[i] + b[i];
            }
            """;

    @Mixin
    ClientOptions client;

    @Option(names = "--n", description = "Elements per array (default: ${DEFAULT-VALUE}).", defaultValue = "1048576")
    int n;

    @Option(names = "--device", description = "Device to run on (default: the daemon's first device).", defaultValue = "")
    String device;

    @Override
    public Integer call() throws Exception {
        if (n <= 0) {
            System.err.println("arrayd demo: --n " + n + " (expected: > 0)");
            return 2;
        }
        long t0 = System.nanoTime();
        try (ArraydClient c = client.connect(); Session s = c.openSession("arrayd-demo").get(30, TimeUnit.SECONDS)) {
            long tSession = System.nanoTime();
            float[] a = new float[n];
            float[] b = new float[n];
            for (int i = 0; i < n; i++) {
                a[i] = i * 0.5f;
                b[i] = 1000f - i;
            }
            var opts = dev.arrayd.client.BufferOptions.defaults().device(device);
            BufferHandle ba = s.createBuffer(DType.F32, new long[] {n}, opts).get(30, TimeUnit.SECONDS);
            BufferHandle bb = s.createBuffer(DType.F32, new long[] {n}, opts).get(30, TimeUnit.SECONDS);
            BufferHandle bc = s.createBuffer(DType.F32, new long[] {n}, opts).get(30, TimeUnit.SECONDS);
            Event wa = s.write(ba, a);
            Event wb = s.write(bb, b);
            s.waitEvents(wa, wb).get(60, TimeUnit.SECONDS);
            long tUpload = System.nanoTime();
            Map<String, KernelHandle> k = s.compile(KernelModuleSpec.of(Dialect.C, VADD_SOURCE,
                    KernelSpec.entry("vadd").buffer("a", DType.F32, Access.READ).buffer("b", DType.F32, Access.READ)
                            .buffer("c", DType.F32, Access.WRITE).scalar("n", DType.I32))).get(120, TimeUnit.SECONDS);
            long tCompile = System.nanoTime();
            Event launch = s.launch(Launch.of(k.get("vadd")).global(n).args(ba, bb, bc, n));
            EventResult done = launch.future().get(60, TimeUnit.SECONDS);
            long tLaunch = System.nanoTime();
            float[] out = s.readFloats(bc).get(60, TimeUnit.SECONDS);
            long tRead = System.nanoTime();
            int bad = 0;
            int firstBad = -1;
            for (int i = 0; i < n; i++) {
                if (out[i] != a[i] + b[i]) {
                    if (bad++ == 0) {
                        firstBad = i;
                    }
                }
            }
            System.out.printf(Locale.ROOT, "vadd of %d f32 elements on %s%n", n, bc.device());
            System.out.printf(Locale.ROOT, "  c[0] = %.1f + %.1f = %.1f%n", a[0], b[0], out[0]);
            System.out.printf(Locale.ROOT, "  c[%d] = %.1f + %.1f = %.1f%n", n - 1, a[n - 1], b[n - 1], out[n - 1]);
            System.out.printf(Locale.ROOT, "timings: connect+session %.1f ms, upload 2 x %s %.1f ms, compile %.1f ms, "
                    + "launch %.3f ms (device %.3f ms), read back %.1f ms%n", ms(tSession - t0), DevicesCommand.bytes(4L * n),
                    ms(tUpload - tSession), ms(tCompile - tUpload), ms(tLaunch - tCompile), done.deviceNanos() / 1e6,
                    ms(tRead - tLaunch));
            if (bad != 0) {
                System.out.printf(Locale.ROOT, "FAILED: %d of %d elements wrong, first at %d: %f (expected %f)%n", bad, n,
                        firstBad, out[firstBad], a[firstBad] + b[firstBad]);
                return 1;
            }
            System.out.println("OK: all " + n + " elements correct");
            return 0;
        } catch (ExecutionException e) {
            if (io.grpc.Status.fromThrowable(e.getCause()).getCode() == io.grpc.Status.Code.PERMISSION_DENIED) {
                System.err.println("arrayd demo: the daemon at " + client.target + " refuses native kernel source, and the"
                        + " demo's vadd is C source. Start the daemon with `bin/arrayd serve --allow-native-source`"
                        + " (see README: why native source is off by default).");
                return 1;
            }
            return Failures.report("demo", client.target, e.getCause());
        } catch (io.grpc.StatusRuntimeException e) {
            return Failures.report("demo", client.target, e);
        }
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }
}
