package dev.arrayd.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.client.Access;
import dev.arrayd.client.ArraydClient;
import dev.arrayd.client.ArraydCommandException;
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
import dev.arrayd.client.MergeBuffer;
import dev.arrayd.client.MergeMode;
import dev.arrayd.client.Session;
import dev.arrayd.client.StreamHandle;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three daemons on loopback: peer {@code a} with two CPU devices, peer {@code b} with a CPU device and, where an
 * OpenCL runtime exists, an OpenCL one, and an entry daemon with no device of its own ({@code --devices none
 * --peers a=…,b=…}), the peers requiring a token. Random graphs of launches, copies, fills, transfers, merge
 * buffers and replays spanning every device, checked against plain Java; a peer killed in the middle and
 * restarted; an entry without the token refused.
 */
class ClusterTest {

    static final String TOKEN = "peer-token-0123456789";
    static final int N = 1000;

    @TempDir
    Path dir;

    static <T> T await(CompletableFuture<T> f) throws Exception {
        return f.get(120, TimeUnit.SECONDS);
    }

    /** y[i] = y[i] + k * x[i] for i < n, over i32 (wrapping: exact on every device). */
    static IrKernelSpec axpy() {
        return Ir.kernel("axpy")
                .scalar("k", DType.I32)
                .buffer("x", DType.I32, Access.READ, Ir.param("n"))
                .buffer("y", DType.I32, Access.READ_WRITE, Ir.param("n"))
                .scalar("n", DType.I64, 0, 1L << 40)
                .body(b -> {
                    IrExpr i = b.let("i", Ir.globalId(0));
                    b.when(i.lt(Ir.param("n")), t -> t.store("y", i, Ir.load("y", i).add(Ir.param("k").mul(Ir.load("x", i)))));
                });
    }

    /**
     * A loopback port free now and below the kernel's ephemeral range, so that nothing bound to port 0 meanwhile
     * (another daemon's listener, the local end of a connection) takes it before a daemon listens there.
     */
    private static int portOutsideTheEphemeralRange() throws java.io.IOException {
        int ephemeralLow = 32768; // Linux's default, where the range cannot be read
        // (in one read: a sysctl file gives nothing to a read past its start, so Files.readString sees one byte)
        try (var in = Files.newBufferedReader(Path.of("/proc/sys/net/ipv4/ip_local_port_range"))) {
            ephemeralLow = Integer.parseInt(in.readLine().trim().split("\\s+")[0]);
        } catch (java.io.IOException | RuntimeException unreadable) {
            // keep the default
        }
        int first = 10_000;
        int span = ephemeralLow - first;
        if (span <= 0) {
            throw new IllegalStateException("ephemeral ports start at " + ephemeralLow + ": no port below them to use");
        }
        int start = java.util.concurrent.ThreadLocalRandom.current().nextInt(span);
        for (int i = 0; i < span; i++) {
            int port = first + (start + i) % span;
            try (java.net.ServerSocket probe = new java.net.ServerSocket(port, 1, java.net.InetAddress.getLoopbackAddress())) {
                return probe.getLocalPort();
            } catch (java.io.IOException taken) {
                // the next one
            }
        }
        throw new IllegalStateException("no free loopback port in " + first + ".." + (ephemeralLow - 1));
    }

    private DaemonProcess peer(int port, String devices, String... more) throws Exception {
        Path tokens = dir.resolve("tokens");
        Files.writeString(tokens, TOKEN + " entry\n");
        Files.writeString(dir.resolve("peer-token"), TOKEN + "\n");
        List<String> args = new ArrayList<>(List.of("--devices", devices, "--auth-tokens", tokens.toString(),
                "--metrics-port", "-1", "--cpu-memory", "268435456", "--peer-token-file", dir.resolve("peer-token").toString()));
        args.addAll(List.of(more));
        return new DaemonProcess(port, Map.of(), args.toArray(String[]::new));
    }

    private DaemonProcess entry(String peers, boolean withToken) throws Exception {
        Path token = dir.resolve("peer-token");
        Files.writeString(token, TOKEN + "\n");
        List<String> args = new ArrayList<>(List.of("--devices", "none", "--peers", peers, "--metrics-port", "-1"));
        if (withToken) {
            args.addAll(List.of("--peer-token-file", token.toString()));
        }
        return new DaemonProcess(0, Map.of(), args.toArray(String[]::new));
    }

