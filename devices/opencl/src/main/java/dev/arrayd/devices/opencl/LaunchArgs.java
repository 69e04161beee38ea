package dev.arrayd.devices.opencl;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.KernelParam;
import dev.arrayd.devices.api.support.LaunchArguments;
import org.jocl.CL;
import org.jocl.Pointer;
import org.jocl.Sizeof;
import org.jocl.cl_kernel;

import java.util.List;

/**
 * Checks launch arguments against the declared signature ({@link LaunchArguments}) and sets them on a
 * borrowed kernel object:
 * a buffer as its slab's {@code cl_mem} and its byte offset (see {@link OpenClSourceAssembler}), then,
 * for an IR kernel, its element count ({@link IrProgramAssembler}); a scalar at its dtype's width.
 * An IR kernel's buffer must start at a multiple of its element size (OpenCL C pointers must be
 * aligned to their type; buffers the scheduler places always are). A bad argument is INVALID_ARGUMENT
 * (OUT_OF_RANGE for a range outside its slab) naming {@code args[i]} and the parameter; the kernel
 * object may then hold some arguments of this launch, which is harmless: every launch sets all of them.
 */
final class LaunchArgs {

    private LaunchArgs() {}

    /** {@code extents}: the element counts of an IR kernel's buffer arguments by position, null for OpenCL C. */
    static void set(cl_kernel kernel, OpenClKernel k, List<KernelArg> values, OpenClDevice device, long[] extents) {
        LaunchArguments.checkCount(k.signature(), values);
        List<KernelParam> params = k.signature().params();
        // checked in full before the first clSetKernelArg, so a refused launch costs no driver calls
        for (int i = 0; i < params.size(); i++) {
            LaunchArguments.check(i, params.get(i), values.get(i));
            if (values.get(i) instanceof KernelArg.Buffer b) {
                device.slab(b.ref(), "args", i);
                if (extents != null) {
                    checkAligned(i, params.get(i), b);
                }
            }
        }
        int[] at = k.argIndexes();
        for (int i = 0; i < params.size(); i++) {
            switch (values.get(i)) {
                case KernelArg.Buffer buffer -> {
                    ClSlab slab = device.slab(buffer.ref(), "args", i);
                    CL.clSetKernelArg(kernel, at[i], Sizeof.cl_mem, Pointer.to(slab.mem()));
                    CL.clSetKernelArg(kernel, at[i] + 1, Sizeof.cl_ulong, Pointer.to(new long[] {buffer.ref().offset()}));
                    if (extents != null) {
                        CL.clSetKernelArg(kernel, at[i] + 2, Sizeof.cl_long, Pointer.to(new long[] {extents[i]}));
                    }
                }
                case KernelArg.Scalar scalar -> setScalar(kernel, at[i], scalar);
                case null -> throw new IllegalStateException("checked above");
            }
        }
    }

    /** An IR kernel's pointer to a buffer must be aligned to its element type (OpenCL C leaves anything else undefined). */
    private static void checkAligned(int i, KernelParam param, KernelArg.Buffer buffer) {
        int size = param.dtype().byteSize();
        if (buffer.ref().offset() % size != 0) {
            throw ArraydException.invalid("args[" + i + "]: buffer " + buffer.ref() + " at byte offset " + buffer.ref().offset()
                    + " (expected: a multiple of " + size + ", the size of " + param.dtype().wireName() + ", for "
                    + LaunchArguments.describe(param) + " of an IR kernel)");
        }
    }

    private static void setScalar(cl_kernel kernel, int index, KernelArg.Scalar scalar) {
        long bits = scalar.bits();
        switch (scalar.dtype()) {
            case F32, I32 -> CL.clSetKernelArg(kernel, index, Sizeof.cl_int, Pointer.to(new int[] {(int) bits}));
            case F64, I64 -> CL.clSetKernelArg(kernel, index, Sizeof.cl_long, Pointer.to(new long[] {bits}));
            case U8 -> CL.clSetKernelArg(kernel, index, Sizeof.cl_uchar, Pointer.to(new byte[] {(byte) bits}));
            case F16, BF16 -> CL.clSetKernelArg(kernel, index, Sizeof.cl_ushort, Pointer.to(new short[] {(short) bits}));
        }
    }
}
