package dev.arrayd.server;

import dev.arrayd.devices.api.testing.ResourcesPerClass;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.cli.Main;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every client subcommand of the CLI reaches a TLS daemon with {@code --tls-ca FILE} (and a bearer
 * token with {@code --token}); without it, or with a CA that did not sign the daemon's certificate,
 * it fails with one clear line. The daemon runs in-test with certificates keytool makes at test time.
 */
@ResourcesPerClass("one daemon with TLS serves every test; its compile threads start with the first compile")
class TlsCliTest {

    static final String TOKEN = "dave-token-0123456789abcdef";

    @TempDir
    static Path dir;
    static TestCertificates certs;
    static ArraydServer server;
    static String target;

    @BeforeAll
    static void start() throws Exception {
        certs = new TestCertificates(dir, "stranger");
        Path tokens = dir.resolve("tokens");
        Files.writeString(tokens, TOKEN + " dave\n");
        server = new ArraydServer(ServerOptions.defaults().withPort(0).withMetricsPort(-1).withCpuMemoryBytes(64L << 20),
                SecurityOptions.NONE.withTls(certs.pem("server"), certs.key("server"), null).withAuthTokens(tokens),
                Clock.SYSTEM, null);
        target = "127.0.0.1:" + server.port();
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    record Run(int exit, String out, String err) {}

    /** Runs the CLI in this JVM, capturing what it prints. */
    static synchronized Run cli(String... args) {
        PrintStream out = System.out;
        PrintStream err = System.err;
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ByteArrayOutputStream e = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(o, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(e, true, StandardCharsets.UTF_8));
            int exit = Main.run(args);
            return new Run(exit, o.toString(StandardCharsets.UTF_8), e.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(out);
            System.setErr(err);
        }
    }

    static Run withTls(String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--target", target, "--token", TOKEN, "--tls-ca", certs.pem("server").toString()));
        return cli(all.toArray(String[]::new));
    }

    @Test
    void everyClientSubcommandSpeaksTlsWithTheGivenCa() {
        Run devices = withTls("devices");
        assertEquals(0, devices.exit(), devices.toString());
        assertTrue(devices.out().contains("cpu:0"), devices.out());

        Run health = withTls("health");
        assertEquals(0, health.exit(), health.toString());
        assertTrue(health.out().matches("(?s).*arrayd\\.device\\.cpu:0\\s+SERVING.*"), health.out());

        Run stats = withTls("stats", "--once");
        assertEquals(0, stats.exit(), stats.toString());
        assertTrue(stats.out().contains("cpu:0"), stats.out());

        Run demo = withTls("demo", "--n", "4096");
        assertEquals(0, demo.exit(), demo.toString());
        assertTrue(demo.out().contains("OK: all 4096 elements"), demo.out());
    }

    @Test
    void withoutTheCaOrWithAnotherCaTheHandshakeFailsClearly() {
        Run plain = cli("devices", "--target", target, "--token", TOKEN);
        assertEquals(1, plain.exit(), plain.toString());
        assertTrue(plain.err().startsWith("arrayd devices: cannot reach a daemon at " + target), plain.err());

        Run wrong = cli("health", "--target", target, "--token", TOKEN, "--tls-ca", certs.pem("stranger").toString());
        assertEquals(1, wrong.exit(), wrong.toString());
        assertTrue(wrong.err().startsWith("arrayd health: cannot reach a daemon at " + target), wrong.err());
    }

    @Test
    void aTlsCaThatIsNotACertificateFileIsRefusedNamingIt() throws Exception {
        Path junk = dir.resolve("junk.pem");
        Files.writeString(junk, "not a certificate\n");
        for (String sub : new String[] {"devices", "demo", "health", "stats"}) {
            Run r = cli(sub, "--target", target, "--tls-ca", junk.toString());
            assertEquals(2, r.exit(), sub + ": " + r);
            assertTrue(r.err().contains("--tls-ca: " + junk + " (expected: a readable PEM file of CA certificates;"),
                    sub + ": " + r.err());
        }
        Run missing = cli("devices", "--target", target, "--tls-ca", dir.resolve("absent.pem").toString());
        assertEquals(2, missing.exit(), missing.toString());
        assertTrue(missing.err().contains("absent.pem (expected: a readable PEM file of CA certificates; cannot read it"),
                missing.err());
    }
}
