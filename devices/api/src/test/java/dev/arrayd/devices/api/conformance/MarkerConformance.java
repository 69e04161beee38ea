package dev.arrayd.devices.api.conformance;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.NativeStream;
import dev.arrayd.devices.api.StreamMarker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

import static dev.arrayd.devices.api.conformance.Conformance.await;
import static dev.arrayd.devices.api.conformance.Conformance.into;
import static dev.arrayd.devices.api.conformance.Conformance.run;
import static dev.arrayd.devices.api.conformance.Conformance.submit;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Native waits between streams: {@code mark()} and {@code submitAfter}, and no marker from a closing stream. */
public interface MarkerConformance extends ConformanceFixture {

    /**
     * A command submitted after another stream's marker starts only once everything before the marker
     * finished: the marking stream is kept busy with 16 fills of 8 MiB, then marked, and the waiting
     * stream, idle, copies the tail of that buffer. Without the wait the copy would run at once and see
     * an earlier fill's bytes. Backends without markers must answer {@code mark()} with null.
     */
    @Test
    default void aMarkOrdersACommandOfAnotherStreamAfterEverythingBeforeIt() {
        NativeStream marking = device().newStream("marking");
        NativeStream waiting = device().newStream("waiting");
        long bytes = 8L << 20;
        MemRef big = slab(1, bytes);
        MemRef out = slab(2, 4096);
        List<CompletableFuture<Long>> fills = new ArrayList<>();
        for (int i = 1; i <= 16; i++) {
            fills.add(submit(marking, new DeviceCommand.Fill(big, i, 1)));
        }
        StreamMarker marker = marking.mark();
        StreamMarker foreign = () -> true;
        assertFalse(waiting.canWaitFor(foreign), "a marker the backend did not make");
        if (marker == null) {
            System.out.println("[conformance] " + backendName() + ": no native markers; streams are ordered by the host");
        } else {
            assertTrue(waiting.canWaitFor(marker), "a marker of a sibling stream of the same device");
            CompletableFuture<Long> copied = new CompletableFuture<>();
            waiting.submitAfter(new StreamMarker[] {marker}, new DeviceCommand.Copy(new MemRef(1, bytes - 4096, 4096), out),
                    into(copied));
            await(copied);
            assertTrue(marker.isReached(), "the waiting command ran after the marked point was reached");
            MemorySegment back = download(waiting, out);
            for (long i = 0; i < 4096; i++) {
                assertEquals((byte) 16, back.get(ValueLayout.JAVA_BYTE, i), "byte " + i + " of the tail copied after the last fill");
            }
            StreamMarker afterCopy = waiting.mark();
            CompletableFuture<Long> refill = new CompletableFuture<>();
            marking.submitAfter(new StreamMarker[] {afterCopy}, new DeviceCommand.Fill(out, 1, 1), into(refill));
            await(refill);
            assertTrue(afterCopy.isReached(), "the waiting stream's own marker is reached once its commands are done");
        }
        fills.forEach(Conformance::await);
        StreamMarker idle = marking.mark();
        if (idle != null) {
            // an idle stream's marker is reached without anything else being submitted
            CompletableFuture<Long> after = new CompletableFuture<>();
            waiting.submitAfter(new StreamMarker[] {idle}, new DeviceCommand.Fill(out, 1, 1), into(after));
            await(after);
            assertTrue(idle.isReached());
        }
        marking.close();
        waiting.close();
    }

    /** A closing stream may still run its last commands: it gives no marker, and the caller orders on the host. */
    @Test
    default void aClosedStreamGivesNoMarker() {
        NativeStream closed = device().newStream("closed");
        MemRef ref = slab(1, 64);
        closed.close();
        CompletableFuture<Long> refused = new CompletableFuture<>();
        closed.submit(new DeviceCommand.Fill(ref, 1, 1), into(refused));
        ArraydException e = assertThrows(ArraydException.class, () -> await(refused));
        assertEquals(ErrorCode.FAILED_PRECONDITION, e.code(), e::toString);
        assertEquals(null, closed.mark(), "no marker from a closed stream");
    }
}
