package dev.arrayd.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.openshift.api.model.monitoring.v1.ServiceMonitor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** deploy/k8s/*.yaml: typed Kubernetes objects that agree with the server's settings, ports and health. */
class K8sManifestsTest {

    private static List<HasMetadata> resources;

    @BeforeAll
    static void parse() throws Exception {
        resources = new ArrayList<>();
        try (Stream<Path> files = Files.list(DeployFiles.k8s())) {
            for (Path f : files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList()) {
                resources.addAll(Kube.parse(f.getFileName().toString(), Files.readString(f)));
            }
        }
    }

    @Test
    void everyFileParsesIntoTypedObjects() {
        assertEquals(1, Kube.ofKind(resources, Deployment.class).size());
        assertEquals(1, Kube.ofKind(resources, Service.class).size());
        assertEquals(1, Kube.ofKind(resources, ServiceMonitor.class).size());
        assertEquals(1, Kube.ofKind(resources, NetworkPolicy.class).size());
    }

    @Test
    void sidecarAgreesWithTheServer() throws Exception {
        SidecarChecks.Result r = SidecarChecks.check("deploy/k8s", resources);
        assertFalse(r.probeServices().isEmpty());
        ServerContract.assertHealthServicesServe(r.config().get(dev.arrayd.server.config.ArraydConfig.DEVICES),
                r.probeServices());
    }

    @Test
    void imageTagIsTheProjectVersion() {
        String image = Kube.one(resources, Deployment.class).getSpec().getTemplate().getSpec().getInitContainers()
                .getFirst().getImage();
        assertEquals("arrayd:" + DeployFiles.version(), image);
    }
}
