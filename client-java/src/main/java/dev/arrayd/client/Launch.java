package dev.arrayd.client;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * A kernel launch to enqueue with {@link Session#launch(Launch)}. Immutable; each builder method returns a
 * new value:
 *
 * <pre>{@code
 * Event e = session.launch(Launch.of(vadd).global(n).args(a, b, c, n).waitFor(upload));
 * }</pre>
 *
 * <p>Arguments are checked against the kernel's signature when the launch is enqueued: a
 * {@link BufferHandle} of the declared dtype (or a {@link BufferRange} of any buffer) for a buffer parameter, a
 * {@link Number} for a scalar
 * parameter, converted to the declared dtype (integers must fit; f16/bf16 scalars are sent as f32).
 *
 * @param kernel  the kernel
 * @param global  work-items per dimension (1 to 3 dims, each &gt; 0); required
 * @param local   work-group size per dimension; empty (the default) = the backend chooses
 * @param args    one per kernel parameter, in order
 * @param waitFor events that must complete first; default none
 * @param stream  stream to run on; 0 (the default) = the session's default stream of the device
 * @param device  device to run on; empty (the default) = the stream's device, or, with no stream, placement: the
 *                device where the launch is expected to finish first
 * @param deadline when the launch must have started; null (the default) = none. One that has not started by then
 *                 fails with DEADLINE_EXCEEDED instead of running, and so does everything waiting for it
 */
public record Launch(
        KernelHandle kernel, List<Long> global, List<Long> local, List<Object> args, List<Long> waitFor,
        long stream, String device, Instant deadline) {
    public Launch {
        Objects.requireNonNull(kernel, "kernel");
        Objects.requireNonNull(device, "device");
        global = List.copyOf(global);
        local = List.copyOf(local);
        args = Collections.unmodifiableList(new ArrayList<>(args)); // nulls are reported by index on launch
        waitFor = List.copyOf(waitFor);
    }

    /** A launch of {@code kernel} with no grid and no arguments yet. */
    public static Launch of(KernelHandle kernel) {
        return new Launch(kernel, List.of(), List.of(), List.of(), List.of(), 0, "", null);
    }

    /** Sets the global grid, 1 to 3 extents. */
    public Launch global(long... dims) {
        return new Launch(kernel, boxed(dims), local, args, waitFor, stream, device, deadline);
    }

    /** Sets the work-group size; each extent must divide the global one. */
    public Launch local(long... dims) {
        return new Launch(kernel, global, boxed(dims), args, waitFor, stream, device, deadline);
    }

    /** Sets the arguments, one per kernel parameter. */
    public Launch args(Object... args) {
        return new Launch(kernel, global, local, Arrays.asList(args.clone()), waitFor, stream, device, deadline);
    }

    /** Adds events that must complete before the launch starts. */
    public Launch waitFor(Event... events) {
        List<Long> next = new ArrayList<>(waitFor);
        for (Event e : events) {
            next.add(e.id());
        }
        return new Launch(kernel, global, local, args, next, stream, device, deadline);
    }

    /** Runs the launch on {@code stream} (and its device). */
    public Launch on(StreamHandle stream) {
        return new Launch(kernel, global, local, args, waitFor, stream.id(), stream.device(), deadline);
    }

    /** Runs the launch on {@code device}'s default stream. */
    public Launch device(String device) {
        return new Launch(kernel, global, local, args, waitFor, stream, device, deadline);
    }

    /** Must have started by {@code deadline} (null: no deadline). */
    public Launch deadline(Instant deadline) {
        return new Launch(kernel, global, local, args, waitFor, stream, device, deadline);
    }

    static List<Long> boxed(long[] values) {
        List<Long> out = new ArrayList<>(values.length);
        for (long v : values) {
            out.add(v);
        }
        return out;
    }
}
