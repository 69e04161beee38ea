package dev.arrayd.server.config;

import dev.arrayd.devices.cpu.CpuOptions;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;

/**
 * Every setting of {@code arrayd serve}, in one place. Flags, environment variables, the config
 * file, {@code arrayd config --print} and docs/configuration.md are all derived from this list (a
 * test fails when a key is missing from the docs).
 *
 * <p>Precedence: flag &gt; environment ({@code ARRAYD_*}) &gt; config file ({@code --config FILE}) &gt;
 * default. See {@link ConfigResolver}.
 */
public final class ArraydConfig {

    private ArraydConfig() {}

    public static final ConfigKey<String> BIND = new ConfigKey<>("bind", "address", "127.0.0.1",
            Parsers.text(false), "an address of this machine, e.g. 127.0.0.1 or 0.0.0.0",
            "Address the gRPC port listens on (and the metrics port, unless `metrics-bind` is set). A "
                    + "non-loopback address needs authentication (`auth-tokens` or `tls-client-ca`) or `insecure`.");

    public static final ConfigKey<Integer> PORT = new ConfigKey<>("port", "int", "7700", Parsers.intIn(0, 65535),
            "an integer in 0..65535", "gRPC port; 0 = any free port (see `port-file`).");

    public static final ConfigKey<Path> UDS = new ConfigKey<>("uds", "path", "", Parsers.optionalPath(),
            "a path for a Unix domain socket, e.g. /run/arrayd/arrayd.sock, or empty",
            "Also listen on this Unix domain socket, for clients on the same host (`--target unix:///PATH`): the "
                    + "same API, authentication and quotas as the TCP port. The socket is made owner-only (0600) "
                    + "and removed on exit; a stale one from a daemon that crashed is replaced.");

    public static final ConfigKey<Long> REGION_MEMORY = new ConfigKey<>("region-memory", "bytes", "0",
            Parsers.bytes(0, Long.MAX_VALUE), "bytes, e.g. 4GiB, or 0",
            "Most bytes all shared-memory regions (see `uds`) together may hold; past it CreateRegion is "
                    + "RESOURCE_EXHAUSTED. 0 = a quarter of the memory the daemon's JVM sees (in a container, its "
                    + "memory limit). Region pages are the daemon's memory: keep this within what its limit holds "
                    + "beside the devices' `cpu-memory`.");

    public static final ConfigKey<Long> TRANSFER_MEMORY = new ConfigKey<>("transfer-memory", "bytes", "0",
            Parsers.bytes(0, Long.MAX_VALUE), "bytes, e.g. 256MiB, or 0",
            "Most bytes of transfer data the daemon holds in its heap: a session stream's inline uploads from "
                    + "their batch until they have run, its inline downloads from their submission until their data "
                    + "is sent, a unary Submit's inline uploads until its commands are done, a recorded graph's "
                    + "uploads until it is destroyed, and WriteBuffer / ReadBuffer calls until they end. A batch or "
                    + "call that would hold more "
                    + "is RESOURCE_EXHAUSTED (a session stream stops reading at 64 MiB of its own first, or half of "
                    + "this if less). 0 = half of the JVM's largest heap, at least 64 MiB. Keep it within the heap "
                    + "(`-Xmx`).");

    public static final ConfigKey<String> TARGET = new ConfigKey<>("target", "host:port", "", Parsers.text(true),
            "host:port, e.g. 127.0.0.1:7700, or empty", "host:port to listen on; when set it overrides `bind` and `port`.");

    public static final ConfigKey<String> DEVICES = new ConfigKey<>("devices", "list", "cpu", Parsers.text(false),
            "a device list, e.g. cpu or cpu:2, or none", "Devices to open: `cpu` (one device with every core), `cpu:2` (two "
                    + "devices splitting the cores), `opencl`, `cuda`; `none` for a daemon that only serves its `peers`' devices.");

