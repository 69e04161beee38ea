package dev.arrayd.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.client.ArraydClient;
import dev.arrayd.client.BackendInfo;
import dev.arrayd.client.BufferHandle;
import dev.arrayd.client.BufferOptions;
import dev.arrayd.client.DType;
import dev.arrayd.client.Session;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * client-java's writes and reads larger than any free part of the staging region, over a real daemon's Unix
 * socket: on a cpu device they stream through a ring in the region (one command each, whatever their size),
 * exact to the byte, ordered with the commands around them; on a device without ring transfers they take the
 * session stream's commands.
 */
class StagingRingTest {

    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @TempDir
    Path dir;

    @Test
    @Timeout(180)
    void largeWritesAndReadsOfACpuBufferStreamThroughTheRing() throws Exception {
        Path sock = dir.resolve("r.sock");
        try (DaemonProcess d = new DaemonProcess("--uds", sock.toString(), "--metrics-port", "0",
                "--cpu-memory", "512MiB")) {
            int mp = d.metricsPort();
            Random random = new Random(7);
            // 16 MiB staging: a ring of eight 1 MiB slots; 8 MiB: no room for that, eight of 256 KiB
            for (long staging : new long[] {16L << 20, 8L << 20}) {
                try (ArraydClient c = ArraydClient.builder().target("unix://" + sock).stagingBytes(staging).build();
                        Session s = c.openSession("ring-" + staging).get(60, TimeUnit.SECONDS)) {
                    assertTrue(c.device("cpu:0").get(60, TimeUnit.SECONDS).ringTransfers());
                    // 40 MiB and a last piece in part: round either ring several times
                    byte[] data = new byte[(40 << 20) + 4 * 37];
                    random.nextBytes(data);
                    BufferHandle b = s.createBuffer(DType.F32, data.length / 4).get(60, TimeUnit.SECONDS);
                    double uploads = commands(mp, "upload");
                    double downloads = commands(mp, "download");
                    s.write(b, data).future().get(60, TimeUnit.SECONDS);
                    assertArrayEquals(data, bytes(s.read(b).get(60, TimeUnit.SECONDS)));
                    // one command each way (the session stream's commands would be 41 uploads and 6 downloads)
                    assertTrue(Tenancy.await(java.time.Duration.ofSeconds(10), () -> commands(mp, "upload") == uploads + 1
                            && commands(mp, "download") == downloads + 1), () -> "uploads " + uploads + " -> "
                            + commands(mp, "upload") + ", downloads " + downloads + " -> " + commands(mp, "download"));

                    // arrays of numbers go straight from and into the Java array, one command each way too
                    float[] floats = new float[(9 << 20) + 3];
                    for (int i = 0; i < floats.length; i++) {
                        floats[i] = random.nextFloat() - 0.5f;
                    }
                    long[] longs = new long[(5 << 20) + 1];
                    for (int i = 0; i < longs.length; i++) {
                        longs[i] = random.nextLong();
                    }
                    BufferHandle fb = s.createBuffer(DType.F32, floats.length).get(60, TimeUnit.SECONDS);
                    BufferHandle lb = s.createBuffer(DType.I64, longs.length).get(60, TimeUnit.SECONDS);
                    double typedUp = commands(mp, "upload");
                    double typedDown = commands(mp, "download");
                    s.write(fb, floats);
                    s.write(lb, longs);
                    assertArrayEquals(floats, s.readFloats(fb).get(60, TimeUnit.SECONDS));
                    assertArrayEquals(longs, s.readLongs(lb).get(60, TimeUnit.SECONDS));
                    assertTrue(Tenancy.await(java.time.Duration.ofSeconds(10), () -> commands(mp, "upload") == typedUp + 2
                            && commands(mp, "download") == typedDown + 2), () -> "uploads " + typedUp + " -> "
                            + commands(mp, "upload") + ", downloads " + typedDown + " -> " + commands(mp, "download"));

                    // at an offset, and a range read back
                    byte[] part = new byte[(17 << 20) + 4 * 5];
                    random.nextBytes(part);
                    long offset = 4L * 1001;
                    s.write(b, offset, ByteBuffer.wrap(part)).future().get(60, TimeUnit.SECONDS);
                    System.arraycopy(part, 0, data, (int) offset, part.length);
                    assertArrayEquals(data, bytes(s.read(b).get(60, TimeUnit.SECONDS)));
                    byte[] range = bytes(s.read(b, 4L * 3, 4L * (9 << 20)).get(60, TimeUnit.SECONDS));
                    assertArrayEquals(java.util.Arrays.copyOfRange(data, 12, 12 + 4 * (9 << 20)), range);

                    // ordered with commands on the session's other streams: a fill, then a write, then a fill, with
                    // reads between them that must see each in turn
                    s.fill(b, 2.5f).future().get(60, TimeUnit.SECONDS);
                    CompletableFuture<ByteBuffer> filled = s.read(b);
                    s.write(b, data);
                    CompletableFuture<ByteBuffer> written = s.read(b);
                    s.fill(b, -1f);
                    CompletableFuture<ByteBuffer> refilled = s.read(b);
                    assertAll(filled.get(60, TimeUnit.SECONDS), 2.5f);
                    assertArrayEquals(data, bytes(written.get(60, TimeUnit.SECONDS)));
                    assertAll(refilled.get(60, TimeUnit.SECONDS), -1f);

                    // a write made by a callback on the thread that completes the session's events (the transport's,
                    // which also sends what the client submits) takes the session stream's commands: waiting there for
                    // the daemon to take the ring's slots would wait for a command that thread never sends
                    double before = commands(mp, "upload");
                    Thread test = Thread.currentThread();
                    CompletableFuture<Thread> ran = new CompletableFuture<>();
                    s.fill(b, 0f).future().thenCompose(r -> {
                        ran.complete(Thread.currentThread());
                        return s.write(b, data).future();
                    }).get(60, TimeUnit.SECONDS);
                    assertTrue(ran.get() != test, "the callback ran on the thread that submitted the fill");
                    assertArrayEquals(data, bytes(s.read(b).get(60, TimeUnit.SECONDS)));
                    int chunks = (data.length + (1 << 20) - 1) >> 20;
                    assertTrue(Tenancy.await(java.time.Duration.ofSeconds(10), () -> commands(mp, "upload") == before + chunks),
                            () -> "uploads " + before + " -> " + commands(mp, "upload") + " (expected: " + chunks + " more)");

                    // several at once share the staging region, each in its own part of it
                    BufferHandle b2 = s.createBuffer(DType.F32, data.length / 4).get(60, TimeUnit.SECONDS);
                    s.write(b2, part);
                    CompletableFuture<ByteBuffer> first = s.read(b);
                    CompletableFuture<ByteBuffer> second = s.read(b2, 0, part.length);
                    assertArrayEquals(data, bytes(first.get(60, TimeUnit.SECONDS)));
                    assertArrayEquals(part, bytes(second.get(60, TimeUnit.SECONDS)));
                }
            }
        }
    }

