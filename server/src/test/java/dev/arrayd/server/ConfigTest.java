package dev.arrayd.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.server.config.ArraydConfig;
import dev.arrayd.server.config.ConfigException;
import dev.arrayd.server.config.ConfigKey;
import dev.arrayd.server.config.ConfigResolver;
import dev.arrayd.server.config.ConfigSource;
import dev.arrayd.server.config.ResolvedConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Precedence flag > environment > file > default, validation messages, and docs/configuration.md. */
class ConfigTest {

    @TempDir
    Path dir;

    @Test
    void defaultsMatchTheServerOptionsDefaults() {
        ResolvedConfig c = ConfigResolver.resolve(Map.of(), Map.of(), null);
        for (ConfigKey<?> k : ArraydConfig.ALL) {
            assertEquals(ConfigSource.DEFAULT, c.value(k).source(), k.name());
        }
        ServerOptions d = ServerOptions.defaults();
        assertEquals(d.port(), c.get(ArraydConfig.PORT));
        assertEquals(d.bind(), c.get(ArraydConfig.BIND));
        assertEquals(d.devices(), c.get(ArraydConfig.DEVICES));
        assertEquals(d.metricsPort(), c.get(ArraydConfig.METRICS_PORT));
        assertEquals(d.shutdownGraceMillis(), c.get(ArraydConfig.SHUTDOWN_GRACE).toMillis());
        assertEquals(d.leaseMillis(), c.get(ArraydConfig.SESSION_LEASE).toMillis());
        assertEquals((long) d.maxMessageBytes(), c.get(ArraydConfig.MAX_MESSAGE_BYTES));
        assertEquals(d.fastPathNanos(), c.get(ArraydConfig.FAST_PATH_MICROS) * 1000);
        assertEquals(d.metricsClientLimit(), c.get(ArraydConfig.METRICS_CLIENT_LIMIT));
        assertEquals(d.cpuThreads(), c.get(ArraydConfig.CPU_THREADS));
        assertEquals(d.cpuNice(), c.get(ArraydConfig.CPU_NICE));
        assertEquals(d.jitNice(), c.get(ArraydConfig.JIT_NICE));
        assertEquals(d.cpuVectorBits(), c.get(ArraydConfig.CPU_VECTOR_BITS));
        assertEquals(d.cpuLanes(), c.get(ArraydConfig.CPU_LANES));
    }

    @Test
    void cpuVectorBitsIs256Or512() {
        assertEquals(512, ConfigResolver.resolve(Map.of(), Map.of(), null).get(ArraydConfig.CPU_VECTOR_BITS));
        assertEquals(256, ConfigResolver.resolve(Map.of(), Map.of("ARRAYD_CPU_VECTOR_BITS", "256"), null)
                .get(ArraydConfig.CPU_VECTOR_BITS));
        ConfigException e = assertThrows(ConfigException.class,
                () -> ConfigResolver.resolve(Map.of("cpu-vector-bits", "384"), Map.of(), null));
        assertTrue(e.getMessage().startsWith("cpu-vector-bits: \"384\" (from flag --cpu-vector-bits;"), e.getMessage());
        assertTrue(e.getMessage().contains("expected: 256 or 512"), e.getMessage());
    }

