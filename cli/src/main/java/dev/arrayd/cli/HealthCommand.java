package dev.arrayd.cli;

import dev.arrayd.proto.v1.DeviceInfo;
import dev.arrayd.proto.v1.DeviceServiceGrpc;
import dev.arrayd.proto.v1.ListDevicesRequest;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthGrpc;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * {@code arrayd health}: the grpc.health.v1 state of the daemon ({@code ""}) and of each device
 * ({@code arrayd.device.<id>}). Exit 0 only when every one is SERVING; 1 otherwise or when the
 * daemon cannot be reached.
 */
@Command(name = "health", mixinStandardHelpOptions = true,
        description = "Print the health of a running daemon and of each device; exit 0 only if all are SERVING.")
final class HealthCommand implements Callable<Integer> {

    @Mixin
    ClientOptions client;

    @Override
    public Integer call() throws Exception {
        ManagedChannel channel = client.channel();
        try {
            List<String> services = new ArrayList<>();
            services.add("");
            for (DeviceInfo d : DeviceServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                    .listDevices(ListDevicesRequest.getDefaultInstance()).getDevicesList()) {
                services.add("arrayd.device." + d.getId());
            }
            var health = HealthGrpc.newBlockingStub(channel);
            boolean all = true;
            System.out.printf("%-28s %s%n", "SERVICE", "STATUS");
            for (String s : services) {
                String state;
                try {
                    state = health.withDeadlineAfter(10, TimeUnit.SECONDS)
                            .check(HealthCheckRequest.newBuilder().setService(s).build()).getStatus().name();
                } catch (StatusRuntimeException e) {
                    if (e.getStatus().getCode() != Status.Code.NOT_FOUND) {
                        throw e;
                    }
                    state = "UNKNOWN (no such health service)";
                }
                all &= state.equals("SERVING");
                System.out.printf("%-28s %s%n", s.isEmpty() ? "\"\" (the daemon)" : s, state);
            }
            return all ? 0 : 1;
        } catch (StatusRuntimeException e) {
            return Failures.report("health", client.target, e);
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
