package dev.arrayd.devices.opencl;

import dev.arrayd.devices.api.support.CommandFuture;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.api.DeviceInfo;
import dev.arrayd.devices.api.Dialect;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.KernelModule;
import dev.arrayd.devices.api.KernelSignature;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.NativeStream;
import dev.arrayd.devices.api.conformance.AbstractDeviceConformanceTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What the conformance suite does not cover: the missing-runtime path, OpenCL specifics, several devices. */
class OpenClBackendTest {

    private OpenClBackend backend;

    @AfterEach
    void close() {
        if (backend != null) {
            backend.close();
        }
    }

    private OpenClBackend available(OpenClOptions options) {
        backend = new OpenClBackend(options);
        Optional<String> reason = backend.unavailableReason();
        if (reason.isPresent()) {
            System.out.println("[opencl] skipping: " + reason.get());
        }
        Assumptions.assumeTrue(reason.isEmpty(), () -> "opencl unavailable: " + reason.orElse(""));
        return backend;
    }

    private static KernelSource vaddSource() {
        return new KernelSource(Dialect.OPENCL_C, OpenClKernels.source("vadd"),
                List.of(AbstractDeviceConformanceTest.cannedSignature("vadd")));
    }

    private static long run(NativeStream stream, DeviceCommand command) {
        CommandFuture done = new CommandFuture();
        stream.submit(command, done);
        try {
            return done.get(60, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw (RuntimeException) e.getCause();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    // ------------------------------------------------------------------ no runtime

    @Test
    void aMissingIcdLoaderMakesTheBackendUnavailableWithTheReason() {
        backend = new OpenClBackend(OpenClOptions.defaults().withLibraryName("libOpenCL-arrayd-missing.so.1"));
        String reason = backend.unavailableReason().orElseThrow();
        assertTrue(reason.contains("libOpenCL-arrayd-missing.so.1 not found"), reason);
        assertTrue(reason.contains("ocl-icd-libopencl1"), reason);
        ArraydException open = assertThrows(ArraydException.class, () -> backend.openDevices(0));
        assertEquals(ErrorCode.UNAVAILABLE, open.code());
        ArraydException compile = assertThrows(ArraydException.class, () -> backend.compiler().compile(vaddSource()));
        assertEquals(ErrorCode.UNAVAILABLE, compile.code());
        assertTrue(compile.getMessage().contains(reason), compile::getMessage);
    }

    @Test
    void dialectsOtherThanOpenClCAndIrAreRefused() {
        backend = new OpenClBackend();
        assertEquals(java.util.Set.of(Dialect.OPENCL_C, Dialect.IR), backend.compiler().dialects());
        KernelSignature sig = AbstractDeviceConformanceTest.cannedSignature("empty");
        ArraydException c = assertThrows(ArraydException.class,
                () -> backend.compiler().compile(new KernelSource(Dialect.C, "", List.of(sig))));
        assertEquals(ErrorCode.INVALID_ARGUMENT, c.code(), c::toString);
        assertTrue(c.getMessage().contains("OPENCL_C or IR"), c::getMessage);
    }

    // ------------------------------------------------------------------ on a real runtime

    @Test
    void deviceInfoComesFromTheDriver() {
        List<Device> devices = available(OpenClOptions.defaults()).openDevices(0);
        for (int i = 0; i < devices.size(); i++) {
            DeviceInfo info = devices.get(i).info();
            assertEquals(new DeviceId("opencl", i), info.id());
            assertTrue(info.baseAlignment() >= 1 && Long.bitCount(info.baseAlignment()) == 1, info::toString);
            assertTrue(info.localMemoryBytes() > 0, info::toString);
            assertTrue(info.maxWorkItemSizes().size() >= info.maxGridDims(), info::toString);
            assertTrue(info.dialects().contains(Dialect.OPENCL_C), info::toString);
            assertEquals(((OpenClDevice) devices.get(i)).irMissing().isEmpty(), info.dialects().contains(Dialect.IR),
                    () -> "IR exactly where fp64 and int64 atomics are: " + info);
            assertTrue(info.name().contains("("), () -> "names the platform: " + info.name());
        }
        try (OpenClBackend other = new OpenClBackend()) {
            ArraydException tooMany = assertThrows(ArraydException.class, () -> other.openDevices(devices.size() + 1));
            assertEquals(ErrorCode.INVALID_ARGUMENT, tooMany.code());
        }
    }

    @Test
    void theJvmKeepsItsSignalHandlersAfterTheDriverInitializedAndBuilt() {
        OpenClBackend b = available(OpenClOptions.defaults());
        List<Device> devices = b.openDevices(0);
        try (KernelModule module = b.openClCompiler().compile(vaddSource())) {
            vaddOn(devices.getFirst(), module.kernels().getFirst());
        }
        // PoCL's CPU driver installs LLVM's handlers over the JVM's as it initializes its devices; it leaves SIGPIPE
        // alone, which the JVM handles with the same function as SIGSEGV, SIGBUS and SIGILL
        var now = dev.arrayd.devices.api.support.SignalActions.take().orElseThrow();
        long jvm = now.handler(13); // SIGPIPE
        for (int sig : new int[] {11, 7, 4}) { // SIGSEGV, SIGBUS, SIGILL
            assertEquals(jvm, now.handler(sig), "signal " + sig + "'s handler is the JVM's again");
        }
    }

    @Test
    void aSecondCompileOfTheSameSourceUsesTheCachedBinaries() {
        OpenClBackend b = available(OpenClOptions.defaults());
        List<Device> devices = b.openDevices(0);
        OpenClKernelCompiler compiler = b.openClCompiler();
        try (KernelModule first = compiler.compile(vaddSource()); KernelModule second = compiler.compile(vaddSource())) {
            assertEquals(1, compiler.sourceBuilds(), "one build from source, then from binaries");
            assertEquals(1, second.kernels().size());
            vaddOn(devices.getFirst(), second.kernels().getFirst());
        }
    }

    @Test
    void aBuildPastTheTimeoutIsDeadlineExceeded() throws InterruptedException {
        OpenClBackend b = available(OpenClOptions.defaults().withCompileTimeout(Duration.ZERO).withBinaryCacheEntries(0));
        b.openDevices(0);
        ArraydException late = assertThrows(ArraydException.class, () -> b.compiler().compile(vaddSource()));
        assertEquals(ErrorCode.DEADLINE_EXCEEDED, late.code(), late::toString);
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().equals("arrayd-opencl-build")) {
                t.join(60_000); // the abandoned build finishes and releases its program
            }
        }
    }

    @Test
    void compileErrorsCarryTheBuildLogWithTheUsersLines() {
        OpenClBackend b = available(OpenClOptions.defaults());
        b.openDevices(0);
        KernelSource bad = new KernelSource(Dialect.OPENCL_C, """
                // line 1
                ARRAYD_KERNEL void vadd(__global const float *a, __global const float *b, __global float *c, int n) {
                    c[0] = a[0] + missing_name;
                }
                """, List.of(AbstractDeviceConformanceTest.cannedSignature("vadd")));
        var error = assertThrows(dev.arrayd.devices.api.CompileException.class, () -> b.compiler().compile(bad));
        assertTrue(error.diagnostics().contains("kernel.cl:3:"), error::diagnostics);
        assertTrue(error.diagnostics().contains("missing_name"), error::diagnostics);
    }

    @Test
    void unalignedFillsOverlappingCopiesAndHeapMemory() {
        OpenClBackend b = available(OpenClOptions.defaults());
        Device device = b.openDevices(1).getFirst();
        NativeStream stream = device.newStream("s");
        device.allocPool(1, 4096, device.info().baseAlignment());
        device.memsetZero(new MemRef(1, 0, 4096));
        // an 8-byte pattern starting at byte 3: rotated middle, host-written ends
        run(stream, new DeviceCommand.Fill(new MemRef(1, 3, 800), 0x0807060504030201L, 8));
        byte[] back = new byte[4096];
        run(stream, new DeviceCommand.Download(new MemRef(1, 0, 4096), MemorySegment.ofArray(back)));
        for (int i = 0; i < 4096; i++) {
            byte expected = i >= 3 && i < 803 ? (byte) (1 + (i - 3) % 8) : 0;
            assertEquals(expected, back[i], "byte " + i);
        }
        // overlapping ranges of one slab: a move, as memmove would do it
        byte[] ramp = new byte[1000];
        for (int i = 0; i < ramp.length; i++) {
            ramp[i] = (byte) i;
        }
        run(stream, new DeviceCommand.Upload(MemorySegment.ofArray(ramp), new MemRef(1, 0, 1000)));
        run(stream, new DeviceCommand.Copy(new MemRef(1, 0, 1000), new MemRef(1, 100, 1000)));
        byte[] moved = new byte[1000];
        run(stream, new DeviceCommand.Download(new MemRef(1, 100, 1000), MemorySegment.ofArray(moved)));
        assertEquals(-1, java.util.Arrays.mismatch(ramp, moved));
        // zero-byte commands complete without touching the driver
        run(stream, new DeviceCommand.Upload(MemorySegment.ofArray(new byte[0]), new MemRef(1, 64, 0)));
        stream.close();
    }

    @Test
    void twoDevicesShareOneModule() {
        OpenClBackend b = available(OpenClOptions.defaults());
        List<Device> devices = b.openDevices(0);
        Assumptions.assumeTrue(devices.size() >= 2, () -> "only " + devices.size()
                + " OpenCL device(s); with PoCL set POCL_DEVICES=\"basic basic\" for two");
        try (KernelModule module = b.compiler().compile(vaddSource())) {
            for (Device d : devices) {
                vaddOn(d, module.kernels().getFirst());
            }
        }
    }

    private static void vaddOn(Device device, Kernel vadd) {
        int n = 1000;
        NativeStream stream = device.newStream("vadd");
        for (int pool = 1; pool <= 3; pool++) {
            device.allocPool(pool, 4L * n, device.info().baseAlignment());
        }
        float[] a = new float[n];
        float[] bb = new float[n];
        for (int i = 0; i < n; i++) {
            a[i] = i;
            bb[i] = 2 * i + device.id().ordinal();
        }
        run(stream, new DeviceCommand.Upload(MemorySegment.ofArray(a), new MemRef(1, 0, 4L * n)));
        run(stream, new DeviceCommand.Upload(MemorySegment.ofArray(bb), new MemRef(2, 0, 4L * n)));
        run(stream, new DeviceCommand.Launch(vadd, new long[] {n}, null, List.of(new KernelArg.Buffer(new MemRef(1, 0, 4L * n)),
                new KernelArg.Buffer(new MemRef(2, 0, 4L * n)), new KernelArg.Buffer(new MemRef(3, 0, 4L * n)),
                KernelArg.Scalar.i32(n))));
        float[] c = new float[n];
        run(stream, new DeviceCommand.Download(new MemRef(3, 0, 4L * n), MemorySegment.ofArray(c)));
        for (int i = 0; i < n; i++) {
            assertEquals(3f * i + device.id().ordinal(), c[i], device.id() + " c[" + i + "]");
        }
        stream.close();
        for (int pool = 1; pool <= 3; pool++) {
            device.freePool(pool);
        }
    }
}
