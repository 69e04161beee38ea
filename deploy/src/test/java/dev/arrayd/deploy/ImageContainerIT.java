package dev.arrayd.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.Capability;
import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.junit.jupiter.Testcontainers;
import org.testcontainers.utility.DockerImageName;

/**
 * The image in a real container runtime, as a pod runs it: read-only root filesystem, a tmpfs on /tmp,
 * no capabilities, bound to 0.0.0.0 (insecure, as in the manifests). Probed over gRPC health and
 * /metrics through the mapped ports, then stopped with SIGTERM (exit 0). Skipped where there is no
 * Docker engine (the build machines have only the docker client).
 */
@Testcontainers(disabledWithoutDocker = true)
class ImageContainerIT {

    @Test
    void containerServesHealthAndMetrics() throws Exception {
        DockerClient docker = DockerClientFactory.instance().client();
        // `docker load` takes an OCI layout tarball (Docker 25+)
        try (InputStream in = Files.newInputStream(OciImage.tarPath())) {
            docker.loadImageCmd(in).exec();
        }
        String name = System.getProperty("arrayd.image.name", "arrayd:" + DeployFiles.version());
        try (GenericContainer<?> c = new GenericContainer<>(DockerImageName.parse(name))
                .withEnv(Map.of("ARRAYD_BIND", "0.0.0.0", "ARRAYD_INSECURE", "true", "ARRAYD_CPU_MEMORY", "256MiB",
                        "ARRAYD_SHUTDOWN_GRACE", "5s"))
                .withExposedPorts(7700, 7701)
                .withTmpFs(Map.of("/tmp", "rw,exec,mode=1777"))
                .withCreateContainerCmdModifier(cmd -> cmd.getHostConfig().withReadonlyRootfs(true)
                        .withCapDrop(Capability.ALL))
                .waitingFor(Wait.forHttp("/metrics").forPort(7701).forStatusCode(200))) {
            c.start();
            ManagedChannel channel = NettyChannelBuilder.forAddress(c.getHost(), c.getMappedPort(7700)).usePlaintext().build();
            try {
                assertEquals(ServingStatus.SERVING, HealthGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                        .check(HealthCheckRequest.newBuilder().setService("").build()).getStatus());
            } finally {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
            try (HttpClient http = HttpClient.newHttpClient()) {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://" + c.getHost() + ":"
                        + c.getMappedPort(7701) + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
                assertTrue(r.body().contains("arrayd_build_info"));
            }
            docker.stopContainerCmd(c.getContainerId()).withTimeout(30).exec();
            Long exit = docker.inspectContainerCmd(c.getContainerId()).exec().getState().getExitCodeLong();
            assertEquals(0L, exit, "exit status after SIGTERM");
        }
    }
}