    public static final ConfigKey<String> PEERS = new ConfigKey<>("peers", "list", "", Parsers.text(true),
            "a list of [name=]host:port and dns:///host:port, e.g. gpu-1=10.0.0.7:7700,gpu-2=10.0.0.8:7700, or empty",
            "Peer daemons whose devices this daemon presents as its own, named `<peer>/<device>` (e.g. "
                    + "`gpu-1/cuda:0`); without `name=` a peer is named after its host and port. `dns:///host:port` "
                    + "is every address the name resolves to (a headless Service), each member named after its "
                    + "address's name, resolved again every 5 s. Commands for them go "
                    + "to the peer over its gRPC API, in batches on one session per peer. With `devices = none` the "
                    + "daemon has no device of its own. See docs/operations.md, \"Peers\".");

    public static final ConfigKey<Path> PEER_TOKEN_FILE = new ConfigKey<>("peer-token-file", "path", "",
            Parsers.optionalPath(), "a path, or empty",
            "File whose first line is the bearer token this daemon presents to its `peers` (a token of their "
                    + "`auth-tokens`: the peers apply that tenant's quotas and fair share to this daemon).");

    public static final ConfigKey<Path> PEER_TLS_CA = new ConfigKey<>("peer-tls-ca", "path", "",
            Parsers.optionalPath(), "a PEM file path, or empty for plaintext to the peers",
            "Connect to the `peers` with TLS, trusting the CA certificates of this PEM file; this daemon presents its "
                    + "own `tls-cert` / `tls-key`, when set, as its client certificate (mutual TLS: a peer with "
                    + "`tls-client-ca` takes its CN as the tenant).");

    public static final ConfigKey<Integer> PEER_BULK_PORT = new ConfigKey<>("peer-bulk-port", "int", "0",
            Parsers.intIn(-1, 65535), "an integer in -1..65535",
            "TCP port, on the `bind` address, through which the daemons that list this one among their `peers` read "
                    + "its buffers when data moves between peers: a plain byte stream, faster than gRPC's, opened "
                    + "only to a session's key that gRPC hands out; 0 = any free port (found through gRPC), -1 = none "
                    + "(peers read through gRPC). Never opened while `tls-cert` is set: the port is plaintext.");

    public static final ConfigKey<Boolean> ALLOW_NATIVE_SOURCE = new ConfigKey<>("allow-native-source", "boolean",
            "false", Parsers.bool(), "true or false",
            "Accept native kernel source (C, OpenCL C, CUDA C, PTX). A native kernel can do anything the daemon "
                    + "process can: only for deployments that trust every client.");

    public static final ConfigKey<Boolean> INSECURE = new ConfigKey<>("insecure", "boolean", "false", Parsers.bool(),
            "true or false", "Allow listening on a non-loopback address without authentication.");

    public static final ConfigKey<Path> AUTH_TOKENS = new ConfigKey<>("auth-tokens", "path", "", Parsers.optionalPath(),
            "a file path, or empty for none",
            "Bearer token file (`<token> <tenant> [weight=N] [quota=value ...]` per line; see docs/security.md). When "
                    + "set, every call but health and reflection needs `authorization: Bearer <token>`. Re-read "
                    + "within a second of a change.");

    public static final ConfigKey<Path> TLS_CERT = new ConfigKey<>("tls-cert", "path", "", Parsers.optionalPath(),
            "a PEM file path, or empty for plaintext", "Server certificate chain (PEM); with `tls-key`, serve TLS.");

    public static final ConfigKey<Path> TLS_KEY = new ConfigKey<>("tls-key", "path", "", Parsers.optionalPath(),
            "a PEM file path, or empty", "Private key of `tls-cert` (PEM, PKCS#8).");

    public static final ConfigKey<Path> TLS_CLIENT_CA = new ConfigKey<>("tls-client-ca", "path", "",
            Parsers.optionalPath(), "a PEM file path, or empty for no client certificates",
            "Mutual TLS: clients must present a certificate signed by one of these CAs; its subject CN names the "
                    + "tenant (or a `cert:<CN>` line of `auth-tokens` maps it).");

