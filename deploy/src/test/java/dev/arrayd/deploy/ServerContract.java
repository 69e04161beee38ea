package dev.arrayd.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.arrayd.server.ArraydServer;
import dev.arrayd.server.ServerOptions;
import dev.arrayd.server.config.ArraydConfig;
import dev.arrayd.server.config.ConfigKey;
import dev.arrayd.server.config.ConfigResolver;
import dev.arrayd.server.config.ResolvedConfig;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The server's real settings and health services, as the deploy files must use them: keys, flags and
 * environment variables come from {@link ArraydConfig} (the server artifact on the test classpath), and
 * values are resolved by the server's own {@link ConfigResolver}, so a manifest with a misspelled
 * variable or an invalid value fails here exactly as {@code arrayd serve} would fail in the pod.
 */
final class ServerContract {

    /** Environment variables named ARRAYD_* that are not settings (docs/configuration.md). */
    static final List<String> NOT_SETTINGS = List.of(ArraydConfig.CONFIG_ENV, "ARRAYD_TOKEN", "ARRAYD_JAVA_OPTIONS",
            "ARRAYD_SKIP_BUILD");

    private ServerContract() {}

    static Map<String, ConfigKey<?>> keysByName() {
        Map<String, ConfigKey<?>> m = new LinkedHashMap<>();
        ArraydConfig.ALL.forEach(k -> m.put(k.name(), k));
        return m;
    }

    /**
     * Resolves what {@code arrayd serve} would run with: its arguments (starting with {@code serve}),
     * the container's environment and the text of the file {@code --config} names (null when none).
     */
    static ResolvedConfig resolve(List<String> args, Map<String, String> env, String configFileText) {
        assertTrue(!args.isEmpty() && args.getFirst().equals("serve"), "the container runs `serve`: " + args);
        Map<String, ConfigKey<?>> keys = keysByName();
        Map<String, String> flags = new HashMap<>();
        String configPath = null;
        for (int i = 1; i < args.size(); i++) {
            String a = args.get(i);
            if (!a.startsWith("--")) {
                fail("serve takes no positional argument: " + a + " in " + args);
            }
            String name = a.substring(2);
            String value = null;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            }
            if (("--" + name).equals(ArraydConfig.CONFIG_FLAG)) {
                configPath = value != null ? value : args.get(++i);
                continue;
            }
            ConfigKey<?> key = keys.get(name);
            if (key == null) {
                fail("--" + name + " is not a flag of arrayd serve (keys: " + keys.keySet() + ")");
            }
            if (value == null) {
                boolean next = i + 1 < args.size() && !args.get(i + 1).startsWith("--");
                value = key.isBoolean() && !next ? "true" : args.get(++i);
            }
            flags.put(name, value);
        }
        for (String var : env.keySet()) {
            if (var.startsWith("ARRAYD_") && !NOT_SETTINGS.contains(var)) {
                assertTrue(ArraydConfig.ALL.stream().anyMatch(k -> k.envVar().equals(var)),
                        var + " is not an environment variable of arrayd serve");
            }
        }
        Path file = null;
        if (configPath != null || env.containsKey(ArraydConfig.CONFIG_ENV)) {
            assertTrue(configFileText != null, "--config " + configPath + " names a file the manifests do not provide");
            try {
                file = Files.createTempFile("arrayd-deploy-", ".conf");
                Files.writeString(file, configFileText);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        try {
            return ConfigResolver.resolve(flags, env, file);
        } finally {
            if (file != null) {
                file.toFile().delete();
            }
        }
    }

    /**
     * Starts a real daemon with {@code devices} on loopback and any free ports, and asserts that each
     * health service name is answered SERVING (an unknown name would be NOT_FOUND).
     */
    static void assertHealthServicesServe(String devices, List<String> services) throws Exception {
        ServerOptions options = ServerOptions.defaults().withPort(0).withDevices(devices).withCpuMemoryBytes(64L << 20)
                .withShutdownGraceMillis(0);
        try (ArraydServer server = ArraydServer.start(options)) {
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext().build();
            try {
                HealthGrpc.HealthBlockingStub health = HealthGrpc.newBlockingStub(channel);
                for (String service : services) {
                    try {
                        ServingStatus status = health.withDeadlineAfter(10, TimeUnit.SECONDS)
                                .check(HealthCheckRequest.newBuilder().setService(service).build()).getStatus();
                        assertEquals(ServingStatus.SERVING, status, "health service \"" + service + "\"");
                    } catch (StatusRuntimeException e) {
                        fail("health service \"" + service + "\" with devices " + devices + ": " + e.getStatus());
                    }
                }
            } finally {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }
}
