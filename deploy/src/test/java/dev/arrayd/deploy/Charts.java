package dev.arrayd.deploy;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.TemplateCommand;
import io.fabric8.kubernetes.api.model.HasMetadata;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The charts of deploy/helm, linted and rendered by Helm itself (its Go library, through helm-java) the
 * way {@code helm lint} and {@code helm template} do, for a Kubernetes version the charts support. The
 * charts are copied under target/ first: the example application's dependency on the arrayd chart is
 * packaged into its charts/ there, not in the source tree.
 */
final class Charts {

    /**
     * The arrayd chart with its hooks (the helm test pod) rendered as plain objects: helm-java's template
     * leaves hooks out, and Helm tells a hook by its annotation alone, so this copy renames the annotation.
     */
    static final String WITH_HOOKS = "arrayd-hooks-as-objects";
    static final String HOOK_ANNOTATION_RENAMED = "rendered-as-object/hook";

    /** The Kubernetes version templates see (.Capabilities.KubeVersion); the charts need 1.29 or newer. */
    static final String KUBE_VERSION = "1.34.0";

    private static Path copied;

    private Charts() {}

    /** A copy of deploy/helm under target/, with the example application's dependency built. */
    static synchronized Path dir() {
        if (copied == null) {
            Path to = DeployFiles.module().resolve("target/helm-charts");
            try {
                deleteRecursively(to);
                copyRecursively(DeployFiles.module().resolve("helm"), to);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            new Helm(to.resolve("example-app")).dependency().update().call();
            hooksAsManifests(to.resolve("arrayd"), to.resolve(WITH_HOOKS));
            copied = to;
        }
        return copied;
    }

    static LintResult lint(String chart) {
        return new Helm(dir().resolve(chart)).lint().strict().call();
    }

    /** {@code helm template <release> <chart> -n <namespace> --set k=v ...}: the objects, typed and checked. */
    static List<HasMetadata> render(String chart, Map<String, ?> sets) {
        return Kube.parse(chart, template(chart, sets));
    }

    static String template(String chart, Map<String, ?> sets) {
        TemplateCommand t = new Helm(dir().resolve(chart)).template().withName("demo").withNamespace("apps")
                .withKubeVersion(KUBE_VERSION);
        for (var e : sets.entrySet()) {
            t = t.set(e.getKey(), e.getValue());
        }
        return t.call();
    }

    private static void hooksAsManifests(Path chart, Path to) {
        try {
            copyRecursively(chart, to);
            try (Stream<Path> all = Files.walk(to.resolve("templates"))) {
                for (Path p : all.filter(Files::isRegularFile).toList()) {
                    Files.writeString(p, Files.readString(p).replace("helm.sh/hook:", HOOK_ANNOTATION_RENAMED + ":"));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void copyRecursively(Path from, Path to) throws IOException {
        try (Stream<Path> all = Files.walk(from)) {
            for (Path p : all.toList()) {
                Path target = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(p, target, StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
    }

    private static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> all = Files.walk(dir)) {
            List<Path> paths = new ArrayList<>(all.toList());
            java.util.Collections.reverse(paths);
            for (Path p : paths) {
                Files.delete(p);
            }
        }
    }
}
