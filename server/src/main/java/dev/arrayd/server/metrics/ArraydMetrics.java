package dev.arrayd.server.metrics;

import dev.arrayd.scheduler.CommandKind;
import dev.arrayd.scheduler.CommandObserver;
import dev.arrayd.scheduler.CommandOutcome;
import dev.arrayd.scheduler.DeviceRuntime;
import dev.arrayd.scheduler.Scheduler;
import dev.arrayd.scheduler.SchedulerObserver;
import dev.arrayd.scheduler.Session;
import dev.arrayd.scheduler.SlabPool;
import dev.arrayd.scheduler.StreamKind;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmCompilationMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * arrayd's metrics: one Prometheus registry, the scheduler's observer, and the device gauges.
 * docs/operations.md lists every family with its meaning.
 *
 * <p>Hot path: a finished command costs a handful of counter increments and timer records on meters
 * resolved up front (arrays indexed by kind, outcome and device index; the client's meters are
 * resolved when its session opens). No map lookup by label per command.
 */
public final class ArraydMetrics implements SchedulerObserver, AutoCloseable {

    /** Histogram buckets of the latency families: 5 µs to 60 s. */
    static final Duration[] LATENCY_BUCKETS = durations(0.000005, 0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005,
            0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60);

    /**
     * Buckets of {@code grpc_server_handling_seconds}, 100 µs to 10 s: coarser than the latency families',
     * because it has a series per bucket for every method called (docs/operations.md, "Series budget").
     */
    public static final Duration[] GRPC_BUCKETS = durations(0.0001, 0.00025, 0.001, 0.0025, 0.01, 0.025, 0.1, 0.25, 1,
            10);

    /** The direction label of each transfer kind, indexed by {@link #direction(CommandKind)}. */
    static final List<String> DIRECTIONS = List.of("host_to_device", "device_to_host", "device_to_device");

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final ClientLabels clients;
    private final KernelLabels kernels; // null: no kernel label (metrics-kernel-limit 0)
    private final Counter[][] commands = new Counter[CommandKind.values().length][CommandOutcome.values().length];
    // per device index; grown (replaced) when a device joins after the start (see deviceAdded)
    private volatile Timer[] queueWait;
    private volatile Timer[] compute;
    private volatile Timer[][] transfer;
    private volatile Counter[][] transferBytes;
    private final JvmGcMetrics gc = new JvmGcMetrics();

    /** @param deviceIds the scheduler's devices in its order (their {@link DeviceRuntime#index()}) */
    public ArraydMetrics(List<String> deviceIds, int clientLabelLimit, int kernelLabelLimit, String version) {
        this.clients = new ClientLabels(registry, clientLabelLimit);
        this.kernels = kernelLabelLimit > 0 ? new KernelLabels(registry, kernelLabelLimit) : null;
        for (CommandKind k : CommandKind.values()) {
            for (CommandOutcome o : CommandOutcome.values()) {
                commands[k.ordinal()][o.ordinal()] = Counter.builder("arrayd.commands").tag("kind", k.label())
                        .tag("outcome", o.label()).description("Commands finished, by kind and outcome")
                        .register(registry);
            }
        }
        int n = deviceIds.size();
        queueWait = new Timer[n];
        compute = new Timer[n];
        transfer = new Timer[n][];
        transferBytes = new Counter[n][];
        for (int d = 0; d < n; d++) {
            deviceMeters(d, deviceIds.get(d));
        }
        Gauge.builder("arrayd.build.info", () -> 1).tag("version", version)
                .description("Always 1; the version label says which arrayd runs").register(registry);
        new JvmMemoryMetrics().bindTo(registry);
        gc.bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new JvmCompilationMetrics().bindTo(registry);
        new ClassLoaderMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
        new FileDescriptorMetrics().bindTo(registry);
    }

