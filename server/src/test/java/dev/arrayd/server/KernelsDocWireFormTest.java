package dev.arrayd.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.util.JsonFormat;
import dev.arrayd.proto.v1.Arg;
import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.CompileRequest;
import dev.arrayd.proto.v1.CreateBufferRequest;
import dev.arrayd.proto.v1.DataType;
import dev.arrayd.proto.v1.Launch;
import dev.arrayd.proto.v1.ReadBufferRequest;
import dev.arrayd.proto.v1.Scalar;
import dev.arrayd.proto.v1.SubmitRequest;
import dev.arrayd.proto.v1.Upload;
import dev.arrayd.proto.v1.WaitEventsRequest;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The IR wire-form example of docs/kernels.md, as a client in another language would send it: it compiles and computes saxpy. */
class KernelsDocWireFormTest {

    @Test
    void theJsonKernelOfTheDocsCompilesAndComputesSaxpy() throws Exception {
        String doc = Files.readString(Path.of("..", "docs", "kernels.md"));
        Matcher m = Pattern.compile("### The wire form.*?```json\\n(.*?)```", Pattern.DOTALL).matcher(doc);
        assertTrue(m.find(), "docs/kernels.md has a JSON CompileRequest under \"The wire form\"");
        try (ServerFixture f = new ServerFixture(false)) {
            String session = f.openSession();
            CompileRequest.Builder req = CompileRequest.newBuilder();
            JsonFormat.parser().merge(m.group(1).replace("SESSION", session), req);
            long kernel = f.kernels.compile(req.build()).getModules(0).getKernels(0).getKernel();
            int n = 100;
            ByteBuffer xs = ByteBuffer.allocate(4 * n).order(ByteOrder.LITTLE_ENDIAN);
            ByteBuffer ys = ByteBuffer.allocate(4 * n).order(ByteOrder.LITTLE_ENDIAN);
            float[] want = new float[n];
            for (int i = 0; i < n; i++) {
                xs.putFloat(i);
                ys.putFloat(1);
                want[i] = 3f * i + 1;
            }
            long x = f.buffers.createBuffer(CreateBufferRequest.newBuilder().setSession(session).setDtype(DataType.DATA_TYPE_F32)
                    .addDims(n).build()).getBuffer().getBuffer();
            long y = f.buffers.createBuffer(CreateBufferRequest.newBuilder().setSession(session).setDtype(DataType.DATA_TYPE_F32)
                    .addDims(n).build()).getBuffer().getBuffer();
            var events = f.exec.submit(SubmitRequest.newBuilder().setSession(session)
                    .addCommands(Command.newBuilder().setUpload(Upload.newBuilder().setBuffer(x)
                            .setData(ByteString.copyFrom(xs.array()))))
                    .addCommands(Command.newBuilder().setUpload(Upload.newBuilder().setBuffer(y)
                            .setData(ByteString.copyFrom(ys.array()))))
                    .addCommands(Command.newBuilder().setLaunch(Launch.newBuilder().setKernel(kernel).addGlobalDims(128)
                            .addArgs(Arg.newBuilder().setScalar(Scalar.newBuilder().setF32(3)))
                            .addArgs(Arg.newBuilder().setBuffer(x)).addArgs(Arg.newBuilder().setBuffer(y))
                            .addArgs(Arg.newBuilder().setScalar(Scalar.newBuilder().setI64(n)))))
                    .build()).getEventsList();
            f.exec.waitEvents(WaitEventsRequest.newBuilder().setSession(session).addAllEvents(events).build());
            ByteBuffer got = ByteBuffer.allocate(4 * n).order(ByteOrder.LITTLE_ENDIAN);
            f.buffers.readBuffer(ReadBufferRequest.newBuilder().setSession(session).setBuffer(y).build())
                    .forEachRemaining(c -> got.put(c.getData().asReadOnlyByteBuffer()));
            float[] ys2 = new float[n];
            got.flip();
            got.asFloatBuffer().get(ys2);
            assertArrayEquals(want, ys2);
        }
    }
}
