package dev.arrayd.devices.api.support;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.KernelParam;
import dev.arrayd.devices.api.KernelSignature;
import dev.arrayd.devices.api.MemRef;
import java.util.List;

/**
 * The checks of a launch's arguments against its kernel's declared signature that every backend makes
 * before packing them its own way (an argument block, {@code clSetKernelArg}, {@code cuLaunchKernel}'s
 * pointers): one argument per parameter, a buffer for a buffer parameter (its memory checked by the
 * backend), a scalar of the parameter's dtype for a scalar one, in range for i32 and u8. Refusals are
 * INVALID_ARGUMENT naming {@code args[i]} and the parameter.
 */
public final class LaunchArguments {

    /** Receives the checked arguments, in order; nothing is given past a bad one. */
    public interface Sink {

        /** Buffer argument {@code index}; the sink checks (and resolves) its memory, naming {@code args[index]}. */
        void buffer(int index, KernelParam param, MemRef ref);

        /** Scalar argument {@code index}: its raw bits, of which the low {@code width} bytes are the value. */
        void scalar(int index, KernelParam param, long bits, int width);
    }

    private LaunchArguments() {}

    /** Checks every argument and hands each to {@code sink}, in order. */
    public static void pack(KernelSignature signature, List<KernelArg> values, Sink sink) {
        checkCount(signature, values);
        List<KernelParam> params = signature.params();
        for (int i = 0; i < params.size(); i++) {
            KernelParam param = params.get(i);
            KernelArg value = values.get(i);
            check(i, param, value);
            switch (value) {
                case KernelArg.Buffer buffer -> sink.buffer(i, param, buffer.ref());
                case KernelArg.Scalar scalar -> sink.scalar(i, param, scalar.bits(), scalar.dtype().byteSize());
            }
        }
    }

    /** INVALID_ARGUMENT unless there is one argument per declared parameter. */
    public static void checkCount(KernelSignature signature, List<KernelArg> values) {
        if (values == null || values.size() != signature.params().size()) {
            throw ArraydException.invalid("args: " + (values == null ? "null" : values.size() + " arguments")
                    + " (expected: " + signature.params().size() + " for " + describe(signature) + ")");
        }
    }

    /** Argument {@code i} against its parameter: kind, dtype, and the range of i32 and u8 scalars. */
    public static void check(int i, KernelParam param, KernelArg value) {
        switch (value) {
            case KernelArg.Buffer buffer -> {
                if (!param.isBuffer()) {
                    throw ArraydException.invalid("args[" + i + "]: buffer " + buffer.ref() + " (expected: " + describe(param) + ")");
                }
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
                            throw ArraydException.invalid("args[" + i + "]: i32 scalar " + bits
                                    + " (expected: a value in i32 range for " + describe(param) + ")");
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

    /** {@code buffer of f32 for parameter a} / {@code i32 scalar for parameter n}, for messages. */
    public static String describe(KernelParam param) {
        return param.isBuffer()
                ? "buffer of " + param.dtype().wireName() + " for parameter " + param.name()
                : param.dtype().wireName() + " scalar for parameter " + param.name();
    }

    /** {@code name(buffer f32 a, i32 n)}, for messages. */
    public static String describe(KernelSignature signature) {
        StringBuilder s = new StringBuilder(signature.name()).append('(');
        for (int i = 0; i < signature.params().size(); i++) {
            KernelParam p = signature.params().get(i);
            s.append(i == 0 ? "" : ", ").append(p.isBuffer() ? "buffer " : "").append(p.dtype().wireName())
                    .append(' ').append(p.name());
        }
        return s.append(')').toString();
    }
}
