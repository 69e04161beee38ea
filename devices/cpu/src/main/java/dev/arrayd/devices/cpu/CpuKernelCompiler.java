package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CompileException;
import dev.arrayd.devices.api.Dialect;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelCompiler;
import dev.arrayd.devices.api.KernelModule;
import dev.arrayd.devices.api.KernelSignature;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.ir.CRenderer;
import dev.arrayd.devices.api.ir.CheckedKernel;
import dev.arrayd.devices.api.ir.IrValidator;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Compiles C kernels with gcc into a shared library and calls them through Java FFM.
 *
 * <h2>The C kernel convention</h2>
 * The source defines each entry point as a function run once per work-item:
 * <pre>{@code
 * ARRAYD_KERNEL void vadd(ARRAYD_ITEM, const float *a, const float *b, float *c, int32_t n) {
 *     int64_t i = arrayd_global_id(0);
 *     if (i < n) c[i] = a[i] + b[i];
 * }
 * }</pre>
 * <ul>
 *   <li>arrayd prepends a header: {@code <stdint.h>}, {@code <stddef.h>}, {@code <math.h>},
 *       {@code <string.h>}; {@code #define ARRAYD_KERNEL static inline}; {@code ARRAYD_ITEM}, the first
 *       parameter, which declares the work-item ({@code const arrayd_item_t *arrayd_item__}); and the
 *       accessors {@code arrayd_global_id(d)}, {@code arrayd_global_size(d)}, {@code arrayd_local_id(d)},
 *       {@code arrayd_local_size(d)}, {@code arrayd_group_id(d)} for {@code d} in 0..2, all
 *       {@code int64_t}. Dimensions a launch does not use have size 1 and id 0.</li>
 *   <li>The remaining parameters follow the entry point's declared {@code KernelSignature}, in order:
 *       a buffer parameter is a pointer to its dtype's C type ({@code float}, {@code double},
 *       {@code int32_t}, {@code int64_t}, {@code uint8_t}; f16 and bf16 as raw {@code uint16_t}),
 *       {@code const} when its access is READ; a scalar parameter is a value of its dtype's C type.
 *       A mismatch is a compile error (incompatible pointer types and int conversions are errors).</li>
 *   <li>Diagnostics name the user's file {@code kernel.c} with the user's own line numbers; problems
 *       in generated code are reported against {@code arrayd-trampolines.c}.</li>
 *   <li>Work-items of a launch may run in any order and on several threads at once; there are no
 *       barriers and no local memory, so a kernel must not depend on other work-items of its group.
 *       When a launch gives no local dims, the local size is 1 in every dimension.</li>
 *   <li>Entry point names must be C identifiers. Compiled with
 *       {@code -O3 -march=native -std=gnu11 -fno-math-errno}, linked with {@code -lm}.</li>
 * </ul>
 * For each entry point arrayd appends an exported trampoline
 * {@code void arrayd_run_<name>(const int64_t *range, void **args)} that loops over a part of the
 * grid ({@code range} = lo[3], hi[3], global size[3], local size[3]; x innermost) and calls the
 * user's function; {@code args[i]} is a buffer's address or a pointer to a scalar's 8-byte slot.
 *
 * <p>Each compile runs gcc once in a private temporary directory (deleted when the module is
 * unloaded), bounded by the compile timeout (DEADLINE_EXCEEDED when exceeded); gcc's output is kept
 * up to 64 KiB and returned as the {@link CompileException}'s diagnostics, or as the module's
 * warnings when it compiled.
 */
final class CpuKernelCompiler implements KernelCompiler {

    static final int DIAGNOSTICS_LIMIT = 64 * 1024;

    static final List<String> FLAGS = List.of(
            "-O3", "-march=native", "-std=gnu11", "-shared", "-fPIC", "-fno-math-errno",
            "-fdiagnostics-color=never",
            "-Werror=incompatible-pointer-types", "-Werror=int-conversion",
            "-Werror=implicit-function-declaration", "-Werror=return-type");

    /**
     * IR kernels add: no contraction into fused multiply-adds (each IR float operation rounds once, as
     * in the interpreter) and wrapping signed arithmetic (the IR's integer semantics).
     */
    static final List<String> IR_FLAGS;

