package dev.arrayd.scheduler;

import dev.arrayd.devices.api.KernelArg;
import java.util.List;
import java.util.Map;

/**
 * What changes in one replay of a {@link Graph}.
 *
 * @param firstEvent    event id of the graph's first command; command {@code i} signals {@code firstEvent + i}.
 *                      0 = the server assigns ids
 * @param waits         events the graph's root commands (those waiting on no other command of the graph) wait for
 * @param rebind        buffer handle used when recording to the buffer handle to use instead (same dtype and size)
 * @param scalars       new scalar values of launch arguments
 * @param deadlineNanos for every command, on the scheduler's clock; {@link CommandSpec#NO_DEADLINE} for none
 */
public record GraphReplay(long firstEvent, long[] waits, Map<Long, Long> rebind, List<ScalarValue> scalars,
                          long deadlineNanos) {

    public GraphReplay {
        waits = waits == null ? new long[0] : waits;
        rebind = rebind == null ? Map.of() : rebind;
        scalars = scalars == null ? List.of() : scalars;
    }

    /** Scalar argument {@code arg} of the launch at position {@code command} takes {@code value}. */
    public record ScalarValue(int command, int arg, KernelArg.Scalar value) {}
}
