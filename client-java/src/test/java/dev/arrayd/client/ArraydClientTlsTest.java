package dev.arrayd.client;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link ArraydClient.Builder#tls}: a CA file that cannot be read is refused at once, naming it. */
class ArraydClientTlsTest {

    @TempDir
    Path dir;

    @Test
    void anUnreadableCaFileIsRefusedNamingIt() {
        Path missing = dir.resolve("missing-ca.pem");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ArraydClient.builder().target("127.0.0.1:7700").tls(missing));
        assertTrue(e.getMessage().startsWith("tls: " + missing + " (expected: a readable PEM file of CA certificates;"),
                e.getMessage());
    }
}
