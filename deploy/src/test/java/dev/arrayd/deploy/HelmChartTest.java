package dev.arrayd.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.server.config.ArraydConfig;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.openshift.api.model.monitoring.v1.PodMonitor;
import io.fabric8.openshift.api.model.monitoring.v1.ServiceMonitor;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * deploy/helm rendered by Helm itself ({@link Charts}): the arrayd chart standalone and with its options,
 * the example application with arrayd as a sidecar through the chart's named templates. Every object
 * parses into Kubernetes' typed model (unknown fields fail) and agrees with the server's real settings.
 */
class HelmChartTest {

    static List<HasMetadata> standalone(Map<String, ?> sets) {
        return Charts.render("arrayd", sets);
    }

    static Deployment deployment(List<HasMetadata> resources) {
        return Kube.one(resources, Deployment.class);
    }

    static Container arrayd(Deployment d) {
        return d.getSpec().getTemplate().getSpec().getContainers().stream().filter(c -> c.getName().equals("arrayd"))
                .findFirst().orElseThrow();
    }

    @Test
    void bothChartsLintCleanUnderStrictRules() {
        for (String chart : List.of("arrayd", "example-app")) {
            var lint = Charts.lint(chart);
            assertFalse(lint.isFailed(), chart + ": " + lint.getMessages());
            assertTrue(lint.getMessages().stream().noneMatch(m -> m.contains("[WARNING]") || m.contains("[ERROR]")),
                    chart + ": " + lint.getMessages());
        }
    }

    /** A pool of three members with the members' tokens and the token they present to each other. */
    private static Map<String, Object> poolValues() {
        Map<String, Object> sets = new LinkedHashMap<>();
        sets.put("mode", "pool");
        sets.put("pool.replicas", 3);
        sets.put("auth.existingSecret", "pool-tokens");
        sets.put("peerToken.existingSecret", "pool-peer-token");
        return sets;
    }