    @Test
    @Timeout(300)
    void randomGraphsSpanningThreeDaemonsMatchPlainJava() throws Exception {
        // b fetches from a directly (a is among its peers); a does not know b: copies b -> a are staged
        try (DaemonProcess a = peer(0, "cpu:2"); DaemonProcess b = peer(0, "cpu:1,opencl", "--peers", "a=" + a.target());
                DaemonProcess e = entry("a=" + a.target() + ",b=" + b.target(), true);
                ArraydClient c = ArraydClient.connect(e.target()); Session s = await(c.openSession("it-cluster"))) {
            List<String> devices = await(c.devices()).stream().map(DeviceInfo::id).toList();
            assertTrue(devices.containsAll(List.of("a/cpu:0", "a/cpu:1", "b/cpu:0")), devices::toString);
            assertTrue(devices.stream().allMatch(d -> d.startsWith("a/") || d.startsWith("b/")), devices::toString);
            System.out.println("[cluster] devices through the entry daemon: " + devices);
            KernelHandle axpy = await(s.compile(KernelModuleSpec.ir(axpy()))).get("axpy");
            Map<String, StreamHandle> streams = new HashMap<>();
            for (String d : devices) {
                streams.put(d, await(s.createStream(d)));
            }
            Random rnd = new Random(42);
            int nb = 5;
            List<BufferHandle> bufs = new ArrayList<>();
            int[][] model = new int[nb][];
            for (int i = 0; i < nb; i++) {
                String d = devices.get(i % devices.size());
                bufs.add(await(s.createBuffer(DType.I32, new long[] {N}, BufferOptions.defaults().device(d))));
                model[i] = random(rnd);
                s.write(bufs.get(i), model[i]);
            }
            for (int g = 0; g < 6; g++) {
                for (int step = 0; step < 14; step++) {
                    int x = rnd.nextInt(nb);
                    int y = (x + 1 + rnd.nextInt(nb - 1)) % nb;
                    String d = devices.get(rnd.nextInt(devices.size()));
                    int k = rnd.nextInt(7) - 3;
                    switch (rnd.nextInt(6)) {
                        case 0 -> {
                            model[y] = random(rnd);
                            s.write(bufs.get(y), model[y]);
                        }
                        case 1 -> {
                            s.copy(bufs.get(x), bufs.get(y));
                            model[y] = model[x].clone();
                        }
                        case 2 -> {
                            s.fill(bufs.get(y), k);
                            java.util.Arrays.fill(model[y], k);
                        }
                        case 3 -> s.transfer(bufs.get(x), d);
                        case 4 -> {
                            s.mergeCopy(bufs.get(x), streams.get(d), MergeMode.COPY);
                            s.launch(Launch.of(axpy).global(N).args(k, MergeBuffer.INSTANCE, bufs.get(y), N).on(streams.get(d)));
                            axpy(model, k, x, y);
                        }
                        default -> {
                            s.launch(Launch.of(axpy).global(N).args(k, bufs.get(x), bufs.get(y), N).device(d));
                            axpy(model, k, x, y);
                        }
                    }
                }
                check(s, bufs, model, "graph " + g);
            }
            // a graph recorded once, replayed with new scalars, on a device of each peer
            GraphRecorder rec = s.graphRecorder();
            int l0 = rec.launch(Launch.of(axpy).global(N).args(1, bufs.get(0), bufs.get(1), N).device("a/cpu:1"));
            rec.launch(Launch.of(axpy).global(N).args(1, bufs.get(1), bufs.get(2), N).device("b/cpu:0"), l0);
            GraphHandle graph = await(s.recordGraph(rec));
            for (int r = 0; r < 4; r++) {
                int k0 = r - 2;
                int k1 = 3 - r;
                List<Event> ev = s.replay(graph, GraphReplay.defaults().scalar(0, 0, k0).scalar(1, 0, k1));
                await(ev.getLast().future());
                axpy(model, k0, 0, 1);
                axpy(model, k1, 1, 2);
            }
            check(s, bufs, model, "after the replays");
            // explicit copies both ways between the peers
            await(s.copy(bufs.get(0), bufs.get(1)).future()); // a/cpu:0 -> a/cpu:1: on peer a
            await(s.transfer(bufs.get(0), "b/cpu:0").future()); // a -> b: fetched by b
            await(s.transfer(bufs.get(2), "a/cpu:1").future()); // b -> a: staged through the entry
            model[1] = model[0].clone();
            check(s, bufs, model, "after the transfers");
            // a buffer current only on a (written by a launch there), then read by a launch on b: b fetches it
            BufferHandle onlyA = await(s.createBuffer(DType.I32, new long[] {N}, BufferOptions.defaults().device("a/cpu:0")));
            BufferHandle onB = await(s.createBuffer(DType.I32, new long[] {N}, BufferOptions.defaults().device("b/cpu:0")));
            int[] ones = new int[N];
            java.util.Arrays.fill(ones, 1);
            s.write(onlyA, ones);
            s.write(onB, ones);
            s.launch(Launch.of(axpy).global(N).args(5, onB, onlyA, N).device("a/cpu:0")); // onlyA = 6
            await(s.launch(Launch.of(axpy).global(N).args(2, onlyA, onB, N).device("b/cpu:0")).future()); // onB = 13
            int[] thirteen = new int[N];
            java.util.Arrays.fill(thirteen, 13);
            assertArrayEquals(thirteen, await(s.readInts(onB)));
            String log = e.output();
            assertTrue(!log.contains("cannot fetch from peer a"), "b fetches from a itself:\n" + log);
            assertTrue(log.contains("peer a cannot fetch from peer b"), "a does not know b:\n" + log);
        }
    }

