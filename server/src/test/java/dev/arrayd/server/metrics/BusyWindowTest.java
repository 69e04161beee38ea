package dev.arrayd.server.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class BusyWindowTest {

    static final long S = 1_000_000_000L;

    @Test
    void fractionOfTheRecentWindowBoundedToZeroAndOne() {
        AtomicLong now = new AtomicLong(100 * S);
        AtomicLong busy = new AtomicLong(40 * S);
        BusyWindow w = new BusyWindow(busy::get, now::get);
        assertEquals(0, w.fraction(), 1e-9, "no time has passed");

        now.addAndGet(4 * S);
        busy.addAndGet(S);
        assertEquals(0.25, w.fraction(), 1e-9, "1 s busy of 4");

        now.addAndGet(2 * S); // 6 s in: this reading becomes the start of the next window
        busy.addAndGet(2 * S);
        assertEquals(0.5, w.fraction(), 1e-9, "3 s busy of 6");

        now.addAndGet(6 * S);
        busy.addAndGet(6 * S);
        assertEquals(1.0, w.fraction(), 1e-9, "the last 6 s all busy: the older idle time has left the window");

        now.addAndGet(60 * S);
        assertEquals(0.0, w.fraction(), 1e-9, "a minute idle since the previous read");

        now.addAndGet(S);
        busy.addAndGet(100 * S); // a counter ahead of this clock (the busy time comes from the scheduler's)
        assertEquals(1.0, w.fraction(), 1e-9, "clamped");
    }
}
