package dev.arrayd.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.arrayd.client.Access;
import dev.arrayd.client.ArraydClient;
import dev.arrayd.client.ArraydCommandException;
import dev.arrayd.client.BufferHandle;
import dev.arrayd.client.DType;
import dev.arrayd.client.Dialect;
import dev.arrayd.client.Event;
import dev.arrayd.client.KernelModuleSpec;
import dev.arrayd.client.KernelSpec;
import dev.arrayd.client.Launch;
import dev.arrayd.client.Session;
import io.grpc.Status;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Cancel by event id (unary {@code ExecutionService.Cancel}, through the Java client): while a gate kernel holds
 * the device, a command queued behind it and one waiting for that command are cancelled and fail with CANCELLED;
 * the running one finishes.
 */
class CancelEndToEndTest {

    static <T> T await(CompletableFuture<T> f) throws Exception {
        return f.get(60, TimeUnit.SECONDS);
    }

    static Status.Code failure(Event e) {
        ExecutionException x = assertThrows(ExecutionException.class, () -> e.future().get(60, TimeUnit.SECONDS));
        return assertInstanceOf(ArraydCommandException.class, x.getCause()).code();
    }

    @Test
    void queuedAndWaitingCommandsAreCancelledAndNeverRun(@TempDir Path dir) throws Exception {
        GateKernel gate = new GateKernel(dir);
        ServerOptions options = ServerOptions.defaults().withPort(0).withAllowNativeSource(true)
                .withCpuMemoryBytes(64L << 20);
        try (ArraydServer server = ArraydServer.start(options);
                ArraydClient c = ArraydClient.connect("127.0.0.1:" + server.port());
                Session s = await(c.openSession("cancel"))) {
            var kernels = await(s.compile(KernelModuleSpec.of(Dialect.C, gate.source(),
                    KernelSpec.entry("gate").buffer("x", DType.F32, Access.READ_WRITE))));
            BufferHandle held = await(s.createBuffer(DType.F32, 4));
            BufferHandle kept = await(s.createBuffer(DType.F32, 4));
            s.write(kept, new float[] {1, 2, 3, 4});
            Event running = s.launch(Launch.of(kernels.get("gate")).global(1).args(held));
            Event queued = s.fill(kept, 9f); // behind the gate on the session's stream
            Event waiting = s.fill(kept, 7f, queued);
            try {
                gate.awaitStarted();
                assertEquals(2, await(s.cancel(queued, waiting)));
            } finally {
                gate.open();
            }
            assertEquals(Status.Code.CANCELLED, failure(queued));
            assertEquals(Status.Code.CANCELLED, failure(waiting));
            await(running.future());
            assertEquals(0, await(s.cancel(running)), "a command that is done is left as it is");
            // failure is sticky: a read of kept waits (by its hazard) on the cancelled fill, and fails with it
            ExecutionException read = assertThrows(ExecutionException.class, () -> await(s.readFloats(kept)));
            assertEquals(Status.Code.CANCELLED, assertInstanceOf(ArraydCommandException.class, read.getCause()).code());
            // a new write starts kept afresh
            s.write(kept, new float[] {5, 6, 7, 8});
            assertArrayEquals(new float[] {5, 6, 7, 8}, await(s.readFloats(kept)));
        }
    }
}
