package dev.arrayd.client;

import dev.arrayd.proto.v1.Attach;
import dev.arrayd.proto.v1.AwaitStreamRequest;
import dev.arrayd.proto.v1.AwaitStreamResponse;
import dev.arrayd.proto.v1.CancelRequest;
import dev.arrayd.proto.v1.CancelResponse;
import dev.arrayd.proto.v1.CloseSessionRequest;
import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.CompileRequest;
import dev.arrayd.proto.v1.CompileResponse;
import dev.arrayd.proto.v1.CompiledKernel;
import dev.arrayd.proto.v1.CompiledModule;
import dev.arrayd.proto.v1.CreateBufferRequest;
import dev.arrayd.proto.v1.CreateStreamRequest;
import dev.arrayd.proto.v1.DestroyBufferRequest;
import dev.arrayd.proto.v1.DestroyKernelRequest;
import dev.arrayd.proto.v1.DestroyStreamRequest;
import dev.arrayd.proto.v1.EventCompletion;
import dev.arrayd.proto.v1.ExecuteRequest;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.IntFunction;

/** The {@link Session} implementation: one {@code Execute} stream, its outbox and its event table. */
final class SessionImpl implements Session {

    private final Stubs stubs;
    private final ScheduledExecutorService timer;
    private final Duration closeTimeout;
    private final Consumer<SessionImpl> onClosed;
    private final String id;
    private final String clientName;
    private final Duration lease;

    private final EventTable events = new EventTable();
    private final CommandOutbox outbox;
    private final CompletableFuture<Session> attached = new CompletableFuture<>();
    private final CompletableFuture<Void> streamDone = new CompletableFuture<>();
    private final CompletableFuture<Void> closed = new CompletableFuture<>();
    private final AtomicBoolean closing = new AtomicBoolean();

    /** Set in {@link #start()} before anything else can reach the session; onNext only on the draining thread. */
    private ClientCallStreamObserver<ExecuteRequest> requests;
    private volatile ScheduledFuture<?> keepalive;
    private final Duration completionLinger;

    SessionImpl(Stubs stubs, ScheduledExecutorService timer, Duration closeTimeout, Consumer<SessionImpl> onClosed,
            String id, String clientName, Duration lease, Duration completionLinger) {
        this.completionLinger = completionLinger;
        this.stubs = stubs;
        this.timer = timer;
        this.closeTimeout = closeTimeout;
        this.onClosed = onClosed;
        this.id = id;
        this.clientName = clientName;
        this.lease = lease;
        this.outbox = new CommandOutbox(request -> requests.onNext(request), events, timer);
    }

    /** Opens the session stream and attaches; completes when the daemon says {@code attached}. */
    CompletableFuture<Session> start() {
        stubs.execution().execute(new SessionStreamObserver(this));
        requests.onNext(ExecuteRequest.newBuilder().setAttach(Attach.newBuilder().setSession(id)
                .setCompletionLingerUs((int) (completionLinger.toNanos() / 1_000)).setPackedSuccesses(true)).build());
        attached.thenRun(this::startKeepalive);
        return attached;
    }