    private static int[] random(Random rnd) {
        int[] v = new int[N];
        for (int i = 0; i < N; i++) {
            v[i] = rnd.nextInt(2001) - 1000;
        }
        return v;
    }

    private static void axpy(int[][] model, int k, int x, int y) {
        int[] out = model[y].clone();
        for (int i = 0; i < N; i++) {
            out[i] += k * model[x][i];
        }
        model[y] = out;
    }

    private static void check(Session s, List<BufferHandle> bufs, int[][] model, String when) throws Exception {
        for (int i = 0; i < bufs.size(); i++) {
            assertArrayEquals(model[i], await(s.readInts(bufs.get(i))), when + ": buffer " + i);
        }
    }

    /** Blocks on the daemon's health watch until device {@code device} reports {@code want}. */
    private static void awaitHealth(ManagedChannel ch, String device, ServingStatus want) {
        Iterator<HealthCheckResponse> it = HealthGrpc.newBlockingStub(ch).withDeadlineAfter(60, TimeUnit.SECONDS)
                .watch(HealthCheckRequest.newBuilder().setService("arrayd.device." + device).build());
        while (it.next().getStatus() != want) {
            // the next change
        }
    }

    private static Status.Code failure(CompletableFuture<?> f) {
        var ex = assertThrows(ExecutionException.class, () -> f.get(120, TimeUnit.SECONDS));
        if (ex.getCause() instanceof ArraydCommandException ace) {
            return ace.code();
        }
        return Status.fromThrowable(ex.getCause()).getCode();
    }

    /**
     * Copies between peers of more than one piece, not a multiple of the chunks: from a peer with a bulk port (read
     * through it) and from one without (read through gRPC), byte for byte the same.
     */
    @Test
    @Timeout(300)
    void peerCopiesMatchThroughTheBulkPortAndThroughGrpc() throws Exception {
        int size = (20 << 20) + 12345;
        try (DaemonProcess a = peer(0, "cpu:1"); DaemonProcess g = peer(0, "cpu:1", "--peer-bulk-port", "-1");
                DaemonProcess b = peer(0, "cpu:1", "--peers", "a=" + a.target() + ",g=" + g.target());
                DaemonProcess e = entry("a=" + a.target() + ",g=" + g.target() + ",b=" + b.target(), true);
                ArraydClient c = ArraydClient.connect(e.target()); Session s = await(c.openSession("it-bulk"))) {
            Random rnd = new Random(11);
            for (String from : List.of("a", "g")) {
                byte[] data = new byte[size];
                rnd.nextBytes(data);
                BufferHandle src = await(s.createBuffer(DType.U8, new long[] {size}, BufferOptions.defaults()
                        .device(from + "/cpu:0")));
                BufferHandle dst = await(s.createBuffer(DType.U8, new long[] {size}, BufferOptions.defaults()
                        .device("b/cpu:0")));
                await(s.write(src, data).future());
                await(s.copy(src, dst).future()); // b fetches from the source peer
                assertArrayEquals(data, await(s.readBytes(dst)), "copied from " + from);
                s.destroy(src);
                s.destroy(dst);
            }
            String log = b.output();
            assertTrue(log.contains("peer a: reads through its bulk port"), log);
            assertTrue(log.contains("peer g: reads through gRPC"), log);
            assertTrue(!e.output().contains("cannot fetch from peer"), "b fetches itself:\n" + e.output());
        }
    }

