package dev.arrayd.devices.api.conformance;

import dev.arrayd.devices.api.Backend;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.NativeStream;
import java.lang.foreign.MemorySegment;

/**
 * What every concept of the conformance suite uses: the backend under test with its first device open
 * (fresh for each test), and helpers that allocate, move bytes and compile canned kernels. Implemented by
 * {@link AbstractDeviceConformanceTest}.
 */
public interface ConformanceFixture {

    Backend backend();

    /** The backend's first device. */
    Device device();

    /** The backend's name, for messages. */
    String backendName();

    /** The canned kernel {@code kernel} in the backend's dialect (see {@link AbstractDeviceConformanceTest}). */
    KernelSource kernelSource(String kernel);

    /** How the backend's compiler names line {@code line} of the user's source in diagnostics. */
    String errorLineMarker(int line);

    /** The canned kernel {@code name}, compiled (its module closed after the test). */
    Kernel kernel(String name);

    /** Host memory that lives until the end of the test. */
    MemorySegment host(long bytes);

    /** Pool {@code poolId} of {@code bytes} on the device, as one range. */
    MemRef slab(int poolId, long bytes);

    /** The bytes of {@code ref}, downloaded on {@code stream}. */
    MemorySegment download(NativeStream stream, MemRef ref);

    /** Uploads {@code data} into {@code ref} on {@code stream} and waits. */
    void upload(NativeStream stream, MemRef ref, MemorySegment data);

    /** {@code bytes} random bytes from {@code seed}. */
    MemorySegment randomBytes(long bytes, long seed);
}
