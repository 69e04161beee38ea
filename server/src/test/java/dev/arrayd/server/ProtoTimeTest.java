package dev.arrayd.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Duration;
import com.google.protobuf.Timestamp;
import dev.arrayd.devices.api.ArraydException;
import org.junit.jupiter.api.Test;

class ProtoTimeTest {

    static Timestamp ts(long seconds, int nanos) {
        return Timestamp.newBuilder().setSeconds(seconds).setNanos(nanos).build();
    }

    @Test
    void deadlinesBecomeUnixNanosWithThePastAndTheFarFutureClamped() {
        assertEquals(0, ProtoTime.unixNanos(false, Timestamp.getDefaultInstance(), "deadline"));
        assertEquals(1_700_000_000_123_456_789L, ProtoTime.unixNanos(true, ts(1_700_000_000L, 123_456_789), "deadline"));
        assertEquals(1, ProtoTime.unixNanos(true, ts(-5, 0), "deadline"), "before 1970: long past");
        assertEquals(0, ProtoTime.unixNanos(true, ts(0, 0), "deadline"));
        assertEquals(Long.MAX_VALUE, ProtoTime.unixNanos(true, ts(ProtoTime.MAX_TIMESTAMP_SECONDS, 0), "deadline"));
        assertEquals(9_223_372_036_854_775_807L, ProtoTime.unixNanos(true, ts(9_223_372_036L, 854_775_807), "deadline"));
        assertEquals(Long.MAX_VALUE, ProtoTime.unixNanos(true, ts(9_223_372_036L, 854_775_808), "deadline"));
    }

    @Test
    void malformedTimestampsNameTheFieldAndBothParts() {
        for (Timestamp bad : new Timestamp[] {ts(0, -1), ts(0, 1_000_000_000), ts(ProtoTime.MAX_TIMESTAMP_SECONDS + 1, 0),
                ts(ProtoTime.MIN_TIMESTAMP_SECONDS - 1, 0), ts(Long.MIN_VALUE, 0)}) {
            var e = assertThrows(ArraydException.class, () -> ProtoTime.unixNanos(true, bad, "commands[2].deadline"));
            assertTrue(e.getMessage().startsWith("commands[2].deadline: {seconds: " + bad.getSeconds() + ", nanos: "
                    + bad.getNanos() + "}"), e.getMessage());
        }
    }

    @Test
    void durationsRoundTripThroughMillisAndNanos() {
        assertEquals(1_500, ProtoTime.millis(ProtoTime.ofMillis(1_500), "lease"));
        assertEquals(Duration.newBuilder().setSeconds(2).setNanos(5).build(), ProtoTime.ofNanos(2_000_000_005L));
        assertEquals(0, ProtoTime.millis(Duration.getDefaultInstance(), "lease"));
        assertEquals(1, ProtoTime.millis(Duration.newBuilder().setNanos(1_999_999).build(), "lease"), "finer parts dropped");
        assertEquals(ProtoTime.MAX_DURATION_SECONDS * 1000,
                ProtoTime.millis(Duration.newBuilder().setSeconds(ProtoTime.MAX_DURATION_SECONDS).build(), "lease"));
        for (Duration bad : new Duration[] {Duration.newBuilder().setSeconds(-1).build(),
                Duration.newBuilder().setNanos(-1).build(), Duration.newBuilder().setNanos(1_000_000_000).build(),
                Duration.newBuilder().setSeconds(Long.MAX_VALUE).build()}) {
            var e = assertThrows(ArraydException.class, () -> ProtoTime.millis(bad, "lease"));
            assertTrue(e.getMessage().startsWith("lease: {seconds: " + bad.getSeconds()), e.getMessage());
        }
    }
}
