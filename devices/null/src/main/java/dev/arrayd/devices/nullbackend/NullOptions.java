package dev.arrayd.devices.nullbackend;

import dev.arrayd.devices.api.Dialect;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * How a {@link NullBackend}'s devices behave.
 *
 * @param memoryBytes      each device's memory (the capacity of its slabs)
 * @param storesData       whether slabs have memory behind them, so that uploads, downloads, copies and fills
 *                         move real bytes (false: only the accounting, as a benchmark of the scheduler wants)
 * @param completion       how a stream completes its commands
 * @param suggestedStreams the streams a device says it runs well with (the scheduler's shared streams)
 * @param computeUnits     what a device says it has (the scheduler's dispatch depth follows from it)
 * @param maxWorkGroupSize largest product of local dims, also the largest local dim
 * @param baseAlignment    every slab offset's alignment
 * @param dialects         what the compiler accepts (it compiles nothing: see {@link NullCompiler})
 * @param behaviour        what a device does when it runs a command (a null device: nothing but moving data)
 */
public record NullOptions(long memoryBytes, boolean storesData, Completion completion, int suggestedStreams,
                          int computeUnits, long maxWorkGroupSize, long baseAlignment, Set<Dialect> dialects,
                          NullBehaviour behaviour) {

    /** How streams complete commands. */
    public enum Completion {
        /** Each stream has a worker thread that runs its commands in order (like a real device). */
        WORKER,
        /** A command completes inside {@code submit} / {@code tryRunInline}, on the caller's thread. */
        IMMEDIATE,
        /** Commands wait in their stream until {@link NullDevice#drainAll()} completes them, on the caller's thread. */
        MANUAL
    }

    public NullOptions {
        Objects.requireNonNull(completion, "completion");
        Objects.requireNonNull(behaviour, "behaviour");
        dialects = Set.copyOf(dialects);
    }

    /** 1 GiB devices with data, worker streams, two shared streams, C and IR accepted. */
    public static NullOptions defaults() {
        return new NullOptions(1L << 30, true, Completion.WORKER, 2, 2, 256, 16, EnumSet.of(Dialect.C, Dialect.IR),
                NullBehaviour.NONE);
    }

    public NullOptions withMemoryBytes(long bytes) {
        return new NullOptions(bytes, storesData, completion, suggestedStreams, computeUnits, maxWorkGroupSize,
                baseAlignment, dialects, behaviour);
    }

    public NullOptions withStoresData(boolean on) {
        return new NullOptions(memoryBytes, on, completion, suggestedStreams, computeUnits, maxWorkGroupSize,
                baseAlignment, dialects, behaviour);
    }

    public NullOptions withCompletion(Completion c) {
        return new NullOptions(memoryBytes, storesData, c, suggestedStreams, computeUnits, maxWorkGroupSize,
                baseAlignment, dialects, behaviour);
    }

    /** The device's description: streams it suggests, compute units, work-group size, alignment. */
    public NullOptions withShape(int suggestedStreams, int computeUnits, long maxWorkGroupSize, long baseAlignment) {
        return new NullOptions(memoryBytes, storesData, completion, suggestedStreams, computeUnits, maxWorkGroupSize,
                baseAlignment, dialects, behaviour);
    }

    public NullOptions withDialects(Set<Dialect> d) {
        return new NullOptions(memoryBytes, storesData, completion, suggestedStreams, computeUnits, maxWorkGroupSize,
                baseAlignment, d, behaviour);
    }

    public NullOptions withBehaviour(NullBehaviour b) {
        return new NullOptions(memoryBytes, storesData, completion, suggestedStreams, computeUnits, maxWorkGroupSize,
                baseAlignment, dialects, b);
    }
}
