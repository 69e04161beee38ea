package dev.arrayd.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.Message;
import com.google.protobuf.util.Durations;
import dev.arrayd.client.ArraydClient;
import dev.arrayd.client.Ir;
import dev.arrayd.client.IrExpr;
import dev.arrayd.client.IrKernelSpec;
import dev.arrayd.client.KernelModuleSpec;
import dev.arrayd.client.Session;
import dev.arrayd.proto.v1.AwaitStreamRequest;
import dev.arrayd.proto.v1.BufferServiceGrpc;
import dev.arrayd.proto.v1.CancelRequest;
import dev.arrayd.proto.v1.CloseSessionRequest;
import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.CompileRequest;
import dev.arrayd.proto.v1.CreateBufferRequest;
import dev.arrayd.proto.v1.CreateStreamRequest;
import dev.arrayd.proto.v1.DataType;
import dev.arrayd.proto.v1.DescribeBufferRequest;
import dev.arrayd.proto.v1.DestroyBufferRequest;
import dev.arrayd.proto.v1.DestroyGraphRequest;
import dev.arrayd.proto.v1.DestroyKernelRequest;
import dev.arrayd.proto.v1.DestroyStreamRequest;
import dev.arrayd.proto.v1.DeviceServiceGrpc;
import dev.arrayd.proto.v1.DeviceStats;
import dev.arrayd.proto.v1.EventCompletion;
import dev.arrayd.proto.v1.ExecuteRequest;
import dev.arrayd.proto.v1.ExecuteResponse;
import dev.arrayd.proto.v1.ExecutionServiceGrpc;
import dev.arrayd.proto.v1.GetDeviceRequest;
import dev.arrayd.proto.v1.GetStatsRequest;
import dev.arrayd.proto.v1.KeepAliveRequest;
import dev.arrayd.proto.v1.KernelServiceGrpc;
import dev.arrayd.proto.v1.ListDevicesRequest;
import dev.arrayd.proto.v1.OpenSessionRequest;
import dev.arrayd.proto.v1.OpenSharedBufferRequest;
import dev.arrayd.proto.v1.QueryEventsRequest;
import dev.arrayd.proto.v1.ReadBufferRequest;
import dev.arrayd.proto.v1.RecordGraphRequest;
import dev.arrayd.proto.v1.ReplayGraphRequest;
import dev.arrayd.proto.v1.SessionServiceGrpc;
import dev.arrayd.proto.v1.ShareBufferRequest;
import dev.arrayd.proto.v1.SharingServiceGrpc;
import dev.arrayd.proto.v1.StatsServiceGrpc;
import dev.arrayd.proto.v1.SubmitRequest;
import dev.arrayd.proto.v1.Upload;
import dev.arrayd.proto.v1.WaitEventsRequest;
import dev.arrayd.proto.v1.WriteBufferRequest;
import dev.arrayd.proto.v1.WriteBufferResponse;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.stub.StreamObserver;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.EdgeCasesMode;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * API fuzzing against the daemon as a real process, over TCP, with jqwik generating the requests
 * ({@link FuzzRequests}, {@link dev.arrayd.server.FuzzIr}) over every RPC: random and mutated messages, bytes that do not parse,
 * wrong and foreign handles, huge sizes, unsigned values at 2^31 and 2^63 and beyond, names and labels of
 * 100 kB, IR left incomplete at every depth and nested past the limits, cyclic and self waits, another
 * tenant's session token, session streams and WriteBuffer streams, all from tenant {@code bob} while
 * {@code alice} holds a session with data. Every request must be answered with a status that reaches the
 * client (never INTERNAL or UNKNOWN, a daemon bug; never DEADLINE_EXCEEDED, a hang; never UNAVAILABLE, a
 * crash; never a trailer too large to arrive, and no description past {@value #MAX_DESCRIPTION} bytes); the
 * daemon's log may grow by at most {@value #LOG_LINES_PER_REQUEST} lines per request; the daemon must keep
 * serving, alice's data stay untouched, its device memory go back to its start value once the sessions close,
 * and SIGTERM stop it cleanly. The daemon runs without {@code --allow-native-source}: bob launches an IR
 * kernel, whose every access the daemon range-checks, as any untrusted tenant would.
 *
 * <p>{@value #TRIES} tries of {@value #PER_TRY} requests per build; {@code -Darrayd.fuzz.scale=N} sends N times
 * as many (the figures of docs/security.md come from {@code N = 10}, 100,000 requests). Per method and status
 * code, what came back is printed and written to {@code target/fuzz-process-report.md}.
 */
class ProcessFuzzProperties {

    static final int TRIES = 100;
    static final int PER_TRY = 100;
    /** Requests per try: {@link #PER_TRY} times {@code arrayd.fuzz.scale}. */
    static final int SCALE = Integer.getInteger("arrayd.fuzz.scale", 1);
    /** Longest status description a client gets (percent-encoded bytes): the daemon cuts longer ones. */
    static final int MAX_DESCRIPTION = 4096;
    /** Lines the daemon's log may grow by per request (a reclaimed session's line, a throttled warning). */
    static final int LOG_LINES_PER_REQUEST = 2;
    static final String ALICE = "alice-0123456789abcdef0123";
    static final String BOB = "bob-0123456789abcdef012345";
    /** Codes that mean the daemon failed, not the request. */
    static final Set<Status.Code> DAEMON_FAULTS = Set.of(Status.Code.INTERNAL, Status.Code.UNKNOWN,
            Status.Code.DEADLINE_EXCEEDED, Status.Code.UNAVAILABLE, Status.Code.DATA_LOSS);
    /** What a stolen session token may get: exactly what a token that never existed gets, or a refusal before. */
    static final Set<Status.Code> STOLEN_TOKEN = Set.of(Status.Code.NOT_FOUND, Status.Code.INVALID_ARGUMENT,
            Status.Code.RESOURCE_EXHAUSTED);

    static Path dir;
    static DaemonProcess daemon;
    static ManagedChannel aliceChannel;
    static ManagedChannel bobChannel;
    static ArraydClient bobClient;
    static Session bob;
    static String aliceSession;
    static String bobSession;
    static long[] aliceBuffers = new long[FuzzRequests.SLOTS];
    static long[] bobBuffers = new long[FuzzRequests.SLOTS];
    static byte[] aliceData = new byte[256];
    static FuzzRequests.Names names;
    static final AtomicLong requests = new AtomicLong();
    /** Per method, how many answers of each code. */
    static final Map<String, Map<Status.Code, Long>> answersByMethod = new java.util.concurrent.ConcurrentSkipListMap<>();
    static long startedNanos;
    static long memoryAtStart;

    @BeforeContainer
    static void start() throws Exception {
        startedNanos = System.nanoTime();
        dir = Files.createTempDirectory("arrayd-fuzz");
        Path tokens = dir.resolve("tokens");
        Files.writeString(tokens, ALICE + " alice\n" + BOB + " bob memory=8MiB streams=4 inflight=2000 message=4MiB\n");
        // no --allow-native-source: the fuzzing tenant gets what an untrusted tenant gets, IR kernels only
        daemon = new DaemonProcess("--auth-tokens", tokens.toString(), "--metrics-port", "0");
        aliceChannel = AuthProcessTest.channel(daemon.target(), ALICE);
        bobChannel = AuthProcessTest.channel(daemon.target(), BOB);
        memoryAtStart = memoryUsed();
        aliceSession = SessionServiceGrpc.newBlockingStub(aliceChannel).openSession(OpenSessionRequest.newBuilder()
                .setClientName("alice").setLease(Durations.fromMillis(600_000)).build()).getSession();
        // bob's session comes from the Java client, which compiles his IR kernel; the fuzz uses its token
        bobClient = ArraydClient.builder().target(daemon.target()).bearerToken(BOB).build();
        bob = bobClient.openSession("bob-fuzz", Duration.ofMinutes(10)).get(60, TimeUnit.SECONDS);
        bobSession = bob.id();
        for (int i = 0; i < aliceData.length; i++) {
            aliceData[i] = (byte) (i * 7 + 3);
        }
        var aliceBuf = BufferServiceGrpc.newBlockingStub(aliceChannel);
        var bobBuf = BufferServiceGrpc.newBlockingStub(bobChannel);
        SubmitRequest.Builder aliceWrites = SubmitRequest.newBuilder().setSession(aliceSession);
        Map<Long, Long> handles = new HashMap<>();
        for (int i = 0; i < FuzzRequests.SLOTS; i++) {
            aliceBuffers[i] = aliceBuf.createBuffer(f32(aliceSession)).getBuffer().getBuffer();
            bobBuffers[i] = bobBuf.createBuffer(f32(bobSession)).getBuffer().getBuffer();
            aliceWrites.addCommands(Command.newBuilder().setEvent(i + 1).setUpload(Upload.newBuilder()
                    .setBuffer(aliceBuffers[i]).setData(ByteString.copyFrom(aliceData))));
            handles.put(FuzzRequests.ownBuffer(i), bobBuffers[i]);
            handles.put(FuzzRequests.otherBuffer(i), aliceBuffers[i]);
            handles.put(FuzzRequests.otherEvent(i), i + 1L); // alice's events, named in bob's session
        }
        var aliceExec = ExecutionServiceGrpc.newBlockingStub(aliceChannel);
        aliceExec.waitEvents(WaitEventsRequest.newBuilder().setSession(aliceSession)
                .addAllEvents(aliceExec.submit(aliceWrites.build()).getEventsList()).build());
        long kernel = bob.compile(KernelModuleSpec.ir(vadd())).get(60, TimeUnit.SECONDS).get("vadd").id();
        handles.put(FuzzRequests.ownKernel(), kernel);
        names = new FuzzRequests.Names(Map.of(FuzzRequests.OWN_SESSION, bobSession, FuzzRequests.OTHER_SESSION,
                aliceSession), Map.copyOf(handles));
    }

    @AfterContainer
    static void stop() throws Exception {
        try {
            assertTrue(requests.get() >= (long) TRIES * PER_TRY * SCALE, "requests sent: " + requests.get());
            assertServing();
            // alice's data survived everything bob sent
            var aliceBuf = BufferServiceGrpc.newBlockingStub(aliceChannel).withDeadlineAfter(20, TimeUnit.SECONDS);
            for (long h : aliceBuffers) {
                List<ByteString> got = new ArrayList<>();
                aliceBuf.readBuffer(ReadBufferRequest.newBuilder().setSession(aliceSession).setBuffer(h).build())
                        .forEachRemaining(c -> got.add(c.getData()));
                assertEquals(ByteString.copyFrom(aliceData), ByteString.copyFrom(got), "alice's buffer " + h);
            }
            bobClient.close();
            SessionServiceGrpc.newBlockingStub(aliceChannel).closeSession(CloseSessionRequest.newBuilder()
                    .setSession(aliceSession).build());
            awaitMemory(memoryAtStart);
            report();
        } finally {
            bobClient.close();
            aliceChannel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            bobChannel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            assertEquals(0, daemon.terminate(), () -> "exit code after SIGTERM; output:\n" + daemon.output());
        }
    }

    /** Device memory in use over every device, as GetStats reports it. */
    static long memoryUsed() {
        return StatsServiceGrpc.newBlockingStub(aliceChannel).withDeadlineAfter(20, TimeUnit.SECONDS)
                .getStats(GetStatsRequest.getDefaultInstance()).getDevicesList().stream()
                .mapToLong(DeviceStats::getMemoryUsedBytes).sum();
    }

    /** Polls (10 ms apart, at most 30 s) until device memory in use is {@code bytes} (frees follow the closes). */
    static void awaitMemory(long bytes) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        long used;
        while ((used = memoryUsed()) != bytes) {
            assertTrue(System.nanoTime() < deadline, "device memory in use: " + used + " bytes (at start: " + bytes + ")");
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
    }

    /** Prints, and writes to target/fuzz-process-report.md, what came back per method. */
    static void report() throws java.io.IOException {
        long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - startedNanos);
        StringBuilder md = new StringBuilder("| method | requests | answers (status code: count) |\n| --- | --- | --- |\n");
        Map<Status.Code, Long> all = new java.util.EnumMap<>(Status.Code.class);
        answersByMethod.forEach((method, codes) -> {
            md.append("| `").append(method).append("` | ").append(codes.values().stream().mapToLong(Long::longValue).sum())
                    .append(" | ");
            md.append(String.join(", ", codes.entrySet().stream().map(e -> e.getKey() + " " + e.getValue()).toList()));
            md.append(" |\n");
            codes.forEach((c, n) -> all.merge(c, n, Long::sum));
        });
        md.append("\n").append(requests.get()).append(" requests in ").append(seconds).append(" s; answers: ").append(all)
                .append("\n");
        Files.createDirectories(Path.of("target"));
        Files.writeString(Path.of("target", "fuzz-process-report.md"), md);
        System.out.print(md);
        System.out.println("RESULT fuzz.process_requests " + requests.get() + " seconds " + seconds + " methods "
                + answersByMethod.size());
    }

    /** c[i] = a[i] + b[i] for i < n: every access range-checked by the daemon, whatever the launch says. */
    static IrKernelSpec vadd() {
        return Ir.kernel("vadd")
                .buffer("a", dev.arrayd.client.DType.F32, dev.arrayd.client.Access.READ, Ir.param("n"))
                .buffer("b", dev.arrayd.client.DType.F32, dev.arrayd.client.Access.READ, Ir.param("n"))
                .buffer("c", dev.arrayd.client.DType.F32, dev.arrayd.client.Access.WRITE, Ir.param("n"))
                .scalar("n", dev.arrayd.client.DType.I64, 0, 1L << 40)
                .body(b -> {
                    IrExpr i = b.let("i", Ir.globalId(0));
                    b.when(i.lt(Ir.param("n")), then -> then.store("c", i, Ir.load("a", i).add(Ir.load("b", i))));
                });
    }

    static CreateBufferRequest f32(String session) {
        return CreateBufferRequest.newBuilder().setSession(session).setDtype(DataType.DATA_TYPE_F32).addDims(64).build();
    }

    static void assertServing() {
        assertEquals("SERVING", HealthGrpc.newBlockingStub(bobChannel).withDeadlineAfter(20, TimeUnit.SECONDS)
                .check(HealthCheckRequest.getDefaultInstance()).getStatus().name(), "the daemon keeps serving");
    }

    @Provide
    Arbitrary<List<FuzzRequests.Request>> tries() {
        return FuzzRequests.requests().list().ofSize(PER_TRY * SCALE);
    }

    // no edge-case mix-in: it would repeat the first alternative of each generator (a Submit) thousands of times
    @Property(tries = TRIES, shrinking = ShrinkingMode.OFF, edgeCases = EdgeCasesMode.NONE)
    void everyHostileRequestIsAnsweredWithAStatus(@ForAll("tries") List<FuzzRequests.Request> batch) {
        long linesBefore = daemon.outputLines();
        for (FuzzRequests.Request r : batch) {
            List<Status> answers = send(r);
            requests.incrementAndGet();
            answersByMethod.computeIfAbsent(method(r), m -> new java.util.concurrent.ConcurrentHashMap<>())
                    .merge(answers.getFirst().getCode(), 1L, Long::sum);
            for (Status s : answers) {
                assertTrue(!DAEMON_FAULTS.contains(s.getCode()), () -> s + " for " + r);
                assertTrue(s.getDescription() == null || !s.getDescription().contains("metadata size"),
                        () -> "a status that did not arrive: " + s + " for " + r);
                assertTrue(s.getDescription() == null || encodedBytes(s.getDescription()) <= MAX_DESCRIPTION,
                        () -> "a description of " + s.getDescription().length() + " characters for " + r);
            }
            if (r instanceof FuzzRequests.Unary(Message m) && namesOtherSession(m)) {
                Status s = answers.getFirst();
                assertTrue(STOLEN_TOKEN.contains(s.getCode()), () -> "alice's session token used by bob: " + s + " for " + m);
            }
        }
        assertServing();
        long grown = daemon.outputLines() - linesBefore;
        assertTrue(grown <= (long) LOG_LINES_PER_REQUEST * batch.size(), () -> "the daemon's log grew by " + grown
                + " lines for " + batch.size() + " requests; the last lines:\n" + daemon.lastLines(40));
    }

    /** The size of a status description as gRPC sends it (percent-encoded outside printable ASCII). */
    static int encodedBytes(String text) {
        int n = 0;
        for (byte b : text.getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
            n += b >= ' ' && b < '~' && b != '%' ? 1 : 3;
        }
        return n;
    }

    /** The RPC a request calls. */
    static String method(FuzzRequests.Request r) {
        return switch (r) {
            case FuzzRequests.Unary(Message m) -> m.getDescriptorForType().getName().replace("Request", "");
            case FuzzRequests.Raw raw -> raw.method().getFullMethodName().replace("arrayd.v1.", "") + " (raw bytes)";
            case FuzzRequests.Stream s -> "Execute (session stream)";
            case FuzzRequests.Write w -> "WriteBuffer (stream)";
        };
    }

    static boolean namesOtherSession(Message m) {
        var f = m.getDescriptorForType().findFieldByName("session");
        return f != null && FuzzRequests.OTHER_SESSION.equals(m.getField(f));
    }

    // ------------------------------------------------------------------ sending, as bob

    /** Sends one request; the statuses it got (the call's, then any batch rejections and failed commands). */
    static List<Status> send(FuzzRequests.Request r) {
        return switch (r) {
            case FuzzRequests.Unary(Message m) -> List.of(unary(names.resolve(m)));
            case FuzzRequests.Stream(List<ExecuteRequest> msgs) -> stream(msgs.stream().map(names::resolve).toList());
            case FuzzRequests.Write(List<WriteBufferRequest> chunks) -> List.of(write(chunks.stream().map(names::resolve)
                    .toList()));
            case FuzzRequests.Raw raw -> List.of(raw(raw.method(), raw.body()));
        };
    }

    /** Sends {@code body} as the one request of {@code method}, as bytes; the status the call ends with. */
    static Status raw(MethodDescriptor<?, ?> method, byte[] body) {
        return dev.arrayd.server.RawCalls.call(bobChannel, method, body);
    }


    static Status unary(Message m) {
        var buffers = BufferServiceGrpc.newBlockingStub(bobChannel).withDeadlineAfter(20, TimeUnit.SECONDS);
        var exec = ExecutionServiceGrpc.newBlockingStub(bobChannel).withDeadlineAfter(20, TimeUnit.SECONDS);
        var sharing = SharingServiceGrpc.newBlockingStub(bobChannel).withDeadlineAfter(20, TimeUnit.SECONDS);
        var sessions = SessionServiceGrpc.newBlockingStub(bobChannel).withDeadlineAfter(20, TimeUnit.SECONDS);
        var devices = DeviceServiceGrpc.newBlockingStub(bobChannel).withDeadlineAfter(20, TimeUnit.SECONDS);
        try {
            switch (m) {
                case SubmitRequest r -> {
                    var events = exec.submit(r).getEventsList();
                    if (!events.isEmpty()) { // wait, so that bob's commands in flight stay bounded
                        exec.waitEvents(WaitEventsRequest.newBuilder().setSession(r.getSession()).addAllEvents(events)
                                .build());
                    }
                }
                case CreateBufferRequest r -> {
                    long h = buffers.createBuffer(r).getBuffer().getBuffer();
                    buffers.destroyBuffer(DestroyBufferRequest.newBuilder().setSession(r.getSession()).setBuffer(h).build());
                }
                case DestroyBufferRequest r -> {
                    // slot 0 of each tenant stays, so that later requests still find a live buffer
                    long h = r.getBuffer() == bobBuffers[0] || r.getBuffer() == aliceBuffers[0] ? r.getBuffer() ^ 1
                            : r.getBuffer();
                    buffers.destroyBuffer(r.toBuilder().setBuffer(h).build());
                }
                case DescribeBufferRequest r -> buffers.describeBuffer(r).getBuffer();
                case ReadBufferRequest r -> buffers.readBuffer(r).forEachRemaining(c -> { });
                case WaitEventsRequest r -> exec.waitEvents(r);
                case QueryEventsRequest r -> exec.queryEvents(r);
                case CreateStreamRequest r -> {
                    long st = exec.createStream(r).getStream();
                    exec.destroyStream(DestroyStreamRequest.newBuilder().setSession(r.getSession()).setStream(st).build());
                }
                case DestroyStreamRequest r -> exec.destroyStream(r);
                case AwaitStreamRequest r -> exec.awaitStream(r);
                case KeepAliveRequest r -> sessions.keepAlive(r);
                case ShareBufferRequest r -> sharing.shareBuffer(r);
                case OpenSharedBufferRequest r -> sharing.openSharedBuffer(r);
                case CompileRequest r -> KernelServiceGrpc.newBlockingStub(bobChannel).withDeadlineAfter(60, TimeUnit.SECONDS)
                        .compile(r);
                case DestroyKernelRequest r -> KernelServiceGrpc.newBlockingStub(bobChannel)
                        .withDeadlineAfter(20, TimeUnit.SECONDS).destroyKernel(r);
                case GetDeviceRequest r -> devices.getDevice(r).getDevice();
                case ListDevicesRequest r -> devices.listDevices(r);
                case GetStatsRequest r -> StatsServiceGrpc.newBlockingStub(bobChannel).withDeadlineAfter(20, TimeUnit.SECONDS)
                        .getStats(r);
                case OpenSessionRequest r -> {
                    String s = sessions.openSession(r).getSession();
                    sessions.closeSession(CloseSessionRequest.newBuilder().setSession(s).build());
                }
                case CloseSessionRequest r -> sessions.closeSession(r);
                case CancelRequest r -> exec.cancel(r);
                case RecordGraphRequest r -> {
                    long g = exec.recordGraph(r).getGraph();
                    exec.destroyGraph(DestroyGraphRequest.newBuilder().setSession(r.getSession()).setGraph(g).build());
                }
                case ReplayGraphRequest r -> {
                    var events = exec.replayGraph(r).getEventsList();
                    exec.waitEvents(WaitEventsRequest.newBuilder().setSession(r.getSession()).addAllEvents(events).build());
                }
                case DestroyGraphRequest r -> exec.destroyGraph(r);
                default -> throw new AssertionError("no sender for " + m.getClass());
            }
            return Status.OK;
        } catch (StatusRuntimeException e) {
            return e.getStatus();
        }
    }

    /** A session stream: sends the messages, half-closes, collects everything until the call ends. */
    static List<Status> stream(List<ExecuteRequest> msgs) {
        CompletableFuture<Status> end = new CompletableFuture<>();
        List<Status> answers = new ArrayList<>();
        StreamObserver<ExecuteRequest> out = ExecutionServiceGrpc.newStub(bobChannel)
                .withDeadlineAfter(20, TimeUnit.SECONDS).execute(new StreamObserver<>() {
                    @Override
                    public void onNext(ExecuteResponse r) {
                        synchronized (answers) {
                            if (r.hasRejected()) {
                                answers.add(Status.fromCodeValue(r.getRejected().getCode())
                                        .withDescription("rejected: " + r.getRejected().getMessage()));
                            }
                            for (EventCompletion c : r.getCompletions().getCompletionsList()) {
                                if (c.getCode() != 0) {
                                    answers.add(Status.fromCodeValue(c.getCode()).withDescription("event " + c.getEvent()
                                            + ": " + c.getMessage()));
                                }
                            }
                        }
                    }

                    @Override
                    public void onError(Throwable t) {
                        end.complete(Status.fromThrowable(t));
                    }

                    @Override
                    public void onCompleted() {
                        end.complete(Status.OK);
                    }
                });
        msgs.forEach(out::onNext);
        out.onCompleted();
        List<Status> all = new ArrayList<>();
        all.add(await(end));
        synchronized (answers) {
            all.addAll(answers);
        }
        return all;
    }

    /** A WriteBuffer call: sends the chunks, half-closes, waits for the answer. */
    static Status write(List<WriteBufferRequest> chunks) {
        CompletableFuture<Status> end = new CompletableFuture<>();
        StreamObserver<WriteBufferRequest> out = BufferServiceGrpc.newStub(bobChannel).withDeadlineAfter(20, TimeUnit.SECONDS)
                .writeBuffer(new StreamObserver<>() {
                    @Override
                    public void onNext(WriteBufferResponse r) { }

                    @Override
                    public void onError(Throwable t) {
                        end.complete(Status.fromThrowable(t));
                    }

                    @Override
                    public void onCompleted() {
                        end.complete(Status.OK);
                    }
                });
        chunks.forEach(out::onNext);
        out.onCompleted();
        return await(end);
    }

    static Status await(CompletableFuture<Status> end) {
        try {
            return end.get(30, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            return Status.DEADLINE_EXCEEDED.withDescription("no answer within 30 s");
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
