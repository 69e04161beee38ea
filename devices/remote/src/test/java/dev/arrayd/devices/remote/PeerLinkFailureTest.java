package dev.arrayd.devices.remote;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import io.grpc.Status;
import org.junit.jupiter.api.Test;

/** How a failed call to a peer reads in the error this daemon reports. */
class PeerLinkFailureTest {

    private static PeerLink link() {
        return new PeerLink(PeerAddress.parse("p1=127.0.0.1:1"), RemoteOptions.parse("p1=127.0.0.1:1", "", "me"),
                Runnable::run, null);
    }

    /**
     * gRPC fails a call whose response could not be parsed (or whose listener threw) with CANCELLED "Failed to
     * read message." and says why only in the status's cause: the error names that cause, bounded.
     */
    @Test
    void aStatusMadeHereCarriesItsCause() {
        ArraydException e = link().failure(null, Status.CANCELLED.withDescription("Failed to read message.")
                .withCause(new IllegalStateException("x".repeat(1000))).asRuntimeException());
        assertEquals(ErrorCode.CANCELLED, e.code());
        assertTrue(e.getMessage().startsWith("peer p1: Failed to read message. (IllegalStateException: xxx"), e.getMessage());
        assertTrue(e.getMessage().length() < 300, "bounded: " + e.getMessage().length());
    }

    @Test
    void aStatusFromThePeerKeepsItsDescription() {
        ArraydException e = link().failure(null, Status.NOT_FOUND.withDescription("buffer 7").asRuntimeException());
        assertEquals(ErrorCode.NOT_FOUND, e.code());
        assertEquals("peer p1: buffer 7", e.getMessage());
    }
}