    @Test
    @Timeout(180)
    void aDeviceWithoutRingTransfersTakesTheSessionStream() throws Exception {
        Path sock = dir.resolve("o.sock");
        try (DaemonProcess d = new DaemonProcess("--uds", sock.toString(), "--metrics-port", "-1",
                "--devices", "cpu,opencl", "--cpu-memory", "256MiB");
                ArraydClient c = ArraydClient.builder().target("unix://" + sock).build();
                Session s = c.openSession("no-ring").get(60, TimeUnit.SECONDS)) {
            BackendInfo opencl = c.inventory().get(60, TimeUnit.SECONDS).backends().stream()
                    .filter(b -> b.name().equals("opencl")).findFirst().orElseThrow();
            if (!opencl.available()) {
                System.out.println("[opencl] skipping the write and read of an OpenCL buffer: " + opencl.reason());
            }
            Assumptions.assumeTrue(opencl.available(), () -> "opencl unavailable: " + opencl.reason());
            assertFalse(c.device("opencl:0").get(60, TimeUnit.SECONDS).ringTransfers());
            byte[] data = new byte[24 << 20];
            new Random(9).nextBytes(data);
            BufferHandle b = s.createBuffer(DType.F32, new long[] {data.length / 4},
                    BufferOptions.defaults().device("opencl:0")).get(60, TimeUnit.SECONDS);
            s.write(b, data).future().get(60, TimeUnit.SECONDS);
            assertArrayEquals(data, bytes(s.read(b).get(60, TimeUnit.SECONDS)));
        }
    }

    /** Commands of {@code kind} the daemon finished, by its /metrics. */
    private static double commands(int metricsPort, String kind) {
        try {
            String body = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + metricsPort + "/metrics"))
                    .build(), HttpResponse.BodyHandlers.ofString()).body();
            double sum = 0;
            for (String line : body.split("\n")) {
                if (line.startsWith("arrayd_commands_total{") && line.contains("kind=\"" + kind + "\"")) {
                    sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
                }
            }
            return sum;
        } catch (Exception e) {
            throw new AssertionError("scraping /metrics: " + e, e);
        }
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }

    private static void assertAll(ByteBuffer b, float value) {
        var floats = b.duplicate().order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer();
        for (int i = 0; i < floats.remaining(); i++) {
            if (floats.get(i) != value) {
                assertEquals(value, floats.get(i), "element " + i);
            }
        }
    }
}
