package dev.arrayd.devices.api.support;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * An immutable pool-id → slab map for a backend's device, replaced whole on alloc / free (rare) so
 * that the lookup done for every command and every buffer argument (frequent, from stream threads)
 * is a lock-free binary search with no boxing. Hold it in a volatile field and swap it.
 *
 * @param <S> the backend's slab type
 */
public final class PoolTable<S extends PoolTable.Slab> {

    /** What a backend's slab must tell the table. */
    public interface Slab {
        int poolId();

        long bytes();
    }

    private static final PoolTable<?> EMPTY = new PoolTable<>(new int[0], new Slab[0]);

    private final int[] ids;
    private final Slab[] slabs;

    private PoolTable(int[] ids, Slab[] slabs) {
        this.ids = ids;
        this.slabs = slabs;
    }

    @SuppressWarnings("unchecked")
    public static <S extends Slab> PoolTable<S> empty() {
        return (PoolTable<S>) EMPTY;
    }

    /** The slab of {@code poolId}, or null. */
    @SuppressWarnings("unchecked")
    public S find(int poolId) {
        int i = Arrays.binarySearch(ids, poolId);
        return i >= 0 ? (S) slabs[i] : null;
    }

    /** A table with {@code slab} added; its pool id must be new. */
    public PoolTable<S> with(S slab) {
        int i = Arrays.binarySearch(ids, slab.poolId());
        if (i >= 0) {
            throw new IllegalStateException("pool " + slab.poolId() + " already present");
        }
        int at = -i - 1;
        int[] newIds = new int[ids.length + 1];
        Slab[] newSlabs = new Slab[slabs.length + 1];
        System.arraycopy(ids, 0, newIds, 0, at);
        System.arraycopy(slabs, 0, newSlabs, 0, at);
        newIds[at] = slab.poolId();
        newSlabs[at] = slab;
        System.arraycopy(ids, at, newIds, at + 1, ids.length - at);
        System.arraycopy(slabs, at, newSlabs, at + 1, slabs.length - at);
        return new PoolTable<>(newIds, newSlabs);
    }

    /** A table without {@code poolId} (this one if it is absent). */
    public PoolTable<S> without(int poolId) {
        int at = Arrays.binarySearch(ids, poolId);
        if (at < 0) {
            return this;
        }
        int[] newIds = new int[ids.length - 1];
        Slab[] newSlabs = new Slab[slabs.length - 1];
        System.arraycopy(ids, 0, newIds, 0, at);
        System.arraycopy(slabs, 0, newSlabs, 0, at);
        System.arraycopy(ids, at + 1, newIds, at, ids.length - at - 1);
        System.arraycopy(slabs, at + 1, newSlabs, at, slabs.length - at - 1);
        return new PoolTable<>(newIds, newSlabs);
    }

    /** The pool ids, ascending (a copy). */
    public int[] ids() {
        return ids.clone();
    }

    /** The slabs, by ascending pool id. */
    @SuppressWarnings("unchecked")
    public List<S> slabs() {
        List<S> out = new ArrayList<>(slabs.length);
        for (Slab s : slabs) {
            out.add((S) s);
        }
        return out;
    }

    public int size() {
        return ids.length;
    }
}
