package dev.arrayd.scheduler;

import java.util.Arrays;

/**
 * The buffers one launch touches, each once, and how (a buffer passed twice is accessed as the union of
 * both parameters): filled argument by argument while a launch is validated. Accesses are bit masks
 * while there can be at most 64 buffers (then the shared arrays of {@link Flags} serve), arrays beyond.
 *
 * <p>The touched buffers are compacted into the argument array itself, in place: entry {@code count()} is
 * written only after the caller has read argument {@code i >= count()}. A null entry stands for the merge
 * buffer of the launch's stream. Reused: {@link #begin} forgets the previous launch.
 */
final class LaunchAccesses {

    private Buffer[] touched;
    private int count;
    private long readMask;
    private long writeMask;
    private boolean[] manyReads;
    private boolean[] manyWrites;

    /** Starts a launch of {@code args} arguments whose buffers are in {@code argBuffers} (compacted in place). */
    void begin(Buffer[] argBuffers, int args) {
        touched = argBuffers;
        count = 0;
        readMask = 0;
        writeMask = 0;
        manyReads = args > Long.SIZE ? new boolean[args] : null;
        manyWrites = manyReads != null ? new boolean[args] : null;
    }

    /** Records an access of {@code b} (null: the merge buffer); returns its position among the touched buffers. */
    int touch(Buffer b, boolean reads, boolean writes) {
        int seen = -1;
        for (int i = 0; i < count; i++) {
            if (touched[i] == b) {
                seen = i;
                break;
            }
        }
        if (seen < 0) {
            touched[count] = b;
            seen = count++;
        }
        if (manyReads == null) {
            readMask |= reads ? 1L << seen : 0;
            writeMask |= writes ? 1L << seen : 0;
        } else {
            manyReads[seen] |= reads;
            manyWrites[seen] |= writes;
        }
        return seen;
    }

    /** The touched buffers, each once: the argument array itself when every argument was a distinct buffer. */
    Buffer[] buffers(Prepared into) {
        if (count == touched.length) {
            return touched;
        }
        Buffer[] out = into.bufferArray(count);
        System.arraycopy(touched, 0, out, 0, count);
        return out;
    }

    int count() {
        return count;
    }

    boolean[] reads() {
        return manyReads == null ? Flags.of(readMask, count) : Arrays.copyOf(manyReads, count);
    }

    boolean[] writes() {
        return manyWrites == null ? Flags.of(writeMask, count) : Arrays.copyOf(manyWrites, count);
    }

    /** Forgets the launch (a reused instance keeps no buffer alive). */
    void clear() {
        touched = null;
        manyReads = null;
        manyWrites = null;
    }
}