    /** The command meters of device {@code index}, whose id is {@code id}, into the per-device arrays. */
    private void deviceMeters(int index, String id) {
        queueWait[index] = latency("arrayd.queue.wait", "Time from submission to the start of device work "
                + "(dependencies and queueing)").tag("device", id).register(registry);
        compute[index] = latency("arrayd.compute", "Device time of launches and fills that succeeded")
                .tag("device", id).register(registry);
        transfer[index] = new Timer[DIRECTIONS.size()];
        transferBytes[index] = new Counter[DIRECTIONS.size()];
        for (int dir = 0; dir < DIRECTIONS.size(); dir++) {
            transfer[index][dir] = latency("arrayd.transfer", "Device time of uploads, downloads and copies that "
                    + "succeeded").tag("device", id).tag("direction", DIRECTIONS.get(dir)).register(registry);
            transferBytes[index][dir] = Counter.builder("arrayd.transferred").baseUnit("bytes").tag("device", id)
                    .tag("direction", DIRECTIONS.get(dir)).description("Bytes moved by transfers that succeeded")
                    .register(registry);
        }
    }

    /**
     * A device joined after the start (a peer that came up): its command meters and gauges, before any command
     * can use it (the scheduler calls this under its submit lock).
     */
    @Override
    public synchronized void deviceAdded(DeviceRuntime device) {
        int i = device.index();
        if (i >= queueWait.length) {
            int n = i + 1;
            Timer[] q = java.util.Arrays.copyOf(queueWait, n);
            Timer[] c = java.util.Arrays.copyOf(compute, n);
            Timer[][] t = java.util.Arrays.copyOf(transfer, n);
            Counter[][] b = java.util.Arrays.copyOf(transferBytes, n);
            queueWait = q;
            compute = c;
            transfer = t;
            transferBytes = b;
        }
        deviceMeters(i, device.id().toString());
        deviceGauges(device);
    }

    private static Timer.Builder latency(String name, String description) {
        return Timer.builder(name).description(description).serviceLevelObjectives(LATENCY_BUCKETS)
                .distributionStatisticExpiry(Duration.ofMinutes(1));
    }

    private static Duration[] durations(double... seconds) {
        Duration[] out = new Duration[seconds.length];
        for (int i = 0; i < seconds.length; i++) {
            out[i] = Duration.ofNanos(Math.round(seconds[i] * 1e9));
        }
        return out;
    }

    static int direction(CommandKind kind) {
        return switch (kind) {
            case UPLOAD -> 0;
            case DOWNLOAD -> 1;
            default -> 2;
        };
    }

    /** Gauges over the scheduler's state (read at scrape time). Call once, before serving. */
    public void bindScheduler(Scheduler scheduler) {
        Gauge.builder("arrayd.sessions", scheduler, s -> s.sessions().size()).description("Open sessions")
                .register(registry);
        Gauge.builder("arrayd.shutting.down", scheduler, s -> s.isShuttingDown() ? 1 : 0)
                .description("1 once a graceful shutdown has begun (new work is refused)").register(registry);
        for (DeviceRuntime d : scheduler.devices()) {
            deviceGauges(d);
        }
    }

    /** The gauges over device {@code d}'s state (read at scrape time). */
    private void deviceGauges(DeviceRuntime d) {
        String id = d.id().toString();
        SlabPool pool = d.pool();
        Gauge.builder("arrayd.device.memory.used", pool, SlabPool::usedBytes).baseUnit("bytes").tag("device", id)
                .description("Bytes allocated to buffers (exact, aligned sizes)").register(registry);
        Gauge.builder("arrayd.device.memory.reserved", pool, SlabPool::reservedBytes).baseUnit("bytes")
                .tag("device", id).description("Bytes of slabs taken from the device (used + free in slabs)")
                .register(registry);
        Gauge.builder("arrayd.device.memory.budget", pool, SlabPool::budgetBytes).baseUnit("bytes")
                .tag("device", id).description("Most bytes the slab pool may take from the device").register(registry);
        Gauge.builder("arrayd.device.memory.capacity", d, x -> x.info().memoryBytes()).baseUnit("bytes")
                .tag("device", id).description("Memory of the device").register(registry);
        Gauge.builder("arrayd.pool.fragmentation", pool, p -> p.stats().fragmentation()).baseUnit("ratio")
                .tag("device", id).description("1 - largest free block / free bytes in the slabs (0 = one free block)")
                .register(registry);
        Gauge.builder("arrayd.pool.slabs", pool, p -> p.stats().slabs()).tag("device", id)
                .description("Slabs held by the pool").register(registry);
        io.micrometer.core.instrument.FunctionCounter.builder("arrayd.pool.evictions", d, DeviceRuntime::evictions)
                .tag("device", id).description("Replicas dropped to make room (written back to the host first when "
                        + "they held the only current copy)").register(registry);
        io.micrometer.core.instrument.FunctionCounter.builder("arrayd.device.busy", d, x -> x.busyNanos() / 1e9)
                .baseUnit("seconds").tag("device", id)
                .description("Time the device had work: at least one command handed to it and not finished "
                        + "(rate() of it is the busy fraction)").register(registry);
        BusyWindow window = new BusyWindow(d::busyNanos, System::nanoTime);
        Gauge.builder("arrayd.device.utilization", window, BusyWindow::fraction).baseUnit("ratio").tag("device", id)
                .description("Fraction of the last 5 to 10 s (or of the time since the previous scrape, when "
                        + "longer) the device had work").register(registry);
        Gauge.builder("arrayd.device.backlog", d, x -> x.backlogNanos() / 1e9).baseUnit("seconds").tag("device", id)
                .description("Expected device time of the launches queued or running here (placement's queued work)")
                .register(registry);
        for (StreamKind k : StreamKind.values()) {
            Gauge.builder("arrayd.queue.depth", d, x -> x.pendingCommands(k)).tag("device", id)
                    .tag("stream", k.label())
                    .description("Commands submitted and not finished (waiting, queued or running), by device and "
                            + "stream kind").register(registry);
        }
    }

