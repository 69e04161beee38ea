package dev.arrayd.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Grpc;
import io.grpc.InsecureServerCredentials;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServerBuilder;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ArraydClientTest {
    private FakeServerHarness h;

    @BeforeEach
    void start() throws Exception {
        h = new FakeServerHarness();
    }

    @AfterEach
    void stop() throws Exception {
        h.close();
    }

    @Test
    void listsDevicesAndBackendsAsClientRecords() throws Exception {
        DeviceInventory inv = h.client.inventory().get(5, TimeUnit.SECONDS);
        assertEquals(2, inv.devices().size());
        DeviceInfo cpu0 = inv.devices().get(0);
        assertEquals("cpu:0", cpu0.id());
        assertEquals("cpu", cpu0.backend());
        assertEquals("Fake CPU", cpu0.name());
        assertEquals(1L << 34, cpu0.memoryBytes());
        assertEquals(4096, cpu0.memoryUsedBytes());
        assertEquals(2, cpu0.computeUnits());
        assertEquals(2, cpu0.suggestedStreams());
        assertEquals(List.of(1024L, 1024L, 64L), cpu0.maxWorkItemSizes());
        assertEquals(List.of(DType.F32, DType.I32), cpu0.dtypes());
        assertEquals(List.of(Dialect.C), cpu0.dialects());
        assertEquals(List.of(Dialect.C), inv.devices().get(1).dialects(), "unknown dialect values are skipped");
        BackendInfo cuda = inv.backends().get(1);
        assertFalse(cuda.available());
        assertEquals("libcuda.so.1 not found", cuda.reason());
        assertEquals(List.of("cpu:0", "cpu:1"), inv.backends().get(0).devices());

        List<DeviceInfo> devices = h.client.devices().get(5, TimeUnit.SECONDS);
        assertEquals(inv.devices(), devices);
    }

    @Test
    void sendsTheBearerTokenOnEveryCall() throws Exception {
        h.client.devices().get(5, TimeUnit.SECONDS);
        assertEquals("Bearer t0ken", h.fake.authorization.get());
    }

    @Test
    void pingsAtAThirdOfTheLease() throws Exception {
        Session s = h.client.openSession("pinger", Duration.ofMillis(30)).get(5, TimeUnit.SECONDS);
        assertEquals(Duration.ofMillis(30), s.lease());
        assertTrue(h.fake.pinged.await(5, TimeUnit.SECONDS), "a ping arrived on the session stream");
        s.close();
    }

    @Test
    void aSessionsCompletionLingerIsAskedForWhenItsStreamAttaches() throws Exception {
        Session plain = h.client.openSession("plain").get(5, TimeUnit.SECONDS);
        Session lingering = h.client.openSession("lingering", SessionOptions.defaults()
                .completionLinger(Duration.ofNanos(250_900)).lease(Duration.ofMillis(90))).get(5, TimeUnit.SECONDS);
        assertEquals(0, h.fake.attaches.get(0).getCompletionLingerUs(), "the default: completions at once");
        assertEquals(lingering.id(), h.fake.attaches.get(1).getSession());
        assertEquals(250, h.fake.attaches.get(1).getCompletionLingerUs(), "whole microseconds");
        assertEquals(Duration.ofMillis(90), lingering.lease());
        plain.close();
        lingering.close();
    }

    @Test
    void sessionOptionsRefuseALingerBeyondTenMillisecondsOrBelowZero() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> SessionOptions.defaults().completionLinger(Duration.ofMillis(11)));
        assertEquals("completionLinger: PT0.011S (expected: 0 to PT0.01S)", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> SessionOptions.defaults().completionLinger(Duration.ofNanos(-1)));
        assertThrows(IllegalArgumentException.class, () -> SessionOptions.defaults().lease(Duration.ofSeconds(-1)));
        assertEquals(SessionOptions.MAX_COMPLETION_LINGER,
                SessionOptions.defaults().completionLinger(SessionOptions.MAX_COMPLETION_LINGER).completionLinger());
    }

    @Test
    void closeClosesSessionsAndReleasesTheChannel() throws Exception {
        Session s = h.client.openSession("closer").get(5, TimeUnit.SECONDS);
        h.client.close();
        assertTrue(h.channel.isTerminated());
        assertEquals(List.of(s.id()), h.fake.closedSessions);
        assertThrows(IllegalStateException.class, () -> s.createBuffer(DType.F32, 4));
        assertThrows(IllegalStateException.class, () -> h.client.openSession("late"));
    }

    @Test
    void builderRejectsBadSettingsNamingTheValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ArraydClient.builder().maxMessageBytes(1000));
        assertEquals("maxMessageBytes: 1000 (expected: >= 16777216, room for a completions message with 12 MiB of read data)", e.getMessage());
        assertThrows(IllegalStateException.class, () -> ArraydClient.builder().build());
    }

    @Test
    void connectsOverNettyWithATarget() throws Exception {
        ServerBuilder<?> sb = Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create()).directExecutor();
        for (ServerServiceDefinition d : new FakeArrayd().services()) {
            sb.addService(d);
        }
        Server server = sb.build().start();
        try (ArraydClient client = ArraydClient.connect("127.0.0.1:" + server.getPort())) {
            assertEquals(2, client.devices().get(10, TimeUnit.SECONDS).size());
            try (Session s = client.openSession("netty").get(10, TimeUnit.SECONDS)) {
                BufferHandle b = s.createBuffer(DType.I32, 3).get(10, TimeUnit.SECONDS);
                s.write(b, new int[] {1, 2, 3});
                assertEquals(List.of(1, 2, 3), boxed(s.readInts(b).get(10, TimeUnit.SECONDS)));
                // 5 MiB: the write is paced by flow control, the read comes back in chunks
                long[] big = new long[5 << 17];
                for (int i = 0; i < big.length; i++) {
                    big[i] = i * 31L;
                }
                BufferHandle l = s.createBuffer(DType.I64, big.length).get(10, TimeUnit.SECONDS);
                assertEquals(EventState.SUCCEEDED, s.write(l, big).future().get(10, TimeUnit.SECONDS).state());
                assertArrayEquals(big, s.readLongs(l).get(10, TimeUnit.SECONDS));
            }
        } finally {
            server.shutdownNow();
            server.awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    private static List<Integer> boxed(int[] values) {
        return java.util.Arrays.stream(values).boxed().toList();
    }
}
