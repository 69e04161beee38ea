package dev.arrayd.server;

import static dev.arrayd.server.Protos.f32;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import dev.arrayd.proto.v1.AxisPadding;
import dev.arrayd.proto.v1.BufferInfo;
import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.CreateBufferRequest;
import dev.arrayd.proto.v1.CreateViewRequest;
import dev.arrayd.proto.v1.DescribeBufferRequest;
import dev.arrayd.proto.v1.DestroyBufferRequest;
import dev.arrayd.proto.v1.ReadBufferRequest;
import dev.arrayd.proto.v1.ReadBufferResponse;
import dev.arrayd.proto.v1.Scalar;
import dev.arrayd.proto.v1.Sharing;
import dev.arrayd.proto.v1.SubmitRequest;
import dev.arrayd.proto.v1.Upload;
import dev.arrayd.proto.v1.WaitEventsRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Iterator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Padded buffers and views over the wire: what BufferInfo reports, interior and whole-padded reads and writes,
 * bad paddings and views refused by name (before any quota is charged), and a tenant's memory quota counting a
 * buffer's bytes until its last view is gone.
 */
class PaddedBuffersTest {

    TenantFixture f;
    TenantFixture.Client alice;
    String s;

    @BeforeEach
    void setUp() throws Exception {
        f = new TenantFixture();
        alice = f.client(TenantFixture.ALICE); // memory quota 1 MiB
        s = alice.openSession(0);
    }

    @AfterEach
    void tearDown() throws Exception {
        f.close();
    }

    private static Status status(Runnable call) {
        return assertThrows(StatusRuntimeException.class, call::run).getStatus();
    }

    /** f32 [3, 4] with (1, 1) rows and (2, 0) columns of padding holding {@code value}. */
    private CreateBufferRequest padded(float value) {
        return f32(s, 3, 4).toBuilder()
                .addPadding(AxisPadding.newBuilder().setLeft(1).setRight(1))
                .addPadding(AxisPadding.newBuilder().setLeft(2).setRight(0))
                .setPaddingValue(Scalar.newBuilder().setF32(value)).build();
    }

    private float[] read(long buffer, boolean whole) {
        Iterator<ReadBufferResponse> it = alice.buffers.readBuffer(ReadBufferRequest.newBuilder().setSession(s)
                .setBuffer(buffer).setWholePadded(whole).build());
        ByteBuffer all = ByteBuffer.allocate(1 << 12).order(ByteOrder.LITTLE_ENDIAN);
        it.forEachRemaining(r -> all.put(r.getData().toByteArray()));
        all.flip();
        float[] out = new float[all.remaining() / 4];
        all.asFloatBuffer().get(out);
        return out;
    }

