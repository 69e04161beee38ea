package dev.arrayd.server;

import static dev.arrayd.server.Protos.f32;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.BadRequest;
import com.google.rpc.ErrorInfo;
import com.google.rpc.ResourceInfo;
import dev.arrayd.proto.v1.DescribeBufferRequest;
import dev.arrayd.proto.v1.KeepAliveRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ErrorDetailsTest {

    static <T extends com.google.protobuf.Message> Optional<T> detail(com.google.rpc.Status s, Class<T> type) {
        for (Any a : s.getDetailsList()) {
            if (a.is(type)) {
                try {
                    return Optional.of(a.unpack(type));
                } catch (InvalidProtocolBufferException e) {
                    throw new AssertionError(e);
                }
            }
        }
        return Optional.empty();
    }

    @Test
    void aFieldPathBecomesABadRequestViolation() {
        var s = ErrorDetails.of(Status.Code.INVALID_ARGUMENT,
                "commands[2]: launch.args[1]: buffer 0x7 i32[16] on cpu:0 (expected: buffer of f32 for parameter b)");
        assertEquals(Status.Code.INVALID_ARGUMENT.value(), s.getCode());
        var v = detail(s, BadRequest.class).orElseThrow().getFieldViolations(0);
        assertEquals("commands[2].launch.args[1]", v.getField());
        assertEquals("buffer 0x7 i32[16] on cpu:0 (expected: buffer of f32 for parameter b)", v.getDescription());
        ErrorInfo info = detail(s, ErrorInfo.class).orElseThrow();
        assertEquals("arrayd.dev", info.getDomain());
        assertEquals("INVALID_ARGUMENT", info.getReason());
        assertEquals("INVALID_ARGUMENT", info.getMetadataOrThrow("code"));
    }

    @Test
    void notFoundNamesTheResourceAndAStableReason() {
        var buffer = ErrorDetails.of(Status.Code.NOT_FOUND, "buffer 0x5 (not found in this session)");
        assertEquals("BUFFER_NOT_FOUND", detail(buffer, ErrorInfo.class).orElseThrow().getReason());
        ResourceInfo r = detail(buffer, ResourceInfo.class).orElseThrow();
        assertEquals("buffer", r.getResourceType());
        assertEquals("0x5", r.getResourceName());

        var event = ErrorDetails.of(Status.Code.NOT_FOUND, "commands[0]: wait_events[0]: event 4242 (not found in this session)");
        assertEquals("EVENT_NOT_FOUND", detail(event, ErrorInfo.class).orElseThrow().getReason());
        assertEquals("4242", detail(event, ResourceInfo.class).orElseThrow().getResourceName());

        var session = ErrorDetails.of(Status.Code.NOT_FOUND, "session: \"3f9a2c1b\"… (not found or closed)");
        assertEquals("SESSION_NOT_FOUND", detail(session, ErrorInfo.class).orElseThrow().getReason());
        assertEquals("\"3f9a2c1b\"…", detail(session, ResourceInfo.class).orElseThrow().getResourceName());

        var other = ErrorDetails.of(Status.Code.NOT_FOUND, "something else entirely");
        assertEquals("NOT_FOUND", detail(other, ErrorInfo.class).orElseThrow().getReason());
        assertTrue(detail(other, ResourceInfo.class).isEmpty());
    }

    @Test
    void reasonsOfShutdownQuotaAndNativeSource() {
        assertEquals("SHUTTING_DOWN", detail(ErrorDetails.of(Status.Code.UNAVAILABLE,
                "arrayd is shutting down: it accepts no new sessions"), ErrorInfo.class).orElseThrow().getReason());
        assertEquals("QUOTA_EXCEEDED", detail(ErrorDetails.of(Status.Code.RESOURCE_EXHAUSTED,
                "tenant a: memory quota of 1024 bytes"), ErrorInfo.class).orElseThrow().getReason());
        assertEquals("NATIVE_SOURCE_NOT_ALLOWED", detail(ErrorDetails.of(Status.Code.PERMISSION_DENIED,
                "modules[0].dialect: C is native source, … without --allow-native-source"), ErrorInfo.class)
                .orElseThrow().getReason());
    }

    @Test
    void longTextsAreCutInsideTheDetails() {
        String huge = "dims[0]: " + "9".repeat(100_000);
        var s = ErrorDetails.of(Status.Code.INVALID_ARGUMENT, huge);
        assertTrue(s.getMessage().length() <= ErrorDetails.MAX_TEXT);
        assertTrue(detail(s, BadRequest.class).orElseThrow().getFieldViolations(0).getDescription().length()
                <= ErrorDetails.MAX_TEXT);
        assertTrue(s.getSerializedSize() < 2048, "bytes: " + s.getSerializedSize());
    }

    @Test
    void callsCarryTheDetailsInTheirTrailers() throws Exception {
        try (ServerFixture f = new ServerFixture(false)) {
            String session = f.openSession();
            StatusRuntimeException dims = assertThrows(StatusRuntimeException.class,
                    () -> f.buffers.createBuffer(f32(session, 2, 0)));
            com.google.rpc.Status s = StatusProto.fromThrowable(dims);
            assertEquals("dims[1]", detail(s, BadRequest.class).orElseThrow().getFieldViolations(0).getField());

            StatusRuntimeException missing = assertThrows(StatusRuntimeException.class, () -> f.buffers.describeBuffer(
                    DescribeBufferRequest.newBuilder().setSession(session).setBuffer(5).build()));
            assertEquals("BUFFER_NOT_FOUND", detail(StatusProto.fromThrowable(missing), ErrorInfo.class).orElseThrow()
                    .getReason());

            StatusRuntimeException noSession = assertThrows(StatusRuntimeException.class,
                    () -> f.sessions.keepAlive(KeepAliveRequest.newBuilder().setSession("nope").build()));
            assertEquals("SESSION_NOT_FOUND", detail(StatusProto.fromThrowable(noSession), ErrorInfo.class)
                    .orElseThrow().getReason());
        }
    }
}
