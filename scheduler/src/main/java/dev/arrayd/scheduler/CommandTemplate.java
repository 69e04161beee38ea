package dev.arrayd.scheduler;

import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.SlotRing;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;

/**
 * A validated command before its buffers have device memory: the device op is built when the
 * scheduler has chosen the replica of each buffer on the command's device. Kept by recorded graphs,
 * which rebuild the op on every replay (with rebound buffers and new scalar values) without
 * validating again.
 */
sealed interface CommandTemplate {

    /**
     * The device op, given the memory of each of the command's buffers (whole buffers, in the order of
     * its buffer list), and what the command produces (a download's bytes) or null.
     */
    Built build(MemRef[] buffers);

    record Built(DeviceCommand op, Object result) {}

    /**
     * A byte range of buffer {@code index} of the command's buffer list bound to a parameter (a launch's
     * {@link CommandSpec.RangeArg}).
     */
    record Range(int index, long offset, long bytes) {}

    /**
     * @param args per kernel parameter: an {@link Integer} index into the buffer list, a {@link Range} of one, or a
     *             {@link KernelArg.Scalar}
     */
    record Launch(Kernel kernel, long[] globalDims, long[] localDims, Object[] args) implements CommandTemplate {
        @Override
        public Built build(MemRef[] buffers) {
            return new Built(op(buffers, null), null);
        }

        /**
         * The device op given the memory of the buffers; {@code last} itself when it is the same launch
         * (device ops are immutable, so a launch repeated on the same memory shares one: no new op and
         * argument list per command).
         */
        DeviceCommand.Launch op(MemRef[] buffers, DeviceCommand.Launch last) {
            if (last != null && sameAs(last, buffers)) {
                return last;
            }
            KernelArg[] kargs = new KernelArg[args.length];
            for (int a = 0; a < args.length; a++) {
                kargs[a] = switch (args[a]) {
                    case Integer i -> new KernelArg.Buffer(buffers[i]);
                    case Range r -> new KernelArg.Buffer(slice(buffers[r.index()], r.offset(), r.bytes()));
                    default -> (KernelArg.Scalar) args[a];
                };
            }
            return new DeviceCommand.Launch(kernel, globalDims, localDims, java.util.Arrays.asList(kargs));
        }

        private boolean sameAs(DeviceCommand.Launch op, MemRef[] buffers) {
            if (op.kernel() != kernel || !java.util.Arrays.equals(op.globalDims(), globalDims)
                    || !java.util.Arrays.equals(op.localDims(), localDims) || op.args().size() != args.length) {
                return false;
            }
            for (int a = 0; a < args.length; a++) {
                KernelArg have = op.args().get(a);
                if (args[a] instanceof Integer i) {
                    if (!(have instanceof KernelArg.Buffer b) || !b.ref().equals(buffers[i])) {
                        return false;
                    }
                } else if (args[a] instanceof Range r) {
                    if (!(have instanceof KernelArg.Buffer b) || !b.ref().equals(slice(buffers[r.index()], r.offset(), r.bytes()))) {
                        return false;
                    }
                } else if (!args[a].equals(have)) {
                    return false;
                }
            }
            return true;
        }

        /** The same launch of another device's build of the kernel. */
        Launch on(Kernel other) {
            return new Launch(other, globalDims, localDims, args);
        }

        /** The same launch with scalar argument {@code arg} replaced. */
        Launch withScalar(int arg, KernelArg.Scalar value) {
            Object[] copy = args.clone();
            copy[arg] = value;
            return new Launch(kernel, globalDims, localDims, copy);
        }
    }

    /** Buffer list: {@code [src, dst]}, or {@code [buffer]} for a copy within one buffer. */
    record Copy(long srcOffset, long dstOffset, long size) implements CommandTemplate {
        @Override
        public Built build(MemRef[] buffers) {
            MemRef src = buffers[0];
            MemRef dst = buffers[buffers.length - 1];
            return new Built(new DeviceCommand.Copy(slice(src, srcOffset, size), slice(dst, dstOffset, size)), null);
        }
    }

    /** Fills the merge buffer of the command's stream from its one buffer, the source. */
    record MergeCopy(MergeMode mode) implements CommandTemplate {
        @Override
        public Built build(MemRef[] buffers) {
            throw new IllegalStateException("a merge copy is built by the scheduler");
        }
    }

    /** Makes its one buffer current on the command's device; nothing else to run. */
    record Prefetch() implements CommandTemplate {
        @Override
        public Built build(MemRef[] buffers) {
            return new Built(null, null);
        }
    }