    public PrometheusMeterRegistry registry() {
        return registry;
    }

    /** Every per-client label value with its meters (for the stats service). */
    public Collection<ClientMeters> clients() {
        return clients.all();
    }

    /** Commands finished with this outcome, all kinds. */
    public long commands(CommandOutcome outcome) {
        long n = 0;
        for (Counter[] byKind : commands) {
            n += (long) byKind[outcome.ordinal()].count();
        }
        return n;
    }

    // ------------------------------------------------------------ SchedulerObserver

    @Override
    public CommandObserver sessionOpened(Session session) {
        ClientMeters client = clients.meters(session.clientName());
        client.sessionsOpened.increment();
        client.sessionsOpen.incrementAndGet();
        KernelLabels byKernel = kernels;
        return (kind, kernel, device, stream, outcome, waitNanos, deviceNanos, bytes, submission) -> {
            commands[kind.ordinal()][outcome.ordinal()].increment();
            if (byKernel != null && kernel != null) {
                byKernel.meters(kernel).record(outcome == CommandOutcome.SUCCEEDED, deviceNanos);
            }
            client.commands.increment();
            if (outcome != CommandOutcome.SUCCEEDED) {
                client.commandFailures.increment();
            }
            int d = device.index();
            if (d >= queueWait.length) {
                return; // a device the metrics were not told about: count it, time nothing
            }
            queueWait[d].record(waitNanos, TimeUnit.NANOSECONDS);
            if (outcome == CommandOutcome.SUCCEEDED) {
                if (kind.isTransfer()) {
                    int dir = direction(kind);
                    transfer[d][dir].record(deviceNanos, TimeUnit.NANOSECONDS);
                    transferBytes[d][dir].increment(bytes);
                } else {
                    compute[d].record(deviceNanos, TimeUnit.NANOSECONDS);
                }
            }
        };
    }

    @Override
    public void sessionClosed(Session session) {
        clients.meters(session.clientName()).sessionsOpen.decrementAndGet();
    }

    /** Registers the compile families of each backend up front, so they exist (at 0) before the first compile. */
    public void registerBackends(Collection<String> backends) {
        for (String b : backends) {
            compiles(b, true);
            compiles(b, false);
            compileTimer(b);
        }
    }

    private Counter compiles(String backend, boolean succeeded) {
        return Counter.builder("arrayd.compiles").tag("backend", backend).tag("outcome", succeeded ? "succeeded" : "failed")
                .description("Kernel module compilations, one per module and backend (whether the backend's compile "
                        + "cache had it or built it)").register(registry);
    }

    private Timer compileTimer(String backend) {
        return Timer.builder("arrayd.compile").tag("backend", backend).description("Time to compile one module for "
                + "one backend").serviceLevelObjectives(LATENCY_BUCKETS).register(registry);
    }

    @Override
    public void compiled(String backend, long nanos, boolean succeeded) {
        // a registry lookup per compile is fine: a compile takes milliseconds
        compiles(backend, succeeded).increment();
        compileTimer(backend).record(nanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void close() {
        gc.close();
        registry.close();
    }
}
