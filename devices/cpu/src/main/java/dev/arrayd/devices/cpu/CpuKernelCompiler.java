package dev.arrayd.devices.cpu;

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
import dev.arrayd.devices.api.ir.CRenderer;
import dev.arrayd.devices.api.ir.CheckedKernel;
import dev.arrayd.devices.api.ir.GroupPhases;
import dev.arrayd.devices.api.ir.IrDigest;
import dev.arrayd.devices.api.ir.IrKernel;
import dev.arrayd.devices.api.ir.IrValidator;
import dev.arrayd.devices.api.ir.LaneBlocks;
import dev.arrayd.devices.api.support.CodeIdentity;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
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
 *   <li>The source may include only the standard headers of {@link NativeSourceCheck#HEADERS} and nothing
 *       that reads other files ({@link NativeSourceCheck}); a READ buffer parameter must be {@code const}.</li>
 *   <li>Diagnostics name the user's file {@code kernel.c} with the user's own line numbers (and quote the
 *       user's lines: the text is compiled from its own file); problems
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
 * <p>Libraries are kept in {@link KernelCache} (memory and disk). A miss runs gcc once in a private
 * temporary directory (deleted once the library is in the cache), bounded by the compile timeout (DEADLINE_EXCEEDED when exceeded); gcc's output is kept
 * up to 64 KiB and returned as the {@link CompileException}'s diagnostics, or as the module's
 * warnings when it compiled.
 */
final class CpuKernelCompiler implements KernelCompiler {

    /**
     * Per-item storage of the variables a phased kernel keeps across barriers (see
     * {@code GroupPhases}), on the native stack of the thread that runs the group: kept well inside the
     * 1 MiB of a JVM thread's stack together with the local arrays.
     */
    static final long MAX_SPILL_BYTES = 256 * 1024;

    /**
     * {@code -Werror=discarded-qualifiers}: a READ buffer reaches the user's function as a
     * {@code const} pointer; a parameter without {@code const} is an error, not a warning, so that a
     * kernel cannot write through a buffer it declared read-only without saying so.
     */
    static final List<String> FLAGS = List.of(
            "-O3", "-march=native", "-std=gnu11", "-shared", "-fPIC", "-fno-math-errno",
            "-fdiagnostics-color=never",
            "-Werror=incompatible-pointer-types", "-Werror=int-conversion",
            "-Werror=implicit-function-declaration", "-Werror=return-type", "-Werror=discarded-qualifiers");

    /**
     * IR kernels add: no contraction into fused multiply-adds (each IR float operation rounds once, as
     * in the interpreter) and wrapping signed arithmetic (the IR's integer semantics); on x86-64, the
     * widest vectors gcc may use ({@code -mprefer-vector-width}, {@link CpuOptions#vectorBits()}).
     */
    static List<String> irFlags(String arch, int vectorBits) {
        List<String> f = new ArrayList<>(FLAGS);
        f.addAll(List.of("-ffp-contract=off", "-fwrapv"));
        if ("amd64".equals(arch) || "x86_64".equals(arch)) {
            f.add("-mprefer-vector-width=" + vectorBits);
        }
        return List.copyOf(f);
    }

    /** This compiler's flags for IR kernels ({@link #irFlags}). */
    private final List<String> irFlags;

    static final FunctionDescriptor TRAMPOLINE =
            FunctionDescriptor.ofVoid(ValueLayout.ADDRESS, ValueLayout.ADDRESS);

    /** Runs gcc (its command and the compile timeout). */
    private final Gcc gccRun;
    private final Supplier<Optional<String>> unavailableReason;
    private final KernelCache cache;
    private final boolean forceGuards;
    /** When IR kernels also get a lane form ({@link LaneBlocks}). */
    private final LaneBlocks.Rule lanes;
    /** The first line of {@code gcc --version} (the backend's probe ran it): part of every cache key. */
    private final Supplier<String> compilerId;
    /**
     * Recent sources and what they translate to, with their cache keys: a module compiled again (a client's
     * every session compiles its kernels) skips validation and rendering. Keyed by {@link #memoKey}: an IR
     * source by its module's {@link IrDigest} (a string, hashed and compared at once, where the source's own
     * hash and equality walk its whole tree through generated record methods that run slowly until the JIT has
     * compiled them), other sources by themselves. Guarded by itself.
     */
    private final Map<Object, Translated> translations = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Object, Translated> eldest) {
            return size() > MAX_TRANSLATIONS;
        }
    };

    /** Sources whose translation is kept ({@link #translations}). */
    static final int MAX_TRANSLATIONS = 256;

    /** The cache's libraries as loaded here, shared by the modules made from them. */
    private final LoadedLibraries libraries = new LoadedLibraries();

    /** A source's translation unit and its cache key. */
    record Translated(Unit unit, String key) {}

    CpuKernelCompiler(String gcc, Duration timeout, Supplier<Optional<String>> unavailableReason, KernelCache cache,
                      boolean forceGuards, Supplier<String> compilerId, int vectorBits, LaneBlocks.Rule lanes) {
        this.lanes = lanes;
        this.irFlags = irFlags(System.getProperty("os.arch"), vectorBits);
        this.gccRun = new Gcc(gcc, timeout);
        this.unavailableReason = unavailableReason;
        this.cache = cache;
        this.forceGuards = forceGuards;
        this.compilerId = compilerId;
    }

    @Override
    public Set<Dialect> dialects() {
        return Set.of(Dialect.C, Dialect.IR);
    }

    /**
     * What gcc will be given for {@code source}: the whole translation unit, the user's file (C only)
     * and the flags. It is a pure function of the source (validation included), so the compile cache
     * keys on it (with {@code gcc --version} and the target) and calls {@link #build} only on a miss.
     *
     * @throws ArraydException INVALID_ARGUMENT for a bad IR module or signature, or native source that
     *                         reaches outside the allowed headers ({@link NativeSourceCheck})
     */
    Unit translationUnit(KernelSource source) {
        if (source.dialect() == Dialect.IR) {
            List<CheckedKernel> checked = new ArrayList<>(IrValidator.check(source.ir(), "ir"));
            List<Boolean> phased = new ArrayList<>();
            for (int i = 0; i < checked.size(); i++) {
                CheckedKernel k = checked.get(i);
                if (forceGuards) {
                    k = k.withAllGuards();
                    checked.set(i, k);
                }
                phased.add(GroupPhases.needed(k));
                long local = GroupPhases.localBytes(k);
                if (local > CpuBackend.LOCAL_MEMORY_BYTES) {
                    throw ArraydException.invalid("ir.kernels[" + i + "]: kernel " + k.name() + " has " + local
                            + " bytes of local arrays (expected: at most " + CpuBackend.LOCAL_MEMORY_BYTES
                            + ", the cpu device's localMemoryBytes)");
                }
                long spill = GroupPhases.needed(k) ? GroupPhases.spillBytes(k) : 0;
                if (spill > MAX_SPILL_BYTES) {
                    throw ArraydException.invalid("ir.kernels[" + i + "]: kernel " + k.name() + " keeps variables "
                            + GroupPhases.spilled(k) + " across barriers, " + spill + " bytes per work-group (expected: at"
                            + " most " + MAX_SPILL_BYTES + " on the cpu: fewer variables live across a barrier, or a"
                            + " smaller local size)");
                }
            }
            List<KernelSignature> entries = checked.stream().map(k -> k.kernel().signature()).toList();
            if (!source.entryPoints().isEmpty() && !source.entryPoints().equals(entries)) {
                throw ArraydException.invalid("entryPoints: " + Quote.list(source.entryPoints()) + " (expected: none, or the IR kernels' "
                        + "signatures " + Quote.list(entries) + ")");
            }
            EntryPoints.check(entries, "entryPoints");
            CRenderer renderer = new CRenderer(lanes);
            List<Boolean> hoisted = checked.stream().map(k -> !renderer.hoisting(k).isEmpty()).toList();
            List<String> prefixes = checked.stream().map(CRenderer::functionPrefix).toList();
            List<Boolean> laneForms = checked.stream().map(k -> renderer.lanes(k) != null).toList();
            return new Unit(CSourceAssembler.assembleIr(renderer.render(checked), entries, phased, hoisted, prefixes, laneForms),
                    null, irFlags,
                    entries, List.copyOf(checked));
        }
        if (source.dialect() != Dialect.C) {
            throw ArraydException.invalid("dialect: " + source.dialect() + " (expected: C or IR for the cpu backend)");
        }
        EntryPoints.check(source.entryPoints(), "entryPoints");
        NativeSourceCheck.check(source.source());
        return new Unit(CSourceAssembler.assemble(source.entryPoints()), source.source(), FLAGS, source.entryPoints(), null);
    }

    /**
     * A translation unit ready for gcc.
     *
     * @param source     the file gcc compiles ({@link CSourceAssembler#MAIN_FILE})
     * @param userSource the user's C text, which {@code source} includes as {@link CSourceAssembler#USER_FILE};
     *                   null for IR
     * @param ir         the checked IR kernels, in entry-point order; null for C source
     */
    record Unit(String source, String userSource, List<String> flags, List<KernelSignature> entryPoints,
                List<CheckedKernel> ir) {

        List<String> files() {
            return userSource == null ? List.of(source) : List.of(source, userSource);
        }
    }

    @Override
    public KernelModule compile(KernelSource source) {
        return compileAll(List.of(source)).getFirst();
    }

    /**
     * Compiles several modules: each is looked up in the cache (memory, then disk); the misses that are
     * IR are built together in one gcc invocation (one file per module, one library, each module's
     * trampolines under their own symbol prefix), C misses one by one (their global symbols could
     * collide). When a batch fails, its modules are built one by one, so that the error names the module
     * that caused it. All or nothing: on failure, modules already loaded here are closed.
     */
    @Override
    public List<KernelModule> compileAll(List<KernelSource> sources) {
        java.util.concurrent.locks.Lock use = cache.useLock();
        use.lock(); // no trim deletes a library between its lookup and its load
        try {
            return compileAllCached(sources);
        } finally {
            use.unlock();
            cache.trim();
        }
    }

    private List<KernelModule> compileAllCached(List<KernelSource> sources) {
        Optional<String> reason = unavailableReason.get();
        int n = sources.size();
        Translated[] known = new Translated[n];
        String[] sourceKeys = new String[n]; // IR sources not known here: their key on disk, to record what they became
        List<Unit> units = new ArrayList<>(n);
        Object[] memoKeys = new Object[n];
        for (int i = 0; i < n; i++) {
            KernelSource source = sources.get(i);
            Object memo = memoKeys[i] = memoKey(source);
            synchronized (translations) {
                known[i] = translations.get(memo);
            }
            if (known[i] == null && memo instanceof String irDigest && reason.isEmpty()) {
                sourceKeys[i] = sourceKey(irDigest);
                known[i] = fromSourceIndex(source, memo, sourceKeys[i]);
                if (known[i] != null) {
                    sourceKeys[i] = null; // recorded already
                }
            }
            units.add(known[i] != null ? known[i].unit() : translationUnit(source));
        }
        if (reason.isPresent()) {
            throw new ArraydException(ErrorCode.UNAVAILABLE, "cpu backend cannot compile: " + reason.get());
        }
        String[] keys = new String[n];
        List<CompletableFuture<KernelCache.Artifact>> futures = new ArrayList<>(n);
        boolean[] hit = new boolean[n];
        List<Integer> toBuild = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Unit u = units.get(i);
            if (known[i] != null) {
                keys[i] = known[i].key();
            } else {
                keys[i] = KernelCache.key(u.files(), u.flags(), compilerId.get(), HostProbe.target());
                synchronized (translations) {
                    translations.put(memoKeys[i], new Translated(u, keys[i]));
                }
            }
            CompletableFuture<KernelCache.Artifact> mine = new CompletableFuture<>();
            CompletableFuture<KernelCache.Artifact> theirs = cache.claim(keys[i], mine);
            if (theirs != null) {
                futures.add(theirs);
                hit[i] = true;
                continue;
            }
            futures.add(mine);
            KernelCache.Artifact onDisk = cache.readDisk(keys[i]);
            if (onDisk != null) {
                cache.complete(keys[i], mine, onDisk);
                hit[i] = true;
            } else {
                toBuild.add(i);
                if (u.source() == null) {
                    // found by its source, but the library is gone: translate it (the same code renders the same unit)
                    try {
                        u = translationUnit(sources.get(i));
                    } catch (RuntimeException e) {
                        for (int j : toBuild) { // claimed here: whoever waits for them must not wait forever
                            cache.fail(keys[j], futures.get(j), e);
                        }
                        throw e;
                    }
                    units.set(i, u);
                    synchronized (translations) {
                        translations.put(memoKeys[i], new Translated(u, keys[i]));
                    }
                }
            }
        }
        buildMisses(units, keys, futures, toBuild);
        List<KernelModule> modules = new ArrayList<>(n);
        try {
            for (int i = 0; i < n; i++) {
                KernelCache.Artifact a = await(futures.get(i));
                if (hit[i]) {
                    cache.used(a);
                }
                if (sourceKeys[i] != null && a.library().startsWith(cache.directory())) {
                    cache.storeSourceIndex(sourceKeys[i], keys[i]);
                }
                Unit u = units.get(i);
                modules.add(load(a, u.entryPoints(), u.ir(), hit[i]));
            }
        } catch (RuntimeException e) {
            modules.forEach(KernelModule::close);
            throw e;
        }
        return modules;
    }

    /**
     * What {@link #translations} keys {@code source} by: an IR source whose entry points are none or its module's
     * own (anything else is refused when translated) is its module, keyed by the module's {@link IrDigest}; any
     * other source by itself.
     */
    static Object memoKey(KernelSource source) {
        if (source.dialect() != Dialect.IR || !source.source().isEmpty()) {
            return source;
        }
        if (!source.entryPoints().isEmpty()
                && !source.entryPoints().equals(source.ir().kernels().stream().map(IrKernel::signature).toList())) {
            return source;
        }
        return IrDigest.of(source.ir());
    }

    /**
     * The key on disk of an IR source whose module has digest {@code irDigest}: the module with everything else
     * that decides its library (see {@link KernelCache#sourceKey}). The code's identity is read once, when the
     * backend starts.
     */
    String sourceKey(String irDigest) {
        return KernelCache.sourceKey(codeIdentity(), compilerId.get(), HostProbe.target(), irFlags, forceGuards, lanes.name(),
                irDigest);
    }

    private volatile String codeIdentity;

    /** The identity of the code that validates and renders IR for this backend (a hash of its jars; once). */
    String codeIdentity() {
        String id = codeIdentity;
        if (id == null) {
            synchronized (this) {
                id = codeIdentity;
                if (id == null) {
                    id = codeIdentity = CodeIdentity.of(CheckedKernel.class, CpuKernelCompiler.class);
                }
            }
        }
        return id;
    }

    /**
     * What an IR source compiled to before (this code, this compiler, this target), found by the source's own key:
     * its unit's key with its kernels for launches only ({@link CheckedKernel#forLaunches}) and no text (the unit
     * is translated only if its library has to be built again). Null when the cache has no such entry.
     */
    private Translated fromSourceIndex(KernelSource source, Object memoKey, String sourceKey) {
        String key = cache.readSourceIndex(sourceKey);
        if (key == null) {
            return null;
        }
        List<KernelSignature> entries = new ArrayList<>();
        List<CheckedKernel> ir = new ArrayList<>();
        for (IrKernel k : source.ir().kernels()) {
            entries.add(k.signature());
            ir.add(CheckedKernel.forLaunches(k));
        }
        Translated t = new Translated(new Unit(null, null, irFlags, List.copyOf(entries), List.copyOf(ir)), key);
        synchronized (translations) {
            translations.put(memoKey, t);
        }
        return t;
    }

    /** Builds the claimed misses and completes (or fails) their futures; never throws. */
    private void buildMisses(List<Unit> units, String[] keys, List<CompletableFuture<KernelCache.Artifact>> futures,
                             List<Integer> toBuild) {
        List<Integer> irBatch = toBuild.stream().filter(i -> units.get(i).ir() != null).toList();
        List<Integer> single = new ArrayList<>(toBuild.stream().filter(i -> units.get(i).ir() == null).toList());
        if (irBatch.size() > 1) {
            try {
                List<KernelCache.Artifact> built = buildBatch(irBatch.stream().map(units::get).toList(),
                        irBatch.stream().map(i -> keys[i]).toList());
                for (int j = 0; j < irBatch.size(); j++) {
                    int i = irBatch.get(j);
                    cache.complete(keys[i], futures.get(i), built.get(j));
                }
            } catch (RuntimeException e) {
                single.addAll(irBatch); // find the culprit, module by module
            }
        } else {
            single.addAll(irBatch);
        }
        for (int i : single) {
            try {
                cache.complete(keys[i], futures.get(i), buildOne(units.get(i), keys[i]));
            } catch (RuntimeException e) {
                cache.fail(keys[i], futures.get(i), e);
            }
        }
    }

    private static KernelCache.Artifact await(CompletableFuture<KernelCache.Artifact> f) {
        try {
            return f.join();
        } catch (java.util.concurrent.CompletionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                // the owner's exception, as the owner saw it (a CompileException keeps its diagnostics)
                throw r;
            }
            throw new ArraydException(ErrorCode.INTERNAL, "compile failed: " + e.getCause(), e.getCause());
        }
    }

    /** Runs gcc on {@code unit} and loads the library (no cache): what a cache miss costs. */
    KernelModule build(Unit unit) {
        Path dir = Gcc.workDir();
        boolean keep = false;
        try {
            String diagnostics = gccRun.run(dir, writeSingle(dir, unit), unit.flags());
            keep = true;
            return loadOwn(new KernelCache.Artifact(dir.resolve("libkernel.so"), CSourceAssembler.TRAMPOLINE_PREFIX,
                    diagnostics), unit.entryPoints(), unit.ir(), dir);
        } finally {
            if (!keep) {
                CpuKernelModule.deleteRecursively(dir);
            }
        }
    }

    private KernelCache.Artifact buildOne(Unit unit, String key) {
        Path dir = Gcc.workDir();
        boolean keepDir = false;
        try {
            String diagnostics = gccRun.run(dir, writeSingle(dir, unit), unit.flags());
            Path built = dir.resolve("libkernel.so");
            Path stored = cache.store(built, List.of(key), List.of(CSourceAssembler.TRAMPOLINE_PREFIX), List.of(diagnostics));
            keepDir = stored == null;
            return new KernelCache.Artifact(stored != null ? stored : built, CSourceAssembler.TRAMPOLINE_PREFIX, diagnostics);
        } finally {
            if (!keepDir) {
                CpuKernelModule.deleteRecursively(dir);
            }
        }
    }

    private List<KernelCache.Artifact> buildBatch(List<Unit> batch, List<String> keys) {
        Path dir = Gcc.workDir();
        boolean keepDir = false;
        try {
            List<String> inputs = new ArrayList<>();
            List<String> prefixes = new ArrayList<>();
            for (int j = 0; j < batch.size(); j++) {
                String prefix = CSourceAssembler.TRAMPOLINE_PREFIX + "b" + j + "_";
                prefixes.add(prefix);
                Gcc.write(dir.resolve("u" + j + ".c"), batch.get(j).source());
                Gcc.write(dir.resolve("m" + j + ".c"), "#define ARRAYD_RUN(name) " + prefix + "##name\n#include \"u" + j + ".c\"\n");
                inputs.add("m" + j + ".c");
            }
            String diagnostics = gccRun.run(dir, inputs, irFlags);
            List<String> each = new ArrayList<>();
            for (int j = 0; j < batch.size(); j++) {
                each.add(diagnostics.isBlank() ? "" : diagnostics);
            }
            Path built = dir.resolve("libkernel.so");
            Path stored = cache.store(built, keys, prefixes, each);
            keepDir = stored == null;
            List<KernelCache.Artifact> out = new ArrayList<>();
            for (int j = 0; j < batch.size(); j++) {
                out.add(new KernelCache.Artifact(stored != null ? stored : built, prefixes.get(j), each.get(j)));
            }
            return out;
        } finally {
            if (!keepDir) {
                CpuKernelModule.deleteRecursively(dir);
            }
        }
    }

    /** Writes a single unit's files; returns gcc's inputs. */
    private static List<String> writeSingle(Path dir, Unit unit) {
        Gcc.write(dir.resolve(CSourceAssembler.MAIN_FILE), unit.source());
        if (unit.userSource() != null) {
            Gcc.write(dir.resolve(CSourceAssembler.USER_FILE), unit.userSource());
        }
        return List.of(CSourceAssembler.MAIN_FILE);
    }

    /**
     * Makes a module of a library of the compile cache, sharing the library with every other module made from it
     * ({@link LoadedLibraries}): a hit takes a reference and the downcall handles already made.
     */
    private KernelModule load(KernelCache.Artifact a, List<KernelSignature> entryPoints, List<CheckedKernel> ir,
                              boolean cacheHit) {
        return load(libraries, a, entryPoints, ir, cacheHit, null);
    }

    /** Loads a library of its own (a build outside the cache), closed with the module; {@code ownDir} is deleted then. */
    private static KernelModule loadOwn(KernelCache.Artifact a, List<KernelSignature> entryPoints, List<CheckedKernel> ir,
                                        Path ownDir) {
        return load(new LoadedLibraries(0), a, entryPoints, ir, false, ownDir);
    }

    private static KernelModule load(LoadedLibraries from, KernelCache.Artifact a, List<KernelSignature> entryPoints,
                                     List<CheckedKernel> ir, boolean cacheHit, Path ownDir) {
        LoadedLibraries.Loaded loaded;
        try {
            loaded = from.acquire(a.library());
        } catch (ArraydException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new ArraydException(ErrorCode.INTERNAL, "cannot load the compiled kernel library: " + e.getMessage(), e);
        }
        CpuKernelModule module = new CpuKernelModule(loaded::release, a.diagnostics(), cacheHit, a.library(), ownDir);
        try {
            List<Kernel> kernels = new ArrayList<>(entryPoints.size());
            for (int i = 0; i < entryPoints.size(); i++) {
                KernelSignature signature = entryPoints.get(i);
                kernels.add(new CpuKernel(signature, loaded.handle(a.symbolPrefix() + signature.name()), module,
                        ir == null ? null : ir.get(i)));
            }
            module.setKernels(kernels);
            return module;
        } catch (RuntimeException e) {
            module.close();
            throw e;
        }
    }

    /** Closes the libraries no module uses; the others close with their last module. */
    void close() {
        libraries.close();
    }

    /** Libraries of the cache open in this process (in use, or idle and kept). */
    int openLibraries() {
        return libraries.openCount();
    }
}
