package dev.arrayd.devices.remote;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.UnsafeByteOperations;
import dev.arrayd.devices.api.support.ByteArrayPool;
import dev.arrayd.proto.v1.BufferServiceGrpc;
import dev.arrayd.proto.v1.ReadBufferRequest;
import dev.arrayd.proto.v1.ReadBufferResponse;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.protobuf.ProtoUtils;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;

/**
 * {@code BufferService.ReadBuffer} as a peer reads it: each response is copied once out of gRPC's buffers, into an
 * array of a pool, and its data is a view of that array (no second copy into a {@code ByteString}, no array made
 * and zeroed per chunk). The reader gives the array back ({@link ReadChunk#release}) once it has used the data.
 */
final class ReadChunks {

    /**
     * Largest chunk asked of the peer: 2 MiB, so that a response parses from one array (gRPC's own protobuf
     * marshaller parses messages above 4 MiB from a stream, in copies of a few KiB each).
     */
    static final int CHUNK = 2 << 20;

    /** Room for the response's other fields and their tags. */
    private static final int OVERHEAD = 64;

    /** Arrays for about as many chunks as a read keeps in flight. */
    private static final ByteArrayPool POOL = new ByteArrayPool(CHUNK + OVERHEAD, 8);

    /** The call, with responses parsed into pooled arrays. */
    static final MethodDescriptor<ReadBufferRequest, ReadChunk> METHOD = BufferServiceGrpc.getReadBufferMethod()
            .toBuilder(ProtoUtils.marshaller(ReadBufferRequest.getDefaultInstance()), new Parser()).build();

    private ReadChunks() {}

    /**
     * One response: {@code data} at {@code offset} of the buffer, a view of {@code array} (from the pool, or null
     * when the response did not fit one).
     */
    record ReadChunk(long offset, ByteBuffer data, byte[] array) {
        /** Gives the array back: {@code data} must not be used after. */
        void release() {
            if (array != null) {
                POOL.give(array);
            }
        }
    }

    private static final class Parser implements MethodDescriptor.Marshaller<ReadChunk> {

        @Override
        public InputStream stream(ReadChunk value) {
            throw new UnsupportedOperationException("a read chunk is only received");
        }

        @Override
        public ReadChunk parse(InputStream in) {
            byte[] array = null;
            try {
                byte[] bytes;
                int n;
                if (in instanceof KnownLength && in.available() <= POOL.size()) {
                    array = POOL.take();
                    bytes = array;
                    n = in.available();
                    if (in.readNBytes(bytes, 0, n) != n || in.read() != -1) {
                        throw new IOException("the response's length changed while it was read");
                    }
                } else {
                    bytes = in.readAllBytes();
                    n = bytes.length;
                }
                // (an input over bytes it may treat as immutable: only then does aliasing apply)
                CodedInputStream cis = UnsafeByteOperations.unsafeWrap(bytes, 0, n).newCodedInput();
                cis.enableAliasing(true);
                ReadBufferResponse r = ReadBufferResponse.parseFrom(cis);
                return new ReadChunk(r.getOffsetBytes(), r.getData().asReadOnlyByteBuffer(), array);
            } catch (IOException | RuntimeException e) {
                if (array != null) {
                    POOL.give(array);
                }
                throw Status.INTERNAL.withDescription("ReadBufferResponse: " + e.getMessage()).withCause(e)
                        .asRuntimeException();
            }
        }
    }
}
