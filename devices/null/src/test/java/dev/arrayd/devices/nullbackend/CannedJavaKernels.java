package dev.arrayd.devices.nullbackend;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.MemRef;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.List;

/**
 * The conformance suite's canned kernels written in Java, as a {@link NullBehaviour}: what makes a null
 * device compute, and so run the kernel part of the suite.
 */
final class CannedJavaKernels implements NullBehaviour {

    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    @Override
    public void launch(NullDevice device, DeviceCommand.Launch launch) {
        List<KernelArg> a = launch.args();
        long[] g = dims(launch.globalDims());
        switch (launch.kernel().name()) {
            case "vadd" -> {
                MemorySegment x = buffer(device, a, 0);
                MemorySegment y = buffer(device, a, 1);
                MemorySegment z = buffer(device, a, 2);
                long n = Math.min(g[0], scalar(a, 3));
                for (long i = 0; i < n; i++) {
                    z.setAtIndex(F32, i, x.getAtIndex(F32, i) + y.getAtIndex(F32, i));
                }
            }
            case "axpy_f64" -> {
                double k = Double.longBitsToDouble(scalar(a, 0));
                MemorySegment x = buffer(device, a, 1);
                MemorySegment y = buffer(device, a, 2);
                long n = Math.min(g[0], scalar(a, 3));
                for (long i = 0; i < n; i++) {
                    y.setAtIndex(F64, i, k * x.getAtIndex(F64, i) + y.getAtIndex(F64, i));
                }
            }
            case "index3d" -> index3d(buffer(device, a, 0), g, launch.localDims() == null ? new long[] {1, 1, 1}
                    : dims(launch.localDims()));
            case "scalars" -> {
                buffer(device, a, 5).set(I32, 0, (int) scalar(a, 0));
                buffer(device, a, 6).set(I64, 0, scalar(a, 1));
                buffer(device, a, 7).set(I32, 0, (int) scalar(a, 2));
                buffer(device, a, 8).set(I64, 0, scalar(a, 3));
                buffer(device, a, 9).set(ValueLayout.JAVA_BYTE, 0, (byte) scalar(a, 4));
            }
            case "step" -> {
                MemorySegment acc = buffer(device, a, 0);
                acc.set(I64, 0, acc.get(I64, 0) * 31 + scalar(a, 1));
            }
            case "empty" -> {
            }
            default -> throw ArraydException.invalid("kernel: " + launch.kernel().name() + " (no Java body)");
        }
    }

    private static void index3d(MemorySegment out, long[] g, long[] l) {
        for (long z = 0; z < g[2]; z++) {
            for (long y = 0; y < g[1]; y++) {
                for (long x = 0; x < g[0]; x++) {
                    long lin = (z * g[1] + y) * g[0] + x;
                    out.setAtIndex(I64, 3 * lin, lin);
                    out.setAtIndex(I64, 3 * lin + 1, x % l[0] | (y % l[1]) << 16 | (z % l[2]) << 32);
                    out.setAtIndex(I64, 3 * lin + 2, x / l[0] | (y / l[1]) << 16 | (z / l[2]) << 32);
                }
            }
        }
    }

    private static long[] dims(long[] d) {
        long[] out = {1, 1, 1};
        System.arraycopy(d, 0, out, 0, d.length);
        return out;
    }

    private static MemorySegment buffer(NullDevice device, List<KernelArg> args, int i) {
        MemRef ref = ((KernelArg.Buffer) args.get(i)).ref();
        return device.segment(ref);
    }

    private static long scalar(List<KernelArg> args, int i) {
        return ((KernelArg.Scalar) args.get(i)).bits();
    }
}
