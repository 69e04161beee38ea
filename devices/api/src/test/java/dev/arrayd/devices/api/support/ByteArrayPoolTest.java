package dev.arrayd.devices.api.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class ByteArrayPoolTest {

    @Test
    void anArrayGivenBackIsTakenAgainAndAtMostKeepAreKept() {
        ByteArrayPool pool = new ByteArrayPool(16, 2);
        byte[] a = pool.take();
        byte[] b = pool.take();
        byte[] c = pool.take();
        assertEquals(16, a.length);
        assertNotSame(a, b);
        pool.give(a);
        pool.give(b);
        pool.give(c); // no room: dropped
        assertEquals(2, pool.kept());
        byte[] again = pool.take();
        assertSame(b, again, "the last given back comes first (warm in cache)");
        assertSame(a, pool.take());
        assertNotSame(c, pool.take(), "an array beyond keep was not kept");
        assertEquals(0, pool.kept());
    }

    @Test
    void anArrayOfAnotherSizeIsRefused() {
        ByteArrayPool pool = new ByteArrayPool(16, 2);
        assertThrows(IllegalArgumentException.class, () -> pool.give(new byte[15]));
        assertThrows(IllegalArgumentException.class, () -> new ByteArrayPool(0, 1));
        assertThrows(IllegalArgumentException.class, () -> new ByteArrayPool(1, -1));
    }
}
