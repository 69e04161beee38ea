package dev.arrayd.server.regions;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** The regions of one session, by handle; what commands name when they read from or write to one. */
public final class RegionTable {

    private final Map<Long, Region> byHandle = new ConcurrentHashMap<>();

    public void put(Region r) {
        byHandle.put(r.handle(), r);
    }

    /** Removes and returns the region; NOT_FOUND naming the handle when the session has none such. */
    public Region remove(long handle, String field) {
        Region r = byHandle.remove(handle);
        if (r == null) {
            throw notFound(handle, field);
        }
        return r;
    }

    public Region get(long handle, String field) {
        Region r = byHandle.get(handle);
        if (r == null) {
            throw notFound(handle, field);
        }
        return r;
    }

    /** Every region, removed (the session ends). */
    public java.util.List<Region> removeAll() {
        java.util.List<Region> all = new java.util.ArrayList<>();
        for (Long h : byHandle.keySet()) {
            Region r = byHandle.remove(h);
            if (r != null) {
                all.add(r);
            }
        }
        return all;
    }

    /**
     * The bytes [offset, offset + size) of a region (offset and size as the wire's unsigned values),
     * OUT_OF_RANGE naming the values when they do not lie inside it.
     */
    public MemorySegment slice(long handle, long offset, long size, String field) {
        Region r = get(handle, field + ".region");
        if (Long.compareUnsigned(offset, r.size()) > 0 || Long.compareUnsigned(size, r.size() - offset) > 0) {
            throw new ArraydException(ErrorCode.OUT_OF_RANGE, field + ": offset_bytes " + Long.toUnsignedString(offset)
                    + ", size_bytes " + Long.toUnsignedString(size) + " (expected: inside " + r + ")");
        }
        return r.memory().segment().asSlice(offset, size);
    }

    /** The bytes of a region from {@code offset} (unsigned) to its end; OUT_OF_RANGE past its end. */
    public MemorySegment sliceFrom(long handle, long offset, String field) {
        Region r = get(handle, field + ".region");
        if (Long.compareUnsigned(offset, r.size()) > 0) {
            throw new ArraydException(ErrorCode.OUT_OF_RANGE, field + ": offset_bytes " + Long.toUnsignedString(offset)
                    + " (expected: inside " + r + ")");
        }
        return r.memory().segment().asSlice(offset);
    }

    private static ArraydException notFound(long handle, String field) {
        return ArraydException.notFound(field + ": region 0x" + Long.toHexString(handle) + " (not found in this session)");
    }
}
