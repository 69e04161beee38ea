package dev.arrayd.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnknownFieldSet;
import dev.arrayd.proto.v1.Attach;
import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.CommandBatch;
import dev.arrayd.proto.v1.Download;
import dev.arrayd.proto.v1.ExecuteRequest;
import dev.arrayd.proto.v1.Fill;
import dev.arrayd.proto.v1.RegionSlice;
import dev.arrayd.proto.v1.Upload;
import java.io.ByteArrayOutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * {@link UploadSkeleton}: a request cut anywhere into receive buffers splits into a skeleton and lifted data that
 * together are the request the ordinary parser reads, the data viewed where it lies; a request protobuf would read
 * differently from a walk (a merged field, a group) or one that does not parse is not split.
 */
class UploadSkeletonProperties {

    private static final int BIG = UploadSkeleton.MIN_LIFTED_BYTES;

    /** A batch of random commands: uploads of sizes around the lifting threshold, and others. */
    static ExecuteRequest randomRequest(Random r) {
        CommandBatch.Builder batch = CommandBatch.newBuilder().setBatchId(r.nextInt(1000));
        int n = 1 + r.nextInt(6);
        for (int i = 0; i < n; i++) {
            Command.Builder c = Command.newBuilder().setEvent(1 + r.nextInt(1 << 20));
            if (r.nextBoolean()) {
                c.addWaitEvents(r.nextInt(50) + 1).setStream(r.nextInt(3));
            }
            switch (r.nextInt(4)) {
                case 0, 1 -> {
                    int size = switch (r.nextInt(4)) {
                        case 0 -> r.nextInt(64);
                        case 1 -> BIG - 1;
                        case 2 -> BIG;
                        default -> BIG + r.nextInt(3 * BIG);
                    };
                    byte[] data = new byte[size];
                    r.nextBytes(data);
                    Upload.Builder u = Upload.newBuilder().setBuffer(1 + r.nextInt(9)).setData(ByteString.copyFrom(data));
                    if (r.nextBoolean()) {
                        u.setOffsetBytes(4L * r.nextInt(1000));
                    }
                    if (r.nextInt(8) == 0) {
                        u.setFromRegion(RegionSlice.newBuilder().setRegion(1).setSizeBytes(4));
                    }
                    c.setUpload(u);
                }
                case 2 -> c.setDownload(Download.newBuilder().setBuffer(2).setSizeBytes(r.nextInt(1 << 20)));
                default -> c.setFill(Fill.newBuilder().setBuffer(3).setCountElements(r.nextInt(100)));
            }
            if (r.nextInt(6) == 0) {
                c.setUnknownFields(UnknownFieldSet.newBuilder().addField(900, UnknownFieldSet.Field.newBuilder()
                        .addVarint(r.nextInt(99)).addLengthDelimited(ByteString.copyFromUtf8("x")).build()).build());
            }
            batch.addCommands(c);
        }
        return ExecuteRequest.newBuilder().setBatch(batch).build();
    }

    /** {@code wire} cut at random places into buffers, direct or not, each starting at a random position. */
    static List<ByteBuffer> cut(byte[] wire, Random r) {
        List<ByteBuffer> out = new ArrayList<>();
        int at = 0;
        while (at < wire.length) {
            int n = Math.min(wire.length - at, r.nextInt(4) == 0 ? r.nextInt(4) : 1 + r.nextInt(40_000));
            int lead = r.nextInt(16);
            ByteBuffer b = r.nextBoolean() ? ByteBuffer.allocateDirect(lead + n + 8) : ByteBuffer.allocate(lead + n + 8);
            b.position(lead);
            b.put(wire, at, n);
            b.position(lead).limit(lead + n);
            out.add(b);
            at += n;
        }
        return out;
    }

