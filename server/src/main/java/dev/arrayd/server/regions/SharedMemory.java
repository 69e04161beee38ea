package dev.arrayd.server.regions;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Anonymous shared memory that a client can map but cannot resize: a Linux {@code memfd}, its pages
 * allocated up front ({@code fallocate}: a full memory cgroup is an error now, not a SIGBUS or an OOM kill
 * later), sealed against shrinking and growing (and against removing the seals), and mapped into the
 * daemon. The descriptor is what a client receives (descriptor passing over a Unix socket); whatever the
 * client does with its own mapping, the daemon's stays valid until {@link #close()}.
 */
public final class SharedMemory implements AutoCloseable {

    private static final int MFD_CLOEXEC = 0x1;
    private static final int MFD_ALLOW_SEALING = 0x2;
    private static final int F_ADD_SEALS = 1033;
    private static final int F_SEAL_SEAL = 0x1;
    private static final int F_SEAL_SHRINK = 0x2;
    private static final int F_SEAL_GROW = 0x4;
    private static final int ENOMEM = 12;
    private static final int ENOSPC = 28;

    private static final Native NATIVE = Native.load();

    private final int fd;
    private final long size;
    private final Arena arena;
    private final MemorySegment segment;

    private SharedMemory(int fd, long size, Arena arena, MemorySegment segment) {
        this.fd = fd;
        this.size = size;
        this.arena = arena;
        this.segment = segment;
    }

    /** Whether this platform has memfd (Linux), else why not. */
    public static String unavailableReason() {
        return NATIVE.reason;
    }

    /**
     * {@code size} bytes, zeroed. {@link IOException} when the memory is not there (ENOMEM / ENOSPC from the
     * allocation, e.g. the container's memory limit), with the system's reason.
     */
    public static SharedMemory create(String name, long size) throws IOException {
        if (NATIVE.reason != null) {
            throw new IOException("shared memory is not available here: " + NATIVE.reason);
        }
        try (Arena tmp = Arena.ofConfined()) {
            MemorySegment state = tmp.allocate(NATIVE.stateLayout);
            int fd = (int) NATIVE.memfdCreate.invokeExact(state, tmp.allocateFrom(name), MFD_CLOEXEC | MFD_ALLOW_SEALING);
            if (fd < 0) {
                throw new IOException("memfd_create failed (errno " + NATIVE.errno(state) + ")");
            }
            boolean ok = false;
            try {
                int r = (int) NATIVE.fallocate.invokeExact(state, fd, 0, 0L, size);
                if (r != 0) {
                    int errno = NATIVE.errno(state);
                    throw new IOException("cannot allocate " + size + " bytes of shared memory (errno " + errno
                            + (errno == ENOSPC || errno == ENOMEM ? ": the memory limit is reached" : "") + ")");
                }
                r = (int) NATIVE.fcntl.invokeExact(state, fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
                if (r != 0) {
                    throw new IOException("cannot seal the shared memory (errno " + NATIVE.errno(state) + ")");
                }
                SharedMemory m = map(fd, size);
                ok = true;
                return m;
            } finally {
                if (!ok) {
                    closeFd(fd);
                }
            }
        } catch (IOException | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IOException("shared memory: " + t, t);
        }
    }

    /** The daemon's own mapping of {@code fd}, through a descriptor of its own (closed once mapped). */
    private static SharedMemory map(int fd, long size) throws IOException {
        Arena arena = Arena.ofShared();
        MemorySegment seg;
        try (FileChannel ch = FileChannel.open(Path.of("/proc/self/fd/" + fd), StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            seg = ch.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
            // its pages entered in this mapping now, once: the first transfer through it does not fault page by page
            seg.load();
        } catch (IOException | RuntimeException e) {
            arena.close();
            throw e;
        }
        return new SharedMemory(fd, size, arena, seg);
    }

    /** The descriptor to pass to a client (owned by this object: closed with it). */
    public int fd() {
        return fd;
    }

    public long size() {
        return size;
    }

    /** The daemon's mapping, valid until {@link #close()}. */
    public MemorySegment segment() {
        return segment;
    }

    /**
     * Unmaps and closes the descriptor. Throws {@link IllegalStateException} (and leaves everything open)
     * while a native call still uses the mapping; the caller tries again later.
     */
    @Override
    public void close() {
        arena.close();
        closeFd(fd);
    }

    private static void closeFd(int fd) {
        try {
            int ignored = (int) NATIVE.close.invokeExact(fd);
        } catch (Throwable t) {
            // nothing left to do with it
        }
    }

    /** The libc functions (each capturing errno), or why they are missing. */
    private record Native(MethodHandle memfdCreate, MethodHandle fallocate, MethodHandle fcntl, MethodHandle close,
            java.lang.foreign.StructLayout stateLayout, java.lang.invoke.VarHandle errnoHandle, String reason) {

        static Native load() {
            if (!System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).contains("linux")) {
                return new Native(null, null, null, null, null, null, "memfd needs Linux");
            }
            try {
                Linker linker = Linker.nativeLinker();
                SymbolLookup libc = linker.defaultLookup();
                Linker.Option errno = Linker.Option.captureCallState("errno");
                java.lang.foreign.StructLayout layout = Linker.Option.captureStateLayout();
                MethodHandle memfd = linker.downcallHandle(libc.find("memfd_create").orElseThrow(),
                        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT), errno);
                MethodHandle fallocate = linker.downcallHandle(libc.find("fallocate").orElseThrow(),
                        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                                ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG), errno);
                MethodHandle fcntl = linker.downcallHandle(libc.find("fcntl").orElseThrow(),
                        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                                ValueLayout.JAVA_INT), errno, Linker.Option.firstVariadicArg(2));
                MethodHandle close = linker.downcallHandle(libc.find("close").orElseThrow(),
                        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
                java.lang.invoke.VarHandle eh = layout.varHandle(
                        java.lang.foreign.MemoryLayout.PathElement.groupElement("errno"));
                return new Native(memfd, fallocate, fcntl, close, layout, eh, null);
            } catch (RuntimeException e) {
                return new Native(null, null, null, null, null, null,
                        "libc lacks memfd_create / fallocate / fcntl: " + e);
            }
        }

        int errno(MemorySegment state) {
            return (int) errnoHandle.get(state, 0L);
        }
    }
}