    @Test
    @Timeout(300)
    void aPeerKilledAndRestartedLosesOnlyWhatLivedThere() throws Exception {
        DaemonProcess a = peer(0, "cpu:1");
        int aPort = a.port;
        try (DaemonProcess b = peer(0, "cpu:1"); DaemonProcess e = entry("a=" + a.target() + ",b=" + b.target(), true);
                ArraydClient c = ArraydClient.connect(e.target()); Session s = await(c.openSession("it-faults"))) {
            ManagedChannel ch = ManagedChannelBuilder.forTarget(e.target()).usePlaintext().build();
            try {
                KernelHandle axpy = await(s.compile(KernelModuleSpec.ir(axpy()))).get("axpy");
                BufferHandle onA = await(s.createBuffer(DType.I32, new long[] {N}, BufferOptions.defaults().device("a/cpu:0")));
                BufferHandle onB = await(s.createBuffer(DType.I32, new long[] {N}, BufferOptions.defaults().device("b/cpu:0")));
                BufferHandle scratch = await(s.createBuffer(DType.I32, new long[] {N}, BufferOptions.defaults().device("a/cpu:0")));
                int[] one = new int[N];
                java.util.Arrays.fill(one, 1);
                await(s.write(onA, one).future());
                await(s.write(onB, one).future());
                await(s.launch(Launch.of(axpy).global(N).args(2, onB, onA, N).device("a/cpu:0")).future());
                int[] three = one.clone();
                java.util.Arrays.fill(three, 3);
                assertArrayEquals(three, await(s.readInts(onA)));

                a.process.destroyForcibly(); // killed in the middle: no drain
                a.process.waitFor(30, TimeUnit.SECONDS);
                awaitHealth(ch, "a/cpu:0", ServingStatus.NOT_SERVING);
                // (it writes scratch: its failure sticks to scratch, as any failed writer's does to what it writes)
                var down = s.launch(Launch.of(axpy).global(N).args(1, onB, scratch, N).device("a/cpu:0"));
                var ex = assertThrows(ExecutionException.class, () -> down.future().get(120, TimeUnit.SECONDS));
                ArraydCommandException ace = (ArraydCommandException) ex.getCause();
                assertEquals(Status.Code.UNAVAILABLE, ace.code(), ace.getMessage());
                assertTrue(ace.getMessage().contains("peer a"), ace.getMessage());
                // the other peer keeps working
                await(s.launch(Launch.of(axpy).global(N).args(1, onB, onB, N).device("b/cpu:0")).future());
                int[] two = one.clone();
                java.util.Arrays.fill(two, 2);
                assertArrayEquals(two, await(s.readInts(onB)));

                a = new DaemonProcess(aPort, Map.of(), "--devices", "cpu:1", "--auth-tokens",
                        dir.resolve("tokens").toString(), "--metrics-port", "-1", "--cpu-memory", "268435456");
                awaitHealth(ch, "a/cpu:0", ServingStatus.SERVING);
                // what lived only on a is lost; a new buffer there works
                assertEquals(Status.Code.DATA_LOSS, failure(s.readInts(onA)));
                BufferHandle again = await(s.createBuffer(DType.I32, new long[] {N}, BufferOptions.defaults().device("a/cpu:0")));
                await(s.write(again, one).future());
                await(s.launch(Launch.of(axpy).global(N).args(1, onB, again, N).device("a/cpu:0")).future());
                assertArrayEquals(three, await(s.readInts(again)));
            } finally {
                ch.shutdownNow();
                a.close();
            }
        }
    }

