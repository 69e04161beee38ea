package dev.arrayd.devices.api.conformance;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.NativeStream;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.junit.jupiter.api.Assertions.assertThrows;

/** The conformance suite's static helpers: submitting and waiting for commands, building launches. */
public final class Conformance {

    /** Bounds every wait of the suite; generous because CI machines stall. */
    public static final long TIMEOUT_SECONDS = 60;

    static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private Conformance() {}

    /** Submits {@code command}; the future completes with the device nanos or fails with the cause. */
    public static CompletableFuture<Long> submit(NativeStream stream, DeviceCommand command) {
        CompletableFuture<Long> done = new CompletableFuture<>();
        stream.submit(command, into(done));
        return done;
    }

    /** A callback completing {@code done} with the device nanos, or with the failure; a second call fails it. */
    public static CommandCallback into(CompletableFuture<Long> done) {
        return new CommandCallback() {
            @Override
            public void completed(long deviceNanos) {
                if (!done.complete(deviceNanos)) {
                    done.obtrudeException(new AssertionError("callback called twice"));
                }
            }

            @Override
            public void failed(ArraydException cause) {
                if (!done.completeExceptionally(cause)) {
                    done.obtrudeException(new AssertionError("callback called twice"));
                }
            }
        };
    }

    /** The device nanos of a submitted command, within {@link #TIMEOUT_SECONDS}; its failure is thrown. */
    public static long await(CompletableFuture<Long> future) {
        try {
            return future.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new AssertionError(e.getCause());
        } catch (TimeoutException e) {
            throw new AssertionError("command did not complete within " + TIMEOUT_SECONDS + " s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    public static long run(NativeStream stream, DeviceCommand command) {
        return await(submit(stream, command));
    }

    public static ArraydException runExpectingFailure(NativeStream stream, DeviceCommand command) {
        return assertThrows(ArraydException.class, () -> run(stream, command));
    }

    static KernelArg buf(MemRef ref) {
        return new KernelArg.Buffer(ref);
    }

    static DeviceCommand.Launch launch1d(Kernel k, long global, KernelArg... args) {
        return new DeviceCommand.Launch(k, new long[] {global}, null, List.of(args));
    }
}
