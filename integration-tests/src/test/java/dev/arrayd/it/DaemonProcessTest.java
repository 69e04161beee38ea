package dev.arrayd.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.client.Access;
import dev.arrayd.client.ArraydClient;
import dev.arrayd.client.ArraydCommandException;
import dev.arrayd.client.BufferHandle;
import dev.arrayd.client.DType;
import dev.arrayd.client.DeviceInventory;
import dev.arrayd.client.Dialect;
import dev.arrayd.client.Event;
import dev.arrayd.client.KernelHandle;
import dev.arrayd.client.KernelModuleSpec;
import dev.arrayd.client.KernelSpec;
import dev.arrayd.client.Launch;
import dev.arrayd.client.Session;
import io.grpc.Status;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The daemon as a real process on a real socket, driven by client-java and by the CLI. */
class DaemonProcessTest {

    static final String VADD = """
            ARRAYD_KERNEL void vadd(ARRAYD_ITEM, const float *a, const float *b, float *c, int32_t n) {
                int64_t i = arrayd_global_id(0);
                if (i < n) c[i] = a[i] + b[i];
            }
            """;
    static final KernelSpec VADD_SIG = KernelSpec.entry("vadd").buffer("a", DType.F32, Access.READ)
            .buffer("b", DType.F32, Access.READ).buffer("c", DType.F32, Access.WRITE).scalar("n", DType.I32);

    static <T> T await(java.util.concurrent.CompletableFuture<T> f) throws Exception {
        return f.get(60, TimeUnit.SECONDS);
    }

    @Test
    void vectorAddEndToEndOverTcpThenCleanShutdownOnSigterm() throws Exception {
        try (DaemonProcess d = new DaemonProcess("--allow-native-source", "--cpu-memory", "268435456")) {
            try (ArraydClient c = ArraydClient.connect(d.target()); Session s = await(c.openSession("it"))) {
                DeviceInventory inv = await(c.inventory());
                assertEquals(List.of("cpu:0"), inv.devices().stream().map(x -> x.id()).toList());
                int n = 1 << 20;
                float[] a = new float[n];
                float[] b = new float[n];
                for (int i = 0; i < n; i++) {
                    a[i] = i;
                    b[i] = -2f * i + 1;
                }
                BufferHandle ba = await(s.createBuffer(DType.F32, n));
                BufferHandle bb = await(s.createBuffer(DType.F32, n));
                BufferHandle bc = await(s.createBuffer(DType.F32, n));
                s.write(ba, a);
                s.write(bb, b);
                KernelHandle vadd = await(s.compile(KernelModuleSpec.of(Dialect.C, VADD, VADD_SIG))).get("vadd");
                Event launched = s.launch(Launch.of(vadd).global(n).args(ba, bb, bc, n));
                float[] out = await(s.readFloats(bc)); // ordered after the launch by the daemon
                float[] expected = new float[n];
                for (int i = 0; i < n; i++) {
                    expected[i] = a[i] + b[i];
                }
                assertArrayEquals(expected, out, () -> "launch: " + launched.future().join() + "\n" + d.output());
                assertTrue(await(launched.future()).deviceNanos() > 0);
            }
            assertEquals(0, d.terminate(), "exit code after SIGTERM; output:\n" + d.output());
            assertTrue(d.output().contains("arrayd stopped"), d.output());
        }
    }

    @Test
    void badInputIsAnsweredAndTheDaemonKeepsServing() throws Exception {
        try (DaemonProcess d = new DaemonProcess("--allow-native-source");
                ArraydClient c = ArraydClient.connect(d.target());
                Session s = await(c.openSession("it"))) {
            ExecutionException compile = assertThrows(ExecutionException.class, () -> await(s.compile(
                    KernelModuleSpec.of(Dialect.C, "ARRAYD_KERNEL void vadd(ARRAYD_ITEM) { nope(); }", VADD_SIG))));
            Status st = Status.fromThrowable(compile.getCause());
            assertEquals(Status.Code.INVALID_ARGUMENT, st.getCode());
            assertTrue(st.getDescription().contains("nope"), st.getDescription());

            assertThrows(IllegalArgumentException.class, () -> s.createBuffer(DType.F32, 4, 0), "checked by the client");
            ExecutionException big = assertThrows(ExecutionException.class, () -> await(s.createBuffer(DType.F32, 1L << 40)));
            Status bigStatus = Status.fromThrowable(big.getCause());
            assertEquals(Status.Code.RESOURCE_EXHAUSTED, bigStatus.getCode());
            assertTrue(bigStatus.getDescription().contains("device cpu:0: cannot allocate 4398046511104 bytes"),
                    bigStatus.getDescription());

            KernelHandle vadd = await(s.compile(KernelModuleSpec.of(Dialect.C, VADD, VADD_SIG))).get("vadd");
            BufferHandle x = await(s.createBuffer(DType.F32, 8));
            // an event of another session is not found in this one: the batch is rejected by the daemon
            Event foreign;
            try (Session other = await(c.openSession("other"))) {
                BufferHandle y = await(other.createBuffer(DType.F32, 8));
                other.fill(y, 1f);
                other.fill(y, 2f);
                foreign = other.fill(y, 3f);
                await(foreign.future());
            }
            Event bad = s.launch(Launch.of(vadd).global(8).args(x, x, x, 8).waitFor(foreign));
            ExecutionException e = assertThrows(ExecutionException.class, () -> await(bad.future()));
            ArraydCommandException ce = (ArraydCommandException) e.getCause();
            assertEquals(Status.Code.NOT_FOUND, ce.code(), ce.status().toString());
            assertTrue(ce.status().getDescription().contains("wait_events[0]: event " + foreign.id()
                    + " (not found in this session)"), ce.status().toString());

            Event good = s.launch(Launch.of(vadd).global(8).args(x, x, x, 8));
            assertEquals(dev.arrayd.client.EventState.SUCCEEDED, await(good.future()).state());
            assertTrue(d.process.isAlive());
        }
    }

