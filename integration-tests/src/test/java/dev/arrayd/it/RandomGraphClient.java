package dev.arrayd.it;

import dev.arrayd.client.ArraydClient;
import dev.arrayd.client.BufferHandle;
import dev.arrayd.client.DType;
import dev.arrayd.client.Event;
import dev.arrayd.client.Session;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * One client of the concurrency tests: its own channel and session, random graphs of uploads and
 * copies between a few buffers (every copy orders after what it reads and writes), checked against
 * a host-side model by downloading every buffer at the end of each graph.
 */
final class RandomGraphClient {

    private RandomGraphClient() {}

    /** Runs {@code graphs} graphs; returns the number of events answered. Throws on any wrong byte. */
    static long run(String target, long seed, int graphs) throws Exception {
        Random rnd = new Random(seed);
        int n = 4;
        int size = 4096 + rnd.nextInt(4) * 4096;
        long answered = 0;
        try (ArraydClient client = ArraydClient.connect(target)) {
            Session s = client.openSession("many-" + seed).get();
            List<BufferHandle> bufs = new ArrayList<>();
            byte[][] model = new byte[n][size];
            for (int i = 0; i < n; i++) {
                bufs.add(s.createBuffer(DType.U8, size).get());
            }
            for (int g = 0; g < graphs; g++) {
                List<Event> events = new ArrayList<>();
                int steps = 4 + rnd.nextInt(12);
                for (int k = 0; k < steps; k++) {
                    int dst = rnd.nextInt(n);
                    if (rnd.nextBoolean()) {
                        byte[] data = new byte[size];
                        rnd.nextBytes(data);
                        events.add(s.upload(bufs.get(dst), data));
                        model[dst] = data;
                    } else {
                        int src = rnd.nextInt(n);
                        if (src == dst) {
                            continue;
                        }
                        events.add(s.copy(bufs.get(src), bufs.get(dst)));
                        model[dst] = model[src].clone();
                    }
                }
                for (int i = 0; i < n; i++) {
                    byte[] got = s.readBytes(bufs.get(i)).get();
                    if (!Arrays.equals(got, model[i])) {
                        throw new AssertionError("client " + seed + " graph " + g + ": buffer " + i + " differs");
                    }
                }
                for (Event e : events) {
                    if (e.future().get().state() != dev.arrayd.client.EventState.SUCCEEDED) {
                        throw new AssertionError("client " + seed + ": event failed: " + e.future().get());
                    }
                    answered++;
                }
            }
            s.close();
        }
        return answered;
    }
}
