package dev.arrayd.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import org.junit.jupiter.api.Test;

class DownloadArraysTest {

    @Test
    void aWindowSizedArrayThatWasSentIsTakenAgainAndOthersAreNew() {
        DownloadArrays arrays = DownloadArrays.reused();
        byte[] window = arrays.apply(DownloadArrays.WINDOW_BYTES);
        assertEquals(DownloadArrays.WINDOW_BYTES, window.length);
        arrays.sent(window);
        assertEquals(1, arrays.kept());
        assertSame(window, arrays.window(), "a window-sized array sent is the next window");
        byte[] small = arrays.apply(1000);
        assertEquals(1000, small.length);
        arrays.sent(small);
        assertEquals(0, arrays.kept(), "only window-sized arrays are kept");
        assertNotSame(small, arrays.apply(1000));
    }

    @Test
    void atMostKeepArraysAreKept() {
        DownloadArrays arrays = DownloadArrays.reused();
        byte[][] taken = new byte[DownloadArrays.KEEP + 2][];
        for (int i = 0; i < taken.length; i++) {
            taken[i] = arrays.window();
        }
        for (byte[] a : taken) {
            arrays.sent(a);
        }
        assertEquals(DownloadArrays.KEEP, arrays.kept());
    }

    @Test
    void onATransportThatPassesMessagesByReferenceNothingIsReused() {
        DownloadArrays arrays = DownloadArrays.fresh();
        byte[] window = arrays.window();
        arrays.sent(window);
        assertEquals(0, arrays.kept());
        assertNotSame(window, arrays.window());
    }
}