    /** The skeleton with each command's lifted data put back, parsed. */
    static ExecuteRequest rejoined(UploadSkeleton.Split split) throws Exception {
        ExecuteRequest.Builder m = ExecuteRequest.parseFrom(split.skeleton()).toBuilder();
        for (var e : split.data().entrySet()) {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            for (MemorySegment p : e.getValue()) {
                bytes.writeBytes(p.toArray(ValueLayout.JAVA_BYTE));
            }
            Command.Builder c = m.getBatchBuilder().getCommandsBuilder(e.getKey());
            assertTrue(c.getUpload().getData().isEmpty(), "the skeleton keeps no lifted data");
            c.getUploadBuilder().setData(ByteString.copyFrom(bytes.toByteArray()));
        }
        return m.build();
    }

    @Property(tries = 300)
    void aSplitRequestIsTheRequestAndItsDataIsLiftedWhereItLies(@ForAll @IntRange(min = 0, max = 1 << 30) int seed)
            throws Exception {
        Random r = new Random(seed);
        ExecuteRequest request = randomRequest(r);
        List<ByteBuffer> buffers = cut(request.toByteArray(), r);
        List<ByteBuffer> before = buffers.stream().map(ByteBuffer::duplicate).toList();
        UploadSkeleton.Split split = UploadSkeleton.split(buffers);
        boolean big = request.getBatch().getCommandsList().stream()
                .anyMatch(c -> c.hasUpload() && c.getUpload().getData().size() >= BIG);
        for (int i = 0; i < buffers.size(); i++) {
            assertEquals(before.get(i), buffers.get(i), "the buffers' positions and limits are left alone");
        }
        if (!big) {
            assertNull(split, "nothing to lift: the request is read as usual");
            return;
        }
        assertNotNull(split);
        assertEquals(request, rejoined(split));
        assertTrue(split.skeleton().length < request.getSerializedSize() - BIG + 64, "the skeleton holds no big data");
        for (var e : split.data().entrySet()) {
            assertTrue(request.getBatch().getCommands(e.getKey()).getUpload().getData().size() >= BIG);
        }
        // the lifted data views the buffers: a change there shows through
        var pieces = split.data().values().iterator().next();
        MemorySegment first = pieces.getFirst();
        byte was = first.get(ValueLayout.JAVA_BYTE, 0);
        for (ByteBuffer b : buffers) {
            MemorySegment whole = MemorySegment.ofBuffer(b);
            for (long i = 0; i < whole.byteSize(); i++) {
                whole.set(ValueLayout.JAVA_BYTE, i, (byte) ~whole.get(ValueLayout.JAVA_BYTE, i));
            }
        }
        assertEquals((byte) ~was, first.get(ValueLayout.JAVA_BYTE, 0), "the data is a view, not a copy");
    }

    @Property(tries = 200)
    void aRequestCutShortIsNotSplit(@ForAll @IntRange(min = 0, max = 1 << 30) int seed) {
        Random r = new Random(seed);
        ExecuteRequest request = ExecuteRequest.newBuilder().setBatch(CommandBatch.newBuilder().addCommands(
                upload(1, BIG + r.nextInt(BIG)))).build();
        byte[] wire = request.toByteArray();
        byte[] shorter = java.util.Arrays.copyOf(wire, r.nextInt(wire.length));
        assertNull(UploadSkeleton.split(cut(shorter, r)), "the ordinary parser refuses it");
    }

    static Command upload(long event, int size) {
        return Command.newBuilder().setEvent(event).setUpload(Upload.newBuilder().setBuffer(7)
                .setData(ByteString.copyFrom(new byte[size]))).build();
    }