    public static final ConfigKey<dev.arrayd.server.auth.Quotas> TENANT_QUOTAS = new ConfigKey<>("tenant-quotas",
            "quotas", "", text -> dev.arrayd.server.auth.Quotas.DEFAULTS.parse(text),
            "key=value settings: " + dev.arrayd.server.auth.Quotas.KEYS,
            "Quotas of the `default` tenant and defaults for every tenant of `auth-tokens`, e.g. `memory=4GiB "
                    + "inflight=20000 streams=32 compile-seconds=60 message=32MiB`; empty = 64 streams, the rest unlimited "
                    + "(`streams=unlimited` lifts that too).");

    public static final ConfigKey<Integer> SESSION_MAX_INFLIGHT = new ConfigKey<>("session-max-inflight", "int", "8192",
            Parsers.intIn(1, 1 << 24), "an integer in 1..16777216",
            "Commands of one session submitted and not yet answered before its session stream stops reading "
                    + "(flow control) and its unary Submit calls get RESOURCE_EXHAUSTED.");

    public static final ConfigKey<Long> CPU_MEMORY = new ConfigKey<>("cpu-memory", "bytes", "0",
            Parsers.bytes(0, 1L << 50), "a byte count such as 268435456 or 256MiB (0 = automatic)",
            "Memory of each CPU device; 0 = half the machine's RAM split among the CPU devices.");

    public static final ConfigKey<Integer> CPU_THREADS = new ConfigKey<>("cpu-threads", "int", "0",
            Parsers.intIn(0, CpuOptions.MAX_DEVICE_THREADS),
            "an integer in 0.." + CpuOptions.MAX_DEVICE_THREADS + " (0 = split the cores)",
            "Worker threads of each CPU device; 0 = the machine's cores split among the CPU devices (at least one "
                    + "each). With N > 0 every CPU device gets N, e.g. `--devices cpu --cpu-threads 1` (one device of one "
                    + "core) against `--devices cpu:2 --cpu-threads 1` (two of one core each).");

    public static final ConfigKey<Integer> CPU_NICE = new ConfigKey<>("cpu-nice", "int",
            String.valueOf(CpuOptions.DEFAULT_COMPUTE_NICE), Parsers.intIn(0, 19), "an integer in 0..19 (0 = unchanged)",
            "How much lower the CPU devices' kernel threads are scheduled than the daemon's other threads (added to "
                    + "their Linux nice value). They still use every idle cycle, but the transport, the dispatcher and "
                    + "the programs beside the daemon win a contended core from them, so a polite client's round trip "
                    + "does not wait for a flooding client's kernel time slice.");

    public static final ConfigKey<Integer> CPU_VECTOR_BITS = new ConfigKey<>("cpu-vector-bits", "int",
            String.valueOf(CpuOptions.DEFAULT_VECTOR_BITS), Parsers.intOf(Set.of(256, 512)), "256 or 512",
            "The widest SIMD vectors gcc may use for the CPU devices' IR kernels on x86-64 (gcc's "
                    + "`-mprefer-vector-width`; part of the compile cache's keys). On a CPU with AVX-512, 512 runs "
                    + "vectorized compute up to 1.7x faster than 256 (a register-blocked matmul, a work-group "
                    + "reduction); kernels that call the math library (exp, log, tanh, pow) keep 256 bits whatever this "
                    + "says, since where those calls stay scalar the core runs them at the lower clock 512-bit code "
                    + "brings (docs/benchmarks.md, `ir`). Without AVX-512, or on another architecture, it changes nothing.");

    public static final ConfigKey<Boolean> CPU_LANES = new ConfigKey<>("cpu-lanes", "boolean", "true", Parsers.bool(),
            "true or false",
            "Whether the CPU devices give IR kernels that loop inside each work-item (a dot product, a convolution, a "
                    + "naive matmul) a lane form, which runs blocks of 16 work-items as the lanes of vectors where that "
                    + "pays (docs/kernels.md, CPU backend; a naive matmul 4.5-5.0x faster, docs/benchmarks.md `lanes`). The "
                    + "results are the same bits; false keeps every kernel item by item (part of the compile cache's keys).");

