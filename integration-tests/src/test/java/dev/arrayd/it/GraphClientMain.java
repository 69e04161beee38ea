package dev.arrayd.it;

import dev.arrayd.client.ArraydClient;
import dev.arrayd.client.BufferHandle;
import dev.arrayd.client.DType;
import dev.arrayd.client.Event;
import dev.arrayd.client.Session;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A client process for the tests that kill or stop one: opens a session with a short lease, holds
 * 8 buffers of 1 MiB, prints {@code READY}, then runs graphs of uploads, copies and downloads until
 * it is killed. Args: target, lease millis.
 */
public final class GraphClientMain {

    private GraphClientMain() {}

    public static void main(String[] args) throws Exception {
        try (ArraydClient client = ArraydClient.connect(args[0])) {
            Session s = client.openSession("victim", Duration.ofMillis(Long.parseLong(args[1]))).get();
            List<BufferHandle> bufs = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                bufs.add(s.createBuffer(DType.U8, 1 << 20).get());
            }
            byte[] data = new byte[1 << 20];
            System.out.println("READY " + s.id());
            System.out.flush();
            for (long round = 0; ; round++) {
                Event last = s.upload(bufs.get(0), data);
                for (int i = 1; i < bufs.size(); i++) {
                    last = s.copy(bufs.get(i - 1), bufs.get(i), last);
                }
                s.download(bufs.getLast(), last);
                if (round % 4 == 0) {
                    s.waitEvents(last).get();
                }
            }
        }
    }
}
