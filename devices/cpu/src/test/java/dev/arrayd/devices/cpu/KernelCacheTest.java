package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.KernelModule;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.ir.IrModule;
import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.ir.IrDsl;
import dev.arrayd.devices.api.ir.IrKernel;
import dev.arrayd.devices.api.ir.IrParam;
import dev.arrayd.devices.api.ir.IrSamples;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The compile cache: in memory, on disk across restarts, single flight, keyed on everything gcc sees. */
class KernelCacheTest {

    private static final KernelSource SAXPY = KernelSource.ir(new IrModule(List.of(IrSamples.saxpy())));

    private static CpuBackend backend(Path dir) {
        CpuBackend b = new CpuBackend(CpuOptions.defaults().withCacheDir(dir));
        Assumptions.assumeTrue(b.unavailableReason().isEmpty(), "gcc unavailable");
        return b;
    }

    private static long libraries(Path dir) throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".so")).count();
        }
    }

    @Test
    void aNewBackendOnTheSameDirectoryHitsTheDiskCache() throws Exception {
        Path dir = CpuBackendTest.freshCacheDir();
        try (CpuBackend first = backend(dir); KernelModule m = first.compiler().compile(SAXPY)) {
            assertFalse(m.cacheHit());
            try (KernelModule again = first.compiler().compile(SAXPY)) {
                assertTrue(again.cacheHit(), "memory hit");
            }
        }
        try (CpuBackend restarted = backend(dir); KernelModule m = restarted.compiler().compile(SAXPY)) {
            assertTrue(m.cacheHit(), "disk hit after a restart");
            assertEquals("saxpy", m.kernels().getFirst().name());
        }
        assertEquals(1, libraries(dir));
    }

    @Test
    void hitsShareOneLoadedLibraryThatStaysOpenAWhileUnused() throws Exception {
        Path dir = CpuBackendTest.freshCacheDir();
        try (CpuBackend b = backend(dir)) {
            CpuKernelCompiler c = (CpuKernelCompiler) b.compiler();
            KernelModule first = c.compile(SAXPY);
            KernelModule second = c.compile(SAXPY);
            assertTrue(second.cacheHit());
            assertEquals(1, c.openLibraries(), "one library for both modules");
            assertTrue(first.kernels().getFirst() != second.kernels().getFirst(), "each module its own kernels");
            first.close();
            assertTrue(((CpuKernelModule) second).acquire(), "the other module still holds the library");
            ((CpuKernelModule) second).release();
            second.close();
            assertEquals(1, c.openLibraries(), "kept open, idle, for the next hit");
            try (KernelModule third = c.compile(SAXPY)) {
                assertTrue(third.cacheHit());
                assertEquals(1, c.openLibraries());
            }
        }
    }

    @Test
    void idleLibrariesBeyondTheLimitAreClosedOldestFirst() throws Exception {
        Path dir = CpuBackendTest.freshCacheDir();
        List<Path> libraries = new ArrayList<>();
        try (CpuBackend b = backend(dir)) {
            for (var k : List.of(IrSamples.saxpy(), IrSamples.vaddProven(), IrSamples.vaddGuarded())) {
                try (KernelModule m = b.compiler().compile(KernelSource.ir(new IrModule(List.of(k))))) {
                    libraries.add(((CpuKernelModule) m).library());
                }
            }
        }
        try (LoadedLibraries loaded = new LoadedLibraries(2)) {
            List<LoadedLibraries.Loaded> refs = new ArrayList<>();
            for (Path p : libraries) {
                refs.add(loaded.acquire(p));
            }
            assertTrue(refs.getFirst().handle(CSourceAssembler.TRAMPOLINE_PREFIX + "saxpy") != null);
            assertEquals(3, loaded.openCount());
            refs.forEach(LoadedLibraries.Loaded::release);
            assertEquals(2, loaded.openCount(), "the oldest idle one closed");
            LoadedLibraries.Loaded again = loaded.acquire(libraries.get(2));
            assertEquals(2, loaded.openCount(), "an idle one is taken back, not opened again");
            again.release();
        }
    }

    @Test
    void concurrentRequestsForOneKeyCompileOnce() throws Exception {
        Path dir = CpuBackendTest.freshCacheDir();
        int n = 6;
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try (CpuBackend b = backend(dir)) {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<KernelModule>> futures = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                futures.add(pool.submit(() -> {
                    start.await();
                    return b.compiler().compile(SAXPY);
                }));
            }
            start.countDown();
            int built = 0;
            for (Future<KernelModule> f : futures) {
                try (KernelModule m = f.get(60, TimeUnit.SECONDS)) {
                    built += m.cacheHit() ? 0 : 1;
                }
            }
            assertEquals(1, built, "exactly one request ran gcc");
            assertEquals(1, libraries(dir));
        } finally {
            pool.shutdownNow();
        }
    }

    private static long directoryBytes(Path dir) throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            long total = 0;
            for (Path p : s.toList()) {
                total += Files.size(p);
            }
            return total;
        }
    }

    @Test
    void theDirectoryIsBoundedAndTheLeastRecentlyUsedKernelGoesFirst() throws Exception {
        Path dir = CpuBackendTest.freshCacheDir();
        KernelSource a = KernelSource.ir(new IrModule(List.of(IrSamples.saxpy())));
        KernelSource b = KernelSource.ir(new IrModule(List.of(IrSamples.matmul())));
        KernelSource c = KernelSource.ir(new IrModule(List.of(IrSamples.gatherUnchecked())));
        long one;
        try (CpuBackend probe = backend(dir); KernelModule m = probe.compiler().compile(a)) {
            one = directoryBytes(dir); // one library and its meta
        }
        // room for about two entries: the third compile pushes the least recently used one out
        long bound = one * 5 / 2;
        try (CpuBackend bounded = new CpuBackend(CpuOptions.defaults().withCacheDir(dir).withCacheMaxBytes(bound))) {
            try (KernelModule m = bounded.compiler().compile(b)) {
                assertFalse(m.cacheHit());
            }
            try (KernelModule m = bounded.compiler().compile(a)) {
                assertTrue(m.cacheHit(), "a, used now: b is the least recently used");
            }
            try (KernelModule m = bounded.compiler().compile(c)) {
                assertFalse(m.cacheHit());
            }
            assertTrue(directoryBytes(dir) <= bound, "directory of " + directoryBytes(dir) + " bytes, bound " + bound);
            assertEquals(filesEndingWith(dir, ".meta"), filesEndingWith(dir, ".src"),
                    "an evicted kernel's source entry goes with its library");
            assertTrue(filesEndingWith(dir, ".meta") < 3, "one went");
            try (KernelModule m = bounded.compiler().compile(a)) {
                assertTrue(m.cacheHit(), "a stayed");
            }
            try (KernelModule m = bounded.compiler().compile(b)) {
                assertFalse(m.cacheHit(), "b was evicted (from disk and memory) and is built again");
                assertEquals("matmul", m.kernels().getFirst().name());
            }
        }
    }

    @Test
    void differentFlagsAreDifferentEntries() {
        List<String> files = List.of("int x;");
        String a = KernelCache.key(files, CpuKernelCompiler.FLAGS, "gcc 13", "x86_64");
        String b = KernelCache.key(files, CpuKernelCompiler.irFlags("amd64", 512), "gcc 13", "x86_64");
        String c = KernelCache.key(files, CpuKernelCompiler.FLAGS, "gcc 14", "x86_64");
        String d = KernelCache.key(files, CpuKernelCompiler.FLAGS, "gcc 13", "aarch64");
        String e = KernelCache.key(List.of("int y;"), CpuKernelCompiler.FLAGS, "gcc 13", "x86_64");
        String f = KernelCache.key(files, CpuKernelCompiler.irFlags("amd64", 256), "gcc 13", "x86_64");
        assertEquals(6, java.util.Set.of(a, b, c, d, e, f).size());
        assertTrue(CpuKernelCompiler.irFlags("amd64", 512).contains("-mprefer-vector-width=512"));
        assertFalse(CpuKernelCompiler.irFlags("aarch64", 512).stream().anyMatch(x -> x.startsWith("-mprefer-vector-width")),
                "an x86 option only on x86-64");
        assertEquals(a, KernelCache.key(List.of("int x;"), CpuKernelCompiler.FLAGS, "gcc 13", "x86_64"));
        // boundaries count: ("ab", "c") is not ("a", "bc")
        assertNotEquals(KernelCache.key(List.of("ab", "c"), List.of(), "", ""), KernelCache.key(List.of("a", "bc"), List.of(), "", ""));
    }

    /** The backend's vector width reaches its compiler: on x86-64 a source compiled with 256 and 512 bits is two entries. */
    @Test
    void theVectorWidthIsPartOfTheSourceKey() {
        Path dir = CpuBackendTest.freshCacheDir();
        try (CpuBackend wide = backend(dir); CpuBackend narrow = new CpuBackend(CpuOptions.defaults().withCacheDir(dir)
                .withVectorBits(256))) {
            String digest = (String) CpuKernelCompiler.memoKey(SAXPY);
            String a = ((CpuKernelCompiler) wide.compiler()).sourceKey(digest);
            String b = ((CpuKernelCompiler) narrow.compiler()).sourceKey(digest);
            String arch = System.getProperty("os.arch");
            assertEquals(!arch.equals("amd64") && !arch.equals("x86_64"), a.equals(b), arch);
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CpuOptions.defaults().withVectorBits(384));
        assertTrue(e.getMessage().contains("vectorBits: 384 (expected: 256 or 512)"), e::getMessage);
    }

    @Test
    void forcedGuardsAreADifferentEntry() throws Exception {
        Path dir = CpuBackendTest.freshCacheDir();
        try (CpuBackend plain = backend(dir); KernelModule m = plain.compiler().compile(SAXPY)) {
            assertFalse(m.cacheHit());
        }
        try (CpuBackend guarded = new CpuBackend(CpuOptions.defaults().withCacheDir(dir).withForceGuards(true));
             KernelModule m = guarded.compiler().compile(SAXPY)) {
            assertFalse(m.cacheHit(), "the guarded source is another key");
        }
        assertEquals(2, libraries(dir));
    }

    /** A fresh cache directory holding SAXPY, built there now (a miss). */
    private static Path cacheWithSaxpy() throws Exception {
        Path dir = CpuBackendTest.freshCacheDir();
        try (CpuBackend first = backend(dir); KernelModule m = first.compiler().compile(SAXPY)) {
            assertFalse(m.cacheHit());
        }
        return dir;
    }

    /** The file of {@code dir} whose name ends with {@code suffix} (the cache holds one module). */
    private static Path cached(Path dir, String suffix) throws java.io.IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.toString().endsWith(suffix)).findFirst().orElseThrow();
        }
    }

    @Test
    void aLibraryWithOneByteChangedIsIgnoredAndAMetaWithoutItsCrcIsCheckedBySha256() throws Exception {
        Path dir = cacheWithSaxpy();
        Path lib = cached(dir, ".so");
        Path meta = cached(dir, ".meta");
        byte[] good = Files.readAllBytes(lib);
        byte[] flipped = good.clone();
        flipped[flipped.length / 2] ^= 0x10; // same length, one bit off: only the checksum can tell
        Files.write(lib, flipped);
        try (CpuBackend restarted = backend(dir); KernelModule m = restarted.compiler().compile(SAXPY)) {
            assertFalse(m.cacheHit(), "the damaged library is not loaded");
        }
        assertArrayEquals(good, Files.readAllBytes(lib), "the rebuild wrote the same library back");
        // a meta that has only the SHA-256 is checked by it
        java.util.Properties p = new java.util.Properties();
        try (var r = Files.newBufferedReader(meta)) {
            p.load(r);
        }
        assertTrue(p.getProperty("crc32c", "").startsWith(good.length + ":"), () -> "crc32c " + p.getProperty("crc32c"));
        p.remove("crc32c");
        try (var w = Files.newBufferedWriter(meta)) {
            p.store(w, null);
        }
        try (CpuBackend again = backend(dir); KernelModule m = again.compiler().compile(SAXPY)) {
            assertTrue(m.cacheHit(), "found by its SHA-256");
        }
        Files.write(lib, flipped);
        try (CpuBackend again = backend(dir); KernelModule m = again.compiler().compile(SAXPY)) {
            assertFalse(m.cacheHit(), "the SHA-256 catches the damage too");
        }
    }

    @Test
    void aCorruptedLibraryIsIgnoredAndRebuilt() throws Exception {
        Path dir = cacheWithSaxpy();
        Path lib = cached(dir, ".so");
        Files.write(lib, new byte[] {0x7f, 'E', 'L', 'F', 0, 0, 0}); // truncated garbage
        try (CpuBackend restarted = backend(dir); KernelModule m = restarted.compiler().compile(SAXPY)) {
            assertFalse(m.cacheHit(), "the corrupted entry is not used");
            assertEquals("saxpy", m.kernels().getFirst().name());
        }
        try (CpuBackend again = backend(dir); KernelModule m = again.compiler().compile(SAXPY)) {
            assertTrue(m.cacheHit(), "the rebuilt entry is good");
        }
        // a meta file that is garbage is ignored too
        try (Stream<Path> s = Files.list(dir)) {
            for (Path meta : s.filter(p -> p.toString().endsWith(".meta")).toList()) {
                Files.writeString(meta, "\\u12");
            }
        }
        try (CpuBackend again = backend(dir); KernelModule m = again.compiler().compile(SAXPY)) {
            assertFalse(m.cacheHit());
        }
    }

    @Test
    void aBatchOfIrModulesIsOneLibraryWithOwnSymbolsPerModule() throws Exception {
        Path dir = CpuBackendTest.freshCacheDir();
        try (CpuBackend b = backend(dir)) {
            List<KernelSource> batch = List.of(SAXPY, KernelSource.ir(new IrModule(List.of(IrSamples.matmul()))),
                    KernelSource.ir(new IrModule(List.of(IrSamples.groupSum()))),
                    KernelSource.ir(new IrModule(List.of(IrSamples.gatherUnchecked()))));
            List<KernelModule> modules = b.compiler().compileAll(batch);
            assertEquals(List.of("saxpy", "matmul", "group_sum", "gather"),
                    modules.stream().map(m -> m.kernels().getFirst().name()).toList());
            assertEquals(1, libraries(dir), "one gcc run, one library");
            modules.forEach(KernelModule::close);
            // each module is a cache entry of its own
            try (KernelModule m = b.compiler().compile(batch.get(1))) {
                assertTrue(m.cacheHit());
            }
        }
    }

    private static long filesEndingWith(Path dir, String suffix) throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().endsWith(suffix)).count();
        }
    }

    /**
     * After a restart an IR source is found by its content: the module's kernels are the launch-only view
     * (nothing was validated or rendered again), and they run as the built ones did: results, launch checks and
     * OUT_OF_RANGE naming the buffer, a work-group kernel with local arrays and barriers.
     */
    @Test
    void aRestartFindsAnIrSourceByItsContentAndItsKernelsStillRunAndCheck() throws Exception {
        Path dir = CpuBackendTest.freshCacheDir();
        List<IrKernel> kernels = List.of(IrSamples.gatherUnchecked(), IrSamples.groupSum());
        try (CpuIrHarness first = new CpuIrHarness(CpuOptions.defaults().withCacheDir(dir))) {
            Assumptions.assumeTrue(first.available(), "gcc unavailable");
            List<Kernel> built = first.compile(kernels.toArray(IrKernel[]::new));
            assertTrue(built.getFirst().ir().renderable(), "built from the checked kernels");
        }
        assertEquals(1, filesEndingWith(dir, ".src"), "the source's entry");
        try (CpuIrHarness h = new CpuIrHarness(CpuOptions.defaults().withCacheDir(dir))) {
            KernelModule m = h.backend.compiler().compile(KernelSource.ir(new IrModule(kernels)));
            try (m) {
                assertTrue(m.cacheHit(), "a disk hit");
                Kernel gather = m.kernels().get(0);
                Kernel sum = m.kernels().get(1);
                assertFalse(gather.ir().renderable(), "found by its source: not validated again");
                assertThrows(IllegalStateException.class, () -> gather.ir().guarded(new Object()));

                MemRef in = h.alloc(4 * 10);
                MemRef out = h.alloc(4 * 10);
                for (int i = 0; i < 10; i++) {
                    h.segment(in).setAtIndex(ValueLayout.JAVA_INT, i, 100 + i);
                }
                h.launch(gather, new long[] {5}, null, List.of(new KernelArg.Buffer(in), new KernelArg.Buffer(out)));
                assertArrayEquals(new int[] {100, 102, 104, 106, 108, 0, 0, 0, 0, 0},
                        h.segment(out).toArray(ValueLayout.JAVA_INT));
                ArraydException oob = assertThrows(ArraydException.class, () -> h.launch(gather, new long[] {8}, null,
                        List.of(new KernelArg.Buffer(in), new KernelArg.Buffer(out))));
                assertEquals(ErrorCode.OUT_OF_RANGE, oob.code(), oob::toString);
                assertTrue(oob.getMessage().contains("kernel gather") && oob.getMessage().contains("of buffer in"),
                        oob::getMessage);
                ArraydException grid = assertThrows(ArraydException.class, () -> h.launch(gather, new long[] {5, 1}, null,
                        List.of(new KernelArg.Buffer(in), new KernelArg.Buffer(out))));
                assertEquals(ErrorCode.INVALID_ARGUMENT, grid.code(), grid::toString);

                MemRef x = h.alloc(4 * 512);
                MemRef partial = h.alloc(4 * 2);
                for (int i = 0; i < 512; i++) {
                    h.segment(x).setAtIndex(ValueLayout.JAVA_FLOAT, i, i % 7);
                }
                h.launch(sum, new long[] {512}, null, List.of(new KernelArg.Buffer(x), new KernelArg.Buffer(partial)));
                float want0 = 0;
                float want1 = 0;
                for (int i = 0; i < 256; i++) {
                    want0 += i % 7;
                    want1 += (i + 256) % 7;
                }
                assertArrayEquals(new float[] {want0, want1}, h.segment(partial).toArray(ValueLayout.JAVA_FLOAT));
                ArraydException group = assertThrows(ArraydException.class, () -> h.launch(sum, new long[] {300}, null,
                        List.of(new KernelArg.Buffer(x), new KernelArg.Buffer(partial))));
                assertEquals(ErrorCode.INVALID_ARGUMENT, group.code(), group::toString);
                assertTrue(group.getMessage().contains("a multiple of 256"), group::getMessage);
            }
        }
    }

    /** Only the same source takes an entry found by content: not a kernel that differs in one constant, nor one with guards forced. */
    @Test
    void anotherSourceNeverTakesAnEntryFoundByContent() throws Exception {
        Path dir = CpuBackendTest.freshCacheDir();
        IrKernel scaled = new IrKernel("scaled", List.of(new IrParam.Buffer("y", DType.F32, Access.READ_WRITE, null)), 1,
                List.of(), List.of(IrDsl.store("y", IrDsl.gid(0), IrDsl.mul(IrDsl.load("y", IrDsl.gid(0)), IrDsl.f32(2f)))));
        IrKernel scaledOther = new IrKernel("scaled", List.of(new IrParam.Buffer("y", DType.F32, Access.READ_WRITE, null)), 1,
                List.of(), List.of(IrDsl.store("y", IrDsl.gid(0), IrDsl.mul(IrDsl.load("y", IrDsl.gid(0)), IrDsl.f32(3f)))));
        try (CpuBackend b = backend(dir); KernelModule m = b.compiler().compile(KernelSource.ir(new IrModule(List.of(scaled))))) {
            assertFalse(m.cacheHit());
        }
        try (CpuBackend b = backend(dir);
             KernelModule m = b.compiler().compile(KernelSource.ir(new IrModule(List.of(scaledOther))))) {
            assertFalse(m.cacheHit(), "one constant differs: another source");
            assertTrue(m.kernels().getFirst().ir().renderable());
        }
        try (CpuBackend b = new CpuBackend(CpuOptions.defaults().withCacheDir(dir).withForceGuards(true));
             KernelModule m = b.compiler().compile(KernelSource.ir(new IrModule(List.of(scaled))))) {
            // (every access of this kernel is guarded anyway: the unit is the same, found by its rendered text)
            assertTrue(m.kernels().getFirst().ir().renderable(), "guards forced: not found by content, translated");
        }
        assertEquals(3, filesEndingWith(dir, ".src"));
        try (CpuBackend b = backend(dir);
             KernelModule m = b.compiler().compile(KernelSource.ir(new IrModule(List.of(scaledOther))))) {
            assertTrue(m.cacheHit());
            assertFalse(m.kernels().getFirst().ir().renderable());
        }
    }

    /** An entry found by content whose library is gone is translated and built again, and found again after that. */
    @Test
    void aSourceEntryWhoseLibraryIsGoneIsBuiltAgain() throws Exception {
        Path dir = CpuBackendTest.freshCacheDir();
        try (CpuBackend b = backend(dir); KernelModule m = b.compiler().compile(SAXPY)) {
            assertFalse(m.cacheHit());
        }
        try (Stream<Path> s = Files.list(dir)) {
            for (Path f : s.filter(p -> !p.toString().endsWith(".src")).toList()) {
                Files.delete(f);
            }
        }
        try (CpuBackend b = backend(dir); KernelModule m = b.compiler().compile(SAXPY)) {
            assertFalse(m.cacheHit(), "the library is gone");
            assertTrue(m.kernels().getFirst().ir().renderable(), "translated again to build it");
            try (KernelModule again = b.compiler().compile(SAXPY)) {
                assertTrue(again.cacheHit(), "and remembered in memory");
            }
        }
        try (CpuBackend b = backend(dir); KernelModule m = b.compiler().compile(SAXPY)) {
            assertTrue(m.cacheHit());
        }
    }

    /**
     * An IR source is found by its module: the same module with no entry points, or its own, is one entry; with
     * entry points other than its kernels' it is refused, in memory and after a restart, never found by content.
     */
    @Test
    void entryPointsOtherThanTheModulesAreRefusedEvenWhenTheModuleIsCached() throws Exception {
        Path dir = CpuBackendTest.freshCacheDir();
        IrModule module = SAXPY.ir();
        KernelSource withOwn = new KernelSource(dev.arrayd.devices.api.Dialect.IR, "", SAXPY.entryPoints(), module);
        KernelSource without = new KernelSource(dev.arrayd.devices.api.Dialect.IR, "", List.of(), module);
        KernelSource wrong = new KernelSource(dev.arrayd.devices.api.Dialect.IR, "",
                List.of(new dev.arrayd.devices.api.KernelSignature("saxpy", List.of())), module);
        assertEquals(CpuKernelCompiler.memoKey(withOwn), CpuKernelCompiler.memoKey(without), "one module: one key");
        assertEquals(wrong, CpuKernelCompiler.memoKey(wrong), "keyed by itself: never found by its module");
        try (CpuBackend b = backend(dir); KernelModule m = b.compiler().compile(withOwn)) {
            assertFalse(m.cacheHit());
            try (KernelModule again = b.compiler().compile(without)) {
                assertTrue(again.cacheHit(), "in memory, by the module's digest");
            }
            ArraydException e = assertThrows(ArraydException.class, () -> b.compiler().compile(wrong));
            assertEquals(ErrorCode.INVALID_ARGUMENT, e.code());
        }
        try (CpuBackend b = backend(dir)) {
            ArraydException e = assertThrows(ArraydException.class, () -> b.compiler().compile(wrong));
            assertEquals(ErrorCode.INVALID_ARGUMENT, e.code(), "after a restart too");
            try (KernelModule m = b.compiler().compile(without)) {
                assertTrue(m.cacheHit(), "no entry points: the same entry as the module's own");
            }
        }
    }
}