    @Test
    void flagBeatsEnvironmentBeatsFileBeatsDefault() throws Exception {
        Path file = Files.writeString(dir.resolve("arrayd.conf"), """
                # a comment
                metrics-port = 9001
                shutdown-grace = 10s
                devices = cpu:2

                log-format = json
                """);
        ResolvedConfig c = ConfigResolver.resolve(Map.of("metrics-port", "9003"),
                Map.of("ARRAYD_METRICS_PORT", "9002", "ARRAYD_SHUTDOWN_GRACE", "5s", "ARRAYD_TOKEN", "ignored"), file);
        assertEquals(9003, c.get(ArraydConfig.METRICS_PORT));
        assertEquals(ConfigSource.FLAG, c.value(ArraydConfig.METRICS_PORT).source());
        assertEquals(Duration.ofSeconds(5), c.get(ArraydConfig.SHUTDOWN_GRACE));
        assertEquals(ConfigSource.ENVIRONMENT, c.value(ArraydConfig.SHUTDOWN_GRACE).source());
        assertEquals("environment ARRAYD_SHUTDOWN_GRACE", c.value(ArraydConfig.SHUTDOWN_GRACE).origin());
        assertEquals("cpu:2", c.get(ArraydConfig.DEVICES));
        assertEquals(ConfigSource.FILE, c.value(ArraydConfig.DEVICES).source());
        assertEquals("json", c.get(ArraydConfig.LOG_FORMAT));
        assertEquals(7700, c.get(ArraydConfig.PORT));
        assertEquals(ConfigSource.DEFAULT, c.value(ArraydConfig.PORT).source());
    }

    @Test
    void portZeroMovesTheDefaultMetricsPortButNotAnExplicitOne() {
        assertEquals(0, ConfigResolver.resolve(Map.of("port", "0"), Map.of(), null).get(ArraydConfig.METRICS_PORT));
        assertEquals(7801, ConfigResolver.resolve(Map.of("port", "0", "metrics-port", "7801"), Map.of(), null)
                .get(ArraydConfig.METRICS_PORT));
    }

    @Test
    void invalidValuesNameTheKeyTheValueTheOriginAndTheExpectation() throws Exception {
        ConfigException e = assertThrows(ConfigException.class,
                () -> ConfigResolver.resolve(Map.of(), Map.of("ARRAYD_METRICS_PORT", "abc"), null));
        assertEquals("metrics-port: \"abc\" (from environment ARRAYD_METRICS_PORT; not an integer; expected: an integer "
                + "in -1..65535)", e.getMessage());
        e = assertThrows(ConfigException.class, () -> ConfigResolver.resolve(Map.of("shutdown-grace", "25"), Map.of(), null));
        assertTrue(e.getMessage().startsWith("shutdown-grace: \"25\" (from flag --shutdown-grace;"), e.getMessage());
        e = assertThrows(ConfigException.class, () -> ConfigResolver.resolve(Map.of("log-format", "xml"), Map.of(), null));
        assertTrue(e.getMessage().contains("expected: text or json"), e.getMessage());
        Path bad = Files.writeString(dir.resolve("bad.conf"), "metrics-prot = 1\n");
        e = assertThrows(ConfigException.class, () -> ConfigResolver.resolve(Map.of(), Map.of(), bad));
        assertTrue(e.getMessage().contains("bad.conf:1: unknown key \"metrics-prot\""), e.getMessage());
        assertEquals(256L << 20, ConfigResolver.resolve(Map.of("cpu-memory", "256MiB"), Map.of(), null)
                .get(ArraydConfig.CPU_MEMORY));
    }

    @Test
    void cpuNiceDefaultsToTenAndIsChecked() {
        assertEquals(10, ConfigResolver.resolve(Map.of(), Map.of(), null).get(ArraydConfig.CPU_NICE));
        assertEquals(0, ConfigResolver.resolve(Map.of("cpu-nice", "0"), Map.of(), null).get(ArraydConfig.CPU_NICE));
        ConfigException e = assertThrows(ConfigException.class,
                () -> ConfigResolver.resolve(Map.of("cpu-nice", "20"), Map.of(), null));
        assertTrue(e.getMessage().startsWith("cpu-nice: \"20\" (from flag --cpu-nice;"), e.getMessage());
        assertTrue(e.getMessage().contains("0..19"), e.getMessage());
    }

