package dev.arrayd.devices.opencl;

import dev.arrayd.devices.api.Quote;
import dev.arrayd.devices.api.support.EntryPoints;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CompileException;
import dev.arrayd.devices.api.Dialect;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelCompiler;
import dev.arrayd.devices.api.KernelModule;
import dev.arrayd.devices.api.KernelSignature;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.ir.CheckedKernel;
import dev.arrayd.devices.api.ir.GroupPhases;
import dev.arrayd.devices.api.ir.IrValidator;
import org.jocl.CL;
import org.jocl.CLException;
import org.jocl.Pointer;
import org.jocl.Sizeof;
import org.jocl.cl_device_id;
import org.jocl.cl_program;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Builds native OpenCL C with {@code clBuildProgram}, once per context for all its open devices.
 *
 * <h2>The OpenCL C kernel convention</h2>
 * Each entry point is an ordinary OpenCL C function marked {@code ARRAYD_KERNEL} (not {@code __kernel}:
 * arrayd generates the {@code __kernel}, see {@link OpenClSourceAssembler}), with the parameters of
 * its declared {@code KernelSignature} in order:
 * <pre>{@code
 * ARRAYD_KERNEL void vadd(__global const float *a, __global const float *b, __global float *c, int n) {
 *     size_t i = get_global_id(0);
 *     if (i < n) c[i] = a[i] + b[i];
 * }
 * }</pre>
 * <ul>
 *   <li>A buffer parameter is a {@code __global} pointer (to its dtype's type, or any other: it
 *       receives a {@code __global void *}); a scalar parameter has its dtype's OpenCL C type:
 *       {@code float}, {@code double}, {@code int}, {@code long}, {@code uchar}, and {@code ushort} (raw
 *       bits) for f16 and bf16.</li>
 *   <li>Work-item functions ({@code get_global_id}, {@code get_local_id}, {@code get_group_id},
 *       {@code barrier}, ...) work as in any kernel. {@code __local} variables are not allowed in a
 *       non-kernel function by OpenCL C 1.2, so kernels that need work-group local memory are written
 *       in the IR (whose {@code __kernel} arrayd generates whole, local arrays included).</li>
 *   <li>{@code cl_khr_fp64} and {@code cl_khr_fp16} are enabled where the device has them.</li>
 *   <li>Build logs name the user's source {@code kernel.cl} with the user's own line numbers; problems
 *       in generated code are reported against {@code arrayd-wrappers.cl}.</li>
 * </ul>
 *
 * <h2>IR kernels</h2>
 * {@link Dialect#IR} modules are validated ({@link IrValidator}), rendered by the IR's OpenCL C
 * renderer and given arrayd's launch convention ({@link IrProgramAssembler}), then built exactly like
 * native source. They need {@code cl_khr_fp64} and {@code cl_khr_int64_base_atomics} on every open
 * device ({@link ClDeviceFacts#irMissing()}): without them IR is not among {@link #dialects()} and a
 * compile is UNIMPLEMENTED naming the device. They are built with {@value #IR_BUILD_OPTIONS}, and with
 * {@value #IR_EXACT_DIVIDE_SQRT} where every device of the context supports it, so that f32 division
 * and square root round like the interpreter's. Local arrays beyond a device's local memory are
 * INVALID_ARGUMENT at compile.
 *
 * <p>Each device keeps the binaries it built, by hash of the program text and build options
 * ({@link BinaryCache}); a compile whose binaries are all cached builds from them. A build runs on
 * its own thread and is bounded by the compile timeout.
 */
final class OpenClKernelCompiler implements KernelCompiler {

    /** Build options of OpenCL C source; part of the cache key. */
    static final String BUILD_OPTIONS = "";

    /**
     * Build options of IR modules: no warnings (generated code: an unused parameter or variable means
     * nothing to the kernel's author, and would only fill the module's diagnostics).
     */
    static final String IR_BUILD_OPTIONS = "-w";

    /** Added to IR builds where every device of the context rounds f32 division and sqrt correctly. */
    static final String IR_EXACT_DIVIDE_SQRT = "-cl-fp32-correctly-rounded-divide-sqrt";

    static final int DIAGNOSTICS_LIMIT = 64 * 1024;

    private final Duration timeout;
    private final Supplier<Optional<String>> unavailableReason;
    private final Supplier<List<OpenClDevice>> devices;
    private final AtomicInteger builds = new AtomicInteger();

    OpenClKernelCompiler(Duration timeout, Supplier<Optional<String>> unavailableReason, Supplier<List<OpenClDevice>> devices) {
        this.timeout = timeout;
        this.unavailableReason = unavailableReason;
        this.devices = devices;
    }

    /** OpenCL C, and IR unless an open device lacks what IR kernels need. */
    @Override
    public Set<Dialect> dialects() {
        for (OpenClDevice d : devices.get()) {
            if (!d.irMissing().isEmpty()) {
                return Set.of(Dialect.OPENCL_C);
            }
        }
        return Set.of(Dialect.OPENCL_C, Dialect.IR);
    }

    /** Builds from source so far (not from cached binaries); for tests. */
    int sourceBuilds() {
        return builds.get();
    }

    /**
     * What the driver is given for a module: the program text and its entry points, with the checked
     * IR kernels in entry-point order (null for OpenCL C).
     */
    private record Unit(String text, List<KernelSignature> entryPoints, List<CheckedKernel> ir) {}

    /**
     * Validates {@code source} and assembles its program text; a pure function of the source.
     *
     * @throws ArraydException INVALID_ARGUMENT for a bad IR module, entry point or dialect
     */
    private static Unit unit(KernelSource source) {
        if (source.dialect() == Dialect.IR) {
            List<CheckedKernel> checked = IrValidator.check(source.ir(), "ir");
            List<KernelSignature> entries = checked.stream().map(k -> k.kernel().signature()).toList();
            if (!source.entryPoints().isEmpty() && !source.entryPoints().equals(entries)) {
                throw ArraydException.invalid("entryPoints: " + Quote.list(source.entryPoints()) + " (expected: none, or the IR kernels' "
                        + "signatures " + Quote.list(entries) + ")");
            }
            EntryPoints.check(entries, "entryPoints");
            return new Unit(IrProgramAssembler.assemble(checked), entries, List.copyOf(checked));
        }
        if (source.dialect() != Dialect.OPENCL_C) {
            throw ArraydException.invalid("dialect: " + source.dialect() + " (expected: OPENCL_C or IR for the opencl backend)");
        }
        EntryPoints.check(source.entryPoints(), "entryPoints");
        return new Unit(OpenClSourceAssembler.assemble(source.source(), source.entryPoints()), source.entryPoints(), null);
    }

    @Override
    public KernelModule compile(KernelSource source) {
        Unit unit = unit(source);
        Optional<String> reason = unavailableReason.get();
        if (reason.isPresent()) {
            throw new ArraydException(ErrorCode.UNAVAILABLE, "opencl backend cannot compile: " + reason.get());
        }
        Map<ClContext, List<OpenClDevice>> byContext = new LinkedHashMap<>();
        for (OpenClDevice d : devices.get()) {
            byContext.computeIfAbsent(d.context(), c -> new ArrayList<>()).add(d);
        }
        if (byContext.isEmpty()) {
            throw new ArraydException(ErrorCode.FAILED_PRECONDITION,
                    "opencl: no device is open (expected: openDevices before compile)");
        }
        if (unit.ir() != null) {
            byContext.values().forEach(devs -> devs.forEach(d -> checkIrDevice(d, unit.ir())));
        }

        int contexts = byContext.keySet().stream().mapToInt(ClContext::index).max().orElse(0) + 1;
        cl_program[] programs = new cl_program[contexts];
        ClContext[] built = new ClContext[contexts];
        List<KernelSignature> entries = unit.entryPoints();
        KernelPool[][] pools = new KernelPool[contexts][];
        StringBuilder warnings = new StringBuilder();
        try {
            for (Map.Entry<ClContext, List<OpenClDevice>> e : byContext.entrySet()) {
                int at = e.getKey().index();
                Built b = build(e.getKey(), e.getValue(), unit.text(), buildOptions(unit, e.getValue()));
                programs[at] = b.program();
                built[at] = e.getKey();
                warnings.append(b.log());
                pools[at] = new KernelPool[entries.size()];
                for (int k = 0; k < entries.size(); k++) {
                    pools[at][k] = new KernelPool(b.program(),
                            OpenClSourceAssembler.ENTRY_PREFIX + entries.get(k).name());
                    pools[at][k].prime();
                }
            }
        } catch (RuntimeException failure) {
            for (int c = 0; c < contexts; c++) {
                if (pools[c] != null) {
                    for (KernelPool p : pools[c]) {
                        if (p != null) {
                            p.releaseAll();
                        }
                    }
                }
                if (programs[c] != null) {
                    CL.clReleaseProgram(programs[c]);
                }
            }
            throw failure instanceof CLException cl ? ClErrors.toArrayd(cl, "building the program") : failure;
        }
        for (int c = 0; c < contexts; c++) {
            if (pools[c] == null) {
                pools[c] = new KernelPool[0]; // a context whose devices are all closed: nothing to launch on
            }
        }
        OpenClKernelModule module = new OpenClKernelModule(built, programs, pools, warnings.toString());
        List<Kernel> kernels = new ArrayList<>(entries.size());
        for (int k = 0; k < entries.size(); k++) {
            if (unit.ir() == null) {
                kernels.add(new OpenClKernel(entries.get(k), module, k, OpenClSourceAssembler.argIndexes(entries.get(k))));
            } else {
                CheckedKernel ck = unit.ir().get(k);
                kernels.add(new OpenClKernel(entries.get(k), module, k, IrProgramAssembler.argIndexes(ck), ck,
                        IrProgramAssembler.guardArg(ck)));
            }
        }
        module.setKernels(kernels);
        return module;
    }

    /**
     * UNIMPLEMENTED when {@code d} lacks what IR kernels need; INVALID_ARGUMENT when a kernel's local
     * arrays do not fit its local memory.
     */
    private static void checkIrDevice(OpenClDevice d, List<CheckedKernel> kernels) {
        if (!d.irMissing().isEmpty()) {
            throw new ArraydException(ErrorCode.UNIMPLEMENTED, "dialect: IR on " + d.id() + " (" + d.info().name()
                    + "), which lacks " + d.irMissing() + " (expected: cl_khr_fp64 and cl_khr_int64_base_atomics on every"
                    + " open OpenCL device for IR kernels)");
        }
        for (int i = 0; i < kernels.size(); i++) {
            CheckedKernel k = kernels.get(i);
            long local = GroupPhases.localBytes(k);
            if (local > d.info().localMemoryBytes()) {
                throw ArraydException.invalid("ir.kernels[" + i + "]: kernel " + k.name() + " has " + local
                        + " bytes of local arrays (expected: at most " + d.info().localMemoryBytes() + ", the local memory of "
                        + d.id() + ")");
            }
        }
    }

    private static String buildOptions(Unit unit, List<OpenClDevice> devs) {
        if (unit.ir() == null) {
            return BUILD_OPTIONS;
        }
        return devs.stream().allMatch(OpenClDevice::exactDivideSqrt) ? IR_BUILD_OPTIONS + " " + IR_EXACT_DIVIDE_SQRT
                : IR_BUILD_OPTIONS;
    }

    private record Built(cl_program program, String log) {}

    /** Builds for {@code devs} of {@code context}, from cached binaries when every device has one. */
    private Built build(ClContext context, List<OpenClDevice> devs, String unit, String options) {
        String hash = sha256(unit + "\0" + options);
        cl_device_id[] ids = devs.stream().map(OpenClDevice::clDevice).toArray(cl_device_id[]::new);
        byte[][] binaries = new byte[devs.size()][];
        boolean allCached = true;
        for (int i = 0; i < devs.size(); i++) {
            binaries[i] = devs.get(i).binaries().get(hash);
            allCached &= binaries[i] != null;
        }
        if (allCached) {
            try {
                cl_program program = createFromBinaries(context, ids, binaries);
                runBuild(program, ids, devs, options);
                return new Built(program, "");
            } catch (CLException | CompileException e) {
                // a binary the driver no longer takes (it should not happen in one process): build from source
            }
        }
        cl_program program = CL.clCreateProgramWithSource(context.context(), 1, new String[] {unit},
                new long[] {unit.getBytes(StandardCharsets.UTF_8).length}, null);
        builds.incrementAndGet();
        runBuild(program, ids, devs, options);
        String log = logs(program, devs);
        storeBinaries(program, devs, hash);
        return new Built(program, log);
    }

    private static cl_program createFromBinaries(ClContext context, cl_device_id[] ids, byte[][] binaries) {
        long[] lengths = new long[binaries.length];
        for (int i = 0; i < binaries.length; i++) {
            lengths[i] = binaries[i].length;
        }
        int[] status = new int[binaries.length];
        return CL.clCreateProgramWithBinary(context.context(), ids.length, ids, lengths, binaries, status, null);
    }

    /**
     * {@code clBuildProgram} on a thread of its own, waited for up to the timeout. A build cannot be
     * cancelled: one that outlives the wait is abandoned and its thread releases the program when
     * the driver returns.
     */
    private void runBuild(cl_program program, cl_device_id[] ids, List<OpenClDevice> devs, String options) {
        final int running = 0;
        final int finished = 1;
        final int abandoned = 2;
        AtomicInteger state = new AtomicInteger(running);
        FutureTask<Void> task = new FutureTask<>(() -> {
            try {
                CL.clBuildProgram(program, ids.length, ids, options, null, null);
            } finally {
                DriverSignals.restore(); // (a driver's compiler may install handlers of its own)
            }
            return null;
        });
        Thread.ofPlatform().name("arrayd-opencl-build").daemon().start(() -> {
            task.run();
            if (!state.compareAndSet(running, finished)) {
                CL.clReleaseProgram(program);
            }
        });
        try {
            task.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            if (state.compareAndSet(running, abandoned)) {
                throw new ArraydException(ErrorCode.DEADLINE_EXCEEDED, "clBuildProgram: still building after "
                        + timeout.toMillis() + " ms (expected: within the compile timeout " + timeout + ")");
            }
            awaitDone(task); // it finished just as the wait ran out: use the result
            checkBuild(task, program, devs);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            if (state.compareAndSet(running, abandoned)) {
                throw new ArraydException(ErrorCode.CANCELLED, "interrupted while clBuildProgram was building", e);
            }
            CL.clReleaseProgram(program);
            throw new ArraydException(ErrorCode.CANCELLED, "interrupted while clBuildProgram was building", e);
        } catch (ExecutionException e) {
            checkBuild(task, program, devs);
        }
    }

    private static void awaitDone(FutureTask<Void> task) {
        boolean interrupted = false;
        while (!task.isDone()) {
            try {
                task.get();
            } catch (InterruptedException e) {
                interrupted = true;
            } catch (ExecutionException e) {
                break;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** Turns a failed build into a {@link CompileException} with every device's build log; releases the program. */
    private static void checkBuild(FutureTask<Void> task, cl_program program, List<OpenClDevice> devs) {
        try {
            task.get();
        } catch (ExecutionException e) {
            String log = logs(program, devs);
            CL.clReleaseProgram(program);
            Throwable cause = e.getCause();
            String status = cause instanceof CLException cl ? ClInfo.errorName(cl.getStatus()) : String.valueOf(cause);
            throw new CompileException("OpenCL C build failed (" + status + ") on "
                    + devs.stream().map(d -> d.id().toString()).toList(), log);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            CL.clReleaseProgram(program);
            throw new ArraydException(ErrorCode.CANCELLED, "interrupted while clBuildProgram was building", e);
        }
    }

    /** Build logs; one copy when every device says the same (devices of one driver usually do). */
    private static String logs(cl_program program, List<OpenClDevice> devs) {
        Map<String, List<String>> byLog = new LinkedHashMap<>();
        for (OpenClDevice d : devs) {
            String log;
            try {
                log = buildLog(program, d.clDevice());
            } catch (CLException e) {
                log = "(no build log: " + ClInfo.errorName(e.getStatus()) + ")";
            }
            byLog.computeIfAbsent(log.strip(), l -> new ArrayList<>()).add(d.id().toString());
        }
        StringBuilder out = new StringBuilder();
        for (Map.Entry<String, List<String>> e : byLog.entrySet()) {
            if (e.getKey().isEmpty()) {
                continue;
            }
            if (byLog.size() > 1) {
                out.append(e.getValue()).append(":\n");
            }
            out.append(e.getKey()).append('\n');
        }
        if (out.length() > DIAGNOSTICS_LIMIT) {
            return out.substring(0, DIAGNOSTICS_LIMIT) + "\n[build log truncated at " + DIAGNOSTICS_LIMIT + " characters]";
        }
        return out.toString();
    }

    private static String buildLog(cl_program program, cl_device_id device) {
        long[] size = new long[1];
        CL.clGetProgramBuildInfo(program, device, CL.CL_PROGRAM_BUILD_LOG, 0, null, size);
        byte[] bytes = new byte[(int) size[0]];
        CL.clGetProgramBuildInfo(program, device, CL.CL_PROGRAM_BUILD_LOG, bytes.length, Pointer.to(bytes), null);
        int end = 0;
        while (end < bytes.length && bytes[end] != 0) {
            end++;
        }
        return new String(bytes, 0, end, StandardCharsets.UTF_8);
    }

    /** Keeps each device's binary; a driver that gives none (or fails) just means no cache. */
    private static void storeBinaries(cl_program program, List<OpenClDevice> devs, String hash) {
        try {
            int[] n = new int[1];
            CL.clGetProgramInfo(program, CL.CL_PROGRAM_NUM_DEVICES, Sizeof.cl_uint, Pointer.to(n), null);
            cl_device_id[] order = new cl_device_id[n[0]];
            CL.clGetProgramInfo(program, CL.CL_PROGRAM_DEVICES, (long) Sizeof.cl_device_id * n[0], Pointer.to(order), null);
            long[] sizes = new long[n[0]];
            CL.clGetProgramInfo(program, CL.CL_PROGRAM_BINARY_SIZES, (long) Sizeof.size_t * n[0], Pointer.to(sizes), null);
            byte[][] binaries = new byte[n[0]][];
            Pointer[] pointers = new Pointer[n[0]];
            for (int i = 0; i < n[0]; i++) {
                binaries[i] = new byte[(int) sizes[i]];
                pointers[i] = Pointer.to(binaries[i]);
            }
            CL.clGetProgramInfo(program, CL.CL_PROGRAM_BINARIES, (long) Sizeof.POINTER * n[0], Pointer.to(pointers), null);
            for (int i = 0; i < n[0]; i++) {
                for (OpenClDevice d : devs) {
                    if (d.clDevice().equals(order[i])) {
                        d.binaries().put(hash, binaries[i]);
                    }
                }
            }
        } catch (CLException | NegativeArraySizeException e) {
            // no binaries from this driver: later compiles build from source
        }
    }

    static String sha256(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }
}
