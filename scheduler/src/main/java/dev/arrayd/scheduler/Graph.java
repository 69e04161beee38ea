package dev.arrayd.scheduler;

import java.util.List;

/**
 * A recorded graph (like a CUDA graph): commands validated once, replayed by handle as often as
 * wanted, with new scalar values and rebound buffers, at a cost proportional to its commands. Its
 * commands wait on each other by their position; the ids they had when recorded only name them.
 */
public final class Graph {

    private final long handle;
    final Prepared[] commands;
    /** Per command, the event id it had when recorded (for error messages and rebinding by id). */
    final long[] recordedIds;
    /** Buffers the graph uses (the handles a replay may rebind), each once. */
    final List<Buffer> buffers;
    volatile boolean destroyed;

    Graph(long handle, Prepared[] commands, long[] recordedIds, List<Buffer> buffers) {
        this.handle = handle;
        this.commands = commands;
        this.recordedIds = recordedIds;
        this.buffers = List.copyOf(buffers);
    }

    public long handle() {
        return handle;
    }

    /** Number of commands. */
    public int size() {
        return commands.length;
    }

    @Override
    public String toString() {
        return "graph " + Handles.format(handle) + " (" + commands.length + " commands)";
    }
}
