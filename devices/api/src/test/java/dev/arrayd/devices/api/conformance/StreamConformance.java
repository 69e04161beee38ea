package dev.arrayd.devices.api.conformance;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.NativeStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

import static dev.arrayd.devices.api.conformance.Conformance.I64;
import static dev.arrayd.devices.api.conformance.Conformance.TIMEOUT_SECONDS;
import static dev.arrayd.devices.api.conformance.Conformance.await;
import static dev.arrayd.devices.api.conformance.Conformance.buf;
import static dev.arrayd.devices.api.conformance.Conformance.launch1d;
import static dev.arrayd.devices.api.conformance.Conformance.run;
import static dev.arrayd.devices.api.conformance.Conformance.submit;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** Streams and their completions: order, several streams at once, close draining queued work, a device
 * close ending its streams. */
public interface StreamConformance extends ConformanceFixture {

    @Test
    default void thousandCommandsRunInOrder() throws InterruptedException {
        Kernel step = kernel("step");
        NativeStream stream = device().newStream("s");
        MemRef acc = slab(1, 8);
        device().memsetZero(acc);
        int count = 1000;
        CountDownLatch all = new CountDownLatch(count);
        AtomicInteger completedInOrder = new AtomicInteger();
        AtomicReference<Throwable> problem = new AtomicReference<>();
        long expected = 0;
        for (int i = 0; i < count; i++) {
            int index = i;
            expected = expected * 31 + i;
            stream.submit(launch1d(step, 1, buf(acc), KernelArg.Scalar.i64(i)), new CommandCallback() {
                @Override
                public void completed(long deviceNanos) {
                    if (!completedInOrder.compareAndSet(index, index + 1)) {
                        problem.compareAndSet(null, new AssertionError("command " + index + " completed out of order"));
                    }
                    all.countDown();
                }

                @Override
                public void failed(ArraydException cause) {
                    problem.compareAndSet(null, cause);
                    all.countDown();
                }
            });
        }
        assertTrue(all.await(TIMEOUT_SECONDS, TimeUnit.SECONDS), "1000 callbacks");
        if (problem.get() != null) {
            fail(problem.get());
        }
        assertTrue(stream.isIdle(), "idle after every callback");
        assertEquals(expected, download(stream, acc).get(I64, 0));
        assertTrue(stream.isIdle(), "idle again");
        stream.close();
    }

    @Test
    default void twoStreamsAtOnce() throws Exception {
        Kernel step = kernel("step");
        NativeStream s1 = device().newStream("one");
        NativeStream s2 = device().newStream("two");
        MemRef acc1 = slab(1, 8);
        MemRef acc2 = slab(2, 8);
        device().memsetZero(acc1);
        device().memsetZero(acc2);
        int count = 500;
        List<CompletableFuture<Long>> futures = new ArrayList<>();
        long e1 = 0;
        long e2 = 0;
        for (int i = 0; i < count; i++) {
            futures.add(submit(s1, launch1d(step, 1, buf(acc1), KernelArg.Scalar.i64(i))));
            futures.add(submit(s2, launch1d(step, 1, buf(acc2), KernelArg.Scalar.i64(-i))));
            e1 = e1 * 31 + i;
            e2 = e2 * 31 - i;
        }
        CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        assertEquals(e1, download(s1, acc1).get(I64, 0));
        assertEquals(e2, download(s2, acc2).get(I64, 0));
        s1.close();
        s2.close();
    }

    @Test
    default void closeDrainsQueuedWorkAndEndsTheStream() throws InterruptedException {
        NativeStream stream = device().newStream("s");
        MemRef ref = slab(1, 64);
        int count = 200;
        CountDownLatch done = new CountDownLatch(count);
        AtomicInteger failures = new AtomicInteger();
        for (int i = 0; i < count; i++) {
            stream.submit(new DeviceCommand.Fill(ref, i, 1), new CommandCallback() {
                @Override
                public void completed(long deviceNanos) {
                    done.countDown();
                }

                @Override
                public void failed(ArraydException cause) {
                    failures.incrementAndGet();
                    done.countDown();
                }
            });
        }
        stream.close();
        assertTrue(done.await(TIMEOUT_SECONDS, TimeUnit.SECONDS), "every queued command called back by close");
        assertEquals(0, failures.get());
        assertTrue(stream.isIdle());
        ArraydException afterClose = assertThrows(ArraydException.class, () -> run(stream, new DeviceCommand.Fill(ref, 0, 1)));
        assertEquals(ErrorCode.FAILED_PRECONDITION, afterClose.code(), afterClose::toString);
        MemorySegment back = host(64);
        NativeStream other = device().newStream("t");
        run(other, new DeviceCommand.Download(ref, back));
        assertEquals((byte) (count - 1), back.get(ValueLayout.JAVA_BYTE, 0));
        other.close();
    }

    @Test
    default void deviceCloseEndsItsStreams() {
        NativeStream s1 = device().newStream("one");
        NativeStream s2 = device().newStream("two");
        MemRef ref = slab(1, 64);
        run(s1, new DeviceCommand.Fill(ref, 1, 1));
        run(s2, new DeviceCommand.Fill(ref, 2, 1));
        device().close(); // the after-each check proves both stream threads are gone
        assertTrue(s1.isIdle() && s2.isIdle());
    }
}