    @Test
    void cpuThreadsComesFromEverySourceAndIsChecked() {
        assertEquals(0, ConfigResolver.resolve(Map.of(), Map.of(), null).get(ArraydConfig.CPU_THREADS));
        ResolvedConfig env = ConfigResolver.resolve(Map.of(), Map.of("ARRAYD_CPU_THREADS", "1"), null);
        assertEquals(1, env.get(ArraydConfig.CPU_THREADS));
        assertEquals("environment ARRAYD_CPU_THREADS", env.value(ArraydConfig.CPU_THREADS).origin());
        assertEquals(3, ConfigResolver.resolve(Map.of("cpu-threads", "3"), Map.of("ARRAYD_CPU_THREADS", "1"), null)
                .get(ArraydConfig.CPU_THREADS));
        ConfigException e = assertThrows(ConfigException.class,
                () -> ConfigResolver.resolve(Map.of("cpu-threads", "-1"), Map.of(), null));
        assertTrue(e.getMessage().startsWith("cpu-threads: \"-1\" (from flag --cpu-threads;"), e.getMessage());
        assertTrue(e.getMessage().contains("0..1024"), e.getMessage());
    }

    @Test
    void cpuLanesReachesTheCpuBackend() throws Exception {
        assertTrue(ConfigResolver.resolve(Map.of(), Map.of(), null).get(ArraydConfig.CPU_LANES));
        assertEquals(false, ConfigResolver.resolve(Map.of("cpu-lanes", "false"), Map.of(), null).get(ArraydConfig.CPU_LANES));
        for (boolean on : new boolean[] {true, false}) {
            try (dev.arrayd.devices.api.Backend b = Backends.create("cpu", ServerOptions.defaults().withCpuLanes(on))) {
                assertEquals(on ? dev.arrayd.devices.api.ir.LaneBlocks.Rule.AUTO : dev.arrayd.devices.api.ir.LaneBlocks.Rule.OFF,
                        ((dev.arrayd.devices.cpu.CpuBackend) b).options().lanes());
            }
        }
    }

    @Test
    void cpuThreadsGivesEachCpuDeviceThatManyThreads() {
        ServerOptions options = ServerOptions.defaults().withCpuThreads(1);
        try (Backends backends = new Backends(DeviceRequest.parseList("cpu:2"), options)) {
            assertEquals(2, backends.devices().size());
            for (dev.arrayd.devices.api.Device d : backends.devices()) {
                assertEquals(1, d.info().computeUnits(), d.id().toString());
            }
        }
        try (Backends backends = new Backends(DeviceRequest.parseList("cpu"), ServerOptions.defaults())) {
            dev.arrayd.devices.api.Device d = backends.devices().getFirst();
            assertEquals(Runtime.getRuntime().availableProcessors(), d.info().computeUnits(), "0 = every core");
        }
    }

    @Test
    void everyKeyIsDocumented() throws Exception {
        Path doc = Path.of("..", "docs", "configuration.md");
        assertTrue(Files.exists(doc), "docs/configuration.md exists");
        String text = Files.readString(doc);
        for (ConfigKey<?> k : ArraydConfig.ALL) {
            assertTrue(text.contains("| `" + k.name() + "` |"), "docs/configuration.md has no row for key " + k.name());
            assertTrue(text.contains("`" + k.envVar() + "`"), "docs/configuration.md does not name " + k.envVar());
            String dflt = k.defaultText().isEmpty() ? "(none)" : "`" + k.defaultText() + "`";
            assertTrue(text.contains(dflt), "docs/configuration.md does not give the default of " + k.name());
        }
        // and no row for a key that does not exist
        java.util.Set<String> keys = new java.util.TreeSet<>();
        ArraydConfig.ALL.forEach(k -> keys.add(k.name()));
        var row = java.util.regex.Pattern.compile("(?m)^\\| `([a-z0-9-]+)` \\| `ARRAYD_").matcher(text);
        int rows = 0;
        while (row.find()) {
            rows++;
            assertTrue(keys.contains(row.group(1)), "docs/configuration.md documents a key that does not exist: "
                    + row.group(1));
        }
        assertEquals(keys.size(), rows, "rows of the keys table");
    }
}
