package dev.arrayd.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.UnsafeByteOperations;
import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.CommandBatch;
import dev.arrayd.proto.v1.Upload;
import dev.arrayd.scheduler.CommandSpec;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Where a decoded upload's bytes live. A large request is parsed into one array that its bytes fields view
 * ({@link RequestParser}); an upload submitted now may view it too, but one kept in a recorded graph holds a copy of
 * exactly its bytes, so that it does not keep the whole request it came in alive.
 */
class CommandDecoderDataTest {

    /** A batch of two uploads parsed as the daemon parses a large request: fields viewing one array. */
    private static List<Command> aliasedBatch(byte[] first, byte[] second) throws Exception {
        byte[] wire = CommandBatch.newBuilder()
                .addCommands(Command.newBuilder().setEvent(1).setUpload(Upload.newBuilder().setBuffer(7)
                        .setData(ByteString.copyFrom(first))))
                .addCommands(Command.newBuilder().setEvent(2).setUpload(Upload.newBuilder().setBuffer(7)
                        .setData(ByteString.copyFrom(second))))
                .build().toByteArray();
        CodedInputStream in = UnsafeByteOperations.unsafeWrap(wire).newCodedInput();
        in.enableAliasing(true);
        return CommandBatch.parseFrom(in).getCommandsList();
    }

    private static byte[] bytes(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + seed);
        }
        return b;
    }

    private static byte[] contents(MemorySegment s) {
        return s.toArray(ValueLayout.JAVA_BYTE);
    }

    @Test
    void aRecordedGraphCopiesItsUploadsDataOutOfTheRequest() throws Exception {
        byte[] first = bytes(1000, 1);
        byte[] second = bytes(3000, 2);
        List<CommandSpec> graph = CommandDecoder.batch(aliasedBatch(first, second), CommandDecoder.Call.GRAPH,
                1 << 20, CommandSpec.NO_DEADLINE);
        for (int i = 0; i < 2; i++) {
            MemorySegment data = ((CommandSpec.UploadOp) graph.get(i).op()).data();
            assertArrayEquals(i == 0 ? first : second, contents(data));
            Object base = data.heapBase().orElseThrow();
            assertEquals(data.byteSize(), ((byte[]) base).length, "an array of exactly the upload's bytes");
        }
        List<CommandSpec> now = CommandDecoder.batch(aliasedBatch(first, second), CommandDecoder.Call.STREAM,
                1 << 20, CommandSpec.NO_DEADLINE);
        MemorySegment viewed = ((CommandSpec.UploadOp) now.get(1).op()).data();
        assertArrayEquals(second, contents(viewed));
        assertTrue(!viewed.isNative(), "a view of the parsed request, submitted at once");
    }
}
