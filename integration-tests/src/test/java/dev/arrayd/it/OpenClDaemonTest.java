package dev.arrayd.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.client.Access;
import dev.arrayd.client.ArraydClient;
import dev.arrayd.client.BackendInfo;
import dev.arrayd.client.BufferHandle;
import dev.arrayd.client.BufferOptions;
import dev.arrayd.client.DType;
import dev.arrayd.client.DeviceInventory;
import dev.arrayd.client.Dialect;
import dev.arrayd.client.Event;
import dev.arrayd.client.KernelHandle;
import dev.arrayd.client.KernelModuleSpec;
import dev.arrayd.client.KernelSpec;
import dev.arrayd.client.Launch;
import dev.arrayd.client.Session;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * {@code --devices cpu,opencl}: both kinds are listed (an unavailable OpenCL with its reason), and
 * where OpenCL exists (PoCL in CI) a vadd in native OpenCL C runs end to end through client-java.
 */
class OpenClDaemonTest {

    static final String VADD_CL = """
            ARRAYD_KERNEL void vadd(__global const float *a, __global const float *b, __global float *c, int n) {
                size_t i = get_global_id(0);
                if (i < n) c[i] = a[i] + b[i];
            }
            """;
    static final KernelSpec VADD_SIG = KernelSpec.entry("vadd").buffer("a", DType.F32, Access.READ)
            .buffer("b", DType.F32, Access.READ).buffer("c", DType.F32, Access.WRITE).scalar("n", DType.I32);

    static <T> T await(CompletableFuture<T> f) throws Exception {
        return f.get(120, TimeUnit.SECONDS);
    }

    @Test
    void vaddInOpenClCEndToEndBesideTheCpu() throws Exception {
        try (DaemonProcess d = new DaemonProcess("--devices", "cpu,opencl", "--allow-native-source",
                "--cpu-memory", "268435456")) {
            try (ArraydClient c = ArraydClient.connect(d.target()); Session s = await(c.openSession("it-opencl"))) {
                DeviceInventory inv = await(c.inventory());
                List<String> ids = inv.devices().stream().map(x -> x.id()).toList();
                assertTrue(ids.contains("cpu:0"), ids::toString);
                BackendInfo opencl = inv.backends().stream().filter(b -> b.name().equals("opencl")).findFirst()
                        .orElseThrow(() -> new AssertionError("no opencl backend listed: " + inv.backends()));
                if (!opencl.available()) {
                    assertFalse(opencl.reason().isBlank(), "an unavailable backend says why");
                    System.out.println("[opencl] skipping the OpenCL launch: " + opencl.reason());
                }
                Assumptions.assumeTrue(opencl.available(), () -> "opencl unavailable: " + opencl.reason());
                assertTrue(ids.contains("opencl:0"), ids::toString);
                assertEquals(opencl.devices(), ids.stream().filter(id -> id.startsWith("opencl:")).toList());

                int n = 100_000;
                float[] a = new float[n];
                float[] b = new float[n];
                for (int i = 0; i < n; i++) {
                    a[i] = i;
                    b[i] = 0.5f - i;
                }
                BufferOptions on = BufferOptions.defaults().device("opencl:0");
                BufferHandle ba = await(s.createBuffer(DType.F32, new long[] {n}, on));
                BufferHandle bb = await(s.createBuffer(DType.F32, new long[] {n}, on));
                BufferHandle bc = await(s.createBuffer(DType.F32, new long[] {n}, on));
                s.write(ba, a);
                s.write(bb, b);
                KernelHandle vadd = await(s.compile(KernelModuleSpec.of(Dialect.OPENCL_C, VADD_CL, VADD_SIG))).get("vadd");
                Event launched = s.launch(Launch.of(vadd).global(n).args(ba, bb, bc, n));
                float[] out = await(s.readFloats(bc));
                float[] expected = new float[n];
                for (int i = 0; i < n; i++) {
                    expected[i] = a[i] + b[i];
                }
                assertArrayEquals(expected, out, () -> "launch: " + launched.future().join() + "\n" + d.output());
            }
            assertEquals(0, d.terminate(), "exit code after SIGTERM; output:\n" + d.output());
        }
    }

    /**
     * A mixed graph: the multi-device demo on {@code --devices cpu,opencl} runs its gradient on cpu:0 and
     * opencl:0, with the input moved to the OpenCL device and the gradient merged back onto the CPU by
     * transfers the daemon inserts itself (IR kernels on both; no native source).
     */
    @Test
    void aGraphAcrossTheCpuAndAnOpenClDeviceGetsItsTransfersInserted() throws Exception {
        try (DaemonProcess d = new DaemonProcess("--devices", "cpu,opencl", "--cpu-memory", "268435456")) {
            try (ArraydClient c = ArraydClient.connect(d.target())) {
                BackendInfo opencl = await(c.inventory()).backends().stream().filter(b -> b.name().equals("opencl"))
                        .findFirst().orElseThrow();
                Assumptions.assumeTrue(opencl.available(), () -> "opencl unavailable: " + opencl.reason());
            }
            DaemonProcessTest.CliRun demo = DaemonProcessTest.cli("demo", "--target", d.target(), "--scenario",
                    "multi-device", "--n", "50000");
            assertEquals(0, demo.exit(), demo.output());
            assertTrue(demo.output().contains("over cpu:0 and opencl:0")
                    && demo.output().contains("OK: the merged gradient matches plain Java at every step")
                    && demo.output().contains("opencl:0=S"), demo.output());
            assertEquals(0, d.terminate(), "exit code after SIGTERM; output:\n" + d.output());
        }
    }
}