    static {
        List<String> f = new ArrayList<>(FLAGS);
        f.addAll(List.of("-ffp-contract=off", "-fwrapv"));
        IR_FLAGS = List.copyOf(f);
    }

    private static final FunctionDescriptor TRAMPOLINE =
            FunctionDescriptor.ofVoid(ValueLayout.ADDRESS, ValueLayout.ADDRESS);

    private final String gcc;
    private final Duration timeout;
    private final Supplier<Optional<String>> unavailableReason;

    CpuKernelCompiler(String gcc, Duration timeout, Supplier<Optional<String>> unavailableReason) {
        this.gcc = gcc;
        this.timeout = timeout;
        this.unavailableReason = unavailableReason;
    }

    @Override
    public Set<Dialect> dialects() {
        return Set.of(Dialect.C, Dialect.IR);
    }

    /**
     * What gcc will be given for {@code source}: the whole translation unit and the flags. It is a pure
     * function of the source (validation included), so a content-hash compile cache can key on
     * {@code (unit, flags, gcc --version)} and call {@link #build} only on a miss.
     *
     * @throws ArraydException INVALID_ARGUMENT for a bad IR module or signature, UNIMPLEMENTED for IR the
     *                         cpu backend cannot run yet (local arrays, barriers)
     */
    Unit translationUnit(KernelSource source) {
        if (source.dialect() == Dialect.IR) {
            List<CheckedKernel> checked = IrValidator.check(source.ir(), "ir");
            for (int i = 0; i < checked.size(); i++) {
                CheckedKernel k = checked.get(i);
                if (k.usesBarrier() || k.kernel().body().stream().anyMatch(s -> s instanceof dev.arrayd.devices.api.ir.Stmt.LocalArray)) {
                    throw new ArraydException(ErrorCode.UNIMPLEMENTED, "ir.kernels[" + i + "]: kernel " + k.name()
                            + " uses local arrays or barriers, which the cpu backend does not run yet (work-group phases"
                            + " are not implemented); the OpenCL and CUDA renderers support them");
                }
            }
            List<KernelSignature> entries = checked.stream().map(k -> k.kernel().signature()).toList();
            if (!source.entryPoints().isEmpty() && !source.entryPoints().equals(entries)) {
                throw ArraydException.invalid("entryPoints: " + source.entryPoints() + " (expected: none, or the IR kernels' "
                        + "signatures " + entries + ")");
            }
            checkEntryPoints(entries);
            return new Unit(CSourceAssembler.assembleIr(new CRenderer().render(checked), entries), IR_FLAGS, entries, checked);
        }
        if (source.dialect() != Dialect.C) {
            throw ArraydException.invalid("dialect: " + source.dialect() + " (expected: C or IR for the cpu backend)");
        }
        checkEntryPoints(source.entryPoints());
        return new Unit(CSourceAssembler.assemble(source.source(), source.entryPoints()), FLAGS, source.entryPoints(), null);
    }

    /**
     * A translation unit ready for gcc.
     *
     * @param ir the checked IR kernels, in entry-point order; null for C source
     */
    record Unit(String source, List<String> flags, List<KernelSignature> entryPoints, List<CheckedKernel> ir) {}

    @Override
    public KernelModule compile(KernelSource source) {
        Unit unit = translationUnit(source);
        Optional<String> reason = unavailableReason.get();
        if (reason.isPresent()) {
            throw new ArraydException(ErrorCode.UNAVAILABLE, "cpu backend cannot compile: " + reason.get());
        }
        return build(unit);
    }

    /** Runs gcc on {@code unit} and loads the library. */
    KernelModule build(Unit unit) {

        Path dir;
        try {
            dir = Files.createTempDirectory("arrayd-cpu-kernel-");
        } catch (IOException e) {
            throw new ArraydException(ErrorCode.INTERNAL, "cannot create a directory for gcc: " + e.getMessage(), e);
        }
        boolean loaded = false;
        try {
            String diagnostics = runGcc(dir, unit.source(), unit.flags());
            KernelModule module = load(dir, diagnostics, unit.entryPoints(), unit.ir());
            loaded = true;
            return module;
        } finally {
            if (!loaded) {
                CpuKernelModule.deleteRecursively(dir);
            }
        }
    }