    @Test
    void fieldsThatProtobufWouldMergeLeaveTheRequestWhole() {
        Random r = new Random(1);
        byte[] big = upload(1, BIG).toByteArray();
        // a batch twice: protobuf merges the two batches
        byte[] batch = CommandBatch.newBuilder().addCommands(upload(1, BIG)).build().toByteArray();
        byte[] twice = concat(field(2, batch), field(2, batch));
        assertNull(UploadSkeleton.split(cut(twice, r)));
        // one command with two uploads, and one upload with its data twice
        byte[] upload = Upload.newBuilder().setData(ByteString.copyFrom(new byte[BIG])).build().toByteArray();
        int u = Command.UPLOAD_FIELD_NUMBER;
        byte[] command = concat(field(u, upload), field(u, upload));
        assertNull(UploadSkeleton.split(cut(field(2, field(2, command)), r)));
        byte[] data = concat(field(3, new byte[BIG]), field(3, new byte[BIG]));
        assertNull(UploadSkeleton.split(cut(field(2, field(2, field(u, data))), r)));
        // the same shapes once each are split
        assertNotNull(UploadSkeleton.split(cut(field(2, field(2, big)), r)));
    }

    @Test
    void aGroupOrAnUnknownWireTypeLeavesTheRequestWhole() {
        Random r = new Random(2);
        byte[] command = upload(1, BIG).toByteArray();
        byte[] group = concat(new byte[] {(byte) ((9 << 3) | 3), (byte) ((9 << 3) | 4)}, command);
        assertNull(UploadSkeleton.split(cut(field(2, field(2, group)), r)));
        byte[] wire7 = concat(new byte[] {(byte) ((9 << 3) | 7)}, command);
        assertNull(UploadSkeleton.split(cut(field(2, field(2, wire7)), r)));
    }

    @Test
    void aLengthOfTwoToTheSixtyThirdOrMoreIsNotSplit() {
        byte[] huge = {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff,
                (byte) 0xff, (byte) 0xff, 0x01};
        // an unknown length-delimited field 9 of that length, before a big upload
        byte[] command = concat(concat(new byte[] {(byte) ((9 << 3) | 2)}, huge), upload(1, BIG).toByteArray());
        assertNull(UploadSkeleton.split(cut(field(2, field(2, command)), new Random(6))));
    }

    @Test
    void otherMessagesAreNotSplit() throws Exception {
        ExecuteRequest attach = ExecuteRequest.newBuilder().setAttach(Attach.newBuilder().setSession("s".repeat(BIG)))
                .build();
        assertNull(UploadSkeleton.split(cut(attach.toByteArray(), new Random(3))));
        // an upload message as the request's unknown field 9 is not a batch's upload
        ExecuteRequest odd = ExecuteRequest.parseFrom(field(9, field(2, upload(1, BIG).toByteArray())));
        assertNull(UploadSkeleton.split(cut(odd.toByteArray(), new Random(4))));
    }

    @Test
    void anUploadWithOnlyDataKeepsAnEmptyUploadInTheSkeleton() throws Exception {
        ExecuteRequest request = ExecuteRequest.newBuilder().setBatch(CommandBatch.newBuilder().addCommands(
                Command.newBuilder().setUpload(Upload.newBuilder().setData(ByteString.copyFrom(new byte[BIG]))))).build();
        UploadSkeleton.Split split = UploadSkeleton.split(cut(request.toByteArray(), new Random(5)));
        assertNotNull(split);
        Command c = ExecuteRequest.parseFrom(split.skeleton()).getBatch().getCommands(0);
        assertEquals(Command.KindCase.UPLOAD, c.getKindCase(), "still an upload");
        assertArrayEquals(request.toByteArray(), rejoined(split).toByteArray());
    }

    /** A length-delimited field {@code number} holding {@code content}. */
    static byte[] field(int number, byte[] content) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        varint((number << 3) | 2, out);
        varint(content.length, out);
        out.writeBytes(content);
        return out.toByteArray();
    }

    static void varint(long v, ByteArrayOutputStream out) {
        while ((v & ~0x7fL) != 0) {
            out.write((int) (v & 0x7f) | 0x80);
            v >>>= 7;
        }
        out.write((int) v);
    }

    static byte[] concat(byte[] a, byte[] b) {
        byte[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
