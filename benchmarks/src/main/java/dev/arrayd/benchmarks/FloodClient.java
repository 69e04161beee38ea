package dev.arrayd.benchmarks;

import dev.arrayd.client.Access;
import dev.arrayd.client.ArraydClient;
import dev.arrayd.client.BufferHandle;
import dev.arrayd.client.BufferOptions;
import dev.arrayd.client.DType;
import dev.arrayd.client.KernelHandle;
import dev.arrayd.client.Ir;
import dev.arrayd.client.IrKernelSpec;
import dev.arrayd.client.KernelModuleSpec;
import dev.arrayd.client.Launch;
import dev.arrayd.client.Session;
import dev.arrayd.client.StreamHandle;
import dev.arrayd.server.JitThreadPriority;
import dev.arrayd.server.ServerOptions;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The flooding client of {@code bench tenants}, in a process of its own (as a real second client is):
 * its own JVM's JIT, heap and threads then weigh on the polite client only as much as any other
 * program on the host would. Driven over stdin, one word per line: {@code on} starts keeping
 * {@code window} launches unanswered on each of its streams and answers {@code flooding}; {@code off}
 * stops, waits for every launch sent and answers {@code stopped <launches> <jit ms>} (the second number:
 * its own JIT's cost so far, for {@link JitWarmUp}); end of input ends it.
 *
 * <p>Arguments: {@code host port device streams spin window}.
 */
public final class FloodClient {

    private FloodClient() {}

    /** The flood's kernel in the portable IR: {@code n} dependent multiply-adds on x[0] (TenantsScenario.SPIN in C). */
    static IrKernelSpec spin() {
        return Ir.kernel("spin").buffer("x", DType.F32, Access.READ_WRITE, Ir.i64(1))
                .scalar("n", DType.I32, 0, 1 << 24).body(b -> {
                    b.var("s", Ir.load("x", Ir.i64(0)));
                    b.loop("i", Ir.i32(0), Ir.param("n"), (loop, i) -> loop.assign("s",
                            Ir.var("s").mul(Ir.f32(0.9999f)).add(Ir.f32(1.0f))));
                    b.store("x", Ir.i64(0), Ir.var("s"));
                });
    }

    public static void main(String[] args) throws Exception {
        JitThreadPriority jit = new JitThreadPriority(ServerOptions.DEFAULT_JIT_NICE); // as the benchmark's own
        jit.apply();
        String host = args[0];
        int port = Integer.parseInt(args[1]);
        String device = args[2];
        int streams = Integer.parseInt(args[3]);
        int spin = Integer.parseInt(args[4]);
        int window = Integer.parseInt(args[5]);
        ManagedChannel channel = NettyChannelBuilder.forAddress(host, port).usePlaintext().directExecutor().build();
        try (ArraydClient client = ArraydClient.builder().channel(channel).build();
             Session s = client.openSession("bench-tenants-flood").get(30, TimeUnit.SECONDS)) {
            KernelHandle k = s.compile(KernelModuleSpec.ir(spin()).backend("cpu"))
                    .get(60, TimeUnit.SECONDS).get("spin");
            List<Launch> launches = new ArrayList<>();
            for (int i = 0; i < streams; i++) {
                StreamHandle st = s.createStream(device).get(30, TimeUnit.SECONDS);
                BufferHandle x = s.createBuffer(DType.F32, new long[] {1}, BufferOptions.defaults().device(device))
                        .get(30, TimeUnit.SECONDS);
                launches.add(Launch.of(k).global(1).args(x, spin).on(st).device(device));
            }
            System.out.println("ready");
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            Flood flood = null;
            String line;
            while ((line = in.readLine()) != null) {
                switch (line.strip()) {
                    case "on" -> {
                        if (flood == null) {
                            flood = new Flood(s, launches, window);
                        }
                        System.out.println("flooding");
                    }
                    case "off" -> {
                        long sent = flood == null ? 0 : flood.stop();
                        flood = null;
                        System.out.println("stopped " + sent + " " + JitWarmUp.ownJitMillis());
                    }
                    default -> System.out.println("unknown " + line);
                }
                System.out.flush();
            }
            if (flood != null) {
                flood.stop();
            }
        } finally {
            channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
    }

    /** One thread per stream, each keeping {@code window} launches unanswered until stopped. */
    private static final class Flood {
        private final List<Thread> threads = new ArrayList<>();
        private final AtomicLong sent = new AtomicLong();
        private volatile boolean stop;

        Flood(Session session, List<Launch> launches, int window) {
            for (Launch l : launches) {
                threads.add(Thread.ofPlatform().daemon().name("flood").start(() -> {
                    Semaphore room = new Semaphore(window);
                    try {
                        while (!stop) {
                            room.acquire();
                            sent.incrementAndGet();
                            session.launch(l).future().whenComplete((r, e) -> room.release());
                        }
                        room.acquire(window); // every launch answered
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }));
            }
        }

        long stop() throws InterruptedException {
            stop = true;
            for (Thread t : threads) {
                t.join(60_000);
            }
            return sent.get();
        }
    }
}
