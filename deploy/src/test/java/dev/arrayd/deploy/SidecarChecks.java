package dev.arrayd.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.server.config.ArraydConfig;
import dev.arrayd.server.config.ResolvedConfig;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPort;
import io.fabric8.openshift.api.model.monitoring.v1.Endpoint;
import io.fabric8.openshift.api.model.monitoring.v1.ServiceMonitor;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What every deployment of arrayd must get right, as a sidecar of an application's pods or in pods of its
 * own, checked on parsed model objects (the plain manifests and the rendered charts alike) against the
 * server's real settings.
 */
final class SidecarChecks {

    /** The uid the image runs as (Jib's {@code <user>}; ImageTarIT checks the image). */
    static final long IMAGE_UID = 65532;
    /** JVM memory beside the heap and the slab pools: metaspace, code cache, threads, gRPC's direct buffers. */
    static final long JVM_OVERHEAD_BYTES = 256L << 20;
    /** After the drain: the gRPC server's 2 s stop, device release, JVM exit. */
    static final int EXIT_MARGIN_SECONDS = 3;

    /** What the checks found, for the live health check. */
    record Result(ResolvedConfig config, List<String> probeServices) {}

    /** How the daemon runs: beside an application (a native sidecar) or in pods of its own behind a Service. */
    enum Role { SIDECAR, STANDALONE, POOL }

    private SidecarChecks() {}

    static Result check(String where, List<HasMetadata> resources) {
        return check(where, resources, Role.SIDECAR);
    }

