package dev.arrayd.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.arrayd.server.ArraydServer;
import dev.arrayd.server.ServerOptions;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import com.sun.management.GarbageCollectionNotificationInfo;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The dashboard and the alert rules read only what a real daemon exports: an in-process
 * {@link ArraydServer} on free ports is scraped, and every metric name, label and literal label value of
 * every expression is looked up in that scrape.
 */
class MetricNamesTest {

    /** Labels that Prometheus (and the Prometheus Operator) put on every series of a target. */
    static final Set<String> TARGET_LABELS = Set.of("namespace", "pod", "job", "instance", "container", "service",
            "endpoint");
    /** Series Prometheus makes itself for each target. */
    static final Set<String> SYNTHETIC = Set.of("up", "scrape_duration_seconds", "scrape_samples_scraped");
    /** The families an operator needs to see, whichever file they look at. */
    static final List<String> ESSENTIAL = List.of("arrayd_commands_total", "arrayd_queue_wait_seconds_bucket",
            "arrayd_device_memory_used_bytes", "arrayd_device_memory_budget_bytes", "grpc_server_handled_total");

    private static ArraydServer server;
    /** sample name → label → values seen. */
    private static final Map<String, Map<String, Set<String>>> SAMPLES = new TreeMap<>();

    @BeforeAll
    static void scrape() throws Exception {
        server = ArraydServer.start(ServerOptions.defaults().withPort(0).withCpuMemoryBytes(64L << 20)
                .withShutdownGraceMillis(0).withMetricsKernelLimit(4)); // the opt-in families too
        // one gRPC call, so the grpc_server_* families have series; one collection, so the GC pause has one
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext().build();
        HealthGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                .check(HealthCheckRequest.newBuilder().setService("").build());
        // one session, so the per-client families have a series
        dev.arrayd.proto.v1.SessionServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                .openSession(dev.arrayd.proto.v1.OpenSessionRequest.newBuilder().setClientName("metric-names").build());
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        collectGarbageAndWaitForItsNotification();
        String text;
        try (HttpClient http = HttpClient.newHttpClient()) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + server.metricsPort() + "/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode());
            text = r.body();
        }
        Pattern label = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");
        for (String line : text.lines().toList()) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            int brace = line.indexOf('{');
            int space = line.indexOf(' ');
            String name = line.substring(0, brace >= 0 && brace < space ? brace : space);
            Map<String, Set<String>> labels = SAMPLES.computeIfAbsent(name, n -> new TreeMap<>());
            if (brace >= 0 && brace < space) {
                Matcher m = label.matcher(line.substring(brace, line.lastIndexOf('}') + 1));
                while (m.find()) {
                    labels.computeIfAbsent(m.group(1), l -> new TreeSet<>()).add(m.group(2));
                }
            }
        }
        assertTrue(SAMPLES.containsKey("arrayd_build_info"), "scraped: " + SAMPLES.keySet());
    }

    /**
     * GC pauses reach Micrometer as JMX notifications, delivered asynchronously after the collection.
     * The daemon's listener was registered first, and a bean delivers a notification to its listeners
     * in registration order: once ours has it, jvm_gc_pause_seconds has its series.
     */
    private static void collectGarbageAndWaitForItsNotification() throws Exception {
        CountDownLatch seen = new CountDownLatch(1);
        NotificationListener listener = (n, h) -> {
            if (n.getType().equals(GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION)) {
                seen.countDown();
            }
        };
        List<NotificationEmitter> emitters = new ArrayList<>();
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            if (gc instanceof NotificationEmitter e) {
                e.addNotificationListener(listener, null, null);
                emitters.add(e);
            }
        }
        try {
            System.gc();
            assertTrue(seen.await(30, TimeUnit.SECONDS), "a GC notification after System.gc()");
        } finally {
            for (NotificationEmitter e : emitters) {
                e.removeNotificationListener(listener);
            }
        }
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void alertRulesReadOnlyExportedMetrics() throws Exception {
        JsonNode rules = new ObjectMapper(new YAMLFactory()).readTree(DeployFiles.alerts().toFile());
        Map<String, String> exprs = new LinkedHashMap<>();
        for (JsonNode group : rules.path("groups")) {
            assertFalse(group.path("name").asText().isEmpty(), "group name");
            for (JsonNode rule : group.path("rules")) {
                String alert = rule.path("alert").asText();
                assertFalse(alert.isEmpty(), "every rule is an alert: " + rule);
                assertFalse(rule.path("expr").asText().isBlank(), alert + ": expr");
                assertTrue(rule.path("for").asText().matches("\\d+[smh]"), alert + ": for");
                assertTrue(Set.of("critical", "warning", "info").contains(rule.path("labels").path("severity").asText()),
                        alert + ": severity");
                assertFalse(rule.path("annotations").path("summary").asText().isEmpty(), alert + ": summary");
                assertTrue(exprs.put(alert, rule.path("expr").asText()) == null, alert + ": one rule per name");
            }
        }
        assertTrue(exprs.size() >= 5, "alert rules: " + exprs.keySet());
        Set<String> read = checkAll("arrayd-alerts.yaml", exprs);
        assertTrue(read.containsAll(List.of("arrayd_commands_total", "arrayd_device_memory_used_bytes",
                "arrayd_shutting_down", "grpc_server_handled_total")), "alerts read: " + read);
    }

    @Test
    void dashboardReadsOnlyExportedMetrics() throws Exception {
        JsonNode dash = new ObjectMapper().readTree(DeployFiles.dashboard().toFile());
        assertFalse(dash.path("uid").asText().isEmpty(), "dashboard uid");
        Map<String, String> exprs = new LinkedHashMap<>();
        Set<Integer> ids = new HashSet<>();
        for (JsonNode panel : dash.path("panels")) {
            assertTrue(ids.add(panel.path("id").asInt()), "panel ids are unique: " + panel.path("id"));
            if (panel.path("type").asText().equals("row")) {
                continue;
            }
            assertTrue(panel.path("targets").size() > 0, panel.path("title") + ": targets");
            for (JsonNode t : panel.path("targets")) {
                exprs.put(panel.path("title").asText() + " " + t.path("refId").asText(), t.path("expr").asText());
            }
        }
        for (JsonNode var : dash.path("templating").path("list")) {
            JsonNode q = var.path("query");
            if (var.path("type").asText().equals("query")) {
                exprs.put("variable " + var.path("name").asText(), q.isObject() ? q.path("query").asText() : q.asText());
            }
        }
        Set<String> read = checkAll("arrayd-dashboard.json", exprs);
        assertTrue(read.containsAll(ESSENTIAL), "dashboard reads: " + read);
        for (String family : List.of("arrayd_compute_seconds_bucket", "arrayd_pool_fragmentation_ratio",
                "arrayd_sessions", "arrayd_client_commands_total", "arrayd_compiles_total", "jvm_memory_used_bytes")) {
            assertTrue(read.contains(family), "dashboard shows " + family);
        }
    }

    /** Histogram and timer samples that belong to one documented family. */
    static final List<String> HISTOGRAM_SUFFIXES = List.of("_bucket", "_count", "_sum", "_max");

    /**
     * docs/operations.md lists exactly what a daemon exports: every family of its tables is scraped, every
     * scraped family is in a table or the JVM paragraph, and every label value a table lists in parentheses
     * (e.g. the commands' kinds and outcomes) is the set the daemon exports.
     */
    @Test
    void theOperationsDocListsExactlyTheExportedFamiliesAndLabelValues() throws Exception {
        String doc = java.nio.file.Files.readString(DeployFiles.module().resolve("../docs/operations.md"));
        String metrics = doc.substring(doc.indexOf("\n## Metrics"), doc.indexOf("\n## ", doc.indexOf("\n## Metrics") + 1));
        Map<String, String> rows = new TreeMap<>(); // family -> labels cell
        Matcher row = Pattern.compile("(?m)^\\| `([a-z_]+)` \\| [a-z]+ \\|\\s*([^|]*?)\\s*\\|").matcher(metrics);
        while (row.find()) {
            rows.put(row.group(1), row.group(2));
        }
        assertTrue(rows.size() > 20, "tables found: " + rows.keySet());
        String jvm = metrics.substring(metrics.indexOf("### JVM and process"));
        List<Pattern> jvmFamilies = new ArrayList<>();
        Matcher named = Pattern.compile("`((?:jvm|process|system)_[a-z0-9_*]+)`").matcher(jvm);
        while (named.find()) {
            jvmFamilies.add(Pattern.compile(named.group(1).replace("*", "[a-z_]+")));
        }
        List<String> problems = new ArrayList<>();
        Set<String> exported = new TreeSet<>();
        for (String sample : SAMPLES.keySet()) {
            String family = sample;
            for (String suffix : HISTOGRAM_SUFFIXES) {
                if (sample.endsWith(suffix) && rows.containsKey(sample.substring(0, sample.length() - suffix.length()))) {
                    family = sample.substring(0, sample.length() - suffix.length());
                }
            }
            exported.add(family);
            String f = family;
            boolean jvmDocumented = jvmFamilies.stream().anyMatch(p -> p.matcher(f).matches()
                    || p.matcher(sample).matches());
            if (!rows.containsKey(family) && !jvmDocumented) {
                problems.add(sample + " is exported but docs/operations.md does not list it");
            }
        }
        for (var e : rows.entrySet()) {
            if (!exported.contains(e.getKey())) {
                problems.add(e.getKey() + " is listed in docs/operations.md but not exported");
                continue;
            }
            Matcher values = Pattern.compile("`([a-z_]+)` \\(([^)]*)\\)").matcher(e.getValue());
            while (values.find()) {
                if (values.group(2).contains("…")) {
                    continue; // an open list, e.g. grpc_code
                }
                Set<String> documented = new TreeSet<>(Arrays.asList(values.group(2).split(",\\s*")));
                String sample = SAMPLES.containsKey(e.getKey()) ? e.getKey() : e.getKey() + "_count";
                Set<String> seen = SAMPLES.getOrDefault(sample, Map.of()).getOrDefault(values.group(1), Set.of());
                if (!documented.equals(seen)) {
                    problems.add(e.getKey() + " label " + values.group(1) + ": docs/operations.md lists " + documented
                            + ", the daemon exports " + seen);
                }
            }
        }
        assertTrue(problems.isEmpty(), String.join("\n", problems));
    }

    @Test
    void promQlExtraction() {
        PromQl.Refs r = PromQl.refs("histogram_quantile(0.99, sum by (device, le) (rate(a_bucket{device=~\"$d\"}[5m])))"
                + " / on (pod) group_left b > 1e6 and label_values(c{x=\"y\"}, z)");
        assertEquals(Set.of("a_bucket", "b", "c"), r.metrics());
        assertEquals(Set.of("device", "le", "pod", "z"), r.groupingLabels());
        assertEquals(2, r.matchers().size());
    }

    /** Checks every expression against the scrape; returns the metric names read. */
    private static Set<String> checkAll(String file, Map<String, String> exprs) {
        Set<String> grpcCodes = new HashSet<>();
        Arrays.stream(Status.Code.values()).forEach(c -> grpcCodes.add(c.name()));
        List<String> problems = new ArrayList<>();
        Set<String> read = new TreeSet<>();
        exprs.forEach((where, expr) -> {
            PromQl.Refs refs = PromQl.refs(expr);
            if (refs.metrics().isEmpty()) {
                problems.add(where + ": reads no metric: " + expr);
            }
            Set<String> labelsOfExpr = new HashSet<>(TARGET_LABELS);
            labelsOfExpr.add("le");
            for (String m : refs.metrics()) {
                read.add(m);
                if (SYNTHETIC.contains(m)) {
                    continue;
                }
                Map<String, Set<String>> labels = SAMPLES.get(m);
                if (labels == null) {
                    problems.add(where + ": " + m + " is not exported by the daemon");
                } else {
                    labelsOfExpr.addAll(labels.keySet());
                }
            }
            for (PromQl.Matcher m : refs.matchers()) {
                if (TARGET_LABELS.contains(m.label()) || m.metric() == null || SYNTHETIC.contains(m.metric())) {
                    continue;
                }
                Map<String, Set<String>> labels = SAMPLES.getOrDefault(m.metric(), Map.of());
                Set<String> values = labels.get(m.label());
                if (values == null) {
                    problems.add(where + ": " + m.metric() + " has no label " + m.label() + " (has " + labels.keySet() + ")");
                    continue;
                }
                for (String v : PromQl.literalValues(m)) {
                    boolean known = m.label().equals("grpc_code") ? grpcCodes.contains(v) : values.contains(v);
                    if (!known) {
                        problems.add(where + ": " + m.metric() + "{" + m.label() + "} has no value \"" + v + "\" (has "
                                + (m.label().equals("grpc_code") ? "grpc status code names" : values) + ")");
                    }
                }
            }
            for (String l : refs.groupingLabels()) {
                if (!labelsOfExpr.contains(l)) {
                    problems.add(where + ": groups by " + l + ", a label none of " + refs.metrics() + " has");
                }
            }
        });
        assertTrue(problems.isEmpty(), file + ":\n  " + String.join("\n  ", problems));
        assertNotNull(read);
        return read;
    }
}