    /**
     * mode pool: a StatefulSet of GPU daemons behind a headless Service, each listing every member as a peer
     * (the server drops its own entry by its host name, the pod's), asking for the GPU resource on the nodes the
     * values select; its peer token mounted from the Secret; the members may reach each other.
     */
    @Test
    void aPoolIsAStatefulSetOfGpuDaemonsThatArePeersOfEachOther() throws Exception {
        Map<String, Object> sets = poolValues();
        sets.put("pool.runtimeClassName", "nvidia");
        sets.put("arrayd.devices", "cuda");
        sets.put("nodeSelector.nvidia\\.com/gpu\\.product", "NVIDIA-H100-80GB-HBM3");
        sets.put("tolerations[0].key", "nvidia.com/gpu");
        sets.put("tolerations[0].operator", "Exists");
        sets.put("tolerations[0].effect", "NoSchedule");
        sets.put("tls.secretName", "pool-tls");
        sets.put("tls.clientCaKey", "ca.crt");
        sets.put("peerTls.caSecret", "pool-ca");
        List<HasMetadata> resources = standalone(sets);
        SidecarChecks.Result r = SidecarChecks.check("chart pool", resources, SidecarChecks.Role.POOL);
        assertEquals("cuda", r.config().get(ArraydConfig.DEVICES));
        String ns = "apps"; // the namespace Charts renders into
        assertEquals("demo-arrayd-0=demo-arrayd-0.demo-arrayd-pool." + ns + ".svc:7700,"
                + "demo-arrayd-1=demo-arrayd-1.demo-arrayd-pool." + ns + ".svc:7700,"
                + "demo-arrayd-2=demo-arrayd-2.demo-arrayd-pool." + ns + ".svc:7700", r.config().get(ArraydConfig.PEERS));
        // what the server makes of it on member 1: the other two
        var peers = dev.arrayd.devices.remote.RemoteOptions.parse(r.config().get(ArraydConfig.PEERS), "", "x")
                .without("demo-arrayd-1").peers().stream().map(dev.arrayd.devices.remote.PeerAddress::name).toList();
        assertEquals(List.of("demo-arrayd-0", "demo-arrayd-2"), peers);
        assertEquals(java.nio.file.Path.of("/etc/arrayd/peer/token"), r.config().get(ArraydConfig.PEER_TOKEN_FILE));
        // mutual TLS among the members: each trusts the pool's CA and presents its own certificate
        assertEquals(java.nio.file.Path.of("/etc/arrayd/peer-tls/ca.crt"), r.config().get(ArraydConfig.PEER_TLS_CA));
        assertEquals(java.nio.file.Path.of("/etc/arrayd/tls/tls.crt"), r.config().get(ArraydConfig.TLS_CERT));

        var set = Kube.one(resources, io.fabric8.kubernetes.api.model.apps.StatefulSet.class);
        assertEquals(3, set.getSpec().getReplicas());
        assertEquals("demo-arrayd-pool", set.getSpec().getServiceName());
        assertEquals("Parallel", set.getSpec().getPodManagementPolicy());
        var pod = set.getSpec().getTemplate().getSpec();
        assertEquals("nvidia", pod.getRuntimeClassName());
        assertEquals("NVIDIA-H100-80GB-HBM3", pod.getNodeSelector().get("nvidia.com/gpu.product"));
        assertEquals("nvidia.com/gpu", pod.getTolerations().getFirst().getKey());
        Container c = pod.getContainers().getFirst();
        assertEquals(new Quantity("1"), c.getResources().getLimits().get("nvidia.com/gpu"));
        assertEquals(new Quantity("1"), c.getResources().getRequests().get("nvidia.com/gpu"));

        Service headless = Kube.ofKind(resources, Service.class).stream()
                .filter(x -> x.getMetadata().getName().equals("demo-arrayd-pool")).findFirst().orElseThrow();
        assertEquals("None", headless.getSpec().getClusterIP());
        assertEquals(true, headless.getSpec().getPublishNotReadyAddresses());
        assertEquals(set.getSpec().getSelector().getMatchLabels(), headless.getSpec().getSelector());
        assertTrue(Kube.ofKind(resources, Deployment.class).isEmpty(), "no Deployment in mode pool");
        NetworkPolicy np = Kube.one(resources, NetworkPolicy.class);
        assertTrue(np.getSpec().getIngress().stream().flatMap(i -> i.getFrom().stream())
                .anyMatch(f -> f.getPodSelector() != null && set.getSpec().getSelector().getMatchLabels()
                        .equals(f.getPodSelector().getMatchLabels())), "members reach each other: " + np.getSpec());
        // with TLS there is no bulk port to reach
        assertTrue(c.getPorts().stream().noneMatch(p -> "bulk".equals(p.getName())), c.getPorts()::toString);
        assertTrue(np.getSpec().getIngress().stream().flatMap(i -> i.getPorts().stream())
                .noneMatch(p -> p.getPort().getIntVal() != null && p.getPort().getIntVal() == 7702), np.getSpec()::toString);
        Kube.one(resources, PodDisruptionBudget.class);
    }

    /** pool.discovery dns: the members and sidecars name the headless Service, which the server takes as a set. */
    @Test
    void aPoolFoundByItsHeadlessServiceIsAPeerSet() throws Exception {
        Map<String, Object> sets = poolValues();
        sets.put("pool.discovery", "dns");
        List<HasMetadata> resources = standalone(sets);
        SidecarChecks.Result r = SidecarChecks.check("chart pool dns", resources, SidecarChecks.Role.POOL);
        assertEquals("dns:///demo-arrayd-pool.apps.svc:7700", r.config().get(ArraydConfig.PEERS));
        var remote = dev.arrayd.devices.remote.RemoteOptions.parse(r.config().get(ArraydConfig.PEERS), "", "x")
                .without("demo-arrayd-1");
        assertEquals(List.of(new dev.arrayd.devices.remote.PeerSet("demo-arrayd-pool.apps.svc", 7700)), remote.sets());
        assertTrue(remote.peers().isEmpty());
        var set = Kube.one(resources, io.fabric8.kubernetes.api.model.apps.StatefulSet.class);
        assertEquals("demo-arrayd-pool", set.getSpec().getServiceName(), "the Service the name resolves through");
        // without TLS the members read each other's buffers through the bulk port, which only they may reach
        assertEquals(7702, r.config().get(ArraydConfig.PEER_BULK_PORT));
        Container c = set.getSpec().getTemplate().getSpec().getContainers().getFirst();
        assertTrue(c.getPorts().stream().anyMatch(p -> "bulk".equals(p.getName()) && p.getContainerPort() == 7702),
                c.getPorts()::toString);
        NetworkPolicy np = Kube.one(resources, NetworkPolicy.class);
        var bulk = np.getSpec().getIngress().stream().filter(i -> i.getPorts().stream()
                .anyMatch(p -> p.getPort().getIntVal() != null && p.getPort().getIntVal() == 7702)).toList();
        assertEquals(1, bulk.size(), np.getSpec()::toString);
        assertEquals(List.of(set.getSpec().getSelector().getMatchLabels()), bulk.getFirst().getFrom().stream()
                .map(f -> f.getPodSelector().getMatchLabels()).toList(), "the members alone");
    }