    private static void checkEntryPoints(List<KernelSignature> entryPoints) {
        if (entryPoints.isEmpty()) {
            throw ArraydException.invalid("entryPoints: none (expected: at least one)");
        }
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < entryPoints.size(); i++) {
            String name = entryPoints.get(i).name();
            CSourceAssembler.checkIdentifier(name, "entryPoints[" + i + "]");
            if (!seen.add(name)) {
                throw ArraydException.invalid("entryPoints[" + i + "]: \"" + name + "\" (expected: a name not declared before)");
            }
        }
    }

    /** Runs gcc in {@code dir}; returns its output (warnings) or throws with it. */
    private String runGcc(Path dir, String unit, List<String> flags) {
        Path log = dir.resolve("gcc.log");
        List<String> command = new ArrayList<>();
        command.add(gcc);
        command.addAll(flags);
        command.addAll(List.of("-o", "libkernel.so", CSourceAssembler.USER_FILE, "-lm"));
        Process process;
        try {
            Files.writeString(dir.resolve(CSourceAssembler.USER_FILE), unit, StandardCharsets.UTF_8);
            ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile())
                    .redirectErrorStream(true).redirectOutput(log.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
            builder.environment().put("LC_ALL", "C");
            process = builder.start();
        } catch (IOException e) {
            throw new ArraydException(ErrorCode.UNAVAILABLE, "cannot run \"" + gcc + "\": " + e.getMessage(), e);
        }
        boolean finished;
        try {
            finished = process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            kill(process);
            Thread.currentThread().interrupt();
            throw new ArraydException(ErrorCode.CANCELLED, "interrupted while gcc was compiling", e);
        }
        if (!finished) {
            kill(process);
            throw new ArraydException(ErrorCode.DEADLINE_EXCEEDED,
                    "gcc: still compiling after " + timeout.toMillis() + " ms (expected: within the compile timeout "
                            + timeout + ")");
        }
        String output = readLimited(log);
        if (process.exitValue() != 0) {
            throw new CompileException("gcc exited with " + process.exitValue(), output);
        }
        return output;
    }

    private static void kill(Process process) {
        // gcc runs cc1, as and ld as children; they would outlive a killed driver
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        try {
            process.waitFor(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static String readLimited(Path log) {
        try (InputStream in = Files.newInputStream(log)) {
            byte[] bytes = in.readNBytes(DIAGNOSTICS_LIMIT + 1);
            if (bytes.length > DIAGNOSTICS_LIMIT) {
                return new String(bytes, 0, DIAGNOSTICS_LIMIT, StandardCharsets.UTF_8)
                        + "\n[gcc output truncated at " + DIAGNOSTICS_LIMIT + " bytes]";
            }
            return new String(bytes, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    private static KernelModule load(Path dir, String diagnostics, List<KernelSignature> entryPoints,
                                     List<CheckedKernel> ir) {
        Arena arena = Arena.ofShared();
        try {
            SymbolLookup library = SymbolLookup.libraryLookup(dir.resolve("libkernel.so"), arena);
            CpuKernelModule module = new CpuKernelModule(arena, dir, diagnostics);
            List<Kernel> kernels = new ArrayList<>(entryPoints.size());
            Linker linker = Linker.nativeLinker();
            for (int i = 0; i < entryPoints.size(); i++) {
                KernelSignature signature = entryPoints.get(i);
                String symbol = CSourceAssembler.TRAMPOLINE_PREFIX + signature.name();
                MemorySegment address = library.find(symbol).orElseThrow(() -> new ArraydException(ErrorCode.INTERNAL,
                        "symbol " + symbol + " missing from the compiled library"));
                MethodHandle handle = linker.downcallHandle(address, TRAMPOLINE);
                kernels.add(new CpuKernel(signature, handle, module, ir == null ? null : ir.get(i)));
            }
            module.setKernels(kernels);
            return module;
        } catch (RuntimeException e) {
            arena.close();
            if (e instanceof ArraydException ae) {
                throw ae;
            }
            throw new ArraydException(ErrorCode.INTERNAL, "cannot load the compiled kernel library: " + e.getMessage(), e);
        }
    }
}
