package dev.arrayd.devices.opencl;

import dev.arrayd.devices.api.support.PoolTable;
import org.jocl.cl_mem;

/** One slab: a whole {@code cl_mem} buffer; buffers of the scheduler are byte offsets inside it. */
record ClSlab(int poolId, cl_mem mem, long bytes) implements PoolTable.Slab {}
