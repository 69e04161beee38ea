package dev.arrayd.devices.api.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class DirectBufferPoolTest {

    @Test
    void aBufferGivenBackIsTakenAgainClearedAndAtMostKeepAreKept() {
        DirectBufferPool pool = new DirectBufferPool(16, 2);
        ByteBuffer a = pool.take();
        ByteBuffer b = pool.take();
        ByteBuffer c = pool.take();
        assertTrue(a.isDirect());
        assertEquals(16, a.capacity());
        a.position(3).limit(5);
        pool.give(a);
        pool.give(b);
        pool.give(c); // no room: dropped
        assertEquals(2, pool.kept());
        assertSame(b, pool.take(), "the last given back comes first (warm in cache)");
        ByteBuffer again = pool.take();
        assertSame(a, again);
        assertEquals(0, again.position());
        assertEquals(16, again.limit(), "taken cleared");
        assertNotSame(c, pool.take(), "a buffer beyond keep was not kept");
    }

    @Test
    void aBufferOfAnotherSizeOrOnTheHeapIsRefused() {
        DirectBufferPool pool = new DirectBufferPool(16, 2);
        assertThrows(IllegalArgumentException.class, () -> pool.give(ByteBuffer.allocateDirect(15)));
        assertThrows(IllegalArgumentException.class, () -> pool.give(ByteBuffer.allocate(16)));
        assertThrows(IllegalArgumentException.class, () -> new DirectBufferPool(0, 1));
        assertThrows(IllegalArgumentException.class, () -> new DirectBufferPool(1, -1));
    }
}