    /** count[0] += 1 after {@code rounds} million steps of a float recurrence (about a second at 400 here). */
    static IrKernelSpec countAfterSpinning() {
        return Ir.kernel("count_after_spinning")
                .buffer("count", DType.I64, Access.READ_WRITE, Ir.i64(1))
                .scalar("rounds", DType.I64, 0, 1024)
                .body(b -> {
                    b.var("acc", Ir.f64(1.0));
                    b.loop("r", Ir.i64(0), Ir.param("rounds"), (outer, r) ->
                            outer.loop("it", Ir.i64(0), Ir.i64(1 << 20), (loop, it) ->
                                    loop.assign("acc", Ir.var("acc").mul(Ir.f64(0.999999)).add(Ir.f64(1.0)))));
                    // (the result decides the increment, so the loop cannot be dropped)
                    b.store("count", Ir.i64(0), Ir.load("count", Ir.i64(0))
                            .add(Ir.select(Ir.var("acc").lt(Ir.f64(0.0)), Ir.i64(2), Ir.i64(1))));
                });
    }

    /**
     * A cancel reaches the peer: of two launches handed to the peer at once (the second waiting there for the
     * first), cancelling the second while the first runs keeps it from running there.
     */
    @Test
    @Timeout(180)
    void aCancelReachesTheCommandWaitingOnThePeer() throws Exception {
        try (DaemonProcess a = peer(0, "cpu:1"); DaemonProcess e = entry("a=" + a.target(), true);
                ArraydClient c = ArraydClient.connect(e.target()); Session s = await(c.openSession("it-cancel"));
                ManagedChannelHolder peerStats = new ManagedChannelHolder(a.target())) {
            KernelHandle spin = await(s.compile(KernelModuleSpec.ir(countAfterSpinning()))).get("count_after_spinning");
            BufferHandle count = await(s.createBuffer(DType.I64, new long[] {1}, BufferOptions.defaults().device("a/cpu:0")));
            await(s.fill(count, 0).future());
            long rounds = 400;
            Event first = s.launch(Launch.of(spin).global(1).args(count, rounds).device("a/cpu:0"));
            Event second = s.launch(Launch.of(spin).global(1).args(count, rounds).device("a/cpu:0"));
            // both on the peer: its queue holds two commands (the second waits for the first)
            peerStats.awaitPending(n -> n >= 2, "the peer never held both launches");
            assertTrue(!first.future().isDone(), "the first launch is still running (make it longer on this machine)");
            var before = peerStats.stats();
            assertEquals(1, await(s.cancel(second)));
            assertEquals(Status.Code.CANCELLED, failure(second.future()));
            await(first.future());
            peerStats.awaitPending(n -> n <= 0, "the peer never went idle");
            // (the count cannot be read back: its last writer is the cancelled launch, and failure is sticky)
            var after = peerStats.stats();
            assertEquals(before.getCommandsSucceeded() + 1, after.getCommandsSucceeded(),
                    "only the first launch ran on the peer; before: " + before + ", after: " + after);
        }
    }

