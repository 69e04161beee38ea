package dev.arrayd.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import dev.arrayd.client.ArraydClient;
import dev.arrayd.client.BufferHandle;
import dev.arrayd.client.DType;
import dev.arrayd.client.EventResult;
import dev.arrayd.client.Session;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A download on the session stream larger than one response message (the daemon sends at most 8 MiB in one)
 * comes in pieces; the Java client puts them back together.
 */
class LargeDownloadEndToEndTest {

    @Test
    void aSixteenMebibyteDownloadIsReassembled() throws Exception {
        int n = 16 << 20;
        byte[] data = new byte[n];
        for (int i = 0; i < n; i++) {
            data[i] = (byte) (i ^ (i >>> 9));
        }
        ServerOptions options = ServerOptions.defaults().withPort(0).withCpuMemoryBytes(128L << 20);
        try (ArraydServer server = ArraydServer.start(options);
                ArraydClient c = ArraydClient.connect("127.0.0.1:" + server.port());
                Session s = c.openSession("large").get(60, TimeUnit.SECONDS)) {
            BufferHandle b = s.createBuffer(DType.U8, n).get(60, TimeUnit.SECONDS);
            s.write(b, data);
            EventResult r = s.download(b).future().get(60, TimeUnit.SECONDS);
            ByteBuffer got = r.data();
            byte[] bytes = new byte[got.remaining()];
            got.get(bytes);
            assertArrayEquals(data, bytes);
        }
    }
}
