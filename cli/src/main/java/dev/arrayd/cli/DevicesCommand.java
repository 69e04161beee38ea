package dev.arrayd.cli;

import dev.arrayd.client.ArraydClient;
import dev.arrayd.client.BackendInfo;
import dev.arrayd.client.DeviceInfo;
import dev.arrayd.client.DeviceInventory;
import io.grpc.StatusRuntimeException;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code arrayd devices}: the devices and backends of a running daemon. */
@Command(name = "devices", mixinStandardHelpOptions = true, description = "List the devices of a running daemon.")
final class DevicesCommand implements Callable<Integer> {

    @Mixin
    ClientOptions client;

    @Override
    public Integer call() throws Exception {
        try (ArraydClient c = client.connect()) {
            DeviceInventory inv = c.inventory().get(30, TimeUnit.SECONDS);
            System.out.printf("%-10s %-8s %6s %12s %12s %7s  %s%n", "DEVICE", "BACKEND", "UNITS", "MEMORY", "USED",
                    "STREAMS", "NAME");
            for (DeviceInfo d : inv.devices()) {
                System.out.printf("%-10s %-8s %6d %12s %12s %7d  %s%n", d.id(), d.backend(), d.computeUnits(),
                        bytes(d.memoryBytes()), bytes(d.memoryUsedBytes()), d.suggestedStreams(), d.name());
            }
            for (BackendInfo b : inv.backends()) {
                if (b.available()) {
                    System.out.println("backend " + b.name() + ": available (" + String.join(", ", b.devices()) + ")");
                } else {
                    System.out.println("backend " + b.name() + ": unavailable: " + b.reason());
                }
            }
            return 0;
        } catch (ExecutionException e) {
            return Failures.report("devices", client.target, e.getCause());
        } catch (StatusRuntimeException e) {
            return Failures.report("devices", client.target, e);
        }
    }

    static String bytes(long b) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
        double v = b;
        int u = 0;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return u == 0 ? b + " B" : String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }

    static String joined(Iterable<?> items) {
        return java.util.stream.StreamSupport.stream(items.spliterator(), false).map(String::valueOf)
                .collect(Collectors.joining(","));
    }
}
