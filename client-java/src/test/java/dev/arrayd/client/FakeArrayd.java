package dev.arrayd.client;

import com.google.protobuf.ByteString;
import dev.arrayd.proto.v1.Arg;
import dev.arrayd.proto.v1.Attached;
import dev.arrayd.proto.v1.AwaitStreamRequest;
import dev.arrayd.proto.v1.AwaitStreamResponse;
import dev.arrayd.proto.v1.BackendInfo;
import dev.arrayd.proto.v1.BatchRejected;
import dev.arrayd.proto.v1.BufferInfo;
import dev.arrayd.proto.v1.BufferServiceGrpc;
import dev.arrayd.proto.v1.CloseSessionRequest;
import dev.arrayd.proto.v1.CloseSessionResponse;
import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.CommandBatch;
import dev.arrayd.proto.v1.CompileRequest;
import dev.arrayd.proto.v1.CompileResponse;
import dev.arrayd.proto.v1.CompiledKernel;
import dev.arrayd.proto.v1.CompiledModule;
import dev.arrayd.proto.v1.Completions;
import dev.arrayd.proto.v1.CreateBufferRequest;
import dev.arrayd.proto.v1.CreateBufferResponse;
import dev.arrayd.proto.v1.CreateStreamRequest;
import dev.arrayd.proto.v1.CreateStreamResponse;
import dev.arrayd.proto.v1.DestroyBufferRequest;
import dev.arrayd.proto.v1.DestroyBufferResponse;
import dev.arrayd.proto.v1.DeviceInfo;
import dev.arrayd.proto.v1.DeviceServiceGrpc;
import dev.arrayd.proto.v1.Dialect;
import dev.arrayd.proto.v1.EventCompletion;
import dev.arrayd.proto.v1.EventState;
import dev.arrayd.proto.v1.ExecuteRequest;
import dev.arrayd.proto.v1.ExecuteResponse;
import dev.arrayd.proto.v1.ExecutionServiceGrpc;
import dev.arrayd.proto.v1.KernelModuleSource;
import dev.arrayd.proto.v1.KernelServiceGrpc;
import dev.arrayd.proto.v1.KernelSignature;
import dev.arrayd.proto.v1.ListDevicesRequest;
import dev.arrayd.proto.v1.ListDevicesResponse;
import dev.arrayd.proto.v1.OpenSessionRequest;
import dev.arrayd.proto.v1.OpenSessionResponse;
import dev.arrayd.proto.v1.ReadBufferRequest;
import dev.arrayd.proto.v1.ReadBufferResponse;
import dev.arrayd.proto.v1.Scalar;
import dev.arrayd.proto.v1.SessionServiceGrpc;
import dev.arrayd.proto.v1.WaitEventsRequest;
import dev.arrayd.proto.v1.WaitEventsResponse;
import dev.arrayd.proto.v1.WriteBufferRequest;
import dev.arrayd.proto.v1.WriteBufferResponse;
import io.grpc.BindableService;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * An in-memory arrayd for client tests: buffers are byte arrays, every command completes as soon as its
 * batch arrives (except launches of the kernel "hang"), "vadd" adds two f32 buffers, and a batch naming an
 * unknown buffer is rejected as a whole with {@code INVALID_ARGUMENT}.
 */
final class FakeArrayd {

    record Buffer(long id, dev.arrayd.proto.v1.DataType dtype, List<Long> dims, byte[] bytes) {
    }

    final Map<Long, Buffer> buffers = new ConcurrentHashMap<>();
    final Map<Long, String> kernels = new ConcurrentHashMap<>();
    final Map<String, Long> sessions = new ConcurrentHashMap<>();
    final Map<Long, EventCompletion> completed = new ConcurrentHashMap<>();
    final List<CommandBatch> batches = new CopyOnWriteArrayList<>();
    /** Arrival order of ordered things: "cmd:<event>", "write:<event>", "read:<buffer>", "wait:<ids>", ... */
    final List<String> arrivals = new CopyOnWriteArrayList<>();
    final List<String> closedSessions = new CopyOnWriteArrayList<>();
    final List<StreamObserver<ExecuteResponse>> streams = new CopyOnWriteArrayList<>();
    final List<dev.arrayd.proto.v1.Attach> attaches = new CopyOnWriteArrayList<>();
    final AtomicInteger writeChunks = new AtomicInteger();
    final AtomicInteger readChunks = new AtomicInteger();
    final AtomicInteger pings = new AtomicInteger();
    final AtomicReference<String> authorization = new AtomicReference<>();
    final AtomicLong handles = new AtomicLong(100);