    public static final ConfigKey<Integer> JIT_NICE = new ConfigKey<>("jit-nice", "int", "10", Parsers.intIn(0, 19),
            "an integer in 0..19 (0 = unchanged)",
            "How much lower the JVM's optimizing JIT compiler threads (C2) are scheduled (added to their Linux nice "
                    + "value). A daemon warming up compiles in bursts of up to a core for tens of seconds; lowered as far as "
                    + "the kernels (cpu-nice), the compiler shares a busy core with them instead of taking it, and the "
                    + "transport always wins it. The quick first tier (C1) keeps its priority.");

    public static final ConfigKey<Path> CACHE_DIR = new ConfigKey<>("cache-dir", "path", "", Parsers.optionalPath(),
            "a directory path, or empty for the default",
            "Where the CPU backend keeps compiled kernels across restarts (a content-hash cache); empty = "
                    + "`$XDG_CACHE_HOME/arrayd/kernels`, else `~/.cache/arrayd/kernels`.");

    public static final ConfigKey<Long> COMPILE_CACHE_MAX_BYTES = new ConfigKey<>("compile-cache-max-bytes", "bytes",
            "1GiB", Parsers.bytes(1 << 20, Long.MAX_VALUE), "a byte count of at least 1MiB",
            "Most bytes the CPU backend's kernel cache (`cache-dir`) keeps on disk: past it, the kernels used least "
                    + "recently are deleted (a later compile of one builds it again).");

    public static final ConfigKey<Long> MAX_MESSAGE_BYTES = new ConfigKey<>("max-message-bytes", "bytes", "64MiB",
            Parsers.bytes(1 << 20, Integer.MAX_VALUE), "a byte count in 1MiB..2GiB-1",
            "Largest gRPC message the daemon accepts.");

    public static final ConfigKey<Long> FAST_PATH_MICROS = new ConfigKey<>("fast-path-micros", "int", "20",
            Parsers.longIn(0, 1_000_000), "an integer in 0..1000000",
            "Commands expected to finish within this many µs run on the thread that made them ready instead "
                    + "of a stream worker (two thread hand-offs saved); launches within 3x as many, when a "
                    + "command's completion made them ready, on the thread completing it (one per completion); "
                    + "0 = off.");

    public static final ConfigKey<Path> PORT_FILE = new ConfigKey<>("port-file", "path", "", Parsers.optionalPath(),
            "a file path, or empty for none", "Write the bound gRPC port to this file once listening.");

    public static final ConfigKey<Duration> SESSION_LEASE = new ConfigKey<>("session-lease", "duration", "10s",
            Parsers.duration(Duration.ofSeconds(1), Duration.ofMinutes(10)), "a duration in 1s..10m, e.g. 10s",
            "Lease granted to a session whose client asks for none.");

    public static final ConfigKey<Integer> METRICS_PORT = new ConfigKey<>("metrics-port", "int", "7701",
            Parsers.intIn(-1, 65535), "an integer in -1..65535",
            "HTTP port of `/metrics` (Prometheus text or OpenMetrics), on the `metrics-bind` address; 0 = any free port, "
                    + "-1 = no metrics endpoint. When `port` is 0 and this key is not set, it is 0 too (tests, "
                    + "benchmarks).");

    public static final ConfigKey<String> METRICS_BIND = new ConfigKey<>("metrics-bind", "address", "",
            Parsers.text(true), "an address of this machine, e.g. 0.0.0.0, or empty",
            "Address of `/metrics`; empty = the `bind` address. A sidecar keeps gRPC on 127.0.0.1 for its "
                    + "application and opens metrics to Prometheus with `metrics-bind 0.0.0.0`. The endpoint "
                    + "is read-only and needs no authentication (it shows client names and counts, no data).");

