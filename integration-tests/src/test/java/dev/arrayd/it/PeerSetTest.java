package dev.arrayd.it;

import static dev.arrayd.it.ClusterTest.N;
import static dev.arrayd.it.ClusterTest.TOKEN;
import static dev.arrayd.it.ClusterTest.await;
import static dev.arrayd.it.ClusterTest.axpy;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.client.ArraydClient;
import dev.arrayd.client.BufferHandle;
import dev.arrayd.client.BufferOptions;
import dev.arrayd.client.DType;
import dev.arrayd.client.DeviceInfo;
import dev.arrayd.client.KernelHandle;
import dev.arrayd.client.KernelModuleSpec;
import dev.arrayd.client.Launch;
import dev.arrayd.client.Session;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Peers found by name ({@code --peers dns:///pool:port}): a name that resolves to two loopback addresses
 * (127.0.0.2 and 127.0.0.3, a hosts file standing in for a Kubernetes headless Service), a daemon listening on each
 * with the same port, and an entry daemon that finds both, names them after their addresses' names, and uses their
 * devices; a member that comes back at another address (127.0.0.4) under the same name is reached there, and one
 * that appears after the start (127.0.0.5) joins with its device once it answers.
 */
class PeerSetTest {

    @TempDir
    Path dir;

    private DaemonProcess member(String address, int port) throws Exception {
        Files.writeString(dir.resolve("tokens"), TOKEN + " entry\n");
        return new DaemonProcess(port, Map.of(), "--bind", address, "--devices", "cpu:1", "--auth-tokens",
                dir.resolve("tokens").toString(), "--metrics-port", "-1", "--cpu-memory", "268435456");
    }

    private void hosts(String... lines) throws Exception {
        Path tmp = dir.resolve("hosts.tmp");
        Files.writeString(tmp, String.join("\n", lines) + "\n");
        Files.move(tmp, dir.resolve("hosts"), java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }

    @Test
    @Timeout(240)
    void aSetsMembersAreFoundByNameOneBackAtANewAddressRejoinsAndANewOneJoins() throws Exception {
        hosts("127.0.0.2 pool-a pool", "127.0.0.3 pool-b pool");
        DaemonProcess b = null;
        try (DaemonProcess a = member("127.0.0.2", 0)) {
            int port = a.port;
            b = member("127.0.0.3", port);
            Files.writeString(dir.resolve("peer-token"), TOKEN + "\n");
            // the entry resolves names through the hosts file, and caches no answer
            Map<String, String> env = Map.of("JAVA_TOOL_OPTIONS", "-Djdk.net.hosts.file=" + dir.resolve("hosts")
                    + " -Dsun.net.inetaddr.ttl=0 -Dsun.net.inetaddr.negative.ttl=0");
            try (DaemonProcess e = new DaemonProcess(0, env, "--devices", "none", "--metrics-port", "-1", "--peers",
                    "dns:///pool:" + port, "--peer-token-file", dir.resolve("peer-token").toString());
                 ArraydClient c = ArraydClient.connect(e.target()); Session s = await(c.openSession("it-sets"))) {
                assertEquals(List.of("pool-a/cpu:0", "pool-b/cpu:0"), await(c.devices()).stream().map(DeviceInfo::id)
                        .sorted().toList(), e.lastLines(20));
                KernelHandle axpy = await(s.compile(KernelModuleSpec.ir(axpy()))).get("axpy");
                int[] ones = new int[N];
                Arrays.fill(ones, 1);
                BufferHandle onA = await(s.createBuffer(DType.I32, new long[] {N}, BufferOptions.defaults().device("pool-a/cpu:0")));
                BufferHandle onB = await(s.createBuffer(DType.I32, new long[] {N}, BufferOptions.defaults().device("pool-b/cpu:0")));
                await(s.write(onA, ones).future());
                await(s.write(onB, ones).future());
                // y = y + 2x on pool-b, with x read from pool-a (a copy between the members)
                await(s.launch(Launch.of(axpy).global(N).args(2, onA, onB, N).device("pool-b/cpu:0")).future());
                int[] three = new int[N];
                Arrays.fill(three, 3);
                assertArrayEquals(three, await(s.readInts(onB)));

                // pool-b goes away, and comes back at another address under the same name; a third member appears
                ManagedChannel ch = ManagedChannelBuilder.forTarget(e.target()).usePlaintext().build();
                try {
                    b.process.destroyForcibly();
                    b.process.waitFor(30, TimeUnit.SECONDS);
                    awaitHealth(ch, "pool-b/cpu:0", ServingStatus.NOT_SERVING);
                    hosts("127.0.0.2 pool-a pool", "127.0.0.4 pool-b pool", "127.0.0.5 pool-c pool");
                    b = member("127.0.0.4", port);
                    awaitHealth(ch, "pool-b/cpu:0", ServingStatus.SERVING);
                } finally {
                    ch.shutdownNow();
                }
                BufferHandle again = await(s.createBuffer(DType.I32, new long[] {N}, BufferOptions.defaults().device("pool-b/cpu:0")));
                await(s.write(again, ones).future());
                await(s.launch(Launch.of(axpy).global(N).args(2, onA, again, N).device("pool-b/cpu:0")).future());
                assertArrayEquals(three, await(s.readInts(again)));
                assertTrue(e.output().contains("peer pool-b of dns:///pool:" + port + " is now at 127.0.0.4:" + port),
                        e.lastLines(30));
                // the member that appeared comes up: its device joins, and runs work with buffers and kernels made
                // before it
                try (DaemonProcess _ = member("127.0.0.5", port)) {
                    ManagedChannel watch = ManagedChannelBuilder.forTarget(e.target()).usePlaintext().build();
                    try {
                        awaitHealth(watch, "pool-c/cpu:0", ServingStatus.SERVING);
                    } finally {
                        watch.shutdownNow();
                    }
                    assertEquals(List.of("pool-a/cpu:0", "pool-b/cpu:0", "pool-c/cpu:0"), await(c.devices()).stream()
                            .map(DeviceInfo::id).sorted().toList(), e.lastLines(30));
                    assertTrue(e.output().contains("peer pool-c (127.0.0.5:" + port + ") of dns:///pool:" + port
                            + " appeared"), e.lastLines(30));
                    BufferHandle onC = await(s.createBuffer(DType.I32, new long[] {N}, BufferOptions.defaults()
                            .device("pool-c/cpu:0")));
                    await(s.write(onC, ones).future());
                    await(s.launch(Launch.of(axpy).global(N).args(2, onA, onC, N).device("pool-c/cpu:0")).future());
                    assertArrayEquals(three, await(s.readInts(onC)));
                    // onA, made before pool-c joined, gets a replica there (a launch that writes it on pool-c)
                    await(s.launch(Launch.of(axpy).global(N).args(1, onC, onA, N).device("pool-c/cpu:0")).future());
                    int[] four = new int[N];
                    Arrays.fill(four, 4);
                    assertArrayEquals(four, await(s.readInts(onA)));
                }
            }
        } finally {
            if (b != null) {
                b.close();
            }
        }
    }

    /** Blocks on the daemon's health watch until device {@code device} reports {@code want}. */
    private static void awaitHealth(ManagedChannel ch, String device, ServingStatus want) {
        Iterator<HealthCheckResponse> it = HealthGrpc.newBlockingStub(ch).withDeadlineAfter(90, TimeUnit.SECONDS)
                .watch(HealthCheckRequest.newBuilder().setService("arrayd.device." + device).build());
        while (it.next().getStatus() != want) {
            // the next change
        }
    }
}