    /** Counted down when a batch arrives. */
    volatile CountDownLatch batchArrived = new CountDownLatch(1);
    /** When set, the first batch to arrive waits for it (on the sender's thread with a direct executor). */
    volatile CountDownLatch gate;
    volatile CountDownLatch pinged = new CountDownLatch(1);

    List<ServerServiceDefinition> services() {
        ServerInterceptor capture = new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                    ServerCallHandler<Q, R> next) {
                String auth = headers.get(BearerTokenInterceptor.AUTHORIZATION);
                if (auth != null) {
                    authorization.set(auth);
                }
                return next.startCall(call, headers);
            }
        };
        List<ServerServiceDefinition> out = new ArrayList<>();
        for (BindableService s : List.of(new Devices(), new Sessions(), new Buffers(), new Kernels(), new Execution())) {
            out.add(ServerInterceptors.intercept(s, capture));
        }
        return out;
    }

    /** Ends every session stream with {@code status}. */
    void failStreams(Status status) {
        for (StreamObserver<ExecuteResponse> s : streams) {
            synchronized (s) {
                s.onError(status.asRuntimeException());
            }
        }
        streams.clear();
    }

    int commandCount() {
        return batches.stream().mapToInt(CommandBatch::getCommandsCount).sum();
    }

    // ---- services ----

    final class Devices extends DeviceServiceGrpc.DeviceServiceImplBase {
        @Override
        public void listDevices(ListDevicesRequest request, StreamObserver<ListDevicesResponse> out) {
            DeviceInfo.Builder cpu = DeviceInfo.newBuilder()
                    .setBackend("cpu").setName("Fake CPU").setMemoryBytes(1L << 34).setMemoryBudgetBytes(9L << 31)
                    .setMemoryUsedBytes(4096).setComputeUnits(2).setMaxWorkGroupSize(1024)
                    .addAllMaxWorkItemSizes(List.of(1024L, 1024L, 64L)).setLocalMemoryBytes(32768)
                    .setBaseAlignmentBytes(64).setSuggestedStreams(2).setUnifiedMemory(true).setMaxGridDims(3)
                    .addDtypes(dev.arrayd.proto.v1.DataType.DATA_TYPE_F32).addDtypes(dev.arrayd.proto.v1.DataType.DATA_TYPE_I32)
                    .addDialects(Dialect.DIALECT_C);
            out.onNext(ListDevicesResponse.newBuilder()
                    .addDevices(cpu.clone().setId("cpu:0"))
                    .addDevices(cpu.clone().setId("cpu:1").addDialectsValue(99)) // unknown dialect: skipped
                    .addBackends(BackendInfo.newBuilder().setName("cpu").setAvailable(true)
                            .addDevices("cpu:0").addDevices("cpu:1"))
                    .addBackends(BackendInfo.newBuilder().setName("cuda").setAvailable(false)
                            .setReason("libcuda.so.1 not found"))
                    .build());
            out.onCompleted();
        }
    }

    final class Sessions extends SessionServiceGrpc.SessionServiceImplBase {
        @Override
        public void openSession(OpenSessionRequest request, StreamObserver<OpenSessionResponse> out) {
            String id = "s-" + handles.incrementAndGet();
            long leaseMillis = request.getLease().getSeconds() * 1000 + request.getLease().getNanos() / 1_000_000;
            sessions.put(id, leaseMillis);
            out.onNext(OpenSessionResponse.newBuilder().setSession(id)
                    .setLease(Protos.duration(java.time.Duration.ofMillis(leaseMillis == 0 ? 30_000 : leaseMillis))).build());
            out.onCompleted();
        }

        @Override
        public void closeSession(CloseSessionRequest request, StreamObserver<CloseSessionResponse> out) {
            closedSessions.add(request.getSession());
            out.onNext(CloseSessionResponse.getDefaultInstance());
            out.onCompleted();
        }
    }

    final class Buffers extends BufferServiceGrpc.BufferServiceImplBase {
        @Override
        public void createBuffer(CreateBufferRequest request, StreamObserver<CreateBufferResponse> out) {
            long elements = 1;
            for (long d : request.getDimsList()) {
                elements *= d;
            }
            int width = switch (request.getDtype()) {
                case DATA_TYPE_F64, DATA_TYPE_I64 -> 8;
                case DATA_TYPE_U8 -> 1;
                case DATA_TYPE_F16, DATA_TYPE_BF16 -> 2;
                default -> 4;
            };
            long id = handles.incrementAndGet();
            Buffer b = new Buffer(id, request.getDtype(), request.getDimsList(), new byte[(int) (elements * width)]);
            buffers.put(id, b);
            out.onNext(CreateBufferResponse.newBuilder().setBuffer(BufferInfo.newBuilder().setBuffer(id).setDtype(request.getDtype())
                    .addAllDims(request.getDimsList()).setSizeBytes(b.bytes.length)
                    .setDevice(request.getDevice().isEmpty() ? "cpu:0" : request.getDevice())
                    .setLabel(request.getLabel())).build());
            out.onCompleted();
        }

        @Override
        public StreamObserver<WriteBufferRequest> writeBuffer(StreamObserver<WriteBufferResponse> out) {
            return new StreamObserver<>() {
                Buffer target;
                long event;
                long written;
                boolean failed;

                @Override
                public void onNext(WriteBufferRequest chunk) {
                    writeChunks.incrementAndGet();
                    if (failed) {
                        return;
                    }
                    if (target == null) {
                        target = buffers.get(chunk.getBuffer());
                        event = chunk.getEvent();
                        arrivals.add("write:" + event);
                        if (target == null) {
                            failed = true;
                            out.onError(Status.NOT_FOUND.withDescription("buffer: " + chunk.getBuffer())
                                    .asRuntimeException());
                            return;
                        }
                    }
                    chunk.getData().copyTo(target.bytes, (int) chunk.getOffsetBytes());
                    written += chunk.getData().size();
                }

                @Override
                public void onError(Throwable t) {
                }

                @Override
                public void onCompleted() {
                    if (failed) {
                        return;
                    }
                    completed.put(event, EventCompletion.newBuilder().setEvent(event)
                            .setState(EventState.EVENT_STATE_SUCCEEDED).build());
                    out.onNext(WriteBufferResponse.newBuilder().setEvent(event).setBytesWritten(written).build());
                    out.onCompleted();
                }
            };
        }

        @Override
        public void readBuffer(ReadBufferRequest request, StreamObserver<ReadBufferResponse> out) {
            arrivals.add("read:" + request.getBuffer());
            Buffer b = buffers.get(request.getBuffer());
            if (b == null) {
                out.onError(Status.NOT_FOUND.withDescription("buffer: " + request.getBuffer()).asRuntimeException());
                return;
            }
            int chunk = request.getChunkBytes() == 0 ? 1 << 20 : request.getChunkBytes();
            long end = request.getSizeBytes() == 0 ? b.bytes.length : request.getOffsetBytes() + request.getSizeBytes();
            for (long at = request.getOffsetBytes(); at < end; at += chunk) {
                int n = (int) Math.min(chunk, end - at);
                readChunks.incrementAndGet();
                out.onNext(ReadBufferResponse.newBuilder().setOffsetBytes(at)
                        .setData(ByteString.copyFrom(b.bytes, (int) at, n)).build());
            }
            out.onCompleted();
        }

        @Override
        public void destroyBuffer(DestroyBufferRequest request, StreamObserver<DestroyBufferResponse> out) {
            arrivals.add("destroy:" + request.getBuffer());
            if (buffers.remove(request.getBuffer()) == null) {
                out.onError(Status.NOT_FOUND.withDescription("buffer: " + request.getBuffer()).asRuntimeException());
                return;
            }
            out.onNext(DestroyBufferResponse.getDefaultInstance());
            out.onCompleted();
        }
    }

    final class Kernels extends KernelServiceGrpc.KernelServiceImplBase {
        @Override
        public void compile(CompileRequest request, StreamObserver<CompileResponse> out) {
            CompileResponse.Builder resp = CompileResponse.newBuilder();
            for (KernelModuleSource m : request.getModulesList()) {
                if (m.getSource().contains("#error")) {
                    out.onError(Status.INVALID_ARGUMENT
                            .withDescription("module.c:1:2: error: #error \"broken\"").asRuntimeException());
                    return;
                }
                CompiledModule.Builder cm = CompiledModule.newBuilder().addBackends("cpu");
                for (KernelSignature sig : m.getEntryPointsList()) {
                    long id = handles.incrementAndGet();
                    kernels.put(id, sig.getName());
                    cm.addKernels(CompiledKernel.newBuilder().setName(sig.getName()).setKernel(id));
                }
                resp.addModules(cm);
            }
            out.onNext(resp.build());
            out.onCompleted();
        }
    }

    final class Execution extends ExecutionServiceGrpc.ExecutionServiceImplBase {
        @Override
        public StreamObserver<ExecuteRequest> execute(StreamObserver<ExecuteResponse> out) {
            return new StreamObserver<>() {
                @Override
                public void onNext(ExecuteRequest request) {
                    switch (request.getMsgCase()) {
                        case ATTACH -> {
                            if (!sessions.containsKey(request.getAttach().getSession())) {
                                out.onError(Status.NOT_FOUND.withDescription("session").asRuntimeException());
                                return;
                            }
                            streams.add(out);
                            attaches.add(request.getAttach());
                            send(out, ExecuteResponse.newBuilder().setAttached(
                                    Attached.newBuilder().setSession(request.getAttach().getSession())).build());
                        }
                        case PING -> {
                            pings.incrementAndGet();
                            pinged.countDown();
                            send(out, ExecuteResponse.newBuilder().setPong(request.getPing()).build());
                        }
                        case BATCH -> batch(request.getBatch(), out);
                        default -> { }
                    }
                }

                @Override
                public void onError(Throwable t) {
                    streams.remove(out);
                }

                @Override
                public void onCompleted() {
                    if (streams.remove(out)) {
                        synchronized (out) {
                            out.onCompleted();
                        }
                    }
                }
            };
        }

        private void batch(CommandBatch batch, StreamObserver<ExecuteResponse> out) {
            batches.add(batch);
            batchArrived.countDown();
            CountDownLatch g = gate;
            if (g != null) {
                gate = null;
                try {
                    g.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            for (int i = 0; i < batch.getCommandsCount(); i++) {
                for (long buffer : buffersOf(batch.getCommands(i))) {
                    if (!buffers.containsKey(buffer)) {
                        send(out, ExecuteResponse.newBuilder().setRejected(BatchRejected.newBuilder()
                                .setBatchId(batch.getBatchId())
                                .setCode(Status.Code.INVALID_ARGUMENT.value())
                                .setMessage("commands[" + i + "]: buffer " + buffer
                                        + " (expected: a buffer of this session)")).build());
                        return;
                    }
                }
            }
            Completions.Builder done = Completions.newBuilder();
            for (Command c : batch.getCommandsList()) {
                arrivals.add("cmd:" + c.getEvent());
                EventCompletion completion = run(c);
                if (completion != null) {
                    completed.put(c.getEvent(), completion);
                    done.addCompletions(completion);
                }
            }
            if (done.getCompletionsCount() > 0) {
                send(out, ExecuteResponse.newBuilder().setCompletions(done).build());
            }
        }

        @Override
        public void waitEvents(WaitEventsRequest request, StreamObserver<WaitEventsResponse> out) {
            arrivals.add("wait:" + request.getEventsList());
            WaitEventsResponse.Builder resp = WaitEventsResponse.newBuilder();
            for (long e : request.getEventsList()) {
                EventCompletion c = completed.get(e);
                if (c == null) {
                    out.onError(Status.NOT_FOUND.withDescription("events: " + e).asRuntimeException());
                    return;
                }
                resp.addCompletions(c.toBuilder().clearData());
            }
            out.onNext(resp.build());
            out.onCompleted();
        }

        @Override
        public void createStream(CreateStreamRequest request, StreamObserver<CreateStreamResponse> out) {
            out.onNext(CreateStreamResponse.newBuilder().setStream(handles.incrementAndGet())
                    .setDevice(request.getDevice().isEmpty() ? "cpu:0" : request.getDevice()).build());
            out.onCompleted();
        }

        @Override
        public void awaitStream(AwaitStreamRequest request, StreamObserver<AwaitStreamResponse> out) {
            arrivals.add("await:" + request.getStream());
            out.onNext(AwaitStreamResponse.newBuilder().setIdle(true).build());
            out.onCompleted();
        }
    }

    private static void send(StreamObserver<ExecuteResponse> out, ExecuteResponse response) {
        synchronized (out) {
            out.onNext(response);
        }
    }

    private List<Long> buffersOf(Command c) {
        return switch (c.getKindCase()) {
            case LAUNCH -> c.getLaunch().getArgsList().stream().filter(Arg::hasBuffer).map(Arg::getBuffer).toList();
            case COPY -> List.of(c.getCopy().getSrc(), c.getCopy().getDst());
            case FILL -> List.of(c.getFill().getBuffer());
            case UPLOAD -> List.of(c.getUpload().getBuffer());
            case DOWNLOAD -> List.of(c.getDownload().getBuffer());
            default -> List.of();
        };
    }

    /** Runs one command; null = it never completes. */
    private EventCompletion run(Command c) {
        EventCompletion.Builder done = EventCompletion.newBuilder().setEvent(c.getEvent())
                .setState(EventState.EVENT_STATE_SUCCEEDED).setDeviceTime(com.google.protobuf.Duration.newBuilder().setNanos(1000));
        switch (c.getKindCase()) {
            case UPLOAD -> c.getUpload().getData().copyTo(buffers.get(c.getUpload().getBuffer()).bytes,
                    (int) c.getUpload().getOffsetBytes());
            case DOWNLOAD -> {
                byte[] b = buffers.get(c.getDownload().getBuffer()).bytes;
                int off = (int) c.getDownload().getOffsetBytes();
                int n = c.getDownload().getSizeBytes() == 0 ? b.length - off : (int) c.getDownload().getSizeBytes();
                done.setData(ByteString.copyFrom(b, off, n));
            }
            case COPY -> {
                byte[] src = buffers.get(c.getCopy().getSrc()).bytes;
                byte[] dst = buffers.get(c.getCopy().getDst()).bytes;
                int off = (int) c.getCopy().getSrcOffsetBytes();
                int n = c.getCopy().getSizeBytes() == 0 ? src.length - off : (int) c.getCopy().getSizeBytes();
                System.arraycopy(src, off, dst, (int) c.getCopy().getDstOffsetBytes(), n);
            }
            case FILL -> {
                Buffer b = buffers.get(c.getFill().getBuffer());
                Scalar v = c.getFill().getValue();
                ByteBuffer bb = ByteBuffer.wrap(b.bytes).order(ByteOrder.LITTLE_ENDIAN);
                int width = b.dtype == dev.arrayd.proto.v1.DataType.DATA_TYPE_F64 || b.dtype == dev.arrayd.proto.v1.DataType.DATA_TYPE_I64 ? 8
                        : b.dtype == dev.arrayd.proto.v1.DataType.DATA_TYPE_U8 ? 1 : 4;
                long count = c.getFill().getCountElements() == 0
                        ? b.bytes.length / width - c.getFill().getOffsetElements() : c.getFill().getCountElements();
                for (long i = c.getFill().getOffsetElements(); i < c.getFill().getOffsetElements() + count; i++) {
                    int at = (int) (i * width);
                    switch (v.getValueCase()) {
                        case F32 -> bb.putFloat(at, v.getF32());
                        case F64 -> bb.putDouble(at, v.getF64());
                        case I32 -> bb.putInt(at, v.getI32());
                        case I64 -> bb.putLong(at, v.getI64());
                        case U8 -> bb.put(at, (byte) v.getU8());
                        default -> { }
                    }
                }
            }
            case LAUNCH -> {
                String name = kernels.get(c.getLaunch().getKernel());
                if ("hang".equals(name)) {
                    return null;
                }
                if (!"vadd".equals(name)) {
                    return done.setState(EventState.EVENT_STATE_FAILED).setCode(Status.Code.UNIMPLEMENTED.value())
                            .setMessage("kernel: " + name + " (expected: vadd or hang)").build();
                }
                List<Arg> args = c.getLaunch().getArgsList();
                ByteBuffer a = ByteBuffer.wrap(buffers.get(args.get(0).getBuffer()).bytes).order(ByteOrder.LITTLE_ENDIAN);
                ByteBuffer b = ByteBuffer.wrap(buffers.get(args.get(1).getBuffer()).bytes).order(ByteOrder.LITTLE_ENDIAN);
                ByteBuffer out = ByteBuffer.wrap(buffers.get(args.get(2).getBuffer()).bytes).order(ByteOrder.LITTLE_ENDIAN);
                int n = args.get(3).getScalar().getI32();
                for (int i = 0; i < n; i++) {
                    out.putFloat(i * 4, a.getFloat(i * 4) + b.getFloat(i * 4));
                }
            }
            default -> {
                return done.setState(EventState.EVENT_STATE_FAILED).setCode(Status.Code.UNIMPLEMENTED.value())
                        .setMessage("command kind: " + c.getKindCase()).build();
            }
        }
        return done.build();
    }
}
