package dev.arrayd.deploy;

import java.nio.file.Files;
import java.nio.file.Path;

/** Where the deploy files are: the tests run with the module directory (deploy/) as working directory. */
final class DeployFiles {

    private DeployFiles() {}

    static Path module() {
        Path dir = Path.of("").toAbsolutePath();
        if (!Files.isDirectory(dir.resolve("k8s"))) {
            dir = dir.resolve("deploy");
        }
        return dir;
    }

    static Path k8s() {
        return module().resolve("k8s");
    }

    static Path chart() {
        return module().resolve("helm/arrayd");
    }

    static Path dashboard() {
        return module().resolve("grafana/arrayd-dashboard.json");
    }

    static Path alerts() {
        return module().resolve("prometheus/arrayd-alerts.yaml");
    }

    /** The project version (Maven passes it; the chart's appVersion and the image tag follow it). */
    static String version() {
        return System.getProperty("arrayd.version", "0.1.0-SNAPSHOT");
    }
}
