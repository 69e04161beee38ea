package dev.arrayd.server;

import dev.arrayd.proto.v1.Access;
import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.DataType;
import dev.arrayd.proto.v1.Fill;
import dev.arrayd.proto.v1.KernelServiceGrpc;
import dev.arrayd.proto.v1.KernelSignature;
import dev.arrayd.proto.v1.Scalar;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A native C kernel that holds the CPU device until the test opens it: it makes its "started"
 * directory when it runs, then waits for the "open" file. So a test knows a command is running, and
 * decides when it finishes, without timing anything. Needs {@code allow-native-source}.
 */
final class GateKernel {

    static final KernelSignature SIG = KernelSignature.newBuilder().setName("gate")
            .addParams(Protos.buffer("x", DataType.DATA_TYPE_F32, Access.ACCESS_READ_WRITE)).build();

    final Path started;
    final Path open;

    GateKernel(Path dir) {
        this.started = dir.resolve("gate-started");
        this.open = dir.resolve("gate-open");
    }

    /** The source names this gate's own paths, so each gate is its own module. */
    String source() {
        return """
                int access(const char *path, int mode);
                int mkdir(const char *path, unsigned int mode);
                int usleep(unsigned int micros);
                ARRAYD_KERNEL void gate(ARRAYD_ITEM, float *x) {
                    mkdir("%s", 0700);
                    while (access("%s", 0) != 0) usleep(200);
                    x[0] = 1.0f;
                }
                """.formatted(started, open);
    }

    /** Compiles the gate in a session; returns the kernel handle. */
    long compile(KernelServiceGrpc.KernelServiceBlockingStub kernels, String session) {
        return kernels.compile(Protos.compile(session, source(), SIG)).getModules(0).getKernels(0).getKernel();
    }

    static Command launch(long event, long kernel, long buffer) {
        return Protos.launch(event, kernel, 1, Protos.buf(buffer));
    }

    static Command fill(long event, long buffer, float value) {
        return Command.newBuilder().setEvent(event).setFill(Fill.newBuilder().setBuffer(buffer)
                .setValue(Scalar.newBuilder().setF32(value))).build();
    }

    /** Waits (at most 30 s, polling every millisecond) until the gate kernel runs. */
    void awaitStarted() {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!Files.isDirectory(started)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the gate kernel did not start within 30 s");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
    }

    /** Lets the gate kernel finish. Idempotent. */
    void open() throws IOException {
        try {
            Files.createFile(open);
        } catch (FileAlreadyExistsException ignored) {
            // opened already
        }
    }
}
