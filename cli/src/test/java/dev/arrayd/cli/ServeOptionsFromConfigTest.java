package dev.arrayd.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.arrayd.server.ServerOptions;
import dev.arrayd.server.config.ConfigResolver;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The keys of a resolved configuration reach the {@link ServerOptions} that {@code serve} runs with. */
class ServeOptionsFromConfigTest {

    @Test
    void cpuThreadsReachesTheServerOptions() {
        assertEquals(0, ServeCommand.options(ConfigResolver.resolve(Map.of(), Map.of(), null)).cpuThreads());
        ServerOptions options = ServeCommand.options(
                ConfigResolver.resolve(Map.of("devices", "cpu:2"), Map.of("ARRAYD_CPU_THREADS", "1"), null));
        assertEquals(1, options.cpuThreads());
        assertEquals("cpu:2", options.devices());
    }
}
