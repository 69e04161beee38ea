package dev.arrayd.client;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * A client's namespace on the daemon (buffers, kernels, streams, events) and its session stream.
 *
 * <p><b>Commands and batching.</b> {@link #launch}, {@link #copy}, {@link #fill}, {@link #upload},
 * {@link #download} and {@link #write} return an {@link Event} at once. Its id is taken from a per-session
 * counter starting at 1 when the command is enqueued, so a later command can wait on it before it is
 * sent. Enqueued commands go to a lock-free queue; the calling thread that finds nobody sending drains
 * the queue into one {@code CommandBatch} (at most 512 commands or about 1 MiB) and sends it, repeating
 * until the queue is empty. A lone caller pays no delay; concurrent callers share batches. Commands reach
 * the daemon in event-id order.
 *
 * <p><b>Ordering of the other calls.</b> {@link #write}, {@link #read}, {@link #destroy(BufferHandle)},
 * {@link #waitEvents}, {@link #awaitStream} and {@link #destroyStream} are issued in the same order as the
 * commands enqueued before them, so e.g. a read after a launch sees the launch's writes. The other calls
 * ({@link #createBuffer}, {@link #compile}, {@link #createStream}) are sent at once.
 *
 * <p><b>Errors.</b> Argument errors the client can see (a wrong dtype, a range outside the buffer, a
 * missing launch argument) throw {@link IllegalArgumentException} at the call, naming the bad value. An
 * event's future fails with {@link ArraydCommandException}: the command failed, its batch was rejected,
 * the session stream failed (every pending event fails with the stream's status) or the session closed
 * before the event completed. The futures of plain calls fail with {@link io.grpc.StatusRuntimeException};
 * a failed compile's description carries the compiler's diagnostics.
 *
 * <p><b>Threads.</b> All methods are thread-safe and never block, except {@link #close()}. Futures complete
 * on gRPC transport threads (the client uses a direct executor, because a thread hop costs tens of
 * microseconds): keep callbacks short and hop with {@code thenApplyAsync} for heavy work.
 *
 * <p><b>Lease.</b> While open, the session pings on its stream every third of its lease.
 */
public interface Session extends AutoCloseable {

    /** The daemon's session token. */
    String id();

    /** The name given to {@link ArraydClient#openSession(String)}. */
    String clientName();

    /** The lease the daemon granted. */
    Duration lease();

    // ---- buffers ----

    /** Creates a buffer on the daemon's first device, contents unspecified. */
    CompletableFuture<BufferHandle> createBuffer(DType dtype, long... dims);

    /** Creates a buffer with {@code options} (device, zeroing, label). */
    CompletableFuture<BufferHandle> createBuffer(DType dtype, long[] dims, BufferOptions options);

    /**
     * A hosted buffer that lives in {@code region} from {@code regionOffset} (a multiple of 64): the region's
     * bytes there are its first contents and its host copy itself, nothing is copied. On the daemon's CPU
     * device launches read and write that memory in place, so a result is in the region as soon as the launch
     * completes; other devices copy straight from and to it. After writing the bytes yourself, submit
     * {@link #hostWritten}. {@code options.mode()} must be a hosted mode. The region must be this session's.
     */
    CompletableFuture<BufferHandle> createBuffer(DType dtype, long[] dims, BufferOptions options, MappedRegion region,
            long regionOffset);

    /** Frees a buffer once the commands already enqueued on it have completed. */
    CompletableFuture<Void> destroy(BufferHandle buffer);

    /**
     * Writes the remaining bytes of {@code data} (taken as they are, little-endian for arrays of numbers)
     * into {@code buffer} at {@code offsetBytes}. Over TCP the bytes are copied, then sent over the session
     * stream as Upload commands of at most 1 MiB, each waiting on the one before, and the returned event is
     * the last chunk's (it fails if any chunk fails). Over a Unix socket they are copied into the session's
     * staging region when a free part of it holds them (one Upload), else streamed through a ring in it when
     * the buffer's device takes ring transfers (one Upload; this call then returns once the daemon has taken
     * all but the ring's last slots), else sent as over TCP. Either way the write is ordered with every
     * other command of this session on the buffer exactly as called, and {@code data} may change once this
     * returns.
     */
    Event write(BufferHandle buffer, long offsetBytes, ByteBuffer data);

    /** Writes {@code data} at offset 0. */
    Event write(BufferHandle buffer, ByteBuffer data);

    /** Writes bytes at offset 0; any dtype. */
    Event write(BufferHandle buffer, byte[] data);

    /** Writes f32 values at offset 0; the buffer must be {@link DType#F32}. */
    Event write(BufferHandle buffer, float[] data);

    /** Writes f64 values at offset 0; the buffer must be {@link DType#F64}. */
    Event write(BufferHandle buffer, double[] data);

    /** Writes i32 values at offset 0; the buffer must be {@link DType#I32}. */
    Event write(BufferHandle buffer, int[] data);

    /** Writes i64 values at offset 0; the buffer must be {@link DType#I64}. */
    Event write(BufferHandle buffer, long[] data);

    /**
     * Reads the whole buffer, seeing every command called before it: through the session's staging region or a
     * ring in it over a Unix socket (as {@link #write}), else with Download commands of at most 8 MiB on the
     * session stream. The result is a new little-endian buffer, position 0.
     */
    CompletableFuture<ByteBuffer> read(BufferHandle buffer);

    /** Reads {@code sizeBytes} bytes from {@code offsetBytes}. */
    CompletableFuture<ByteBuffer> read(BufferHandle buffer, long offsetBytes, long sizeBytes);

    /** Reads the whole buffer as bytes. */
    CompletableFuture<byte[]> readBytes(BufferHandle buffer);

    /** Reads a {@link DType#F32} buffer. */
    CompletableFuture<float[]> readFloats(BufferHandle buffer);

    /** Reads a {@link DType#F64} buffer. */
    CompletableFuture<double[]> readDoubles(BufferHandle buffer);

    /** Reads a {@link DType#I32} buffer. */
    CompletableFuture<int[]> readInts(BufferHandle buffer);

    /** Reads a {@link DType#I64} buffer. */
    CompletableFuture<long[]> readLongs(BufferHandle buffer);

    // ---- kernels ----

    /**
     * Compiles modules in one call and returns their kernels by entry-point name (names must be unique
     * across the call). A compile error fails the future with {@code INVALID_ARGUMENT} and the compiler's
     * diagnostics in the status description.
     */
    CompletableFuture<Map<String, KernelHandle>> compile(KernelModuleSpec... modules);

    /** Frees a kernel. */
    CompletableFuture<Void> destroy(KernelHandle kernel);

    // ---- commands ----

    /** Enqueues a kernel launch; see {@link Launch} for how arguments are checked and converted. */
    Event launch(Launch launch);

    /**
     * Enqueues several launches at once, in order, and sends them together: one {@code CommandBatch}
     * (several when they exceed its limits) instead of one per launch, which is what a lone caller of
     * {@link #launch} gets. For work that is produced in groups, e.g. a timestep of a task graph. All are
     * checked before any is enqueued: an invalid launch throws and enqueues none.
     *
     * @return the events, in the order of {@code launches}
     */
    List<Event> launchAll(List<Launch> launches);

    /** Copies all of {@code src} to the start of {@code dst}. */
    Event copy(BufferHandle src, BufferHandle dst, Event... waitFor);

    /** Copies {@code sizeBytes} bytes (0 = the rest of {@code src}) between offsets. */
    Event copy(BufferHandle src, long srcOffsetBytes, BufferHandle dst, long dstOffsetBytes, long sizeBytes,
            CommandOptions options);

    /** Sets every element to {@code value}, converted to the buffer's dtype. */
    Event fill(BufferHandle buffer, Number value, Event... waitFor);

    /** Sets {@code countElements} elements (0 = to the end) from {@code offsetElements}. */
    Event fill(BufferHandle buffer, Number value, long offsetElements, long countElements, CommandOptions options);

    /** Maximum payload of one {@link #upload}: 1 MiB. Use {@link #write} for more. */
    int MAX_UPLOAD_BYTES = 1 << 20;

    /** Writes a small payload inline in the batch at offset 0. */
    Event upload(BufferHandle buffer, byte[] data, Event... waitFor);

    /** Writes a small payload (at most {@link #MAX_UPLOAD_BYTES}) inline in the batch. */
    Event upload(BufferHandle buffer, long offsetBytes, ByteBuffer data, CommandOptions options);

    // ---- shared-memory regions (a daemon on this host, reached over its Unix socket) ----

    /**
     * A shared-memory region of at least {@code bytes} (whole pages), mapped into this process: uploads read
     * from it and downloads write into it without copies through gRPC. Needs the daemon's Unix domain socket
     * ({@code unix://} target, {@code serve --uds}); fails with FAILED_PRECONDITION otherwise. Its bytes
     * count against the tenant's memory quota until it is closed (or the session ends).
     */
    CompletableFuture<MappedRegion> createRegion(long bytes);

    /** Writes {@code bytes} bytes of {@code region} from {@code regionOffset} into the buffer at {@code bufferOffset}. */
    Event upload(BufferHandle buffer, long bufferOffset, MappedRegion region, long regionOffset, long bytes,
            CommandOptions options);

    /**
     * Reads {@code sizeBytes} bytes (0 = to the end) of the buffer from {@code bufferOffset} into {@code region} at
     * {@code regionOffset}; the event's result carries no data: it is in the region once the event completes.
     */
    Event download(BufferHandle buffer, long bufferOffset, long sizeBytes, MappedRegion region, long regionOffset,
            CommandOptions options);

    /**
     * Tells the daemon that this process wrote the region bytes {@code buffer} lives in (a buffer created in a
     * region): they become its current data, other devices' replicas stale. Moves nothing. Write only once
     * nothing uses the bytes and they are current: {@link #download(BufferHandle, long, long, MappedRegion, long,
     * CommandOptions) download} the buffer into its own bytes and wait for that event first (it completes after
     * every earlier command that used them; while a newer copy is on another device, the daemon may write it back
     * into them at any time, for instance when another session's allocation evicts it).
     */
    Event hostWritten(BufferHandle buffer, CommandOptions options);

    /** Reads the whole buffer inline: the event's result carries the data. For small buffers. */
    Event download(BufferHandle buffer, Event... waitFor);

    /** Reads {@code sizeBytes} bytes (0 = to the end) from {@code offsetBytes} inline. */
    Event download(BufferHandle buffer, long offsetBytes, long sizeBytes, CommandOptions options);

    // ---- streams and events ----

    /** Creates a stream on {@code device} (empty = the daemon's first device). */
    CompletableFuture<StreamHandle> createStream(String device);

    // ---- multi-device ----

    /**
     * Where copies of a buffer are: device id (or {@code "host"}) to its MSI state, {@code "M"} (the only
     * current copy), {@code "S"} (current, like another) or {@code "I"} (stale).
     */
    CompletableFuture<Map<String, String>> replicas(BufferHandle buffer);

    /**
     * A view of {@code base} with new {@code dims}: a handle of its own over the same memory, replicas and
     * events (a write through either is a write of both; nothing is copied). Of an unpadded buffer, or with
     * {@code wholePadded} of a padded buffer's whole padded array, any dims with that many elements; of a
     * padded buffer's interior, dims that keep its padded axes as its innermost ones and regroup only the axes
     * outside them (the view keeps the padding). The memory stays until the base and every view are destroyed.
     */
    CompletableFuture<BufferHandle> createView(BufferHandle base, long[] dims, boolean wholePadded);

    /**
     * Writes one element, at {@code index} (one entry per axis; a padded buffer's interior), ordered like every
     * other command of the session (a one-element fill).
     */
    default Event setValue(BufferHandle buffer, long[] index, Number value) {
        return fill(buffer, value, buffer.linearIndex(index), 1, CommandOptions.defaults());
    }

    /** Reads one element, at {@code index}, as a double, after every command called before it. */
    default CompletableFuture<Double> getValue(BufferHandle buffer, long... index) {
        int width = buffer.dtype().byteSize();
        return read(buffer, buffer.linearIndex(index) * width, width)
                .thenApply(b -> Elements.decode(buffer.dtype(), b)[0]);
    }

    /**
     * Writes every element (row-major; a padded buffer's interior, its padding kept) from doubles, converted to
     * the buffer's dtype: f16 / bf16 rounded to nearest, integer dtypes only whole values in range.
     */
    default Event setValues(BufferHandle buffer, double[] values) {
        if (values.length != buffer.elementCount()) {
            throw new IllegalArgumentException("values: " + values.length + " (expected: " + buffer.elementCount()
                    + ", the elements of buffer " + buffer.id() + " " + buffer.dims() + ")");
        }
        return write(buffer, 0, Elements.encode(buffer.dtype(), values));
    }

    /** Reads every element (row-major; a padded buffer's interior) as doubles. */
    default CompletableFuture<double[]> getValues(BufferHandle buffer) {
        return read(buffer).thenApply(b -> Elements.decode(buffer.dtype(), b));
    }

    /** Makes {@code src} current on {@code device} (an explicit transfer; reads elsewhere move data by themselves). */
    Event transfer(BufferHandle src, String device, Event... waitFor);

    /**
     * Fills the merge buffer of {@code stream} from {@code src} (any device); a later launch on that stream
     * reads it through the argument {@link MergeBuffer#INSTANCE}.
     */
    Event mergeCopy(BufferHandle src, StreamHandle stream, MergeMode mode, Event... waitFor);

    /**
     * Copies all of stream {@code srcStream}'s instance of the PER_STREAM buffer {@code src} to {@code dst},
     * after that stream's writes to it (the command runs on {@code options}' stream).
     */
    Event copyFromStream(BufferHandle src, StreamHandle srcStream, BufferHandle dst, CommandOptions options);

    /**
     * Fills the merge buffer of {@code stream} from stream {@code srcStream}'s instance of the PER_STREAM buffer
     * {@code src}: how per-stream partial results (e.g. gradients) are merged.
     */
    Event mergeCopy(BufferHandle src, StreamHandle srcStream, StreamHandle stream, MergeMode mode, Event... waitFor);

    // ---- graphs ----

    /** A recorder for the commands of a graph (nothing is sent until {@link #recordGraph}). */
    GraphRecorder graphRecorder();

    /** Records a graph: the daemon validates its commands once and keeps them. */
    CompletableFuture<GraphHandle> recordGraph(GraphRecorder recorder);

    /** Replays a recorded graph; the events of its commands, in order. */
    List<Event> replay(GraphHandle graph, GraphReplay replay);

    /** Forgets a recorded graph. */
    CompletableFuture<Void> destroy(GraphHandle graph);

    /**
     * Completes when everything enqueued on {@code stream} so far has completed, with the result of its
     * last event (event 0 if it never ran anything); fails with {@link ArraydCommandException} if that
     * event failed.
     */
    CompletableFuture<EventResult> awaitStream(StreamHandle stream);

    /** Forgets the stream; the daemon frees it once its pending work completes. */
    CompletableFuture<Void> destroyStream(StreamHandle stream);

    /**
     * Completes when all {@code events} have completed, with one result per event, failed ones included
     * (state {@link EventState#FAILED}). Needs no round trip: every event has its future already.
     */
    CompletableFuture<List<EventResult>> waitEvents(Event... events);

    /**
     * Cancels the commands of {@code events}, once every command enqueued before this call has been sent: a
     * queued one, or one waiting for its dependencies, never runs; a running one finishes on its device and its
     * result is dropped. Each of their events fails with {@code CANCELLED}, and so does whatever waits on them.
     * Completes with how many of them were still pending (done ones are left as they are).
     */
    CompletableFuture<Integer> cancel(Event... events);

    // ---- lifecycle ----

    /**
     * Sends what is enqueued, ends the session stream and closes the session on the daemon (which lets
     * pending commands finish). Events still pending when the daemon has closed the session fail with
     * {@code CANCELLED}; completed ones are untouched. Later calls fail. Idempotent.
     */
    CompletableFuture<Void> closeAsync();

    /**
     * {@link #closeAsync()} and waits for it, at most the client's close timeout (default 10 s). Do not
     * call it from a future callback (a transport thread); use {@link #closeAsync()} there.
     */
    @Override
    void close();
}