    private void startKeepalive() {
        long period = Math.max(1, lease.toMillis() / 3);
        try {
            keepalive = timer.scheduleAtFixedRate(outbox::ping, period, period, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // the client is closing
        }
        if (closing.get() || streamDone.isDone()) {
            stopKeepalive();
        }
    }

    private void stopKeepalive() {
        ScheduledFuture<?> k = keepalive;
        if (k != null) {
            k.cancel(false);
        }
    }

    /** Test hook: batches sent so far. */
    long batchesSent() {
        return outbox.batchesSent();
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public String clientName() {
        return clientName;
    }

    @Override
    public Duration lease() {
        return lease;
    }

    @Override
    public String toString() {
        return "Session[" + clientName + "]";
    }

    // ---- buffers ----

    @Override
    public CompletableFuture<BufferHandle> createBuffer(DType dtype, long... dims) {
        return createBuffer(dtype, dims, BufferOptions.defaults());
    }

    @Override
    public CompletableFuture<BufferHandle> createBuffer(DType dtype, long[] dims, BufferOptions options) {
        return createBuffer(dtype, dims, options, null, 0);
    }

    @Override
    public CompletableFuture<BufferHandle> createBuffer(DType dtype, long[] dims, BufferOptions options,
            MappedRegion region, long regionOffset) {
        checkOpen();
        if (dims.length < 1 || dims.length > 8) {
            throw new IllegalArgumentException("dims: " + dims.length + " extents (expected: 1 to 8)");
        }
        CreateBufferRequest.Builder req = CreateBufferRequest.newBuilder()
                .setSession(id)
                .setDtype(Protos.dtype(dtype))
                .setDevice(options.device())
                .setLabel(options.label())
                .setMemoryMode(Protos.memoryMode(options.mode()))
                .setSharing(options.perStream() ? dev.arrayd.proto.v1.Sharing.SHARING_PER_STREAM : dev.arrayd.proto.v1.Sharing.SHARING_SHARED);
        for (int i = 0; i < dims.length; i++) {
            if (dims[i] <= 0) {
                throw new IllegalArgumentException("dims[" + i + "]: " + dims[i] + " (expected: > 0)");
            }
            req.addDims(dims[i]);
        }
        if (options.padding() != null) {
            Padding p = options.padding();
            if (p.left().length != dims.length) {
                throw new IllegalArgumentException("padding: " + p.left().length + " axes (expected: " + dims.length
                        + ", one per axis of dims)");
            }
            for (int i = 0; i < dims.length; i++) {
                req.addPadding(dev.arrayd.proto.v1.AxisPadding.newBuilder().setLeft(p.left()[i]).setRight(p.right()[i]));
            }
            if (p.value() != null) {
                req.setPaddingValue(Scalars.of(p.value(), dtype, "padding.value", "a buffer of type " + dtype));
            }
        }
        if (region != null) {
            if (regionOffset < 0 || regionOffset > region.size()) {
                throw new IllegalArgumentException("regionOffset: " + regionOffset + " (expected: 0 to " + region.size() + ")");
            }
            req.setHostRegion(dev.arrayd.proto.v1.RegionSlice.newBuilder().setRegion(region.id()).setOffsetBytes(regionOffset));
        }
        return FutureObserver.call(req.build(), stubs.buffers()::createBuffer, r -> Protos.buffer(r.getBuffer(), dtype));
    }

    @Override
    public CompletableFuture<Void> destroy(BufferHandle buffer) {
        checkOpen();
        return orderedUnary(DestroyBufferRequest.newBuilder().setSession(id).setBuffer(buffer.id()).build(),
                stubs.buffers()::destroyBuffer, r -> null);
    }

    /** Writes and reads of a buffer's bytes: through the staging region when it has room, else as commands. */
    private final BufferBytes bytes = new BufferBytes(this);
    /** Shared-memory regions and the commands that name them. */
    private final SessionRegions regions = new SessionRegions(this);

    /** Gives the session a staging region: writes and reads that fit a free slot go through it. */
    void useStaging(MappedRegion region) {
        bytes.useStaging(region);
    }

    @Override
    public Event write(BufferHandle buffer, long offsetBytes, ByteBuffer data) {
        return bytes.write(buffer, offsetBytes, data);
    }

    @Override
    public Event write(BufferHandle buffer, ByteBuffer data) {
        return write(buffer, 0, data);
    }

    @Override
    public Event write(BufferHandle buffer, byte[] data) {
        return write(buffer, 0, ByteBuffer.wrap(data));
    }

    @Override
    public Event write(BufferHandle buffer, float[] data) {
        BufferChecks.dtype(buffer, DType.F32, "data", "float[" + data.length + "]");
        return bytes.writeArray(buffer, MemorySegment.ofArray(data), () -> TypedArrays.bytes(data));
    }

    @Override
    public Event write(BufferHandle buffer, double[] data) {
        BufferChecks.dtype(buffer, DType.F64, "data", "double[" + data.length + "]");
        return bytes.writeArray(buffer, MemorySegment.ofArray(data), () -> TypedArrays.bytes(data));
    }

    @Override
    public Event write(BufferHandle buffer, int[] data) {
        BufferChecks.dtype(buffer, DType.I32, "data", "int[" + data.length + "]");
        return bytes.writeArray(buffer, MemorySegment.ofArray(data), () -> TypedArrays.bytes(data));
    }

    @Override
    public Event write(BufferHandle buffer, long[] data) {
        BufferChecks.dtype(buffer, DType.I64, "data", "long[" + data.length + "]");
        return bytes.writeArray(buffer, MemorySegment.ofArray(data), () -> TypedArrays.bytes(data));
    }

    @Override
    public CompletableFuture<ByteBuffer> read(BufferHandle buffer) {
        return read(buffer, 0, buffer.dataBytes());
    }

    @Override
    public CompletableFuture<ByteBuffer> read(BufferHandle buffer, long offsetBytes, long sizeBytes) {
        return bytes.read(buffer, offsetBytes, sizeBytes);
    }

    @Override
    public CompletableFuture<byte[]> readBytes(BufferHandle buffer) {
        return read(buffer).thenApply(b -> b.array());
    }

    @Override
    public CompletableFuture<float[]> readFloats(BufferHandle buffer) {
        BufferChecks.dtype(buffer, DType.F32, "buffer", "readFloats");
        return readArray(buffer, Float.BYTES, float[]::new, MemorySegment::ofArray, TypedArrays::floats);
    }

    @Override
    public CompletableFuture<double[]> readDoubles(BufferHandle buffer) {
        BufferChecks.dtype(buffer, DType.F64, "buffer", "readDoubles");
        return readArray(buffer, Double.BYTES, double[]::new, MemorySegment::ofArray, TypedArrays::doubles);
    }

    @Override
    public CompletableFuture<int[]> readInts(BufferHandle buffer) {
        BufferChecks.dtype(buffer, DType.I32, "buffer", "readInts");
        return readArray(buffer, Integer.BYTES, int[]::new, MemorySegment::ofArray, TypedArrays::ints);
    }

    @Override
    public CompletableFuture<long[]> readLongs(BufferHandle buffer) {
        BufferChecks.dtype(buffer, DType.I64, "buffer", "readLongs");
        return readArray(buffer, Long.BYTES, long[]::new, MemorySegment::ofArray, TypedArrays::longs);
    }

    /**
     * The whole buffer as a new Java array of numbers ({@code width} bytes each): read straight into the array
     * where its bytes are the buffer's already (this machine is little-endian), else from the little-endian bytes.
     */
    private <A> CompletableFuture<A> readArray(BufferHandle buffer, int width, IntFunction<A> allocate,
            Function<A, MemorySegment> memory, Function<ByteBuffer, A> fromBytes) {
        if (!TypedArrays.LITTLE_ENDIAN_HERE) {
            return read(buffer).thenApply(fromBytes);
        }
        A out = allocate.apply(TypedArrays.count(buffer, width));
        return bytes.readInto(buffer, 0, buffer.dataBytes(), memory.apply(out)).thenApply(v -> out);
    }

    // ---- kernels ----

    @Override
    public CompletableFuture<Map<String, KernelHandle>> compile(KernelModuleSpec... modules) {
        checkOpen();
        if (modules.length == 0) {
            throw new IllegalArgumentException("modules: [] (expected: at least one module)");
        }
        Map<String, KernelSpec> specs = new HashMap<>();
        CompileRequest.Builder req = CompileRequest.newBuilder().setSession(id);
        for (int m = 0; m < modules.length; m++) {
            for (int e = 0; e < modules[m].entries().size(); e++) {
                KernelSpec spec = modules[m].entries().get(e);
                if (specs.putIfAbsent(spec.name(), spec) != null) {
                    throw new IllegalArgumentException("modules[" + m + "].entries[" + e + "]: \"" + spec.name()
                            + "\" (expected: an entry point name not used elsewhere in this call)");
                }
            }
            req.addModules(Protos.module(modules[m]));
        }
        return FutureObserver.call(req.build(), stubs.kernels()::compile, (CompileResponse resp) -> {
            Map<String, KernelHandle> out = new LinkedHashMap<>();
            for (CompiledModule module : resp.getModulesList()) {
                for (CompiledKernel k : module.getKernelsList()) {
                    KernelSpec spec = specs.get(k.getName());
                    if (spec == null) {
                        throw Status.INTERNAL.withDescription("compile response names kernel \"" + k.getName()
                                + "\" (expected: one of " + specs.keySet() + ")").asRuntimeException();
                    }
                    out.put(k.getName(), new KernelHandle(k.getKernel(), k.getName(), spec));
                }
            }
            return Map.copyOf(out);
        });
    }

    @Override
    public CompletableFuture<Void> destroy(KernelHandle kernel) {
        checkOpen();
        return orderedUnary(DestroyKernelRequest.newBuilder().setSession(id).setKernel(kernel.id()).build(),
                stubs.kernels()::destroyKernel, r -> null);
    }

    // ---- commands ----

    @Override
    public Event launch(Launch launch) {
        checkOpen();
        Command.Builder cmd = LaunchCommands.of(launch);
        return submit(cmd, launch.waitFor(), launch.stream());
    }

    @Override
    public List<Event> launchAll(List<Launch> launches) {
        checkOpen();
        List<Command.Builder> cmds = new ArrayList<>(launches.size());
        for (int i = 0; i < launches.size(); i++) {
            Launch l = launches.get(i);
            try {
                cmds.add(LaunchCommands.of(l).addAllWaitEvents(l.waitFor()).setStream(l.stream()));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("launches[" + i + "]: " + e.getMessage(), e);
            }
        }
        List<Event> out = new ArrayList<>(cmds.size());
        for (EventTable.Pending p : outbox.submitAll(cmds)) {
            out.add(new Event(p.id, p.future));
        }
        return out;
    }

    @Override
    public CompletableFuture<Map<String, String>> replicas(BufferHandle buffer) {
        checkOpen();
        return orderedUnary(dev.arrayd.proto.v1.DescribeBufferRequest.newBuilder().setSession(id).setBuffer(buffer.id())
                .build(), stubs.buffers()::describeBuffer, info -> {
                    Map<String, String> out = new java.util.LinkedHashMap<>();
                    for (var r : info.getBuffer().getReplicasList()) {
                        out.put(r.getDevice(), switch (r.getState()) {
                            case REPLICA_STATE_MODIFIED -> "M";
                            case REPLICA_STATE_SHARED -> "S";
                            default -> "I";
                        });
                    }
                    return out;
                });
    }

    @Override
    public Event transfer(BufferHandle src, String device, Event... waitFor) {
        checkOpen();
        return submit(DataCommands.transfer(src, device), ids(waitFor), 0);
    }

    @Override
    public Event copyFromStream(BufferHandle src, StreamHandle srcStream, BufferHandle dst, CommandOptions options) {
        checkOpen();
        return submit(DataCommands.copyFromStream(src, srcStream, dst), options);
    }

    @Override
    public Event mergeCopy(BufferHandle src, StreamHandle srcStream, StreamHandle stream, MergeMode mode, Event... waitFor) {
        checkOpen();
        return submit(DataCommands.mergeCopy(src, srcStream, mode), ids(waitFor), stream.id());
    }

    @Override
    public Event mergeCopy(BufferHandle src, StreamHandle stream, MergeMode mode, Event... waitFor) {
        checkOpen();
        return submit(DataCommands.mergeCopy(src, null, mode), ids(waitFor), stream.id());
    }

    private static List<Long> ids(Event[] events) {
        List<Long> out = new ArrayList<>(events.length);
        for (Event e : events) {
            out.add(e.id());
        }
        return out;
    }

    @Override
    public GraphRecorder graphRecorder() {
        return new GraphRecorder(LaunchCommands::of);
    }

    @Override
    public CompletableFuture<GraphHandle> recordGraph(GraphRecorder recorder) {
        checkOpen();
        if (recorder.commands.isEmpty()) {
            throw new IllegalArgumentException("recorder: no commands (expected: at least one)");
        }
        List<KernelHandle> kernels = new ArrayList<>(recorder.kernels); // null for data commands
        var req = dev.arrayd.proto.v1.RecordGraphRequest.newBuilder().setSession(id).addAllCommands(recorder.commands)
                .build();
        return orderedUnary(req, stubs.execution()::recordGraph, info -> new GraphHandle(info.getGraph(), kernels));
    }

    @Override
    public List<Event> replay(GraphHandle graph, GraphReplay replay) {
        checkOpen();
        var req = replay.request(id, graph);
        List<Event> out = new ArrayList<>(graph.size());
        for (EventTable.Pending p : outbox.replay(req, graph.size())) {
            out.add(new Event(p.id, p.future));
        }
        return out;
    }

    @Override
    public CompletableFuture<Void> destroy(GraphHandle graph) {
        checkOpen();
        return orderedUnary(dev.arrayd.proto.v1.DestroyGraphRequest.newBuilder().setSession(id).setGraph(graph.id())
                .build(), stubs.execution()::destroyGraph, r -> null);
    }

    @Override
    public Event copy(BufferHandle src, BufferHandle dst, Event... waitFor) {
        return copy(src, 0, dst, 0, 0, CommandOptions.defaults().waitFor(waitFor));
    }

    @Override
    public Event copy(BufferHandle src, long srcOffsetBytes, BufferHandle dst, long dstOffsetBytes, long sizeBytes,
            CommandOptions options) {
        checkOpen();
        return submit(DataCommands.copy(src, srcOffsetBytes, dst, dstOffsetBytes, sizeBytes, options.wholePadded()), options);
    }

    @Override
    public Event fill(BufferHandle buffer, Number value, Event... waitFor) {
        return fill(buffer, value, 0, 0, CommandOptions.defaults().waitFor(waitFor));
    }

    @Override
    public Event fill(BufferHandle buffer, Number value, long offsetElements, long countElements,
            CommandOptions options) {
        checkOpen();
        return submit(DataCommands.fill(buffer, value, offsetElements, countElements, options.wholePadded()), options);
    }

    @Override
    public Event upload(BufferHandle buffer, byte[] data, Event... waitFor) {
        return upload(buffer, 0, ByteBuffer.wrap(data), CommandOptions.defaults().waitFor(waitFor));
    }

    @Override
    public Event upload(BufferHandle buffer, long offsetBytes, ByteBuffer data, CommandOptions options) {
        checkOpen();
        return submit(DataCommands.upload(buffer, offsetBytes, data, options.wholePadded()), options);
    }

    @Override
    public Event download(BufferHandle buffer, Event... waitFor) {
        return download(buffer, 0, 0, CommandOptions.defaults().waitFor(waitFor));
    }

    @Override
    public Event download(BufferHandle buffer, long offsetBytes, long sizeBytes, CommandOptions options) {
        checkOpen();
        return submit(DataCommands.download(buffer, offsetBytes, sizeBytes, options.wholePadded()), options);
    }

    @Override
    public CompletableFuture<MappedRegion> createRegion(long bytes) {
        return regions.create(bytes);
    }

    @Override
    public Event upload(BufferHandle buffer, long bufferOffset, MappedRegion region, long regionOffset, long bytes,
            CommandOptions options) {
        return regions.upload(buffer, bufferOffset, region, regionOffset, bytes, options);
    }

    @Override
    public Event hostWritten(BufferHandle buffer, CommandOptions options) {
        return regions.hostWritten(buffer, options);
    }

    @Override
    public Event download(BufferHandle buffer, long bufferOffset, long sizeBytes, MappedRegion region, long regionOffset,
            CommandOptions options) {
        return regions.download(buffer, bufferOffset, sizeBytes, region, regionOffset, options);
    }

    /** Submits {@code cmd} with the waits, stream and deadline of {@code options}. */
    Event submit(Command.Builder cmd, CommandOptions options) {
        if (options.deadline() != null) {
            cmd.setDeadline(Protos.timestamp(options.deadline()));
        }
        return submit(cmd, options.waitFor(), options.stream());
    }

    Event submit(Command.Builder cmd, List<Long> waitFor, long stream) {
        cmd.addAllWaitEvents(waitFor).setStream(stream);
        EventTable.Pending p = outbox.submit(cmd);
        return new Event(p.id, p.future);
    }

    // ---- streams and events ----

    @Override
    public CompletableFuture<StreamHandle> createStream(String device) {
        checkOpen();
        return FutureObserver.call(CreateStreamRequest.newBuilder().setSession(id).setDevice(device).build(),
                stubs.execution()::createStream, info -> new StreamHandle(info.getStream(), info.getDevice()));
    }

    @Override
    public CompletableFuture<EventResult> awaitStream(StreamHandle stream) {
        checkOpen();
        AwaitStreamRequest req = AwaitStreamRequest.newBuilder()
                .setSession(id).setStream(stream.id()).setDevice(stream.device()).build();
        return orderedUnary(req, stubs.execution()::awaitStream, (AwaitStreamResponse r) -> {
            if (!r.hasLast()) {
                return EventResult.succeeded(0);
            }
            EventCompletion last = r.getLast();
            if (last.getState() == dev.arrayd.proto.v1.EventState.EVENT_STATE_FAILED) {
                throw new ArraydCommandException(last.getEvent(), Protos.status(last.getCode(), last.getMessage()));
            }
            return Protos.result(last);
        });
    }

    @Override
    public CompletableFuture<Void> destroyStream(StreamHandle stream) {
        checkOpen();
        return orderedUnary(DestroyStreamRequest.newBuilder().setSession(id).setStream(stream.id()).build(),
                stubs.execution()::destroyStream, r -> null);
    }

    @Override
    public CompletableFuture<List<EventResult>> waitEvents(Event... waitFor) {
        checkOpen();
        outbox.drain(); // (any of them held back for others to join its batch goes now)
        // Every event this session made has a future already; waiting needs no round trip.
        List<CompletableFuture<EventResult>> results = new ArrayList<>(waitFor.length);
        for (Event e : waitFor) {
            results.add(e.future().handle((r, t) -> r != null ? r : failedResult(e.id(), t)));
        }
        return CompletableFuture.allOf(results.toArray(CompletableFuture[]::new))
                .thenApply(v -> results.stream().map(CompletableFuture::join).toList());
    }

    @Override
    public CompletableFuture<Integer> cancel(Event... events) {
        checkOpen();
        CancelRequest.Builder req = CancelRequest.newBuilder().setSession(id);
        for (Event e : events) {
            req.addEvents(e.id());
        }
        return orderedUnary(req.build(), stubs.execution()::cancel, CancelResponse::getCancelled);
    }

    private static EventResult failedResult(long event, Throwable t) {
        Throwable cause = t instanceof java.util.concurrent.CompletionException && t.getCause() != null ? t.getCause() : t;
        Status st = cause instanceof ArraydCommandException a ? a.status() : Status.fromThrowable(cause);
        return new EventResult(event, EventState.FAILED, st.getCode().value(),
                st.getDescription() == null ? "" : st.getDescription(), 0, null);
    }

    // ---- lifecycle ----

    @Override
    public CompletableFuture<Void> closeAsync() {
        if (!closing.compareAndSet(false, true)) {
            return closed;
        }
        stopKeepalive();
        outbox.submitCall(seq -> new CommandOutbox.OrderedCall() {
            @Override
            public void start() {
                // Runs on the draining thread after everything enqueued before close was sent.
                outbox.terminate(Status.CANCELLED.withDescription("session " + clientName + " is closed"));
                if (!streamDone.isDone()) {
                    try {
                        requests.onCompleted();
                    } catch (RuntimeException e) {
                        requests.cancel("half-close failed", e);
                    }
                }
                closeOnDaemon();
            }

            @Override
            public void fail(Status status) {
                closeOnDaemon(); // the stream failed already
            }
        });
        return closed;
    }

    private void closeOnDaemon() {
        CompletableFuture<Void> reply = new CompletableFuture<>();
        stubs.sessions().closeSession(CloseSessionRequest.newBuilder().setSession(id).build(),
                new FutureObserver<>(reply, r -> null));
        reply.whenComplete((r, error) -> {
            // The daemon has closed the session; it should end the stream itself. If it has not, stop it.
            if (!streamDone.isDone()) {
                requests.cancel("session closed", null);
            }
            streamDone.whenComplete((x, y) -> {
                bytes.dropStaging(); // the daemon freed it with the session
                onClosed.accept(this);
                if (error == null) {
                    closed.complete(null);
                } else {
                    closed.completeExceptionally(error);
                }
            });
        });
    }

    @Override
    public void close() {
        CompletableFuture<Void> f = closeAsync();
        try {
            f.get(closeTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            requests.cancel("close timed out after " + closeTimeout, null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            requests.cancel("close interrupted", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new IllegalStateException("closing session " + clientName + " failed", e.getCause());
        }
    }

    // ---- helpers ----

    /** Whether {@link #close} has begun. */
    boolean isClosing() {
        return closing.get();
    }

    Stubs stubs() {
        return stubs;
    }

    void checkOpen() {
        if (closing.get()) {
            throw new IllegalStateException("session " + clientName + " (" + id + ") is closed");
        }
    }

    @Override
    public CompletableFuture<BufferHandle> createView(BufferHandle base, long[] dims, boolean wholePadded) {
        checkOpen();
        dev.arrayd.proto.v1.CreateViewRequest.Builder req = dev.arrayd.proto.v1.CreateViewRequest.newBuilder()
                .setSession(id).setBase(base.id()).setWholePadded(wholePadded);
        for (long d : dims) {
            req.addDims(d);
        }
        return FutureObserver.call(req.build(), stubs.buffers()::createView, r -> Protos.buffer(r.getBuffer(), base.dtype()));
    }

    /** A unary call issued after the commands enqueued before it. */
    <Q, R, T> CompletableFuture<T> orderedUnary(Q request, BiConsumer<Q, StreamObserver<R>> method,
            Function<R, T> mapper) {
        CompletableFuture<T> f = new CompletableFuture<>();
        outbox.submitCall(seq -> new CommandOutbox.OrderedCall() {
            @Override
            public void start() {
                method.accept(request, new FutureObserver<>(f, mapper));
            }

            @Override
            public void fail(Status status) {
                f.completeExceptionally(status.asRuntimeException());
            }
        });
        return f;
    }

    /** The session stream's request side, once the stream starts ({@link SessionStreamObserver}). */
    void streamStarted(ClientCallStreamObserver<ExecuteRequest> requestStream) {
        requests = requestStream;
    }

    void attachedNow() {
        attached.complete(this);
    }

    EventTable events() {
        return events;
    }

    /** The session stream ended: every pending command and the attach fail with {@code status}. */
    void streamEnded(Status status) {
        Status s = closing.get()
                ? Status.CANCELLED.withDescription("session " + clientName + " closed before the event completed")
                : status;
        stopKeepalive();
        outbox.terminate(s);
        events.terminate(s);
        attached.completeExceptionally(status.asRuntimeException());
        streamDone.complete(null);
    }
}