    @Test
    void bufferInfoReportsThePaddingAndReadsAddressTheInteriorUnlessAskedForTheWhole() {
        BufferInfo info = alice.buffers.createBuffer(padded(7f)).getBuffer();
        assertEquals(java.util.List.of(3L, 4L), info.getDimsList());
        assertEquals(5 * 6 * 4, info.getSizeBytes(), "the padded array's bytes");
        assertEquals(2, info.getPaddingCount());
        assertEquals(2, info.getPadding(1).getLeft());
        assertEquals(7f, info.getPaddingValue().getF32());
        assertFalse(info.getView());
        ByteBuffer data = ByteBuffer.allocate(48).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < 12; i++) {
            data.putFloat(i + 1);
        }
        long event = alice.exec.submit(SubmitRequest.newBuilder().setSession(s).addCommands(Command.newBuilder()
                .setUpload(Upload.newBuilder().setBuffer(info.getBuffer()).setData(ByteString.copyFrom(data.array()))))
                .build()).getEvents(0);
        alice.exec.waitEvents(WaitEventsRequest.newBuilder().setSession(s).addEvents(event).build());
        float[] interior = read(info.getBuffer(), false);
        assertEquals(12, interior.length);
        assertEquals(12f, interior[11]);
        float[] whole = read(info.getBuffer(), true);
        assertEquals(30, whole.length);
        assertEquals(7f, whole[0]);
        assertEquals(1f, whole[1 * 6 + 2], "row 1, column 2: the interior's first element");
        assertEquals(7f, whole[29]);
        assertEquals(info.getPaddingList(), alice.buffers.describeBuffer(DescribeBufferRequest.newBuilder().setSession(s)
                .setBuffer(info.getBuffer()).build()).getBuffer().getPaddingList());
    }

    @Test
    void badPaddingsAreInvalidArgumentsNamingTheValue() {
        Status axes = status(() -> alice.buffers.createBuffer(f32(s, 3, 4).toBuilder()
                .addPadding(AxisPadding.newBuilder().setLeft(1)).build()));
        assertEquals(Status.Code.INVALID_ARGUMENT, axes.getCode());
        assertEquals("padding: 1 entries (expected: 2, one per axis of dims)", axes.getDescription());
        Status huge = status(() -> alice.buffers.createBuffer(f32(s, 4).toBuilder()
                .addPadding(AxisPadding.newBuilder().setLeft(1L << 61).setRight(1L << 61)).build()));
        assertEquals(Status.Code.INVALID_ARGUMENT, huge.getCode(), "refused as a bad value, not as over quota");
        assertTrue(huge.getDescription().startsWith("padding[0]: (2305843009213693952, 2305843009213693952)"),
                huge.getDescription());
        Status negative = status(() -> alice.buffers.createBuffer(f32(s, 4).toBuilder()
                .addPadding(AxisPadding.newBuilder().setLeft(-1L)).build()));
        assertEquals(Status.Code.OUT_OF_RANGE, negative.getCode(), "a uint64 past int64, as every unsigned field");
        assertTrue(negative.getDescription().startsWith("padding[0].left: 18446744073709551615"), negative.getDescription());
        Status value = status(() -> alice.buffers.createBuffer(f32(s, 4).toBuilder().setPaddingValue(
                Scalar.newBuilder().setF32(1)).build()));
        assertEquals("padding_value: set without padding (expected: padding, one entry per axis)", value.getDescription());
        Status wrongType = status(() -> alice.buffers.createBuffer(f32(s, 4).toBuilder()
                .addPadding(AxisPadding.newBuilder().setLeft(1)).setPaddingValue(Scalar.newBuilder().setI64(3)).build()));
        assertTrue(wrongType.getDescription().startsWith("padding.value: i64 scalar (expected: f32"), wrongType.getDescription());
        Status perStream = status(() -> alice.buffers.createBuffer(f32(s, 4).toBuilder()
                .addPadding(AxisPadding.newBuilder().setLeft(1)).setSharing(Sharing.SHARING_PER_STREAM).build()));
        assertTrue(perStream.getDescription().startsWith("padding: 1 axes with sharing PER_STREAM"), perStream.getDescription());
    }

    @Test
    void viewsAreReportedRefusedByNameAndKeepTheirBaseChargedToTheQuota() {
        long base = alice.buffers.createBuffer(f32(s, 150_000)).getBuffer().getBuffer(); // 600 000 of alice's 1 MiB
        BufferInfo view = alice.buffers.createView(CreateViewRequest.newBuilder().setSession(s).setBase(base)
                .addDims(1_500).addDims(100).build()).getBuffer();
        assertTrue(view.getView());
        assertEquals(java.util.List.of(1_500L, 100L), view.getDimsList());
        Status count = status(() -> alice.buffers.createView(CreateViewRequest.newBuilder().setSession(s).setBase(base)
                .addDims(7).build()));
        assertEquals(Status.Code.INVALID_ARGUMENT, count.getCode());
        assertTrue(count.getDescription().startsWith("dims: [7] (7 elements; expected: 150000"), count.getDescription());
        Status missing = status(() -> alice.buffers.createView(CreateViewRequest.newBuilder().setSession(s).setBase(5)
                .addDims(1).build()));
        assertEquals(Status.Code.NOT_FOUND, missing.getCode());
        alice.buffers.destroyBuffer(DestroyBufferRequest.newBuilder().setSession(s).setBuffer(base).build());
        Status full = status(() -> alice.buffers.createBuffer(f32(s, 150_000)));
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, full.getCode(), "the view still holds the memory, and the quota says so");
        alice.buffers.destroyBuffer(DestroyBufferRequest.newBuilder().setSession(s).setBuffer(view.getBuffer()).build());
        alice.buffers.createBuffer(f32(s, 150_000));
    }
}