    @Test
    void nativeSourceIsRefusedByDefault() throws Exception {
        try (DaemonProcess d = new DaemonProcess();
                ArraydClient c = ArraydClient.connect(d.target());
                Session s = await(c.openSession("it"))) {
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> await(s.compile(KernelModuleSpec.of(Dialect.C, VADD, VADD_SIG))));
            assertEquals(Status.Code.PERMISSION_DENIED, Status.fromThrowable(e.getCause()).getCode());
        }
    }

    @Test
    void cliListsDevicesAndRunsTheDemo() throws Exception {
        try (DaemonProcess d = new DaemonProcess("--allow-native-source", "--devices", "cpu:2")) {
            CliRun devices = cli("devices", "--target", d.target());
            assertEquals(0, devices.exit(), devices.output());
            assertTrue(devices.output().contains("cpu:0") && devices.output().contains("cpu:1"), devices.output());
            CliRun demo = cli("demo", "--target", d.target(), "--native", "--n", "100000", "--device", "cpu:1");
            assertEquals(0, demo.exit(), demo.output());
            assertTrue(demo.output().contains("vadd (C source)")
                    && demo.output().contains("OK: all 100000 elements of c match plain Java"), demo.output());
        }
        CliRun unreachable = cli("devices", "--target", "127.0.0.1:1");
        assertEquals(1, unreachable.exit());
        assertTrue(unreachable.output().contains("cannot reach a daemon at 127.0.0.1:1"), unreachable.output());
    }

    /**
     * Multi-device "done when": on {@code serve --devices cpu:2} the demo merges a data-parallel gradient
     * across both devices (a recorded graph replayed three times, a merge buffer, a HOSTED_CONSTANT input
     * moved by the daemon) and checks it against plain Java; with one device it says what it needs.
     */
    @Test
    void theMultiDeviceDemoMergesAGradientAcrossTwoCpuDevices() throws Exception {
        try (DaemonProcess d = new DaemonProcess("--devices", "cpu:2")) {
            // 400,000 f32 = 1.6 MB: the HOSTED_CONSTANT input is uploaded in two chunks before its first read
            CliRun demo = cli("demo", "--target", d.target(), "--scenario", "multi-device", "--n", "400000");
            assertEquals(0, demo.exit(), demo.output());
            assertTrue(demo.output().contains("over cpu:0 and cpu:1")
                    && demo.output().contains("OK: the merged gradient matches plain Java at every step")
                    && demo.output().contains("cpu:1=S"), demo.output());
        }
        try (DaemonProcess d = new DaemonProcess()) {
            CliRun demo = cli("demo", "--target", d.target(), "--scenario", "multi-device");
            assertEquals(1, demo.exit(), demo.output());
            assertTrue(demo.output().contains("needs two devices"), demo.output());
        }
    }

    /** Every example runs as IR on a daemon that refuses native source. */
    @Test
    void everyDemoKernelRunsWithoutNativeSource() throws Exception {
        try (DaemonProcess d = new DaemonProcess()) {
            for (String kernel : List.of("vadd", "saxpy", "sum", "matmul", "matmul_blocked", "matmul_tiles", "softmax",
                    "stencil")) {
                CliRun demo = cli("demo", "--target", d.target(), "--kernel", kernel, "--n", "70000", "--size", "64");
                assertEquals(0, demo.exit(), kernel + ":\n" + demo.output());
                assertTrue(demo.output().contains("OK: all ") && demo.output().contains("timings: "), demo.output());
            }
            CliRun nativeVadd = cli("demo", "--target", d.target(), "--native");
            assertEquals(1, nativeVadd.exit(), nativeVadd.output());
            assertTrue(nativeVadd.output().contains("refuses native kernel source"), nativeVadd.output());
        }
    }

    @Test
    void aPortInUseIsOneLineAndExitCode2() throws Exception {
        try (DaemonProcess d = new DaemonProcess()) {
            List<String> cmd = new java.util.ArrayList<>(DaemonProcess.javaCommand("dev.arrayd.cli.Main"));
            cmd.addAll(List.of("serve", "--port", Integer.toString(d.port), "--metrics-port", "-1"));
            Process second = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            assertTrue(second.waitFor(60, java.util.concurrent.TimeUnit.SECONDS), "the second daemon exits");
            String out = new String(second.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            assertEquals(2, second.exitValue(), out);
            List<String> errorLines = out.lines().filter(l -> l.startsWith("arrayd serve:") || l.contains("Exception")
                    || l.startsWith("\tat ")).toList();
            assertEquals(1, errorLines.size(), out);
            assertTrue(errorLines.getFirst().contains("cannot listen on 127.0.0.1:" + d.port) && errorLines.getFirst()
                    .contains("choose another with --port"), out);
        }
    }

    @Test
    void nonLoopbackBindWithoutAuthIsRefused() throws Exception {
        CliRun r = cli("serve", "--bind", "0.0.0.0", "--port", "0");
        assertEquals(2, r.exit(), r.output());
        assertTrue(r.output().contains("refusing to listen beyond loopback without authentication"), r.output());
    }

    record CliRun(int exit, String output) {}

    static CliRun cli(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(DaemonProcess.javaCommand("dev.arrayd.cli.Main"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        p.getInputStream().transferTo(out);
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("CLI did not finish: " + String.join(" ", args));
        }
        return new CliRun(p.exitValue(), out.toString());
    }

}