    /**
     * A deadline reaches the peer. The entry hands a launch on the peer's CPU device over at once (it waits on the
     * peer for a long launch on the peer's OpenCL device); the peer holds it (a wait across backends is the host's)
     * past its deadline, so it fails there with DEADLINE_EXCEEDED instead of running.
     */
    @Test
    @Timeout(180)
    void aDeadlineHoldsOnThePeerToo() throws Exception {
        try (DaemonProcess a = peer(0, "cpu:1,opencl"); DaemonProcess e = entry("a=" + a.target(), true);
                ArraydClient c = ArraydClient.connect(e.target()); Session s = await(c.openSession("it-deadline"));
                ManagedChannelHolder peerStats = new ManagedChannelHolder(a.target())) {
            KernelHandle spin = await(s.compile(KernelModuleSpec.ir(countAfterSpinning()))).get("count_after_spinning");
            BufferHandle slow = await(s.createBuffer(DType.I64, new long[] {1}, BufferOptions.defaults().device("a/opencl:0")));
            BufferHandle quick = await(s.createBuffer(DType.I64, new long[] {1}, BufferOptions.defaults().device("a/cpu:0")));
            await(s.fill(slow, 0).future());
            await(s.fill(quick, 0).future());
            var before = peerStats.stats();
            Event first = s.launch(Launch.of(spin).global(1).args(slow, 1024L).device("a/opencl:0"));
            // once the entry handed it over, the second can wait for it on the peer
            peerStats.awaitPending(n -> n >= 1, "the peer never held the first launch");
            Instant deadline = Instant.now().plusMillis(500);
            Event second = s.launch(Launch.of(spin).global(1).args(quick, 1L).device("a/cpu:0").waitFor(first)
                    .deadline(deadline));
            peerStats.awaitPending(n -> n >= 2, "the peer never held both launches");
            assertTrue(Instant.now().isBefore(deadline), "the entry handed the second launch over past its deadline "
                    + "(give it more time on this machine)");
            assertThrows(TimeoutException.class, () -> first.future().get(
                    Math.max(1, Duration.between(Instant.now(), deadline).toMillis() + 50), TimeUnit.MILLISECONDS),
                    "the first launch still runs past the deadline (make it longer on this machine)");
            ExecutionException x = assertThrows(ExecutionException.class, () -> await(second.future()));
            ArraydCommandException ace = (ArraydCommandException) x.getCause();
            assertEquals(Status.Code.DEADLINE_EXCEEDED, ace.code(), ace.getMessage());
            assertTrue(ace.getMessage().contains("peer a: ") && ace.getMessage().contains("deadline passed"),
                    ace.getMessage());
            await(first.future());
            peerStats.awaitPending(n -> n <= 0, "the peer never went idle");
            var after = peerStats.stats();
            assertEquals(before.getCommandsSucceeded() + 1, after.getCommandsSucceeded(),
                    "only the first launch ran on the peer; before: " + before + ", after: " + after);
            assertEquals(before.getCommandsFailed() + 1, after.getCommandsFailed(), "the peer failed the second: " + after);
        }
    }

    /** A channel to a daemon, and the commands its devices hold (GetStats), without authentication. */
    private record ManagedChannelHolder(ManagedChannel channel) implements AutoCloseable {
        ManagedChannelHolder(String target) {
            this(ManagedChannelBuilder.forTarget(target).usePlaintext().build());
        }

        dev.arrayd.proto.v1.GetStatsResponse stats() {
            var auth = new io.grpc.Metadata();
            auth.put(io.grpc.Metadata.Key.of("authorization", io.grpc.Metadata.ASCII_STRING_MARSHALLER), "Bearer " + TOKEN);
            return dev.arrayd.proto.v1.StatsServiceGrpc.newBlockingStub(channel)
                    .withInterceptors(io.grpc.stub.MetadataUtils.newAttachHeadersInterceptor(auth))
                    .getStats(dev.arrayd.proto.v1.GetStatsRequest.getDefaultInstance());
        }

        /** Waits (up to 60 s) until the number of commands the daemon holds satisfies {@code ok}. */
        void awaitPending(java.util.function.LongPredicate ok, String otherwise) {
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!ok.test(pending())) {
                assertTrue(System.nanoTime() < until, otherwise);
                Thread.onSpinWait();
            }
        }

        long pending() {
            long n = 0;
            for (var d : stats().getDevicesList()) {
                for (var q : d.getQueuesList()) {
                    n += q.getPendingCommands();
                }
            }
            return n;
        }

