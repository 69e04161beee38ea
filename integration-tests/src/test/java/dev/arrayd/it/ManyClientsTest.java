package dev.arrayd.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** 64 concurrent clients (own channel and session each) on one daemon process: every result right, pools back to start. */
class ManyClientsTest {

    @Test
    @Timeout(120)
    void sixtyFourClientsRunRandomGraphsWithCorrectResults() throws Exception {
        try (DaemonProcess d = new DaemonProcess("--metrics-port", "0", "--cpu-memory", "512MiB")) {
            int mp = d.metricsPort();
            double before = Tenancy.metric(mp, "arrayd_device_memory_used_bytes");
            ExecutorService pool = Executors.newFixedThreadPool(64);
            List<Future<Long>> results = new ArrayList<>();
            for (int c = 0; c < 64; c++) {
                long seed = c;
                results.add(pool.submit(() -> RandomGraphClient.run(d.target(), seed, 8)));
            }
            long answered = 0;
            for (Future<Long> f : results) {
                answered += f.get(100, TimeUnit.SECONDS);
            }
            pool.shutdown();
            assertTrue(answered > 64 * 8 * 3, "events answered: " + answered);
            assertTrue(Tenancy.await(Duration.ofSeconds(10), Tenancy.quietly(() ->
                    Tenancy.metric(mp, "arrayd_device_memory_used_bytes") == before && Tenancy.metric(mp, "arrayd_sessions") == 0)),
                    "pools back to " + before + " bytes and no sessions: " + Tenancy.metric(mp, "arrayd_device_memory_used_bytes"));
            assertEquals(0, d.terminate());
        }
    }
}
