package dev.arrayd.client;

import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.Copy;
import java.util.ArrayList;
import java.util.List;

/**
 * Collects the commands of a graph for {@link Session#recordGraph}. Each method returns the command's
 * position in the graph; {@code after} names earlier positions it waits for. Nothing is sent until
 * the graph is recorded. Not thread-safe.
 */
public final class GraphRecorder {

    /** Turns a launch into a command (checked against the kernel's signature), without event or waits. */
    interface LaunchEncoder {
        Command.Builder encode(Launch launch);
    }

    private final LaunchEncoder encoder;
    final List<Command> commands = new ArrayList<>();
    final List<KernelHandle> kernels = new ArrayList<>();

    GraphRecorder(LaunchEncoder encoder) {
        this.encoder = encoder;
    }

    /** A launch (its {@code waitFor} must be empty: use {@code after}); its stream and device as given. */
    public int launch(Launch launch, int... after) {
        if (!launch.waitFor().isEmpty()) {
            throw new IllegalArgumentException("launch.waitFor: " + launch.waitFor()
                    + " (expected: none in a graph; name earlier commands of the graph with `after`)");
        }
        return add(encoder.encode(launch).setStream(launch.stream()), launch.kernel(), after);
    }

    /** Copies all of {@code src} into {@code dst} (any devices); padded buffers: their interiors. */
    public int copy(BufferHandle src, BufferHandle dst, int... after) {
        return copy(src, dst, false, after);
    }

    /**
     * {@link #copy(BufferHandle, BufferHandle, int...)}; with {@code wholePadded}, padded buffers' whole padded
     * arrays (halo included), as {@link CommandOptions#wholePadded()} does for a session's copy.
     */
    public int copy(BufferHandle src, BufferHandle dst, boolean wholePadded, int... after) {
        return add(Command.newBuilder().setCopy(Copy.newBuilder().setSrc(src.id()).setDst(dst.id())
                .setWholePadded(wholePadded)), null, after);
    }

    /** Makes {@code src} current on {@code device} (an explicit transfer). */
    public int transfer(BufferHandle src, String device, int... after) {
        return add(Command.newBuilder().setCopy(Copy.newBuilder().setSrc(src.id()).setDevice(device)), null, after);
    }

    /** Fills the merge buffer of {@code stream} from {@code src}. */
    public int mergeCopy(BufferHandle src, StreamHandle stream, MergeMode mode, int... after) {
        return add(Command.newBuilder().setStream(stream.id()).setCopy(Copy.newBuilder().setSrc(src.id())
                .setMerge(Protos.mergeMode(mode))), null, after);
    }

    /** Sets every element of {@code buffer} to {@code value}; a padded buffer: its interior (the halo keeps its value). */
    public int fill(BufferHandle buffer, Number value, int... after) {
        return fill(buffer, value, false, after);
    }

    /** {@link #fill(BufferHandle, Number, int...)}; with {@code wholePadded}, a padded buffer's halo too. */
    public int fill(BufferHandle buffer, Number value, boolean wholePadded, int... after) {
        return add(Command.newBuilder().setFill(dev.arrayd.proto.v1.Fill.newBuilder().setBuffer(buffer.id())
                .setValue(Scalars.of(value, buffer.dtype(), "value", "buffer " + buffer.id() + " of type "
                        + buffer.dtype())).setWholePadded(wholePadded)), null, after);
    }

    /** Number of commands so far. */
    public int size() {
        return commands.size();
    }

    private int add(Command.Builder c, KernelHandle kernel, int[] after) {
        int at = commands.size();
        for (int i = 0; i < after.length; i++) {
            if (after[i] < 0 || after[i] >= at) {
                throw new IllegalArgumentException("after[" + i + "]: " + after[i] + " (expected: an earlier position, 0 to "
                        + (at - 1) + ")");
            }
            c.addWaitEvents(after[i] + 1L);
        }
        commands.add(c.setEvent(at + 1L).build());
        kernels.add(kernel);
        return at;
    }
}