    @Test
    void standaloneDefaultsAgreeWithTheServer() throws Exception {
        List<HasMetadata> resources = standalone(Map.of());
        SidecarChecks.Result r = SidecarChecks.check("chart standalone", resources, SidecarChecks.Role.STANDALONE);
        ServerContract.assertHealthServicesServe(r.config().get(ArraydConfig.DEVICES), r.probeServices());
        assertEquals("cpu", r.config().get(ArraydConfig.DEVICES));
        assertEquals(1L << 30, r.config().get(ArraydConfig.CPU_MEMORY));
        assertEquals(java.time.Duration.ofSeconds(25), r.config().get(ArraydConfig.SHUTDOWN_GRACE));
        assertEquals("json", r.config().get(ArraydConfig.LOG_FORMAT));
        assertEquals(false, r.config().get(ArraydConfig.ALLOW_NATIVE_SOURCE));
        assertEquals(true, r.config().get(ArraydConfig.INSECURE), "no authentication configured");
        assertEquals(null, r.config().get(ArraydConfig.UDS), "standalone: no other container to share a socket with");
        Deployment d = deployment(resources);
        assertEquals("arrayd:" + DeployFiles.version(), arrayd(d).getImage(),
                "image tag defaults to the chart's appVersion, the project version");
        assertEquals("demo-arrayd", d.getMetadata().getName());
        // no ServiceMonitor: `helm template` knows no Prometheus Operator CRD
        assertTrue(Kube.ofKind(resources, ServiceMonitor.class).isEmpty());
        assertTrue(Kube.ofKind(resources, PodMonitor.class).isEmpty());
        PodDisruptionBudget pdb = Kube.one(resources, PodDisruptionBudget.class);
        assertEquals(d.getSpec().getSelector().getMatchLabels(), pdb.getSpec().getSelector().getMatchLabels());
        assertEquals(1, pdb.getSpec().getMaxUnavailable().getIntVal());
        assertEquals(1, Kube.ofKind(resources, NetworkPolicy.class).size());
        // helm test: `arrayd health` against the Service's gRPC port (a hook: rendered from the copy that shows hooks)
        assertTrue(Kube.ofKind(resources, Pod.class).isEmpty(), "the test pod is a hook, not a release object");
        Pod test = Kube.one(Charts.render(Charts.WITH_HOOKS, Map.of()), Pod.class);
        assertEquals("test", test.getMetadata().getAnnotations().get(Charts.HOOK_ANNOTATION_RENAMED));
        Service svc = Kube.one(resources, Service.class);
        assertEquals(List.of("health", "--target", svc.getMetadata().getName() + ":7700"),
                test.getSpec().getContainers().getFirst().getArgs());
        assertTrue(d.getSpec().getTemplate().getMetadata().getAnnotations().containsKey("checksum/arrayd-config"));
    }

    @Test
    void theConfigChecksumChangesWithTheConfig() {
        String before = deployment(standalone(Map.of())).getSpec().getTemplate().getMetadata().getAnnotations()
                .get("checksum/arrayd-config");
        String after = deployment(standalone(Map.of("arrayd.devices", "cpu:2"))).getSpec().getTemplate().getMetadata()
                .getAnnotations().get("checksum/arrayd-config");
        assertNotEquals(before, after, "a config change restarts the pods");
    }