    static Result check(String where, List<HasMetadata> resources, Role role) {
        io.fabric8.kubernetes.api.model.PodTemplateSpec template;
        Map<String, String> selector;
        if (role == Role.POOL) {
            var set = Kube.one(resources, io.fabric8.kubernetes.api.model.apps.StatefulSet.class);
            template = set.getSpec().getTemplate();
            selector = set.getSpec().getSelector().getMatchLabels();
        } else {
            Deployment deployment = Kube.one(resources, Deployment.class);
            template = deployment.getSpec().getTemplate();
            selector = deployment.getSpec().getSelector().getMatchLabels();
        }
        PodSpec pod = template.getSpec();
        Map<String, String> podLabels = template.getMetadata().getLabels();
        assertSubset(selector, podLabels, where + ": workload selector");

        Container arrayd;
        if (role == Role.SIDECAR) {
            // a native sidecar: an init container that keeps running
            List<Container> sidecars = pod.getInitContainers().stream().filter(c -> c.getName().equals("arrayd")).toList();
            assertEquals(1, sidecars.size(), where + ": one init container named arrayd");
            arrayd = sidecars.getFirst();
            assertEquals("Always", arrayd.getRestartPolicy(), where + ": arrayd is a native sidecar (restartPolicy: Always)");
            assertFalse(pod.getContainers().isEmpty(), where + ": the application container");
        } else {
            List<Container> mains = pod.getContainers().stream().filter(c -> c.getName().equals("arrayd")).toList();
            assertEquals(1, mains.size(), where + ": one container named arrayd");
            arrayd = mains.getFirst();
        }

        // the settings, resolved by the server's own resolver
        Map<String, String> env = new LinkedHashMap<>();
        for (EnvVar e : arrayd.getEnv()) {
            if (e.getName().startsWith("ARRAYD_")) {
                assertNotNull(e.getValue(), where + ": " + e.getName() + " has a literal value");
            }
            env.put(e.getName(), e.getValue());
        }
        List<String> args = new ArrayList<>(arrayd.getCommand() == null ? List.of() : arrayd.getCommand());
        assertTrue(args.isEmpty(), where + ": the image's entrypoint runs java; set args, not command");
        args.addAll(arrayd.getArgs());
        ResolvedConfig cfg = ServerContract.resolve(args, env, configFile(where, args, arrayd, pod, resources));

        String bind = cfg.get(ArraydConfig.BIND);
        boolean loopback;
        try {
            loopback = InetAddress.getByName(bind).isLoopbackAddress();
        } catch (Exception e) {
            throw new AssertionError(where + ": bind " + bind, e);
        }
        // the kubelet's gRPC probes and Prometheus connect to the pod IP, not to loopback
        assertFalse(loopback, where + ": bind " + bind + " is loopback: probes and scrapes come to the pod IP");
        boolean authenticated = cfg.get(ArraydConfig.AUTH_TOKENS) != null || cfg.get(ArraydConfig.TLS_CLIENT_CA) != null;
        assertTrue(authenticated || cfg.get(ArraydConfig.INSECURE), where + ": a non-loopback bind without "
                + "authentication needs insecure=true (arrayd serve exits 2 otherwise)");
        assertFalse(authenticated && cfg.get(ArraydConfig.INSECURE), where + ": insecure=true although calls are "
                + "authenticated");
        for (var key : List.of(ArraydConfig.AUTH_TOKENS, ArraydConfig.TLS_CERT, ArraydConfig.TLS_KEY,
                ArraydConfig.TLS_CLIENT_CA, ArraydConfig.PEER_TOKEN_FILE, ArraydConfig.PEER_TLS_CA)) {
            java.nio.file.Path file = cfg.get(key);
            if (file != null) {
                mountedFromSecret(where, key.name(), file.toString(), arrayd, pod);
            }
        }
        assertTrue(cfg.get(ArraydConfig.TARGET).isEmpty(), where + ": target would override bind and port");

        int grpcPort = cfg.get(ArraydConfig.PORT);
        int metricsPort = cfg.get(ArraydConfig.METRICS_PORT);
        assertTrue(grpcPort > 0 && metricsPort > 0, where + ": fixed ports (" + grpcPort + ", " + metricsPort + ")");
        Map<String, Integer> ports = new LinkedHashMap<>();
        for (ContainerPort p : arrayd.getPorts()) {
            ports.put(p.getName(), p.getContainerPort());
        }
        assertEquals(grpcPort, ports.get("grpc"), where + ": containerPort grpc is arrayd's port");
        assertEquals(metricsPort, ports.get("metrics"), where + ": containerPort metrics is arrayd's metrics-port");

        // probes: gRPC health on the gRPC port
        List<String> services = new ArrayList<>();
        Probe startup = arrayd.getStartupProbe();
        Probe readiness = arrayd.getReadinessProbe();
        Probe liveness = arrayd.getLivenessProbe();
        for (Probe p : new Probe[] {startup, readiness, liveness}) {
            assertNotNull(p, where + ": startup, readiness and liveness probes");
            assertNotNull(p.getGrpc(), where + ": gRPC probes (grpc.health.v1)");
            assertEquals(grpcPort, p.getGrpc().getPort(), where + ": probes ask arrayd's gRPC port");
            services.add(p.getGrpc().getService() == null ? "" : p.getGrpc().getService());
        }
        assertTrue(seconds(startup) >= 60, where + ": the startup probe allows a minute or more for the JVM and devices");
        int termination = Objects.requireNonNull(pod.getTerminationGracePeriodSeconds(),
                where + ": terminationGracePeriodSeconds").intValue();
        long graceSeconds = cfg.get(ArraydConfig.SHUTDOWN_GRACE).toSeconds();
        assertTrue(termination >= graceSeconds + EXIT_MARGIN_SECONDS, where + ": terminationGracePeriodSeconds "
                + termination + " must exceed shutdown-grace " + graceSeconds + " s by " + EXIT_MARGIN_SECONDS + " s");
        // every health service is NOT_SERVING during a drain: liveness must not restart the daemon before it ends
        assertTrue(seconds(liveness) >= termination, where + ": liveness gives up after " + seconds(liveness)
                + " s, within the termination grace period " + termination + " s (a drain would be killed)");

        // security: non-root as the image's user, read-only root filesystem, no capabilities
        SecurityContext sc = arrayd.getSecurityContext();
        PodSecurityContext psc = pod.getSecurityContext();
        assertNotNull(sc, where + ": arrayd securityContext");
        assertEquals(Boolean.TRUE, sc.getReadOnlyRootFilesystem(), where + ": readOnlyRootFilesystem");
        assertEquals(Boolean.FALSE, sc.getAllowPrivilegeEscalation(), where + ": allowPrivilegeEscalation false");
        assertTrue(sc.getCapabilities() != null && sc.getCapabilities().getDrop().contains("ALL"),
                where + ": capabilities drop ALL");
        Boolean nonRoot = sc.getRunAsNonRoot() != null ? sc.getRunAsNonRoot() : psc == null ? null : psc.getRunAsNonRoot();
        Long uid = sc.getRunAsUser() != null ? sc.getRunAsUser() : psc == null ? null : psc.getRunAsUser();
        assertEquals(Boolean.TRUE, nonRoot, where + ": runAsNonRoot");
        assertEquals(IMAGE_UID, uid, where + ": runAsUser is the image's user");

        // the one writable path: /tmp (java.io.tmpdir, TMPDIR, XDG_CACHE_HOME of the image) from an emptyDir
        VolumeMount tmp = arrayd.getVolumeMounts().stream().filter(m -> m.getMountPath().equals("/tmp")).findFirst()
                .orElseThrow(() -> new AssertionError(where + ": /tmp mounted (the root filesystem is read-only)"));
        Volume tmpVolume = volume(pod, tmp.getName(), where);
        assertNotNull(tmpVolume.getEmptyDir(), where + ": /tmp is an emptyDir");
        assertFalse(Boolean.TRUE.equals(tmp.getReadOnly()), where + ": /tmp writable");

        // resources: requests, and a memory limit that holds the slab pools, the heap and the JVM
        var res = arrayd.getResources();
        assertNotNull(res, where + ": resources");
        for (String r : List.of("cpu", "memory")) {
            assertNotNull(res.getRequests().get(r), where + ": requests." + r);
        }
        Quantity memLimit = res.getLimits().get("memory");
        assertNotNull(memLimit, where + ": limits.memory");
        long cpuMemory = cfg.get(ArraydConfig.CPU_MEMORY);
        assertTrue(cpuMemory > 0, where + ": cpu-memory set (its default is half of the node's RAM, not the limit's)");
        long limit = Quantity.getAmountInBytes(memLimit).longValue();
        java.nio.file.Path uds = cfg.get(ArraydConfig.UDS);
        // shared-memory regions are the daemon's memory too: region-memory, or its default, a quarter of the limit
        long regions = uds == null ? 0 : cfg.get(ArraydConfig.REGION_MEMORY) > 0 ? cfg.get(ArraydConfig.REGION_MEMORY)
                : limit / 4;
        long needed = cpuMemory * cpuDevices(cfg.get(ArraydConfig.DEVICES)) + regions + heapBytes(env) + JVM_OVERHEAD_BYTES;
        assertTrue(limit >= needed, where + ": memory limit " + memLimit + " < cpu-memory x devices + region memory + "
                + "heap + " + (JVM_OVERHEAD_BYTES >> 20) + "MiB = " + (needed >> 20) + "MiB");
        if (uds != null) {
            // the socket's directory: a tmpfs emptyDir the application's containers mount too
            String dirPath = uds.getParent().toString();
            VolumeMount socketMount = arrayd.getVolumeMounts().stream().filter(m -> m.getMountPath().equals(dirPath))
                    .findFirst().orElseThrow(() -> new AssertionError(where + ": uds " + uds + ": its directory "
                            + dirPath + " is no volume of its own"));
            Volume socketVolume = volume(pod, socketMount.getName(), where);
            assertNotNull(socketVolume.getEmptyDir(), where + ": the socket's directory is an emptyDir");
            assertEquals("Memory", socketVolume.getEmptyDir().getMedium(), where + ": the socket's emptyDir is tmpfs");
            if (role == Role.SIDECAR) {
                assertTrue(pod.getContainers().stream().anyMatch(c -> c.getVolumeMounts() != null && c.getVolumeMounts()
                        .stream().anyMatch(m -> m.getName().equals(socketMount.getName()))),
                        where + ": the application's container mounts the socket's directory");
            }
        }

        // Prometheus: annotations (optional), a Service on the metrics port, a ServiceMonitor on the Service
        Map<String, String> annotations = template.getMetadata().getAnnotations();
        if (annotations != null && "true".equals(annotations.get("prometheus.io/scrape"))) {
            assertEquals(String.valueOf(metricsPort), annotations.get("prometheus.io/port"), where + ": prometheus.io/port");
            assertEquals("/metrics", annotations.getOrDefault("prometheus.io/path", "/metrics"), where + ": prometheus.io/path");
        }
        Service service = Kube.ofKind(resources, Service.class).stream()
                .filter(s -> s.getSpec().getPorts().stream().anyMatch(p -> targets(p.getTargetPort(), ports, metricsPort)))
                .findFirst().orElseThrow(() -> new AssertionError(where + ": a Service on the metrics port"));
        assertSubset(service.getSpec().getSelector(), podLabels, where + ": Service selector");
        ServicePort metricsServicePort = service.getSpec().getPorts().stream()
                .filter(p -> targets(p.getTargetPort(), ports, metricsPort)).findFirst().orElseThrow();
        boolean grpcServed = service.getSpec().getPorts().stream().anyMatch(p -> targets(p.getTargetPort(), ports, grpcPort));
        if (role == Role.SIDECAR) {
            assertFalse(grpcServed, where + ": the Service does not expose a sidecar's gRPC port (the app uses loopback)");
        } else {
            assertTrue(grpcServed, where + ": the Service exposes the gRPC port to the clients");
        }
        for (ServiceMonitor sm : Kube.ofKind(resources, ServiceMonitor.class)) {
            assertSubset(sm.getSpec().getSelector().getMatchLabels(), service.getMetadata().getLabels(),
                    where + ": ServiceMonitor selects the metrics Service");
            assertFalse(sm.getSpec().getEndpoints().isEmpty(), where + ": ServiceMonitor endpoints");
            for (Endpoint e : sm.getSpec().getEndpoints()) {
                assertEquals(metricsServicePort.getName(), e.getPort(), where + ": ServiceMonitor port is the Service's");
                assertEquals("/metrics", e.getPath() == null ? "/metrics" : e.getPath(), where + ": ServiceMonitor path");
            }
        }
        for (NetworkPolicy np : Kube.ofKind(resources, NetworkPolicy.class)) {
            assertSubset(np.getSpec().getPodSelector().getMatchLabels(), podLabels, where + ": NetworkPolicy selects the pods");
            boolean metricsAllowed = false;
            for (NetworkPolicyIngressRule rule : np.getSpec().getIngress()) {
                assertFalse(rule.getPorts() == null || rule.getPorts().isEmpty(),
                        where + ": a NetworkPolicy rule without ports would open arrayd's gRPC port");
                for (NetworkPolicyPort p : rule.getPorts()) {
                    if (role == Role.SIDECAR) {
                        assertFalse(targets(p.getPort(), ports, grpcPort), where + ": NetworkPolicy opens the gRPC port");
                    } else if (targets(p.getPort(), ports, grpcPort)) {
                        assertFalse(rule.getFrom() == null || rule.getFrom().isEmpty(),
                                where + ": NetworkPolicy opens the gRPC port to every source");
                    }
                    metricsAllowed |= targets(p.getPort(), ports, metricsPort);
                }
            }
            assertTrue(metricsAllowed, where + ": NetworkPolicy lets Prometheus reach the metrics port");
        }
        return new Result(cfg, services);
    }

