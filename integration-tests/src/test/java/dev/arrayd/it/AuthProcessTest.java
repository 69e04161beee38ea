package dev.arrayd.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import dev.arrayd.proto.v1.BufferServiceGrpc;
import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.CreateBufferRequest;
import dev.arrayd.proto.v1.DataType;
import dev.arrayd.proto.v1.DescribeBufferRequest;
import dev.arrayd.proto.v1.DestroyBufferRequest;
import dev.arrayd.proto.v1.ExecutionServiceGrpc;
import dev.arrayd.proto.v1.OpenSessionRequest;
import dev.arrayd.proto.v1.ReadBufferRequest;
import dev.arrayd.proto.v1.SessionServiceGrpc;
import dev.arrayd.proto.v1.SubmitRequest;
import dev.arrayd.proto.v1.Upload;
import dev.arrayd.proto.v1.WaitEventsRequest;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code serve --auth-tokens FILE} as a real process: the CLI needs a token (flag or environment),
 * and cross-tenant reads, writes, waits and destroys are all refused. (Hostile requests in bulk:
 * {@link ProcessFuzzProperties}.)
 */
class AuthProcessTest {

    static final String ALICE = "alice-0123456789abcdef0123";
    static final String BOB = "bob-0123456789abcdef012345";

    @TempDir
    Path dir;

    record Run(int exit, String output) {}

    static Run cli(Map<String, String> env, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(DaemonProcess.javaCommand("dev.arrayd.cli.Main"));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().remove("ARRAYD_TOKEN");
        pb.environment().putAll(env);
        Process p = pb.start();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        p.getInputStream().transferTo(out);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        return new Run(p.exitValue(), out.toString());
    }

    static ManagedChannel channel(String target, String token) {
        Metadata h = new Metadata();
        h.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
        return NettyChannelBuilder.forTarget(target).usePlaintext().intercept(MetadataUtils.newAttachHeadersInterceptor(h))
                .build();
    }

    static Status.Code code(Runnable r) {
        try {
            r.run();
            return Status.Code.OK;
        } catch (StatusRuntimeException e) {
            return e.getStatus().getCode();
        }
    }

    @Test
    @Timeout(120)
    void tokensAreRequiredAndTenantsAreIsolated() throws Exception {
        Path tokens = dir.resolve("tokens");
        Files.writeString(tokens, "# test tokens\n" + ALICE + " alice weight=2\n" + BOB + " bob memory=16MiB\n");
        try (DaemonProcess d = new DaemonProcess("--auth-tokens", tokens.toString(), "--metrics-port", "0")) {
            Run none = cli(Map.of(), "devices", "--target", d.target());
            assertNotEquals(0, none.exit(), none.output());
            assertTrue(none.output().contains("UNAUTHENTICATED"), none.output());
            Run flag = cli(Map.of(), "devices", "--target", d.target(), "--token", ALICE);
            assertEquals(0, flag.exit(), flag.output());
            assertTrue(flag.output().contains("cpu:0"), flag.output());
            Run env = cli(Map.of("ARRAYD_TOKEN", BOB), "devices", "--target", d.target());
            assertEquals(0, env.exit(), env.output());

            ManagedChannel a = channel(d.target(), ALICE);
            ManagedChannel b = channel(d.target(), BOB);
            try {
                String as = SessionServiceGrpc.newBlockingStub(a).openSession(OpenSessionRequest.getDefaultInstance()).getSession();
                String bs = SessionServiceGrpc.newBlockingStub(b).openSession(OpenSessionRequest.getDefaultInstance()).getSession();
                var abuf = BufferServiceGrpc.newBlockingStub(a);
                long h = abuf.createBuffer(CreateBufferRequest.newBuilder().setSession(as).setDtype(DataType.DATA_TYPE_U8).addDims(64).build()).getBuffer()
                        .getBuffer();
                var ev = ExecutionServiceGrpc.newBlockingStub(a).submit(SubmitRequest.newBuilder().setSession(as)
                        .addCommands(Command.newBuilder().setUpload(Upload.newBuilder().setBuffer(h)
                                .setData(ByteString.copyFrom(new byte[64])))).build()).getEvents(0);
                var bbuf = BufferServiceGrpc.newBlockingStub(b);
                var bexec = ExecutionServiceGrpc.newBlockingStub(b);
                for (String token : new String[] {as, bs}) { // alice's session token, and alice's handle in bob's session
                    assertEquals(Status.Code.NOT_FOUND, code(() -> bbuf.readBuffer(ReadBufferRequest.newBuilder()
                            .setSession(token).setBuffer(h).build()).next()), "read");
                    assertEquals(Status.Code.NOT_FOUND, code(() -> bexec.submit(SubmitRequest.newBuilder().setSession(token)
                            .addCommands(Command.newBuilder().setUpload(Upload.newBuilder().setBuffer(h)
                                    .setData(ByteString.copyFrom(new byte[4])))).build())), "write");
                    assertEquals(Status.Code.NOT_FOUND, code(() -> bexec.waitEvents(WaitEventsRequest.newBuilder()
                            .setSession(token).addEvents(ev).build())), "wait");
                    assertEquals(Status.Code.NOT_FOUND, code(() -> bbuf.destroyBuffer(DestroyBufferRequest.newBuilder()
                            .setSession(token).setBuffer(h).build())), "destroy");
                }
                // alice's buffer untouched and still hers
                abuf.describeBuffer(DescribeBufferRequest.newBuilder().setSession(as).setBuffer(h).build()).getBuffer();
            } finally {
                a.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
                b.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
            assertEquals(0, d.terminate());
        }
    }
}