    @Test
    void overridesReachTheServerSettingsAndThePod() throws Exception {
        Map<String, Object> sets = new LinkedHashMap<>();
        sets.put("arrayd.devices", "cpu:2");
        sets.put("arrayd.cpuMemory", "512MiB");
        sets.put("arrayd.shutdownGrace", "40s");
        sets.put("arrayd.terminationGracePeriodSeconds", "45");
        sets.put("arrayd.grpcPort", "9700");
        sets.put("arrayd.metricsPort", "9701");
        sets.put("arrayd.metricsBind", "0.0.0.0");
        sets.put("arrayd.metricsKernelLimit", "8");
        sets.put("arrayd.extraConfig.tenant-quotas", "memory=1GiB streams=8");
        sets.put("probes.service", "arrayd.device.cpu:1");
        sets.put("image.tag", "1.2.3");
        sets.put("imagePullSecrets[0].name", "registry");
        sets.put("nodeSelector.gpu", "none");
        sets.put("tolerations[0].key", "dedicated");
        sets.put("tolerations[0].operator", "Exists");
        sets.put("replicas", "3");
        List<HasMetadata> resources = standalone(sets);
        SidecarChecks.Result r = SidecarChecks.check("chart overrides", resources, SidecarChecks.Role.STANDALONE);
        assertEquals(9700, r.config().get(ArraydConfig.PORT));
        assertEquals(9701, r.config().get(ArraydConfig.METRICS_PORT));
        assertEquals("0.0.0.0", r.config().get(ArraydConfig.METRICS_BIND));
        assertEquals(8, r.config().get(ArraydConfig.METRICS_KERNEL_LIMIT));
        assertEquals("cpu:2", r.config().get(ArraydConfig.DEVICES));
        assertEquals(List.of("arrayd.device.cpu:1", "arrayd.device.cpu:1", "arrayd.device.cpu:1"), r.probeServices());
        ServerContract.assertHealthServicesServe("cpu:2", r.probeServices());
        Deployment d = deployment(resources);
        var pod = d.getSpec().getTemplate().getSpec();
        assertEquals("arrayd:1.2.3", arrayd(d).getImage());
        assertEquals(3, d.getSpec().getReplicas());
        assertEquals("registry", pod.getImagePullSecrets().getFirst().getName());
        assertEquals(Map.of("gpu", "none"), pod.getNodeSelector());
        assertEquals("dedicated", pod.getTolerations().getFirst().getKey());
        assertEquals(new Quantity("2Gi"), arrayd(d).getResources().getLimits().get("memory"));
    }

    @Test
    void tokensAndCertificatesComeFromSecretsAndTurnInsecureOff() throws Exception {
        List<HasMetadata> resources = standalone(Map.of("auth.existingSecret", "arrayd-tokens",
                "tls.secretName", "arrayd-tls", "tls.clientCaKey", "ca.crt"));
        SidecarChecks.Result r = SidecarChecks.check("chart auth+tls", resources, SidecarChecks.Role.STANDALONE);
        assertEquals(Path.of("/etc/arrayd/auth/tokens"), r.config().get(ArraydConfig.AUTH_TOKENS));
        assertEquals(Path.of("/etc/arrayd/tls/tls.crt"), r.config().get(ArraydConfig.TLS_CERT));
        assertEquals(Path.of("/etc/arrayd/tls/tls.key"), r.config().get(ArraydConfig.TLS_KEY));
        assertEquals(Path.of("/etc/arrayd/tls/ca.crt"), r.config().get(ArraydConfig.TLS_CLIENT_CA));
        assertEquals(false, r.config().get(ArraydConfig.INSECURE));
        var volumes = deployment(resources).getSpec().getTemplate().getSpec().getVolumes();
        assertTrue(volumes.stream().anyMatch(v -> v.getSecret() != null
                && v.getSecret().getSecretName().equals("arrayd-tokens")));
        assertTrue(volumes.stream().anyMatch(v -> v.getSecret() != null
                && v.getSecret().getSecretName().equals("arrayd-tls")));
        Pod test = Kube.one(Charts.render(Charts.WITH_HOOKS, Map.of("tls.secretName", "arrayd-tls")), Pod.class);
        assertTrue(test.getSpec().getContainers().getFirst().getArgs().containsAll(List.of("--tls-ca",
                "/etc/arrayd/tls/ca.crt")), "helm test trusts the CA");
    }

    @Test
    void monitorsOnlyWithTheirCrdOrWhenAskedToSkipTheCheck() {
        List<HasMetadata> resources = standalone(Map.of("metrics.serviceMonitor.skipCapabilityCheck", "true",
                "metrics.serviceMonitor.labels.release", "prometheus", "metrics.podMonitor.enabled", "true",
                "metrics.podMonitor.skipCapabilityCheck", "true"));
        SidecarChecks.check("chart monitors", resources, SidecarChecks.Role.STANDALONE);
        ServiceMonitor sm = Kube.one(resources, ServiceMonitor.class);
        assertEquals("prometheus", sm.getMetadata().getLabels().get("release"));
        PodMonitor pm = Kube.one(resources, PodMonitor.class);
        assertEquals(deployment(resources).getSpec().getSelector().getMatchLabels(), pm.getSpec().getSelector()
                .getMatchLabels());
        assertEquals("metrics", pm.getSpec().getPodMetricsEndpoints().getFirst().getPort());
        // and the notes say why there is none where the CRD is missing
        String out = Charts.template("arrayd", Map.of());
        assertFalse(out.contains("kind: ServiceMonitor"));
    }

