package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.KernelParam;
import dev.arrayd.devices.api.KernelSignature;

import java.util.List;

/**
 * Launch arguments checked against the declared signature and reduced to raw values: a buffer as its
 * device address ({@code slab base + offset}), a scalar as its bits, each with the byte width the kernel
 * parameter has ({@code cuLaunchKernel} copies exactly the parameter's size from each pointer it is
 * given). Pure: the slab lookup is passed in, so the packing is tested without a GPU.
 *
 * @param values  per parameter: the address or the scalar's bits (low {@code widths[i]} bytes used)
 * @param widths  per parameter: 1, 2, 4 or 8 bytes
 */
record PackedArgs(long[] values, int[] widths) {

    /** Resolves a buffer argument to its device address; throws (naming {@code args[index]}) when refused. */
    @FunctionalInterface
    interface AddressResolver {
        long address(dev.arrayd.devices.api.MemRef ref, int index);
    }

    static PackedArgs pack(KernelSignature signature, List<KernelArg> args, AddressResolver resolver) {
        List<KernelParam> params = signature.params();
        if (args == null || args.size() != params.size()) {
            throw ArraydException.invalid("args: " + (args == null ? "null" : args.size() + " arguments") + " (expected: "
                    + params.size() + " for " + describe(signature) + ")");
        }
        long[] values = new long[params.size()];
        int[] widths = new int[params.size()];
        for (int i = 0; i < params.size(); i++) {
            KernelParam param = params.get(i);
            switch (args.get(i)) {
                case KernelArg.Buffer buffer -> {
                    if (!param.isBuffer()) {
                        throw ArraydException.invalid("args[" + i + "]: buffer " + buffer.ref() + " (expected: " + describe(param) + ")");
                    }
                    values[i] = resolver.address(buffer.ref(), i);
                    widths[i] = 8;
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
                    values[i] = bits;
                    widths[i] = scalar.dtype().byteSize();
                }
                case null -> throw ArraydException.invalid("args[" + i + "]: null (expected: " + describe(param) + ")");
            }
        }
        return new PackedArgs(values, widths);
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
            s.append(i == 0 ? "" : ", ").append(p.isBuffer() ? "buffer " : "").append(p.dtype().wireName()).append(' ').append(p.name());
        }
        return s.append(')').toString();
    }
}
