package dev.arrayd.devices.cuda;

import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.KernelParam;
import dev.arrayd.devices.api.KernelSignature;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.support.LaunchArguments;

import java.util.List;

/**
 * Launch arguments checked against the declared signature ({@link LaunchArguments}) and reduced to raw values: a buffer as its
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
        long address(MemRef ref, int index);
    }

    static PackedArgs pack(KernelSignature signature, List<KernelArg> args, AddressResolver resolver) {
        int n = signature.params().size();
        long[] values = new long[n];
        int[] widths = new int[n];
        LaunchArguments.pack(signature, args, new LaunchArguments.Sink() {
            @Override
            public void buffer(int index, KernelParam param, MemRef ref) {
                values[index] = resolver.address(ref, index);
                widths[index] = 8;
            }

            @Override
            public void scalar(int index, KernelParam param, long bits, int width) {
                values[index] = bits;
                widths[index] = width;
            }
        });
        return new PackedArgs(values, widths);
    }
}