    @Test
    void theValuesSchemaRefusesBadValues() {
        for (Map<String, String> bad : List.of(Map.of("mode", "daemonset"), Map.of("arrayd.logFormat", "xml"),
                Map.of("arrayd.grpcPort", "70000"), Map.of("arrayd.devicez", "cpu"))) {
            var e = assertThrows(RuntimeException.class, () -> Charts.template("arrayd", bad));
            assertTrue(e.getMessage().contains("schema"), bad + ": " + e.getMessage());
        }
    }

    @Test
    void theExampleApplicationRunsArraydAsASidecarThroughTheNamedTemplates() throws Exception {
        List<HasMetadata> resources = Charts.render("example-app", Map.of());
        SidecarChecks.Result r = SidecarChecks.check("example-app chart", resources, SidecarChecks.Role.SIDECAR);
        ServerContract.assertHealthServicesServe(r.config().get(ArraydConfig.DEVICES), r.probeServices());
        Deployment d = deployment(resources);
        assertEquals("demo-example-app", d.getMetadata().getName());
        assertEquals("arrayd:" + DeployFiles.version(), d.getSpec().getTemplate().getSpec().getInitContainers()
                .getFirst().getImage());
        assertTrue(d.getSpec().getTemplate().getMetadata().getAnnotations().containsKey("checksum/arrayd-config"));
        // the application talks to its sidecar over the Unix socket in the directory they share (SidecarChecks
        // checked the tmpfs emptyDir and both mounts), with shared-memory regions within region-memory
        assertEquals(java.nio.file.Path.of("/run/arrayd/arrayd.sock"), r.config().get(ArraydConfig.UDS));
        assertEquals(256L << 20, r.config().get(ArraydConfig.REGION_MEMORY));
        Container app = d.getSpec().getTemplate().getSpec().getContainers().getFirst();
        assertEquals("unix:///run/arrayd/arrayd.sock", app.getEnv().stream().filter(e -> e.getName().equals("ARRAYD_ADDRESS"))
                .findFirst().orElseThrow().getValue());
        // and without it, loopback TCP
        Deployment tcp = deployment(Charts.render("example-app", Map.of("arrayd.arrayd.unixSocket.enabled", "false")));
        assertEquals("127.0.0.1:7700", tcp.getSpec().getTemplate().getSpec().getContainers().getFirst().getEnv().stream()
                .filter(e -> e.getName().equals("ARRAYD_ADDRESS")).findFirst().orElseThrow().getValue());
        // sidecar mode: no Deployment, PDB or test of the daemon's own
        assertEquals(1, Kube.ofKind(resources, Deployment.class).size());
        assertTrue(Kube.ofKind(resources, PodDisruptionBudget.class).isEmpty());
        assertTrue(Kube.ofKind(resources, Pod.class).isEmpty());
        assertEquals(1, Kube.ofKind(resources, ConfigMap.class).size());
    }

    @Test
    void chartVersionsAndConfigKeys() {
        Map<String, Object> chart = new com.fasterxml.jackson.databind.ObjectMapper(
                new com.fasterxml.jackson.dataformat.yaml.YAMLFactory()).convertValue(readYaml("arrayd/Chart.yaml"),
                Map.class);
        assertEquals("v2", chart.get("apiVersion"));
        assertEquals(DeployFiles.version(), chart.get("appVersion"), "appVersion follows the project version");
        ConfigMap cm = Kube.one(standalone(Map.of("arrayd.metricsBind", "127.0.0.2")), ConfigMap.class);
        // every line is `key = value` with a real key (ConfigResolver refuses unknown keys; SidecarChecks ran it)
        for (String line : cm.getData().get("arrayd.conf").lines().toList()) {
            assertTrue(line.isBlank() || line.startsWith("#") || ServerContract.keysByName()
                    .containsKey(line.substring(0, line.indexOf('=')).strip()), line);
        }
    }

    private static Object readYaml(String file) {
        try {
            return new com.fasterxml.jackson.databind.ObjectMapper(new com.fasterxml.jackson.dataformat.yaml.YAMLFactory())
                    .readValue(DeployFiles.chart().resolve("..").resolve(file).toFile(), Object.class);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