    /** Its one buffer's host memory was written by the client: a state change only, made by the scheduler. */
    record HostWritten() implements CommandTemplate {
        @Override
        public Built build(MemRef[] buffers) {
            return new Built(null, null);
        }
    }

    record Fill(long offset, long bytes, long pattern, int width) implements CommandTemplate {
        @Override
        public Built build(MemRef[] buffers) {
            return new Built(new DeviceCommand.Fill(slice(buffers[0], offset, bytes), pattern, width), null);
        }
    }

    record Upload(MemorySegment data, long offset) implements CommandTemplate {
        @Override
        public Built build(MemRef[] buffers) {
            return new Built(new DeviceCommand.Upload(data, slice(buffers[0], offset, data.byteSize())), null);
        }
    }

    /** Bytes in pieces, in order, written from {@code offset}: one upload per piece, as one sequence. */
    record ScatteredUpload(List<MemorySegment> pieces, long offset) implements CommandTemplate {
        @Override
        public Built build(MemRef[] buffers) {
            List<DeviceCommand> parts = new ArrayList<>(pieces.size());
            long at = offset;
            for (MemorySegment p : pieces) {
                parts.add(new DeviceCommand.Upload(p, slice(buffers[0], at, p.byteSize())));
                at += p.byteSize();
            }
            return new Built(parts.size() == 1 ? parts.getFirst() : new DeviceCommand.Sequence(parts), null);
        }
    }

    /**
     * @param into   where the bytes go; null = an array, the command's result (the completion's data)
     * @param arrays where that array comes from, given its length; null = a new one
     */
    record Download(long offset, long size, MemorySegment into, IntFunction<byte[]> arrays) implements CommandTemplate {
        @Override
        public Built build(MemRef[] buffers) {
            if (into != null) {
                return new Built(new DeviceCommand.Download(slice(buffers[0], offset, size), into.asSlice(0, size)), null);
            }
            byte[] out = arrays == null ? new byte[(int) size] : arrays.apply((int) size);
            return new Built(new DeviceCommand.Download(slice(buffers[0], offset, size), MemorySegment.ofArray(out)), out);
        }
    }

    /** {@code size} bytes from {@code offset} through a client's ring: into the buffer when {@code upload}. */
    record RingTransfer(long offset, long size, SlotRing ring, boolean upload) implements CommandTemplate {
        @Override
        public Built build(MemRef[] buffers) {
            return new Built(new DeviceCommand.RingTransfer(slice(buffers[0], offset, size), ring, upload), null);
        }
    }

    /**
     * Interior elements of a padded buffer (its layout {@code layout}): the pieces of the range, one device
     * command ({@link Pieces}). Buffer list: {@code [buffer]}, or {@code [src, dst]} / {@code [buffer]} for a copy.
     */
    sealed interface Interior extends CommandTemplate {}

    /** Writes {@code data} over interior elements from {@code first}. */
    record InteriorUpload(MemorySegment data, Layout layout, long first, int width) implements Interior {
        @Override
        public Built build(MemRef[] buffers) {
            return new Built(Pieces.uploads(data, buffers[0], layout, first, width), null);
        }
    }

    /** Reads interior elements {@code [first, first + count)}; {@code into} as for {@link Download}. */
    record InteriorDownload(Layout layout, long first, long count, int width, MemorySegment into) implements Interior {
        @Override
        public Built build(MemRef[] buffers) {
            if (into != null) {
                return new Built(Pieces.downloads(buffers[0], layout, first, count, width, into), null);
            }
            byte[] out = new byte[(int) (count * width)];
            return new Built(Pieces.downloads(buffers[0], layout, first, count, width, MemorySegment.ofArray(out)), out);
        }
    }

    record InteriorFill(Layout layout, long first, long count, int width, long pattern) implements Interior {
        @Override
        public Built build(MemRef[] buffers) {
            return new Built(Pieces.fills(buffers[0], layout, first, count, width, pattern), null);
        }
    }

    /** {@code count} elements from interior {@code srcFirst} of the source to interior {@code dstFirst} of the destination. */
    record InteriorCopy(Layout srcLayout, long srcFirst, Layout dstLayout, long dstFirst, long count, int width)
            implements Interior {
        @Override
        public Built build(MemRef[] buffers) {
            return new Built(Pieces.copies(buffers[0], srcLayout, srcFirst, buffers[buffers.length - 1], dstLayout,
                    dstFirst, count, width), null);
        }
    }

    static MemRef slice(MemRef whole, long offset, long bytes) {
        return new MemRef(whole.poolId(), whole.offset() + offset, bytes);
    }
}