        @Override
        public void close() {
            channel.shutdownNow();
        }
    }

    /**
     * Mutual TLS between daemons: the peer serves TLS and requires a client certificate; the entry trusts the
     * peer's certificate ({@code peer-tls-ca}) and presents its own ({@code tls-cert}), and its client reaches it
     * with TLS too. An entry without a certificate of its own is refused by the peer.
     */
    @Test
    @Timeout(180)
    void peersAuthenticateEachOtherWithMutualTls() throws Exception {
        var certs = new dev.arrayd.server.TestCertificates(Files.createDirectories(dir.resolve("certs")));
        String pem = certs.pem("server").toString();
        String key = certs.key("server").toString();
        try (DaemonProcess a = new DaemonProcess(0, Map.of(), "--devices", "cpu:1", "--metrics-port", "-1",
                "--tls-cert", pem, "--tls-key", key, "--tls-client-ca", pem, "--cpu-memory", "268435456");
             DaemonProcess e = new DaemonProcess(0, Map.of(), "--devices", "none", "--metrics-port", "-1",
                     "--peers", "a=localhost:" + a.port, "--peer-tls-ca", pem, "--tls-cert", pem, "--tls-key", key);
             ArraydClient c = ArraydClient.builder().target("localhost:" + e.port).tls(certs.pem("server")).build();
             Session s = await(c.openSession("it-tls"))) {
            assertEquals(List.of("a/cpu:0"), await(c.devices()).stream().map(DeviceInfo::id).toList());
            KernelHandle axpy = await(s.compile(KernelModuleSpec.ir(axpy()))).get("axpy");
            BufferHandle x = await(s.createBuffer(DType.I32, new long[] {N}, BufferOptions.defaults().device("a/cpu:0")));
            int[] ones = new int[N];
            java.util.Arrays.fill(ones, 1);
            s.write(x, ones);
            await(s.launch(Launch.of(axpy).global(N).args(2, x, x, N).device("a/cpu:0")).future());
            int[] threes = new int[N];
            java.util.Arrays.fill(threes, 3);
            assertArrayEquals(threes, await(s.readInts(x)));

            AssertionError refused = assertThrows(AssertionError.class, () -> new DaemonProcess(0, Map.of(),
                    "--devices", "none", "--metrics-port", "-1", "--peers", "a=localhost:" + a.port,
                    "--peer-tls-ca", pem).close());
            assertTrue(refused.getMessage().contains("no device could be opened"), refused.getMessage());
        }
    }

    /**
     * An entry daemon whose devices are all its peer's starts before the peer is up: it serves with no device
     * (health NOT_SERVING, a request that needs a device UNAVAILABLE), and the peer's device joins when it comes
     * up (health SERVING, work runs there, the default device now).
     */
    @Test
    @Timeout(180)
    void anEntryStartedBeforeItsOnlyPeerServesOnceThePeerComesUp() throws Exception {
        int port = portOutsideTheEphemeralRange(); // free now; the peer listens there later
        try (DaemonProcess e = entry("late=127.0.0.1:" + port, true);
             ArraydClient c = ArraydClient.connect(e.target()); Session s = await(c.openSession("it-late"))) {
            ManagedChannel ch = ManagedChannelBuilder.forTarget(e.target()).usePlaintext().build();
            try {
                assertEquals(ServingStatus.NOT_SERVING, HealthGrpc.newBlockingStub(ch).check(HealthCheckRequest
                        .getDefaultInstance()).getStatus(), "no device yet: " + e.lastLines(20));
                assertEquals(List.of(), await(c.devices()));
                ExecutionException none = assertThrows(ExecutionException.class, () -> await(s.createBuffer(DType.I32,
                        new long[] {N}, BufferOptions.defaults())));
                assertTrue(none.getCause().getMessage().contains("no device yet"), none.getCause().getMessage());
                try (DaemonProcess late = peer(port, "cpu:1")) {
                    Iterator<HealthCheckResponse> it = HealthGrpc.newBlockingStub(ch).withDeadlineAfter(90, TimeUnit.SECONDS)
                            .watch(HealthCheckRequest.getDefaultInstance());
                    while (it.next().getStatus() != ServingStatus.SERVING) {
                        // the next change
                    }
                    assertEquals(List.of("late/cpu:0"), await(c.devices()).stream().map(DeviceInfo::id).toList());
                    KernelHandle axpy = await(s.compile(KernelModuleSpec.ir(axpy()))).get("axpy");
                    BufferHandle x = await(s.createBuffer(DType.I32, new long[] {N}, BufferOptions.defaults()));
                    int[] ones = new int[N];
                    java.util.Arrays.fill(ones, 1);
                    await(s.write(x, ones).future());
                    await(s.launch(Launch.of(axpy).global(N).args(2, x, x, N)).future());
                    int[] threes = new int[N];
                    java.util.Arrays.fill(threes, 3);
                    assertArrayEquals(threes, await(s.readInts(x)));
                }
            } finally {
                ch.shutdownNow();
            }
        }
    }

    @Test
    @Timeout(120)
    void peersRefuseAnEntryWithoutTheToken() throws Exception {
        try (DaemonProcess a = peer(0, "cpu:1")) {
            AssertionError refused = assertThrows(AssertionError.class, () -> entry("a=" + a.target(), false).close());
            assertTrue(refused.getMessage().contains("UNAUTHENTICATED"), refused.getMessage());
            assertTrue(refused.getMessage().contains("no device could be opened"), refused.getMessage());
        }
    }
}
