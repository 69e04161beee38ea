package dev.arrayd.deploy;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Parses YAML into fabric8's typed Kubernetes model objects, refusing anything the model does not know. */
final class Kube {

    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

    private Kube() {}

    /** Every document of {@code yaml} as a typed resource; {@code where} names the source in messages. */
    static List<HasMetadata> parse(String where, String yaml) {
        List<HasMetadata> out = new ArrayList<>();
        for (String doc : yaml.split("(?m)^---\\s*$")) {
            if (doc.lines().map(String::strip).allMatch(l -> l.isEmpty() || l.startsWith("#"))) {
                continue;
            }
            Object parsed = SERIALIZATION.unmarshal(doc);
            assertTrue(parsed instanceof HasMetadata, where + ": not a Kubernetes resource: " + parsed);
            // a kind/apiVersion the model does not know would come back untyped
            assertFalse(parsed instanceof GenericKubernetesResource, where + ": unknown kind or apiVersion: "
                    + ((HasMetadata) parsed).getApiVersion() + " " + ((HasMetadata) parsed).getKind());
            List<String> unknown = new ArrayList<>();
            unknownFields(parsed, "", unknown, new IdentityHashMap<>());
            assertTrue(unknown.isEmpty(), where + ": fields the Kubernetes model does not know (typos?): " + unknown);
            out.add((HasMetadata) parsed);
        }
        return out;
    }

    static <T extends HasMetadata> List<T> ofKind(List<HasMetadata> resources, Class<T> type) {
        return resources.stream().filter(type::isInstance).map(type::cast).toList();
    }

    static <T extends HasMetadata> T one(List<HasMetadata> resources, Class<T> type) {
        List<T> all = ofKind(resources, type);
        assertTrue(all.size() == 1, "expected one " + type.getSimpleName() + ", found " + all.size());
        return all.getFirst();
    }

    /**
     * fabric8 keeps fields it does not model in {@code additionalProperties} instead of failing: walk the
     * object graph and collect them (a misspelled {@code restartPolicy} would otherwise pass silently).
     */
    private static void unknownFields(Object o, String path, List<String> out, Map<Object, Boolean> seen) {
        if (o == null || seen.put(o, true) != null) {
            return;
        }
        if (o instanceof Collection<?> c) {
            int i = 0;
            for (Object e : c) {
                unknownFields(e, path + "[" + i++ + "]", out, seen);
            }
            return;
        }
        if (o instanceof Map<?, ?> m) {
            m.forEach((k, v) -> unknownFields(v, path + "." + k, out, seen));
            return;
        }
        if (!o.getClass().getName().startsWith("io.fabric8.")) {
            return;
        }
        for (Method getter : o.getClass().getMethods()) {
            if (getter.getParameterCount() != 0 || Modifier.isStatic(getter.getModifiers())
                    || !(getter.getName().startsWith("get") || getter.getName().startsWith("is"))
                    || Set.of("getClass", "getPlural", "getSingular", "getCRDName", "getKind", "getApiVersion")
                            .contains(getter.getName())) {
                continue;
            }
            Object v;
            try {
                v = getter.invoke(o);
            } catch (ReflectiveOperationException | RuntimeException e) {
                continue;
            }
            if (getter.getName().equals("getAdditionalProperties")) {
                if (v instanceof Map<?, ?> extra && !extra.isEmpty()) {
                    out.add(path + " " + extra.keySet());
                }
                continue;
            }
            unknownFields(v, path + "." + getter.getName().replaceFirst("^(get|is)", ""), out, seen);
        }
    }
}
