package dev.arrayd.scheduler;

import dev.arrayd.devices.api.MemRef;

/**
 * What a submission borrows while it registers its commands: the event ids of the batch being checked and
 * exact-size arrays for the replicas and memory of commands with few buffers (a command with fewer than
 * {@link #SIZES} needs no arrays of its own). The scheduler has one for the submissions made under the submit
 * lock's write side; each session has one for its own submissions under the read side.
 */
final class SubmitScratch {

    /** Exact-size arrays for commands with fewer buffers than this. */
    static final int SIZES = 8;

    /** Event ids of the batch being checked (a set: the values are TRUE); empty between batches. */
    final LongMap<Boolean> batchIds = new LongMap<>(64);
    /** Entries are overwritten by each command (stale ones only keep replicas alive, which their buffers do anyway). */
    private final Replica[][] replicas = new Replica[SIZES][];
    private final MemRef[][] refs = new MemRef[SIZES][];

    SubmitScratch() {
        for (int n = 0; n < SIZES; n++) {
            replicas[n] = new Replica[n];
            refs[n] = new MemRef[n];
        }
    }

    /** An array for the replicas of a command with {@code n} buffers (this scratch's own when small). */
    Replica[] replicas(int n) {
        return n < SIZES ? replicas[n] : new Replica[n];
    }

    /** An array for the memory of a command with {@code n} buffers (this scratch's own when small). */
    MemRef[] refs(int n) {
        return n < SIZES ? refs[n] : new MemRef[n];
    }
}
