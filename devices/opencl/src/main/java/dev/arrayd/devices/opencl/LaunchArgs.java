package dev.arrayd.devices.opencl;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.KernelParam;
import dev.arrayd.devices.api.KernelSignature;
import org.jocl.CL;
import org.jocl.Pointer;
import org.jocl.Sizeof;
import org.jocl.cl_kernel;

import java.util.List;

/**
 * Checks launch arguments against the declared signature and sets them on a borrowed kernel object:
 * a buffer as its slab's {@code cl_mem} and its byte offset (see {@link OpenClSourceAssembler}), a
 * scalar at its dtype's width. A bad argument is INVALID_ARGUMENT (OUT_OF_RANGE for a range outside its
 * slab) naming {@code args[i]} and the parameter; the kernel object may then hold some arguments of
 * this launch, which is harmless: every launch sets all of them.
 */
final class LaunchArgs {

    private LaunchArgs() {}

    static void set(cl_kernel kernel, OpenClKernel k, List<KernelArg> values, OpenClDevice device) {
        KernelSignature signature = k.signature();
        List<KernelParam> params = signature.params();
        if (values == null || values.size() != params.size()) {
            throw ArraydException.invalid("args: " + (values == null ? "null" : values.size() + " arguments")
                    + " (expected: " + params.size() + " for " + describe(signature) + ")");
        }
        // checked in full before the first clSetKernelArg, so a refused launch costs no driver calls
        for (int i = 0; i < params.size(); i++) {
            check(i, params.get(i), values.get(i), device);
        }
        int[] at = k.argIndexes();
        for (int i = 0; i < params.size(); i++) {
            switch (values.get(i)) {
                case KernelArg.Buffer buffer -> {
                    ClSlab slab = device.slab(buffer.ref(), "args", i);
                    CL.clSetKernelArg(kernel, at[i], Sizeof.cl_mem, Pointer.to(slab.mem()));
                    CL.clSetKernelArg(kernel, at[i] + 1, Sizeof.cl_ulong, Pointer.to(new long[] {buffer.ref().offset()}));
                }
                case KernelArg.Scalar scalar -> setScalar(kernel, at[i], scalar);
                case null -> throw new IllegalStateException("checked above");
            }
        }
    }

    private static void check(int i, KernelParam param, KernelArg value, OpenClDevice device) {
        switch (value) {
            case KernelArg.Buffer buffer -> {
                if (!param.isBuffer()) {
                    throw ArraydException.invalid("args[" + i + "]: buffer " + buffer.ref() + " (expected: " + describe(param) + ")");
                }
                device.slab(buffer.ref(), "args", i);
            }
            case KernelArg.Scalar scalar -> {
                if (param.isBuffer() || scalar.dtype() != param.dtype()) {
                    throw ArraydException.invalid("args[" + i + "]: " + scalar.dtype().wireName() + " scalar (expected: "
                            + describe(param) + ")");
                }
                long bits = scalar.bits();
                switch (scalar.dtype()) {
                    case I32 -> {
                        if (bits != (int) bits) {
                            throw ArraydException.invalid("args[" + i + "]: i32 scalar " + bits + " (expected: a value in i32 range for "
                                    + describe(param) + ")");
                        }
                    }
                    case U8 -> {
                        if (bits < 0 || bits > 0xff) {
                            throw ArraydException.invalid("args[" + i + "]: u8 scalar " + bits + " (expected: 0 to 255 for "
                                    + describe(param) + ")");
                        }
                    }
                    default -> { }
                }
            }
            case null -> throw ArraydException.invalid("args[" + i + "]: null (expected: " + describe(param) + ")");
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

    static String describe(KernelParam param) {
        return param.isBuffer()
                ? "buffer of " + param.dtype().wireName() + " for parameter " + param.name()
                : param.dtype().wireName() + " scalar for parameter " + param.name();
    }

    static String describe(KernelSignature signature) {
        StringBuilder s = new StringBuilder(signature.name()).append('(');
        for (int i = 0; i < signature.params().size(); i++) {
            KernelParam p = signature.params().get(i);
            s.append(i == 0 ? "" : ", ").append(p.isBuffer() ? "buffer " : "").append(p.dtype().wireName())
                    .append(' ').append(p.name());
        }
        return s.append(')').toString();
    }
}
