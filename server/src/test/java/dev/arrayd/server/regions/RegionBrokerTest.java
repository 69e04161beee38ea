package dev.arrayd.server.regions;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Sealed shared memory and the claim socket that hands it out once. */
class RegionBrokerTest {

    @TempDir
    Path dir;

    @Test
    void sharedMemoryIsZeroedSealedAgainstResizingAndMappedByTheDaemon() throws IOException {
        try (SharedMemory m = SharedMemory.create("test", 1 << 16)) {
            assertEquals(1 << 16, m.segment().byteSize());
            assertEquals(0, m.segment().get(ValueLayout.JAVA_LONG, 8));
            m.segment().set(ValueLayout.JAVA_INT, 0, 42);
            try (FileChannel ch = FileChannel.open(Path.of("/proc/self/fd/" + m.fd()), StandardOpenOption.READ,
                    StandardOpenOption.WRITE)) {
                ByteBuffer b = ByteBuffer.allocate(4);
                ch.read(b, 0);
                assertEquals(42, b.flip().order(java.nio.ByteOrder.nativeOrder()).getInt(), "one memory, two mappings");
                // what a hostile client would try with its descriptor: the seals refuse it
                assertThrows(IOException.class, () -> ch.truncate(0), "shrinking");
                assertThrows(IOException.class, () -> ch.write(ByteBuffer.allocate(1), 1 << 16), "growing");
            }
            assertEquals(42, m.segment().get(ValueLayout.JAVA_INT, 0), "the daemon's mapping is intact");
        }
    }

    @Test
    void aClaimHandsOutTheDescriptorOnceAndAnUnknownOneNothing() throws Exception {
        Path sock = dir.resolve("arrayd.sock.regions");
        AtomicInteger freed = new AtomicInteger();
        AtomicLong inFlight = new AtomicLong();
        try (RegionBroker broker = RegionBroker.start(sock)) {
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(sock)));
            Region r = broker.create(5000, inFlight::get, freed::incrementAndGet);
            assertEquals(8192, r.size(), "whole pages");
            assertTrue(r.claim().matches("[0-9a-f]{32}"), r.claim());
            assertEquals(1, claim(sock, r.claim()), "the descriptor comes with one byte");
            assertEquals(-1, claim(sock, r.claim()), "a claim is used once");
            assertEquals(-1, claim(sock, "0".repeat(32)), "an unknown claim gets nothing");
            assertEquals(-1, claim(sock, "x".repeat(5000)), "nor does a line too long");

            // retired with a command in flight: freed only once it is done
            inFlight.set(1);
            broker.retire(r);
            assertEquals(0, freed.get());
            inFlight.set(0);
            broker.retireReady();
            assertEquals(1, freed.get());
        }
        assertFalse(Files.exists(sock), "the socket is removed");
    }

    @Test
    void allRegionsTogetherStayWithinTheCap() throws Exception {
        try (RegionBroker broker = RegionBroker.start(dir.resolve("cap.regions"), 16384)) {
            AtomicInteger freed = new AtomicInteger();
            Region a = broker.create(8192, () -> 0, freed::incrementAndGet);
            IOException over = assertThrows(IOException.class, () -> broker.create(12288, () -> 0, () -> { }));
            assertTrue(over.getMessage().contains("the regions would hold 20480 bytes (expected: at most 16384, "
                    + "region-memory)"), over.getMessage());
            broker.retire(a);
            assertEquals(1, freed.get());
            broker.retire(broker.create(12288, () -> 0, () -> { })); // room again once the first is freed
        }
    }

    @Test
    void eachRegionIsOfferedForPageLockingAndUnlockedOnceBeforeItsMemoryGoes() throws Exception {
        java.util.List<java.lang.foreign.MemorySegment> locked = new java.util.ArrayList<>();
        AtomicInteger unlocked = new AtomicInteger();
        AtomicInteger freedWhileLocked = new AtomicInteger();
        try (RegionBroker broker = RegionBroker.start(dir.resolve("lock.regions"), 0, segment -> {
            locked.add(segment);
            return unlocked::incrementAndGet;
        })) {
            Region a = broker.create(10_000, () -> 0, () -> freedWhileLocked.addAndGet(unlocked.get() == 0 ? 1 : 0));
            assertEquals(1, locked.size());
            assertEquals(12288, locked.getFirst().byteSize(), "the whole mapping, in pages");
            assertEquals(a.memory().segment().address(), locked.getFirst().address());
            broker.retire(a);
            broker.retireReady();
            assertEquals(1, unlocked.get(), "unlocked once");
            assertEquals(0, freedWhileLocked.get(), "unlocked before the memory went");
        }
        // a locker that throws leaves the region usable (its transfers are merely staged)
        try (RegionBroker broker = RegionBroker.start(dir.resolve("bad.regions"), 0, segment -> {
            throw new IllegalStateException("no");
        })) {
            Region b = broker.create(4096, () -> 0, () -> { });
            b.memory().segment().set(java.lang.foreign.ValueLayout.JAVA_BYTE, 0, (byte) 1);
            broker.retire(b);
        }
    }

    /** Sends a claim; the first byte answered (the descriptor's carrier), or -1 at end of stream. */
    static int claim(Path sock, String claim) throws IOException {
        try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            ch.connect(UnixDomainSocketAddress.of(sock));
            ch.write(ByteBuffer.wrap((claim + "\n").getBytes(StandardCharsets.US_ASCII)));
            ByteBuffer one = ByteBuffer.allocate(1);
            int n = ch.read(one);
            return n <= 0 ? -1 : 1;
        } catch (IOException e) {
            return -1; // the daemon closed on a line too long before reading it all
        }
    }
}