    public static final ConfigKey<Integer> METRICS_KERNEL_LIMIT = new ConfigKey<>("metrics-kernel-limit", "int", "0",
            Parsers.intIn(0, 1000), "an integer in 0..1000",
            "Opt-in `kernel` label: the first N distinct kernel names get their own series of "
                    + "`arrayd_kernel_launches_total` and `arrayd_kernel_device_seconds_total` (two each), later "
                    + "names count as `other`; 0 = no kernel label.");

    public static final ConfigKey<Boolean> TRACING = new ConfigKey<>("tracing", "boolean", "false", Parsers.bool(),
            "true or false",
            "Export a span per command with OpenTelemetry (its queue wait and device time as child spans, a "
                    + "child of the trace context the client's call carried). Exporter, endpoint, sampler and "
                    + "resource come from the standard `OTEL_*` environment variables; arrayd's defaults: OTLP "
                    + "over HTTP to localhost:4318, service name `arrayd`, 1% of the traces the client did not "
                    + "sample itself (docs/operations.md, \"Tracing\").");

    public static final ConfigKey<Integer> METRICS_CLIENT_LIMIT = new ConfigKey<>("metrics-client-limit", "int", "20",
            Parsers.intIn(0, 1000), "an integer in 0..1000",
            "Distinct client names that get their own `client` label in per-client metrics; later names are "
                    + "counted as `other` (bounds the number of series).");

    public static final ConfigKey<Duration> SHUTDOWN_GRACE = new ConfigKey<>("shutdown-grace", "duration", "25s",
            Parsers.duration(Duration.ZERO, Duration.ofMinutes(10)), "a duration in 0s..10m, e.g. 25s",
            "On SIGTERM, how long accepted work may run before what remains is failed with UNAVAILABLE. Keep it "
                    + "below the orchestrator's kill timeout (Kubernetes: terminationGracePeriodSeconds, 30 s).");

    public static final ConfigKey<String> LOG_FORMAT = new ConfigKey<>("log-format", "enum", "text",
            Parsers.oneOf(Set.of("text", "json")), "text or json",
            "Log lines on stderr: `text` (readable) or `json` (one JSON object per line).");

    public static final ConfigKey<String> LOG_LEVEL = new ConfigKey<>("log-level", "enum", "info",
            Parsers.oneOf(Set.of("trace", "debug", "info", "warn", "error")), "trace, debug, info, warn or error",
            "Least severe level logged by arrayd (gRPC's own logs stay at warn).");

    /** Every key, in the order `config --print` and the docs list them. */
    public static final List<ConfigKey<?>> ALL = List.of(BIND, PORT, UDS, REGION_MEMORY, TRANSFER_MEMORY, TARGET, DEVICES, PEERS, PEER_TOKEN_FILE, PEER_TLS_CA, PEER_BULK_PORT, ALLOW_NATIVE_SOURCE, INSECURE,
            CPU_MEMORY, CPU_THREADS, CPU_NICE, CPU_VECTOR_BITS, CPU_LANES, JIT_NICE, CACHE_DIR, COMPILE_CACHE_MAX_BYTES, MAX_MESSAGE_BYTES, FAST_PATH_MICROS, PORT_FILE, SESSION_LEASE, METRICS_PORT, METRICS_BIND, METRICS_KERNEL_LIMIT, TRACING,
            METRICS_CLIENT_LIMIT, SHUTDOWN_GRACE, LOG_FORMAT, LOG_LEVEL, AUTH_TOKENS, TLS_CERT, TLS_KEY, TLS_CLIENT_CA,
            TENANT_QUOTAS, SESSION_MAX_INFLIGHT);

    /** The flag naming the config file (not itself a key: a file cannot name another file). */
    public static final String CONFIG_FLAG = "--config";
    /** The environment variable naming the config file when the flag is absent. */
    public static final String CONFIG_ENV = "ARRAYD_CONFIG";
}
