package dev.arrayd.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.util.Durations;
import dev.arrayd.proto.v1.Attach;
import dev.arrayd.proto.v1.BufferServiceGrpc;
import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.CommandBatch;
import dev.arrayd.proto.v1.CreateBufferRequest;
import dev.arrayd.proto.v1.DataType;
import dev.arrayd.proto.v1.Download;
import dev.arrayd.proto.v1.ExecuteRequest;
import dev.arrayd.proto.v1.ExecuteResponse;
import dev.arrayd.proto.v1.ExecutionServiceGrpc;
import dev.arrayd.proto.v1.OpenSessionRequest;
import dev.arrayd.proto.v1.SessionServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Clients that misbehave, against one daemon process with 2 s leases, while polite clients run
 * checksummed graphs: one SIGKILLed mid-graph (its session is reclaimed within its lease), one
 * SIGSTOPped and one that stops reading its stream (the daemon's heap stays bounded).
 */
class MisbehavingClientsTest {

    static final long LEASE_MS = 2_000;

    @Test
    @Timeout(150)
    void killedStoppedAndNonReadingClientsDoNotHurtOthers() throws Exception {
        try (DaemonProcess d = new DaemonProcess("--metrics-port", "0", "--cpu-memory", "512MiB", "--session-lease", "2s")) {
            int mp = d.metricsPort();
            double memBefore = Tenancy.metric(mp, "arrayd_device_memory_used_bytes");
            ExecutorService pool = Executors.newFixedThreadPool(4);
            List<Future<Long>> polite = new ArrayList<>();
            for (int c = 0; c < 4; c++) {
                long seed = 1000 + c;
                polite.add(pool.submit(() -> RandomGraphClient.run(d.target(), seed, 40)));
            }

            // 1. SIGKILL mid-graph: reclaimed within the lease (plus the reaper's 100 ms tick)
            Process killed = Tenancy.graphClient(d.target(), LEASE_MS);
            Tenancy.signal(killed, "KILL");
            long t0 = System.nanoTime();
            assertTrue(Tenancy.await(Duration.ofSeconds(10), Tenancy.quietly(() ->
                    Tenancy.metric(mp, "arrayd_sessions_reclaimed_total") >= 1)), "killed client's session reclaimed");
            long reclaimMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            System.out.println("RESULT sessions.reclaim_after_sigkill_ms " + reclaimMs + " (lease " + LEASE_MS + " ms)");
            assertTrue(reclaimMs <= LEASE_MS + 1_000, "reclaimed after " + reclaimMs + " ms");

            double heapBefore = Tenancy.heapBytes(mp);
            // 2. SIGSTOP: it stops pinging and reading; reclaimed like a dead one, heap bounded
            Process stopped = Tenancy.graphClient(d.target(), LEASE_MS);
            Tenancy.signal(stopped, "STOP");
            // 3. a client that never reads its stream but keeps writing downloads while the transport lets it
            ManagedChannel ch = NettyChannelBuilder.forTarget(d.target()).usePlaintext().build();
            String token = SessionServiceGrpc.newBlockingStub(ch).openSession(OpenSessionRequest.newBuilder()
                    .setClientName("no-reader").setLease(Durations.fromMillis(60_000)).build()).getSession();
            long buf = BufferServiceGrpc.newBlockingStub(ch).createBuffer(CreateBufferRequest.newBuilder().setSession(token)
                    .setDtype(DataType.DATA_TYPE_U8).addDims(1 << 16).build()).getBuffer().getBuffer();
            ClientCallStreamObserver<ExecuteRequest>[] req = new ClientCallStreamObserver[1];
            ExecutionServiceGrpc.newStub(ch).execute(new ClientResponseObserver<ExecuteRequest, ExecuteResponse>() {
                @Override
                public void beforeStart(ClientCallStreamObserver<ExecuteRequest> r) {
                    req[0] = r;
                    r.disableAutoRequestWithInitial(0); // never reads a response
                }

                @Override
                public void onNext(ExecuteResponse value) { }

                @Override
                public void onError(Throwable t) { }

                @Override
                public void onCompleted() { }
            });
            req[0].onNext(ExecuteRequest.newBuilder().setAttach(Attach.newBuilder().setSession(token)).build());
            long sent = 0;
            long event = 1;
            double maxHeap = 0;
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(4);
            while (System.nanoTime() < until) {
                if (req[0].isReady()) {
                    CommandBatch.Builder b = CommandBatch.newBuilder().setBatchId(sent);
                    for (int i = 0; i < 64; i++) {
                        b.addCommands(Command.newBuilder().setEvent(event++).setDownload(Download.newBuilder().setBuffer(buf)));
                    }
                    req[0].onNext(ExecuteRequest.newBuilder().setBatch(b).build());
                    sent += 64;
                } else {
                    maxHeap = Math.max(maxHeap, Tenancy.heapBytes(mp));
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
                }
            }
            maxHeap = Math.max(maxHeap, Tenancy.heapBytes(mp));
            System.out.println("RESULT no_reader.commands_accepted_by_transport " + sent + ", daemon heap "
                    + (long) (heapBefore / 1e6) + " MB before, at most " + (long) (maxHeap / 1e6) + " MB during");
            // 64 KiB per download: without flow control the daemon would hold sent x 64 KiB
            assertTrue(sent * 65536.0 > 4 * (maxHeap - heapBefore) || sent < 20_000,
                    "flow control stopped the writer: " + sent + " commands");
            assertTrue(maxHeap - heapBefore < 400e6, "heap grew by " + (maxHeap - heapBefore) + " bytes");
            assertTrue(Tenancy.await(Duration.ofSeconds(10), Tenancy.quietly(() ->
                    Tenancy.metric(mp, "arrayd_sessions_reclaimed_total") >= 2)), "stopped client's session reclaimed");

            // the polite clients were unaffected: all their results right
            for (Future<Long> f : polite) {
                assertTrue(f.get(100, TimeUnit.SECONDS) > 0);
            }
            pool.shutdown();
            req[0].cancel("done", null);
            // its session is alive (60 s lease): close it, as a client would
            SessionServiceGrpc.newBlockingStub(ch).closeSession(dev.arrayd.proto.v1.CloseSessionRequest.newBuilder()
                    .setSession(token).build());
            ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            Tenancy.signal(stopped, "KILL");
            stopped.waitFor(10, TimeUnit.SECONDS);
            killed.waitFor(10, TimeUnit.SECONDS);
            assertTrue(Tenancy.await(Duration.ofSeconds(15), Tenancy.quietly(() ->
                    Tenancy.metric(mp, "arrayd_device_memory_used_bytes") == memBefore)),
                    "every byte counted back: " + Tenancy.metric(mp, "arrayd_device_memory_used_bytes"));
        }
    }
}
