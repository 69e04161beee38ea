package dev.arrayd.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.client.ArraydClient;
import dev.arrayd.client.BufferHandle;
import dev.arrayd.client.DType;
import dev.arrayd.client.Session;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code serve --uds PATH} as a real process: the socket file's life, the CLI and the Java client over it, auth. */
class UnixSocketTest {

    @TempDir
    Path dir;

    @Test
    @Timeout(120)
    void clientsAndToolsWorkOverTheSocketWhichIsOwnerOnlyAndRemovedOnExit() throws Exception {
        Path sock = dir.resolve("arrayd.sock");
        String target = "unix://" + sock;
        try (DaemonProcess d = new DaemonProcess("--uds", sock.toString(), "--metrics-port", "-1")) {
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(sock)));

            DaemonProcessTest.CliRun health = DaemonProcessTest.cli("health", "--target", target);
            assertEquals(0, health.exit(), health.output());
            DaemonProcessTest.CliRun devices = DaemonProcessTest.cli("devices", "--target", target);
            assertEquals(0, devices.exit(), devices.output());
            assertTrue(devices.output().contains("cpu:0"), devices.output());

            try (ArraydClient c = ArraydClient.connect(target);
                    Session s = c.openSession("uds-it").get(60, TimeUnit.SECONDS)) {
                BufferHandle b = s.createBuffer(DType.F32, 4).get(60, TimeUnit.SECONDS);
                s.fill(b, 2.5f).future().get(60, TimeUnit.SECONDS);
                ByteBuffer back = s.download(b).future().get(60, TimeUnit.SECONDS).data().order(ByteOrder.LITTLE_ENDIAN);
                float[] values = new float[4];
                back.asFloatBuffer().get(values);
                assertArrayEquals(new float[] {2.5f, 2.5f, 2.5f, 2.5f}, values);
            }
            assertEquals(0, d.terminate(), d.output());
            assertTrue(d.output().contains("arrayd listening on unix://" + sock), d.output());
        }
        assertFalse(Files.exists(sock), "the socket file is removed when the daemon stops");
    }

    @Test
    @Timeout(120)
    void aStaleSocketIsReplacedALiveOneAndOtherFilesAreNot() throws Exception {
        Path stale = dir.resolve("stale.sock");
        try (ServerSocketChannel left = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            left.bind(UnixDomainSocketAddress.of(stale)); // a crashed daemon's: the file stays, nobody listens
        }
        assertTrue(Files.exists(stale));
        try (DaemonProcess d = new DaemonProcess("--uds", stale.toString(), "--metrics-port", "-1")) {
            assertEquals(0, DaemonProcessTest.cli("health", "--target", "unix://" + stale).exit());
        }

        Path live = dir.resolve("live.sock");
        try (ServerSocketChannel other = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            other.bind(UnixDomainSocketAddress.of(live));
            DaemonProcessTest.CliRun r = DaemonProcessTest.cli("serve", "--port", "0", "--metrics-port", "-1",
                    "--uds", live.toString());
            assertEquals(2, r.exit(), r.output());
            assertTrue(r.output().contains("--uds " + live + ": another process listens on it"), r.output());
        }

        // the regions' socket beside it follows the same rule
        Path beside = Files.writeString(dir.resolve("r.sock.regions"), "keep me too");
        DaemonProcessTest.CliRun regions = DaemonProcessTest.cli("serve", "--port", "0", "--metrics-port", "-1",
                "--uds", dir.resolve("r.sock").toString());
        assertEquals(2, regions.exit(), regions.output());
        assertTrue(regions.output().contains(beside + " exists and is not a socket"), regions.output());
        assertEquals("keep me too", Files.readString(beside));

        Path file = Files.writeString(dir.resolve("notes.txt"), "keep me");
        DaemonProcessTest.CliRun r = DaemonProcessTest.cli("serve", "--port", "0", "--metrics-port", "-1",
                "--uds", file.toString());
        assertEquals(2, r.exit(), r.output());
        assertTrue(r.output().contains("exists and is not a socket"), r.output());
        assertEquals("keep me", Files.readString(file));
    }

    @Test
    @Timeout(120)
    void tokensAreRequiredOnTheSocketAsOnTcp() throws Exception {
        Path tokens = Files.writeString(dir.resolve("tokens"), "uds-token-0123456789abcdef alice\n");
        Path sock = dir.resolve("auth.sock");
        try (DaemonProcess d = new DaemonProcess(Map.of(), "--uds", sock.toString(), "--auth-tokens",
                tokens.toString(), "--metrics-port", "-1")) {
            DaemonProcessTest.CliRun none = DaemonProcessTest.cli("devices", "--target", "unix://" + sock);
            assertNotEquals(0, none.exit(), none.output());
            assertTrue(none.output().contains("UNAUTHENTICATED"), none.output());
            DaemonProcessTest.CliRun ok = DaemonProcessTest.cli("devices", "--target", "unix://" + sock, "--token",
                    "uds-token-0123456789abcdef");
            assertEquals(0, ok.exit(), ok.output());
        }
    }
}