    private static String configFile(String where, List<String> args, Container arrayd, PodSpec pod,
            List<HasMetadata> resources) {
        int i = args.indexOf(ArraydConfig.CONFIG_FLAG);
        if (i < 0) {
            return null;
        }
        String path = args.get(i + 1);
        for (VolumeMount m : arrayd.getVolumeMounts()) {
            if (path.startsWith(m.getMountPath() + "/")) {
                Volume v = volume(pod, m.getName(), where);
                assertNotNull(v.getConfigMap(), where + ": " + path + " comes from a ConfigMap");
                ConfigMap cm = Kube.ofKind(resources, ConfigMap.class).stream()
                        .filter(c -> c.getMetadata().getName().equals(v.getConfigMap().getName())).findFirst()
                        .orElseThrow(() -> new AssertionError(where + ": ConfigMap " + v.getConfigMap().getName()));
                String file = path.substring(m.getMountPath().length() + 1);
                String text = cm.getData().get(file);
                assertNotNull(text, where + ": ConfigMap " + cm.getMetadata().getName() + " has " + file);
                return text;
            }
        }
        throw new AssertionError(where + ": --config " + path + " is not on a mounted volume");
    }

    /** A file the daemon reads (tokens, certificates) comes from a Secret mounted read-only on its own path. */
    private static void mountedFromSecret(String where, String key, String file, Container arrayd, PodSpec pod) {
        VolumeMount m = arrayd.getVolumeMounts().stream().filter(v -> file.startsWith(v.getMountPath() + "/"))
                .findFirst().orElseThrow(() -> new AssertionError(where + ": " + key + " " + file + " is on no mount"));
        Volume v = volume(pod, m.getName(), where);
        assertNotNull(v.getSecret(), where + ": " + key + " " + file + " comes from a Secret");
        assertEquals(Boolean.TRUE, m.getReadOnly(), where + ": " + key + "'s mount is read-only");
    }

