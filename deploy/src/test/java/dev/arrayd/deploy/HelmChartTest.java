package dev.arrayd.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.server.config.ArraydConfig;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.openshift.api.model.monitoring.v1.ServiceMonitor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * deploy/helm/arrayd rendered by {@link MiniHelm} (helm cannot be installed here) with its defaults and
 * with overrides: every result parses into typed objects and agrees with the server.
 */
class HelmChartTest {

    private static List<HasMetadata> render(Map<String, Object> overrides) {
        List<HasMetadata> out = new ArrayList<>();
        for (MiniHelm.Rendered r : MiniHelm.render(DeployFiles.chart(), "demo", "apps", overrides)) {
            out.addAll(Kube.parse("templates/" + r.template(), r.text()));
        }
        return out;
    }

    @Test
    void defaultsAgreeWithTheServer() throws Exception {
        List<HasMetadata> resources = render(Map.of());
        SidecarChecks.Result r = SidecarChecks.check("chart defaults", resources);
        ServerContract.assertHealthServicesServe(r.config().get(ArraydConfig.DEVICES), r.probeServices());
        // the config file carries the settings, and each one is what values.yaml says
        assertEquals("cpu", r.config().get(ArraydConfig.DEVICES));
        assertEquals(1L << 30, r.config().get(ArraydConfig.CPU_MEMORY));
        assertEquals(java.time.Duration.ofSeconds(25), r.config().get(ArraydConfig.SHUTDOWN_GRACE));
        assertEquals("json", r.config().get(ArraydConfig.LOG_FORMAT));
        assertEquals(false, r.config().get(ArraydConfig.ALLOW_NATIVE_SOURCE));
        assertEquals(1, Kube.ofKind(resources, ServiceMonitor.class).size());
        assertEquals(1, Kube.ofKind(resources, NetworkPolicy.class).size());
        ServiceMonitor sm = Kube.one(resources, ServiceMonitor.class);
        assertEquals("prometheus", sm.getMetadata().getLabels().get("release"));
        Deployment d = Kube.one(resources, Deployment.class);
        assertEquals("arrayd:" + DeployFiles.version(), d.getSpec().getTemplate().getSpec().getInitContainers()
                .getFirst().getImage(), "image tag defaults to the chart's appVersion, the project version");
    }

    @Test
    void overridesReachTheServerSettings() throws Exception {
        List<HasMetadata> resources = render(Map.of(
                "arrayd", Map.of("devices", "cpu:2", "cpuMemory", "512MiB", "shutdownGrace", "40s",
                        "terminationGracePeriodSeconds", 45, "grpcPort", 9700, "metricsPort", 9701),
                "resources", Map.of("requests", Map.of("cpu", "2", "memory", "2Gi"), "limits", Map.of("memory", "2Gi")),
                "probes", Map.of("service", "arrayd.device.cpu:1"),
                "metrics", Map.of("serviceMonitor", Map.of("enabled", false)),
                "networkPolicy", Map.of("enabled", false),
                "image", Map.of("tag", "1.2.3")));
        SidecarChecks.Result r = SidecarChecks.check("chart overrides", resources);
        assertEquals(9700, r.config().get(ArraydConfig.PORT));
        assertEquals(9701, r.config().get(ArraydConfig.METRICS_PORT));
        assertEquals("cpu:2", r.config().get(ArraydConfig.DEVICES));
        assertEquals(List.of("arrayd.device.cpu:1", "arrayd.device.cpu:1", "arrayd.device.cpu:1"), r.probeServices());
        // a per-device service name must be one the daemon really registers
        ServerContract.assertHealthServicesServe("cpu:2", r.probeServices());
        assertTrue(Kube.ofKind(resources, ServiceMonitor.class).isEmpty());
        assertTrue(Kube.ofKind(resources, NetworkPolicy.class).isEmpty());
        Deployment d = Kube.one(resources, Deployment.class);
        assertEquals("arrayd:1.2.3", d.getSpec().getTemplate().getSpec().getInitContainers().getFirst().getImage());
        assertEquals(new Quantity("2Gi"), d.getSpec().getTemplate().getSpec().getInitContainers().getFirst()
                .getResources().getLimits().get("memory"));
    }

    @Test
    void chartVersionsAndConfigMap() {
        Map<String, Object> chart = MiniHelm.readYaml(DeployFiles.chart().resolve("Chart.yaml"));
        assertEquals("v2", chart.get("apiVersion"));
        assertEquals(DeployFiles.version(), chart.get("appVersion"), "appVersion follows the project version");
        ConfigMap cm = Kube.one(render(Map.of()), ConfigMap.class);
        // every line is `key = value` with a real key (ConfigResolver refuses unknown keys, SidecarChecks ran it)
        for (String line : cm.getData().get("arrayd.conf").lines().toList()) {
            assertTrue(line.isBlank() || line.startsWith("#") || ServerContract.keysByName()
                    .containsKey(line.substring(0, line.indexOf('=')).strip()), line);
        }
    }
}
