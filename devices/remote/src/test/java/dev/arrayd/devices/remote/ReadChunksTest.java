package dev.arrayd.devices.remote;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.google.protobuf.ByteString;
import dev.arrayd.proto.v1.ReadBufferResponse;
import io.grpc.KnownLength;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.util.Random;
import org.junit.jupiter.api.Test;

class ReadChunksTest {

    /** As gRPC hands a message to a marshaller: a stream that knows its length. */
    private static InputStream message(byte[] bytes) {
        class Known extends ByteArrayInputStream implements KnownLength {
            Known(byte[] b) {
                super(b);
            }
        }
        return new Known(bytes);
    }

    private static byte[] response(long offset, byte[] data) {
        return ReadBufferResponse.newBuilder().setOffsetBytes(offset).setData(ByteString.copyFrom(data)).build()
                .toByteArray();
    }

    @Test
    void aChunkIsAViewOfAPooledArrayThatComesBackOnRelease() {
        byte[] data = new byte[ReadChunks.CHUNK];
        new Random(3).nextBytes(data);
        ReadChunks.ReadChunk c = ReadChunks.METHOD.parseResponse(message(response(7L << 20, data)));
        assertEquals(7L << 20, c.offset());
        assertNotNull(c.array(), "a whole chunk fits a pooled array");
        byte[] got = new byte[c.data().remaining()];
        c.data().duplicate().get(got);
        assertArrayEquals(data, got);
        c.release();
        ReadChunks.ReadChunk next = ReadChunks.METHOD.parseResponse(message(response(0, new byte[] {1, 2, 3})));
        assertSame(c.array(), next.array(), "the released array is used again");
        assertEquals(3, next.data().remaining());
        assertEquals(2, next.data().get(next.data().position() + 1));
        next.release();
    }

    @Test
    void aResponseLargerThanAChunkIsParsedWithoutThePool() {
        byte[] data = new byte[ReadChunks.CHUNK + 4096];
        data[data.length - 1] = 9;
        ReadChunks.ReadChunk c = ReadChunks.METHOD.parseResponse(message(response(0, data)));
        assertNull(c.array());
        assertEquals(data.length, c.data().remaining());
        assertEquals(9, c.data().get(c.data().position() + data.length - 1));
        c.release(); // nothing to give back
    }

    @Test
    void garbageIsInternalAndLeavesThePoolWhole() {
        ReadChunks.ReadChunk warm = ReadChunks.METHOD.parseResponse(message(response(0, new byte[1])));
        byte[] pooled = warm.array();
        warm.release();
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
                () -> ReadChunks.METHOD.parseResponse(message(new byte[] {(byte) 0x12, (byte) 0x7f, 1})));
        assertEquals(Status.Code.INTERNAL, e.getStatus().getCode());
        ReadChunks.ReadChunk after = ReadChunks.METHOD.parseResponse(message(response(0, new byte[1])));
        assertSame(pooled, after.array(), "the array taken for the bad message went back");
        after.release();
    }
}
