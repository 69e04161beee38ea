package dev.arrayd.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.client.ArraydClient;
import dev.arrayd.client.BufferHandle;
import dev.arrayd.client.CommandOptions;
import dev.arrayd.client.DType;
import dev.arrayd.client.MappedRegion;
import dev.arrayd.client.Session;
import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.CreateRegionRequest;
import dev.arrayd.proto.v1.OpenSessionRequest;
import dev.arrayd.proto.v1.RegionServiceGrpc;
import dev.arrayd.proto.v1.RegionSlice;
import dev.arrayd.proto.v1.SessionServiceGrpc;
import dev.arrayd.proto.v1.SubmitRequest;
import dev.arrayd.proto.v1.Upload;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Shared-memory regions with a real daemon over its Unix socket: the Java client maps a region, uploads
 * from it and downloads into it; bad slices, other sessions' regions, quotas and a daemon without the
 * socket get the errors they should.
 */
class RegionsTest {

    @TempDir
    Path dir;

    @Test
    @Timeout(120)
    void uploadsReadFromAndDownloadsWriteIntoTheMappedRegion() throws Exception {
        Path sock = dir.resolve("arrayd.sock");
        try (DaemonProcess d = new DaemonProcess("--uds", sock.toString(), "--metrics-port", "-1");
                ArraydClient c = ArraydClient.connect("unix://" + sock);
                Session s = c.openSession("regions-it").get(60, TimeUnit.SECONDS)) {
            int n = 1 << 20; // 4 MiB of floats, more than one gRPC message would carry inline
            try (MappedRegion r = s.createRegion(2L * n * 4).get(60, TimeUnit.SECONDS)) {
                assertEquals(2L * n * 4, r.size());
                float[] in = new float[n];
                for (int i = 0; i < n; i++) {
                    in[i] = i * 0.5f - 7;
                }
                r.put(0, in);
                BufferHandle b = s.createBuffer(DType.F32, n).get(60, TimeUnit.SECONDS);
                var up = s.upload(b, 0, r, 0, 4L * n, CommandOptions.defaults());
                var down = s.download(b, 0, 0, r, 4L * n, CommandOptions.defaults().waitFor(up));
                var data = down.future().get(60, TimeUnit.SECONDS).data();
                assertEquals(0, data == null ? 0 : data.remaining(), "the bytes are in the region, not in the completion");
                float[] out = new float[n];
                r.get(4L * n, out);
                assertArrayEquals(in, out);
            }
            // a closed region is gone: its memory is free for the next (here: the same size again)
            try (MappedRegion again = s.createRegion(8L << 20).get(60, TimeUnit.SECONDS)) {
                assertEquals(8L << 20, again.size());
            }
            // the demo takes regions by itself over the socket
            DaemonProcessTest.CliRun demo = DaemonProcessTest.cli("demo", "--target", "unix://" + sock);
            assertEquals(0, demo.exit(), demo.output());
            assertTrue(demo.output().contains("arrays travel through shared-memory regions"), demo.output());
        }
    }

    @Test
    @Timeout(120)
    void buffersLivingInARegionAreComputedInPlaceOnTheCpuDevice() throws Exception {
        Path sock = dir.resolve("z.sock");
        try (DaemonProcess d = new DaemonProcess("--uds", sock.toString(), "--metrics-port", "-1");
                ArraydClient c = ArraydClient.connect("unix://" + sock);
                Session s = c.openSession("zero-copy-it").get(60, TimeUnit.SECONDS)) {
            int n = 1 << 16;
            long bytes = 4L * n;
            var vadd = s.compile(dev.arrayd.client.KernelModuleSpec.ir(ProcessFuzzProperties.vadd()))
                    .get(60, TimeUnit.SECONDS).get("vadd");
            var hosted = dev.arrayd.client.BufferOptions.defaults().mode(dev.arrayd.client.MemoryMode.HOSTED_CHANGED_ON_DEVICES);
            MappedRegion r = s.createRegion(3 * bytes).get(60, TimeUnit.SECONDS);
            float[] a = new float[n];
            float[] b = new float[n];
            for (int i = 0; i < n; i++) {
                a[i] = i;
                b[i] = 0.25f * i;
            }
            r.put(0, a); // before creation: the region's bytes are the buffer's first contents
            BufferHandle ba = s.createBuffer(DType.F32, new long[] {n}, hosted, r, 0).get(60, TimeUnit.SECONDS);
            BufferHandle bb = s.createBuffer(DType.F32, new long[] {n}, hosted, r, bytes).get(60, TimeUnit.SECONDS);
            BufferHandle bc = s.createBuffer(DType.F32, new long[] {n}, hosted, r, 2 * bytes).get(60, TimeUnit.SECONDS);
            r.put(bytes, b); // after creation: said with host_written
            var written = s.hostWritten(bb, CommandOptions.defaults());
            var run = s.launch(dev.arrayd.client.Launch.of(vadd).global(n).device("cpu:0").args(ba, bb, bc, (long) n)
                    .waitFor(written));
            run.future().get(60, TimeUnit.SECONDS);
            float[] out = new float[n];
            r.get(2 * bytes, out); // no download: the launch wrote the region
            for (int i = 0; i < n; i++) {
                assertEquals(a[i] + b[i], out[i], "c[" + i + "]");
            }
            // the client changes a in place; host_written, launch, and c changes in place again
            r.put(0, b);
            var again = s.launch(dev.arrayd.client.Launch.of(vadd).global(n).device("cpu:0").args(ba, bb, bc, (long) n)
                    .waitFor(s.hostWritten(ba, CommandOptions.defaults())));
            again.future().get(60, TimeUnit.SECONDS);
            r.get(2 * bytes, out);
            for (int i = 0; i < n; i++) {
                assertEquals(2 * b[i], out[i], "c[" + i + "] after host_written");
            }
            // a destroyed region stays as long as buffers live in it
            r.close();
            s.launch(dev.arrayd.client.Launch.of(vadd).global(n).device("cpu:0").args(bb, bb, bc, (long) n))
                    .future().get(60, TimeUnit.SECONDS);
            float[] read = s.readFloats(bc).get(60, TimeUnit.SECONDS);
            for (int i = 0; i < n; i++) {
                assertEquals(2 * b[i], read[i], "c[" + i + "] after DestroyRegion");
            }
        }
    }