    private static Volume volume(PodSpec pod, String name, String where) {
        return pod.getVolumes().stream().filter(v -> v.getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError(where + ": volume " + name));
    }

    private static boolean targets(IntOrString port, Map<String, Integer> containerPorts, int wanted) {
        if (port == null) {
            return false;
        }
        if (port.getIntVal() != null) {
            return port.getIntVal() == wanted;
        }
        return Integer.valueOf(wanted).equals(containerPorts.get(port.getStrVal()));
    }

    private static int seconds(Probe p) {
        int period = p.getPeriodSeconds() == null ? 10 : p.getPeriodSeconds();
        int failures = p.getFailureThreshold() == null ? 3 : p.getFailureThreshold();
        return period * failures;
    }

    private static void assertSubset(Map<String, String> selector, Map<String, String> labels, String what) {
        assertTrue(selector != null && !selector.isEmpty(), what + ": not empty");
        assertTrue(labels != null && labels.entrySet().containsAll(selector.entrySet()),
                what + ": " + selector + " not within " + labels);
    }

    /** CPU devices in a devices list: {@code cpu} is one, {@code cpu:N} is N. */
    static int cpuDevices(String devices) {
        int n = 0;
        for (String d : devices.split(",")) {
            String s = d.strip();
            if (s.equals("cpu")) {
                n += 1;
            } else if (s.startsWith("cpu:")) {
                n += Integer.parseInt(s.substring(4));
            }
        }
        return n;
    }

    private static final Pattern XMX = Pattern.compile("-Xmx(\\d+)([kKmMgG]?)");

    /** -Xmx from JDK_JAVA_OPTIONS; without it the JVM takes a quarter of the limit, which the check cannot know. */
    static long heapBytes(Map<String, String> env) {
        String opts = env.getOrDefault("JDK_JAVA_OPTIONS", "");
        Matcher m = XMX.matcher(opts);
        assertTrue(m.find(), "JDK_JAVA_OPTIONS sets -Xmx, so the memory limit can be checked: \"" + opts + "\"");
        long v = Long.parseLong(m.group(1));
        return switch (m.group(2).toLowerCase()) {
            case "k" -> v << 10;
            case "m" -> v << 20;
            case "g" -> v << 30;
            default -> v;
        };
    }
}
