package dev.arrayd.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.arrayd.server.config.ArraydConfig;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import org.junit.jupiter.api.Test;

/**
 * The OCI tarball holds the application and a working entrypoint: its config runs
 * {@code dev.arrayd.cli.Main serve} as uid 65532 with native access, the java it names is in the
 * image and executable by that user, the classpath holds the server jar with the main class, and gcc
 * (which the CPU backend needs to open its devices) is there too.
 */
class ImageTarIT {

    private static final String MAIN = "dev.arrayd.cli.Main";

    @Test
    void indexNamesTheImage() {
        OciImage image = OciImage.load();
        assertEquals(System.getProperty("arrayd.image.name", "arrayd:" + DeployFiles.version()),
                image.index.path("manifests").get(0).path("annotations").path("org.opencontainers.image.ref.name").asText());
        assertEquals("application/vnd.oci.image.manifest.v1+json", image.manifest.path("mediaType").asText());
        assertEquals("linux", image.config.path("os").asText());
        assertEquals("amd64", image.config.path("architecture").asText());
    }

    @Test
    void entrypointRunsTheDaemonAsNonRoot() {
        JsonNode c = OciImage.load().config.path("config");
        List<String> entrypoint = strings(c.path("Entrypoint"));
        assertEquals(MAIN, entrypoint.getLast(), "the entrypoint ends with the main class: " + entrypoint);
        assertTrue(entrypoint.contains("--enable-native-access=ALL-UNNAMED"), "native access (FFM, Netty): " + entrypoint);
        assertTrue(entrypoint.contains("-Djava.io.tmpdir=/tmp"), "temp files under /tmp: " + entrypoint);
        assertEquals(List.of("serve"), strings(c.path("Cmd")));
        assertEquals(SidecarChecks.IMAGE_UID + ":" + SidecarChecks.IMAGE_UID, c.path("User").asText());
        Map<String, String> env = env(c);
        assertEquals("/tmp", env.get("TMPDIR"));
        assertTrue(env.get("XDG_CACHE_HOME").startsWith("/tmp/"), "the kernel cache under /tmp: " + env);
        // the ports arrayd listens on by default are the ones the image declares
        assertNotNull(c.path("ExposedPorts").get(ArraydConfig.PORT.defaultText() + "/tcp"));
        assertNotNull(c.path("ExposedPorts").get(ArraydConfig.METRICS_PORT.defaultText() + "/tcp"));
    }

    @Test
    void javaGccAndTheLoaderAreInTheImage() {
        OciImage image = OciImage.load();
        Map<String, String> env = env(image.config.path("config"));
        String javaCmd = strings(image.config.path("config").path("Entrypoint")).getFirst();
        OciImage.Entry java = onPath(image, env.get("PATH"), javaCmd);
        assertNotNull(java, javaCmd + " on PATH " + env.get("PATH"));
        assertTrue(java.executableByOthers(), java.path() + " executable by uid 65532: mode " + Integer.toOctalString(java.mode()));
        OciImage.Entry gcc = onPath(image, env.get("PATH"), "gcc");
        assertNotNull(gcc, "gcc on PATH: the CPU backend opens no device without it");
        assertTrue(gcc.executableByOthers(), "gcc executable");
        assertNotNull(image.resolve("/lib64/ld-linux-x86-64.so.2"), "the dynamic loader");
        assertNotNull(image.resolve("/usr/include/math.h"), "C headers for kernels");
        OciImage.Entry tmp = image.files.get("/tmp");
        assertNotNull(tmp, "/tmp");
        assertEquals(01777, tmp.mode() & 07777, "/tmp is world-writable and sticky");
    }

    @Test
    void classpathHoldsTheServerAndItsMainClass() throws Exception {
        OciImage image = OciImage.load();
        List<String> entrypoint = strings(image.config.path("config").path("Entrypoint"));
        String classpath = entrypoint.get(entrypoint.indexOf("-cp") + 1);
        List<OciImage.Entry> jars = new ArrayList<>();
        for (String element : classpath.split(":")) {
            if (element.endsWith("/*")) {
                String dir = element.substring(0, element.length() - 2);
                image.files.values().stream().filter(e -> e.path().startsWith(dir + "/") && e.path().endsWith(".jar")
                        && e.path().indexOf('/', dir.length() + 1) < 0).forEach(jars::add);
            } else {
                assertNotNull(image.resolve(element), "classpath element " + element);
            }
        }
        OciImage.Entry cli = jars.stream().filter(e -> e.path().endsWith("/arrayd-cli-" + DeployFiles.version() + ".jar"))
                .findFirst().orElseThrow(() -> new AssertionError("arrayd-cli jar in " + classpath));
        assertTrue(jars.stream().anyMatch(e -> e.path().endsWith("/arrayd-server-" + DeployFiles.version() + ".jar")),
                "arrayd-server jar in " + classpath);
        assertTrue(jars.size() > 20, "the daemon's runtime dependencies: " + jars.size());
        for (OciImage.Entry jar : jars) {
            assertTrue(jar.readableByOthers(), jar.path() + " readable by uid 65532");
        }
        boolean main = false;
        try (ZipInputStream zip = new ZipInputStream(new ByteArrayInputStream(image.read(cli)))) {
            for (ZipEntry e; (e = zip.getNextEntry()) != null; ) {
                main |= e.getName().equals(MAIN.replace('.', '/') + ".class");
            }
        }
        assertTrue(main, MAIN + " in " + cli.path());
        OciImage.Entry props = image.resolve("/app/resources/dev/arrayd/deploy/image.properties");
        assertNotNull(props, "image.properties");
        assertTrue(new String(image.read(props), StandardCharsets.UTF_8).contains("version=" + DeployFiles.version()));
    }

    static OciImage.Entry onPath(OciImage image, String path, String command) {
        if (command.startsWith("/")) {
            return image.resolve(command);
        }
        for (String dir : path.split(":")) {
            OciImage.Entry e = image.resolve(dir + "/" + command);
            if (e != null && !e.directory()) {
                return e;
            }
        }
        return null;
    }

    static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }

    static Map<String, String> env(JsonNode config) {
        Map<String, String> env = new HashMap<>();
        for (JsonNode n : config.path("Env")) {
            String s = n.asText();
            env.put(s.substring(0, s.indexOf('=')), s.substring(s.indexOf('=') + 1));
        }
        return env;
    }
}