    @Test
    @Timeout(120)
    void clientsThatUnmapScribbleOrVanishHurtNeitherTheDaemonNorTheQuota() throws Exception {
        Path sock = dir.resolve("h.sock");
        try (DaemonProcess d = new DaemonProcess("--uds", sock.toString(), "--metrics-port", "-1",
                "--tenant-quotas", "memory=64MiB")) {
            // explicit regions only (no staging region for write and read): the quota is the test's
            try (ArraydClient c = ArraydClient.builder().target("unix://" + sock).regions(false).build();
                    Session s = c.openSession("scribbler").get(60, TimeUnit.SECONDS)) {
                int bytes = 8 << 20;
                BufferHandle b = s.createBuffer(DType.U8, bytes).get(60, TimeUnit.SECONDS);
                MappedRegion r = s.createRegion(bytes).get(60, TimeUnit.SECONDS);
                // writes while the daemon reads: the upload gets some mix of bytes, nobody crashes
                Thread scribbler = Thread.ofPlatform().start(() -> {
                    for (int round = 0; round < 50; round++) {
                        r.segment().fill((byte) round);
                    }
                });
                for (int i = 0; i < 10; i++) {
                    s.upload(b, 0, r, 0, bytes, CommandOptions.defaults()).future().get(60, TimeUnit.SECONDS);
                }
                scribbler.join();
                // unmapped (and destroyed) right after submitting: the daemon's own mapping serves the command
                var up = s.upload(b, 0, r, 0, bytes, CommandOptions.defaults());
                r.close();
                up.future().get(60, TimeUnit.SECONDS);
                assertEquals(0, DaemonProcessTest.cli("health", "--target", "unix://" + sock).exit());
            }
            // a client that dies holding a region (no CloseSession): its lease ends, and with it the region
            ManagedChannel ch = Grpc.newChannelBuilder("unix://" + sock, InsecureChannelCredentials.create()).build();
            String gone = SessionServiceGrpc.newBlockingStub(ch).openSession(OpenSessionRequest.newBuilder()
                    .setClientName("vanishing").setLease(com.google.protobuf.util.Durations.fromMillis(1000)).build())
                    .getSession();
            long held = RegionServiceGrpc.newBlockingStub(ch).createRegion(CreateRegionRequest.newBuilder().setSession(gone)
                    .setSizeBytes(48L << 20).build()).getRegion();
            // with a buffer living in it: the region goes once that buffer is released with the session
            dev.arrayd.proto.v1.BufferServiceGrpc.newBlockingStub(ch).createBuffer(dev.arrayd.proto.v1.CreateBufferRequest
                    .newBuilder().setSession(gone).setDtype(dev.arrayd.proto.v1.DataType.DATA_TYPE_F32).addDims(1 << 20)
                    .setMemoryMode(dev.arrayd.proto.v1.MemoryMode.MEMORY_MODE_HOSTED_CHANGED_ON_DEVICES)
                    .setHostRegion(RegionSlice.newBuilder().setRegion(held).setOffsetBytes(4096)).build());
            ch.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
            // the quota (64 MiB) holds a second 48 MiB region only once the first is freed
            ManagedChannel next = Grpc.newChannelBuilder("unix://" + sock, InsecureChannelCredentials.create()).build();
            try {
                String s2 = SessionServiceGrpc.newBlockingStub(next).openSession(OpenSessionRequest.getDefaultInstance())
                        .getSession();
                var regions = RegionServiceGrpc.newBlockingStub(next);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (true) {
                    try {
                        regions.createRegion(CreateRegionRequest.newBuilder().setSession(s2).setSizeBytes(48L << 20).build());
                        break;
                    } catch (StatusRuntimeException e) {
                        assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode(), e.toString());
                        assertTrue(System.nanoTime() < deadline, "the vanished client's region was not freed: " + e);
                        Thread.onSpinWait();
                    }
                }
            } finally {
                next.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    @Timeout(120)
    void writeAndReadGoThroughAStagingRegionOverTheSocketAndFallBackWhenItIsFull() throws Exception {
        Path sock = dir.resolve("s.sock");
        try (DaemonProcess d = new DaemonProcess("--uds", sock.toString(), "--metrics-port", "-1",
                "--tenant-quotas", "memory=128MiB")) {
            int n = 1 << 20;
            float[] in = new float[n];
            for (int i = 0; i < n; i++) {
                in[i] = (float) Math.sin(i);
            }
            try (ArraydClient c = ArraydClient.builder().target("unix://" + sock).stagingBytes(8L << 20).build();
                    Session s = c.openSession("staged").get(60, TimeUnit.SECONDS)) {
                // the staging region holds 8 MiB of the 128 MiB quota: a 121 MiB region no longer fits
                Status full = Status.fromThrowable(assertThrows(ExecutionException.class,
                        () -> s.createRegion(121L << 20).get(60, TimeUnit.SECONDS)).getCause());
                assertEquals(Status.Code.RESOURCE_EXHAUSTED, full.getCode(), full.toString());
                BufferHandle b = s.createBuffer(DType.F32, n).get(60, TimeUnit.SECONDS);
                s.write(b, in).future().get(60, TimeUnit.SECONDS);            // 4 MiB: through the region
                assertArrayEquals(in, s.readFloats(b).get(60, TimeUnit.SECONDS));
                BufferHandle big = s.createBuffer(DType.F32, 3 * n).get(60, TimeUnit.SECONDS);
                float[] three = new float[3 * n];
                System.arraycopy(in, 0, three, n, n);
                s.write(big, three).future().get(60, TimeUnit.SECONDS);       // 12 MiB: no slot, a ring
                assertArrayEquals(three, s.readFloats(big).get(60, TimeUnit.SECONDS));
            }
            try (ArraydClient c = ArraydClient.builder().target("unix://" + sock).regions(false).build();
                    Session s = c.openSession("unstaged").get(60, TimeUnit.SECONDS)) {
                // without staging the whole quota is there
                s.createRegion(121L << 20).get(60, TimeUnit.SECONDS).close();
                BufferHandle b = s.createBuffer(DType.F32, n).get(60, TimeUnit.SECONDS);
                s.write(b, in).future().get(60, TimeUnit.SECONDS);
                assertArrayEquals(in, s.readFloats(b).get(60, TimeUnit.SECONDS));
            }
        }
    }

    @Test
    @Timeout(120)
    void badSlicesOtherSessionsRegionsAndQuotasAreRefusedByName() throws Exception {
        Path sock = dir.resolve("q.sock");
        try (DaemonProcess d = new DaemonProcess("--uds", sock.toString(), "--metrics-port", "-1",
                "--tenant-quotas", "memory=16MiB")) {
            ManagedChannel ch = Grpc.newChannelBuilder("unix://" + sock, InsecureChannelCredentials.create()).build();
            try {
                var sessions = SessionServiceGrpc.newBlockingStub(ch);
                var regions = RegionServiceGrpc.newBlockingStub(ch);
                var exec = dev.arrayd.proto.v1.ExecutionServiceGrpc.newBlockingStub(ch);
                var buffers = dev.arrayd.proto.v1.BufferServiceGrpc.newBlockingStub(ch);
                String a = sessions.openSession(OpenSessionRequest.newBuilder().setClientName("a").build()).getSession();
                String b = sessions.openSession(OpenSessionRequest.newBuilder().setClientName("b").build()).getSession();
                var region = regions.createRegion(CreateRegionRequest.newBuilder().setSession(a).setSizeBytes(4096).build());
                assertTrue(region.getDescriptorSocket().endsWith("q.sock.regions"), region.getDescriptorSocket());
                long buf = buffers.createBuffer(dev.arrayd.proto.v1.CreateBufferRequest.newBuilder().setSession(a)
                        .setDtype(dev.arrayd.proto.v1.DataType.DATA_TYPE_F32).addDims(4096).build()).getBuffer().getBuffer();

                Status past = Status.fromThrowable(assertThrows(StatusRuntimeException.class, () -> exec.submit(
                        SubmitRequest.newBuilder().setSession(a).addCommands(Command.newBuilder().setUpload(Upload.newBuilder()
                                .setBuffer(buf).setFromRegion(RegionSlice.newBuilder().setRegion(region.getRegion())
                                        .setOffsetBytes(4000).setSizeBytes(200)))).build())));
                assertEquals(Status.Code.OUT_OF_RANGE, past.getCode(), past.toString());
                assertTrue(past.getDescription().contains("upload.from_region: offset_bytes 4000, size_bytes 200 "
                        + "(expected: inside region 0x"), past.getDescription());

                Status foreign = Status.fromThrowable(assertThrows(StatusRuntimeException.class, () -> exec.submit(
                        SubmitRequest.newBuilder().setSession(b).addCommands(Command.newBuilder().setUpload(Upload.newBuilder()
                                .setBuffer(buf).setFromRegion(RegionSlice.newBuilder().setRegion(region.getRegion())
                                        .setSizeBytes(16)))).build())));
                assertEquals(Status.Code.NOT_FOUND, foreign.getCode(), "another session's region: " + foreign);

                var inRegion = dev.arrayd.proto.v1.CreateBufferRequest.newBuilder().setSession(a)
                        .setDtype(dev.arrayd.proto.v1.DataType.DATA_TYPE_F32).addDims(16)
                        .setMemoryMode(dev.arrayd.proto.v1.MemoryMode.MEMORY_MODE_HOSTED_VOLATILE);
                Status unaligned = Status.fromThrowable(assertThrows(StatusRuntimeException.class, () -> buffers.createBuffer(
                        inRegion.setHostRegion(RegionSlice.newBuilder().setRegion(region.getRegion()).setOffsetBytes(4)).build())));
                assertEquals(Status.Code.INVALID_ARGUMENT, unaligned.getCode(), unaligned.toString());
                assertEquals("host_region.offset_bytes: 4 (expected: a multiple of 64)", unaligned.getDescription());
                Status beyond = Status.fromThrowable(assertThrows(StatusRuntimeException.class, () -> buffers.createBuffer(
                        inRegion.setHostRegion(RegionSlice.newBuilder().setRegion(region.getRegion()).setOffsetBytes(4096)).build())));
                assertEquals(Status.Code.OUT_OF_RANGE, beyond.getCode(), beyond.toString());
                Status device = Status.fromThrowable(assertThrows(StatusRuntimeException.class, () -> buffers.createBuffer(
                        inRegion.setMemoryMode(dev.arrayd.proto.v1.MemoryMode.MEMORY_MODE_DEVICE)
                                .setHostRegion(RegionSlice.newBuilder().setRegion(region.getRegion())).build())));
                assertEquals(Status.Code.INVALID_ARGUMENT, device.getCode(), device.toString());
                assertTrue(device.getDescription().startsWith("memory_mode: DEVICE (expected: HOSTED_CONSTANT"),
                        device.getDescription());
                Status notInRegion = Status.fromThrowable(assertThrows(StatusRuntimeException.class, () -> exec.submit(
                        SubmitRequest.newBuilder().setSession(a).addCommands(Command.newBuilder().setHostWritten(
                                dev.arrayd.proto.v1.HostWritten.newBuilder().setBuffer(buf))).build())));
                assertEquals(Status.Code.FAILED_PRECONDITION, notInRegion.getCode(), notInRegion.toString());
                assertTrue(notInRegion.getDescription().contains("host_written.buffer: buffer 0x"), notInRegion.getDescription());

                Status quota = Status.fromThrowable(assertThrows(StatusRuntimeException.class, () -> regions.createRegion(
                        CreateRegionRequest.newBuilder().setSession(a).setSizeBytes(32L << 20).build())));
                assertEquals(Status.Code.RESOURCE_EXHAUSTED, quota.getCode(), quota.toString());
                assertTrue(quota.getDescription().contains("quota"), quota.getDescription());
            } finally {
                ch.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    @Timeout(120)
    void withoutTheUnixSocketThereAreNoRegions() throws Exception {
        try (DaemonProcess d = new DaemonProcess("--metrics-port", "-1");
                ArraydClient c = ArraydClient.connect(d.target());
                Session s = c.openSession("no-regions").get(60, TimeUnit.SECONDS)) {
            ExecutionException e = assertThrows(ExecutionException.class, () -> s.createRegion(4096).get(60, TimeUnit.SECONDS));
            Status st = Status.fromThrowable(e.getCause());
            assertEquals(Status.Code.FAILED_PRECONDITION, st.getCode(), st.toString());
            assertTrue(st.getDescription().contains("serve --uds"), st.getDescription());
        }
    }
}
