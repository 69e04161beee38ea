package dev.arrayd.devices.api.ir;

import dev.arrayd.devices.api.support.CommandFuture;
import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.Backend;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelArg;
import dev.arrayd.devices.api.KernelModule;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.NativeStream;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AfterProperty;
import net.jqwik.api.lifecycle.LifecycleContext;
import net.jqwik.api.lifecycle.PropagationMode;
import net.jqwik.api.lifecycle.PropertyLifecycleContext;
import net.jqwik.api.lifecycle.SkipExecutionHook;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static dev.arrayd.devices.api.ir.IrDsl.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The random differential suite every backend runs: random well-typed IR kernels
 * ({@link RandomIrPrograms}) give the same results on the reference {@link IrInterpreter} and on the
 * backend. Integer outputs must agree bit for bit; f32 and f16 outputs bit for bit (NaNs equal
 * whatever their payload) except a value produced by exp / log / tanh / pow as its last operation,
 * which may differ by at most {@link #ULP_BOUND} ulps (the device's libm against Java's functions).
 * A launch that hits a guard must fail with OUT_OF_RANGE on both sides, with the same buffers
 * afterwards, and no launch may touch the bytes between its buffers.
 *
 * <p>A backend's test extends this class and says how to create its backend; the suite opens every
 * device the backend finds ({@code openDevices(0)}), compiles each try's kernels as one module and
 * runs kernel {@code i} on device {@code i % devices}. Where the backend reports itself unavailable,
 * each property is skipped with the reason printed. Two hooks tune it: {@link #kernelsPerTry()} (how
 * much one try compiles at once) and {@link #nanConstants()} (for compilers that mishandle a NaN they
 * can see at build time).
 *
 * <p>A failure names the {@code seed} and the kernel (its IR tree, and the device it ran on). The
 * kernels and their inputs depend on nothing but {@code seed}, so that value alone reproduces them;
 * jqwik also retries the failing value first on the next run. Shrinking is off: a neighbouring seed
 * is an unrelated program.
 *
 * <p>A rare miscompilation needs many more tries than a build runs: the system property
 * {@value #SEEDS_PER_TRY_PROPERTY} (default 1, at most {@value #MAX_SEEDS_PER_TRY}) makes each try check that many
 * seeds, the try's own and the ones a {@link SplittableRandom} of it draws, each named on failure as above
 * ({@code ./mvnw verify -pl devices/api,devices/cpu -Darrayd.ir.seedsPerTry=30}).
 */
@AddLifecycleHook(value = IrDifferentialSuite.SkipUnavailableBackend.class, propagateTo = PropagationMode.ALL_DESCENDANTS)
public abstract class IrDifferentialSuite {

    public static final int ULP_BOUND = 4;

    private static final long SLAB = 1L << 20;
    private static final int[] ELEMENT_BYTES = {4, 4, 4, 4, 2, 8}; // ii, fi, oi, of, oh, ol
    private static final long GAP = 64;
    private static final byte CANARY = (byte) 0xa5;

    private Backend backend; // open while a property runs
    private final List<Device> devices = new ArrayList<>();
    private final List<NativeStream> streams = new ArrayList<>();

    /** A new, unopened backend; the suite opens its devices and closes it after each property. */
    protected abstract Backend createBackend();

    /** How many kernels one try generates and compiles into one module (default 8). */
    protected int kernelsPerTry() {
        return 8;
    }

    /**
     * Whether generated kernels may contain NaN constants (default true). A backend whose compiler
     * mishandles a NaN known at build time turns them off, and with them constant expressions that
     * would fold to a NaN ({@link RandomIrPrograms}); NaNs computed at run time, and NaN inputs, stay
     * covered either way.
     */
    protected boolean nanConstants() {
        return true;
    }

    /** Random kernels drawn per kernel kept, at most, when {@link #accepts} turns some down. */
    private static final int MAX_DRAWS = 100;

    /**
     * Whether a try runs this random kernel (default: every one). A backend's test that covers one code path
     * keeps only the kernels that take it; the suite draws until it has {@link #kernelsPerTry()}.
     */
    protected boolean accepts(CheckedKernel k) {
        return true;
    }

    /** The system property that sets how many seeds each try checks. */
    public static final String SEEDS_PER_TRY_PROPERTY = "arrayd.ir.seedsPerTry";
    /** The most seeds one try checks. */
    public static final int MAX_SEEDS_PER_TRY = 10_000;

    @Property(tries = 12, shrinking = ShrinkingMode.OFF)
    void interpreterAndBackendAgree(@ForAll long seed) {
        checkSeeds(seed, false);
    }

    /** The random kernels of seed -127, which GCC 12.2 fails to compile at -O3 (an internal compiler error). */
    @Example
    void kernelsThatCrashGcc12AtO3() {
        check(-127, false);
    }

    /**
     * The random kernels of seed -68951: one stores {@code -fma(c, v, v)} with {@code v = -0}, which is -0; GCC 12
     * folds C's {@code -fmaf(a, b, c)} into {@code -(a * b) - c}, +0 there.
     */
    @Example
    void theNegationOfAFusedMultiplyAddKeepsTheSignOfZero() {
        check(-68951, false);
    }

    /**
     * The random kernels of seed 5902: one stores {@code (f32)(c == d) - (f32)(-22 / 54)} with {@code c != d}, which
     * is {@code +0 - +0 = +0}; GCC 12 folds {@code 0.0 - x} into {@code -x} when {@code x} cannot be -0.
     */
    @Example
    void zeroMinusAnIntegerConvertedToAFloatIsPlusZero() {
        check(5902, false);
        float[] x = {0, 0.5f, -0.5f, 1, -1, 3.75f, -0.0f, Float.NaN};
        float[] y = new float[x.length];
        Expr zero = cast(IrType.F32, bin(Expr.Binary.Op.EQ, f32(1), f32(2)));
        assertSameAsInterpreter("zero_minus_int", x, y,
                (a, b) -> bin(Expr.Binary.Op.SUB, zero, cast(IrType.F32, cast(IrType.I32, a))));
        assertSameAsInterpreter("zero_minus_fabs", x, y,
                (a, b) -> bin(Expr.Binary.Op.SUB, f32(0), new Expr.Unary(Expr.Unary.Op.ABS, a)));
    }

    /** Kernels with local arrays and barriers. */
    @Property(tries = 6, shrinking = ShrinkingMode.OFF)
    void interpreterAndBackendAgreeOnWorkGroups(@ForAll long seed) {
        checkSeeds(seed, true);
    }

    /**
     * The random work-group kernels of seed -20256: one fills a local array from {@code ii[(46 != gid) & 63]}, an
     * index that is a boolean converted to an integer. GCC 12.2's loop vectorizer took the comparison's lane mask
     * (all ones where true) as the offset of that gather, so the items read {@code ii[-1]} or another element
     * instead of {@code ii[1]} (see {@code CRenderer#cast}).
     */
    @Example
    void workGroupKernelsWithAConvertedBooleanAsAnIndex() {
        check(-20256, true);
    }

    /**
     * The random work-group kernels of seed -6860553246952222487: one fills a local array from
     * {@code ii[(ii[i] / ii[i]) & 63]}. GCC 12.2 folds that index (0 or 1) into {@code ii[i] != 0} and then gathers
     * through the comparison's lane mask as above, reading the canary before {@code ii} (see
     * {@code CRenderer#gatherIndex}).
     */
    @Example
    void workGroupKernelsWithAnIndexTheCompilerFoldsIntoABoolean() {
        check(-6860553246952222487L, true);
    }

    /**
     * IEEE 754 and C (so the CPU's powf and OpenCL C's pow) define {@code pow(+1, y) = 1} for every
     * {@code y}, NaN included, and {@code pow(-1, ±inf) = 1}; Java's {@code Math.pow}, which the
     * interpreter computes pow with, gives NaN for all five. The random properties met it as
     * {@code pow(1, 131 / 0)} and as {@code pow(ceil(...), y)} with a NaN or infinite {@code y}.
     */
    @Example
    void powOfPlusOrMinusOneWithANanOrInfiniteExponentIsOne() {
        float inf = Float.POSITIVE_INFINITY;
        float[] x = {1, 1, 1, -1, -1};
        float[] y = {Float.NaN, inf, -inf, inf, -inf};
        assertSameAsInterpreter("pow_edges", x, y, (a, b) -> bin(Expr.Binary.Op.POW, a, b));
    }

    /**
     * {@code min} and {@code max} of two zeros of opposite sign give the second operand, also when the first is a
     * constant the device's compiler can see (PoCL folded {@code max(-0.0f, x)} into a maximum that ignores the
     * sign of zero; the random properties met it with seed -937).
     */
    @Example
    void minAndMaxOfSignedZerosGiveTheSecondOperandWithConstantsOnEitherSide() {
        float[] values = {0.0f, -0.0f, 1, -1, Float.NaN, Float.MIN_VALUE, -Float.MIN_VALUE, Float.NEGATIVE_INFINITY};
        float[] x = new float[values.length * values.length];
        float[] y = new float[x.length];
        for (int i = 0; i < x.length; i++) {
            x[i] = values[i / values.length];
            y[i] = values[i % values.length];
        }
        for (Expr.Binary.Op op : List.of(Expr.Binary.Op.MIN, Expr.Binary.Op.MAX)) {
            for (float zero : new float[] {-0.0f, 0.0f}) {
                String tag = op.name().toLowerCase(java.util.Locale.ROOT) + (zero == 0 && 1 / zero < 0 ? "_neg" : "_pos");
                assertSameAsInterpreter(tag + "_first", x, y, (a, b) -> bin(op, f32(zero), b));
                assertSameAsInterpreter(tag + "_second", x, y, (a, b) -> bin(op, a, f32(zero)));
            }
            assertSameAsInterpreter(op.name().toLowerCase(java.util.Locale.ROOT), x, y, (a, b) -> bin(op, a, b));
        }
    }

    /**
     * Runs {@code out[i] = f(x[i], y[i])} as kernel {@code name} on the interpreter and on the first device and
     * requires the same bits in every element.
     */
    private void assertSameAsInterpreter(String name, float[] x, float[] y,
                                         java.util.function.BinaryOperator<Expr> f) {
        int n = x.length;
        IrKernel kernel = new IrKernel(name, List.of(
                new IrParam.Buffer("x", DType.F32, Access.READ, i64(n)),
                new IrParam.Buffer("y", DType.F32, Access.READ, i64(n)),
                new IrParam.Buffer("out", DType.F32, Access.WRITE, i64(n))),
                1, List.of(), List.of(
                let("i", gid(0)),
                when(lt(var("i"), i64(n)),
                        store("out", var("i"), f.apply(load("x", var("i")), load("y", var("i")))))));
        IrModule module = new IrModule(List.of(kernel));
        MemorySegment want = MemorySegment.ofArray(new float[n]);
        IrInterpreter.run(IrValidator.check(module, "").getFirst(), new long[] {n}, null,
                List.of(MemorySegment.ofArray(x), MemorySegment.ofArray(y), want));

        requireOpen();
        long stride = 4096; // apart by more than any device's base alignment
        MemRef xr = new MemRef(1, 0, 4L * n);
        MemRef yr = new MemRef(1, stride, 4L * n);
        MemRef outRef = new MemRef(1, 2 * stride, 4L * n);
        MemorySegment got = MemorySegment.ofArray(new float[n]);
        try (KernelModule compiled = backend.compiler().compile(KernelSource.ir(module))) {
            NativeStream stream = streams.getFirst();
            run(stream, new DeviceCommand.Upload(MemorySegment.ofArray(x), xr), "x");
            run(stream, new DeviceCommand.Upload(MemorySegment.ofArray(y), yr), "y");
            run(stream, new DeviceCommand.Launch(compiled.kernels().getFirst(), new long[] {n}, null,
                    List.of(new KernelArg.Buffer(xr), new KernelArg.Buffer(yr), new KernelArg.Buffer(outRef))), name);
            run(stream, new DeviceCommand.Download(outRef, got), "out");
        }
        List<String> wrong = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            float w = want.getAtIndex(ValueLayout.JAVA_FLOAT, i);
            float g = got.getAtIndex(ValueLayout.JAVA_FLOAT, i);
            if (Float.floatToIntBits(w) != Float.floatToIntBits(g)) {
                wrong.add(name + "(" + x[i] + ", " + y[i] + "): interpreter " + w + ", " + devices.getFirst().id() + " " + g);
            }
        }
        assertTrue(wrong.isEmpty(), () -> String.join("\n", wrong));
    }

    @AfterProperty
    void closeBackend() {
        if (backend != null) {
            streams.forEach(NativeStream::close);
            streams.clear();
            devices.clear();
            backend.close();
            backend = null;
        }
    }

    /** Empty once the backend is open; otherwise why it is unavailable. Opens it on the first call. */
    private Optional<String> open() {
        if (backend != null) {
            return Optional.empty();
        }
        backend = createBackend();
        Optional<String> reason = backend.unavailableReason();
        if (reason.isPresent()) {
            return reason;
        }
        devices.addAll(backend.openDevices(0));
        for (Device d : devices) {
            d.allocPool(1, SLAB, Math.max(GAP, d.info().baseAlignment()));
            streams.add(d.newStream("ir-differential"));
        }
        return reason;
    }

    private void requireOpen() {
        Optional<String> reason = open();
        if (reason.isPresent()) { // SkipUnavailableBackend skips the property before it gets here
            throw new IllegalStateException("backend unavailable: " + reason.get());
        }
    }

    /**
     * How many seeds each try checks: {@value #SEEDS_PER_TRY_PROPERTY}, or 1 where it is unset.
     *
     * @throws IllegalArgumentException where it is set to anything but a whole number from 1 to
     *     {@value #MAX_SEEDS_PER_TRY}
     */
    static int seedsPerTry(String value) {
        if (value == null) {
            return 1;
        }
        String shown = value.length() > 20 ? value.substring(0, 20) + "..." : value;
        try {
            int n = Integer.parseInt(value.strip());
            if (n >= 1 && n <= MAX_SEEDS_PER_TRY) {
                return n;
            }
        } catch (NumberFormatException e) {
            // named below
        }
        throw new IllegalArgumentException(SEEDS_PER_TRY_PROPERTY + ": " + shown + " (expected: a whole number from 1 to "
                + MAX_SEEDS_PER_TRY + ")");
    }

    /** Checks {@code seed} and the further seeds {@link #seedsPerTry} asks for, drawn from it. */
    private void checkSeeds(long seed, boolean workGroups) {
        int seeds = seedsPerTry(System.getProperty(SEEDS_PER_TRY_PROPERTY));
        SplittableRandom more = new SplittableRandom(seed);
        check(seed, workGroups);
        for (int i = 1; i < seeds; i++) {
            check(more.nextLong(), workGroups);
        }
    }

    private void check(long seed, boolean workGroups) {
        requireOpen();
        RandomIrPrograms gen = new RandomIrPrograms(seed, nanConstants());
        int n = kernelsPerTry();
        List<IrKernel> kernels = new ArrayList<>();
        boolean[] approximate = new boolean[n];
        for (int i = 0, drawn = 0; i < n; drawn++) {
            RandomIrPrograms.Program p = workGroups ? gen.groupKernel("g" + i) : gen.kernel("k" + i);
            if (drawn >= MAX_DRAWS * n) {
                throw new IllegalStateException("seed " + seed + ": " + i + " of " + drawn + " random kernels accepted");
            }
            if (!accepts(IrValidator.check(new IrModule(List.of(p.kernel())), "").getFirst())) {
                continue;
            }
            kernels.add(p.kernel());
            approximate[i] = p.approximate();
            i++;
        }
        IrModule module = new IrModule(kernels);
        List<CheckedKernel> checked = IrValidator.check(module, "");
        Random data = new Random(seed ^ (workGroups ? 0x6a0b : 0x5eed));
        try (KernelModule compiled = backend.compiler().compile(KernelSource.ir(module))) {
            for (int i = 0; i < n; i++) {
                int d = i % devices.size();
                runBoth(checked.get(i), compiled.kernels().get(i), devices.get(d), streams.get(d), approximate[i], data,
                        "seed " + seed + ", kernel " + kernels.get(i));
            }
        }
    }

    /**
     * Runs {@code k} on the interpreter and on {@code device} from the same random inputs and compares
     * the outputs. On the device the six buffers lie in one slab range with {@link #GAP} canary bytes
     * before, between and after them.
     */
    private void runBoth(CheckedKernel k, Kernel kernel, Device device, NativeStream stream, boolean approximate,
                         Random data, String what) {
        int n = RandomIrPrograms.EXTENT;
        long[] offsets = new long[ELEMENT_BYTES.length];
        long end = GAP;
        for (int b = 0; b < ELEMENT_BYTES.length; b++) {
            offsets[b] = end;
            end += (long) ELEMENT_BYTES[b] * n + GAP;
        }
        byte[] image = new byte[(int) end];
        Arrays.fill(image, CANARY);
        MemorySegment host = MemorySegment.ofArray(image);
        List<Object> interpArgs = new ArrayList<>();
        List<KernelArg> deviceArgs = new ArrayList<>();
        for (int b = 0; b < ELEMENT_BYTES.length; b++) {
            MemorySegment s = host.asSlice(offsets[b], (long) ELEMENT_BYTES[b] * n);
            for (long off = 0; off < s.byteSize(); off += 4) {
                int v = b == 1 ? Float.floatToRawIntBits(inputFloat(data))
                        : data.nextInt(4) == 0 ? data.nextInt() : data.nextInt(100) - 50;
                s.set(ValueLayout.JAVA_INT_UNALIGNED, off, v);
            }
            interpArgs.add(MemorySegment.ofArray(s.toArray(ValueLayout.JAVA_BYTE)));
            deviceArgs.add(new KernelArg.Buffer(new MemRef(1, offsets[b], s.byteSize())));
        }
        KernelArg.Scalar sArg = KernelArg.Scalar.i32(data.nextInt(17));
        KernelArg.Scalar tArg = KernelArg.Scalar.f32(data.nextInt(8) == 0 ? special(data) : data.nextFloat() * 8 - 4);
        for (KernelArg.Scalar a : List.of(sArg, tArg)) {
            interpArgs.add(a);
            deviceArgs.add(a);
        }
        what += "\non " + device.id();
        MemRef region = new MemRef(1, 0, end);
        long[] grid = {RandomIrPrograms.GRID};

        ErrorCode deviceCode = null;
        ErrorCode refCode = null;
        run(stream, new DeviceCommand.Upload(host, region), what);
        try {
            run(stream, new DeviceCommand.Launch(kernel, grid, null, deviceArgs), what);
        } catch (ArraydException e) {
            deviceCode = e.code();
        }
        try {
            IrInterpreter.run(k, grid, null, interpArgs);
        } catch (ArraydException e) {
            refCode = e.code();
        }
        assertEquals(refCode, deviceCode, what);
        if (deviceCode != null && deviceCode != ErrorCode.OUT_OF_RANGE) {
            fail("unexpected " + deviceCode + " for " + what);
        }
        MemorySegment after = MemorySegment.ofArray(new byte[image.length]);
        run(stream, new DeviceCommand.Download(region, after), what);

        for (int b = 0; b <= ELEMENT_BYTES.length; b++) {
            long gapStart = b == 0 ? 0 : offsets[b - 1] + (long) ELEMENT_BYTES[b - 1] * n;
            for (long i = gapStart; i < gapStart + GAP; i++) {
                if (after.get(ValueLayout.JAVA_BYTE, i) != CANARY) {
                    fail(what + "\nbyte " + i + " of the region, outside every buffer, was written");
                }
            }
        }
        for (int b = 2; b < ELEMENT_BYTES.length; b++) {
            MemorySegment got = after.asSlice(offsets[b], (long) ELEMENT_BYTES[b] * n);
            MemorySegment want = (MemorySegment) interpArgs.get(b);
            for (int i = 0; i < n; i++) {
                String at = what + "\nbuffer " + b + "[" + i + "]";
                switch (b) {
                    case 3 -> checkFloat(want.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i),
                            got.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i), approximate ? ULP_BOUND : 0, at);
                    case 4 -> checkFloat(Half.f16ToF32(want.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i)),
                            Half.f16ToF32(got.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i)), 0, at);
                    case 5 -> assertEquals(want.getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i),
                            got.getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i), at);
                    default -> assertEquals(want.getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i),
                            got.getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i), at);
                }
            }
        }
    }

    /** Mostly moderate values of random magnitude, sometimes NaN, an infinity, -0 or a denormal. */
    private static float inputFloat(Random data) {
        return data.nextInt(16) == 0 ? special(data) : (data.nextFloat() - 0.5f) * (1 << data.nextInt(12));
    }

    private static float special(Random data) {
        return switch (data.nextInt(5)) {
            case 0 -> Float.NaN;
            case 1 -> Float.POSITIVE_INFINITY;
            case 2 -> Float.NEGATIVE_INFINITY;
            case 3 -> -0f;
            default -> 1e-40f;
        };
    }

    private static void run(NativeStream stream, DeviceCommand command, String what) {
        CommandFuture done = new CommandFuture();
        stream.submit(command, done);
        try {
            done.get(60, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof ArraydException a) {
                throw a;
            }
            throw new AssertionError(what, e.getCause());
        } catch (InterruptedException | TimeoutException e) {
            throw new AssertionError(command.getClass().getSimpleName() + " did not complete: " + what, e);
        }
    }

    /** Equal bits, or both NaN, or within {@code ulps} (±0 count as equal). */
    static void checkFloat(float want, float got, int ulps, String at) {
        if (Float.isNaN(want) && Float.isNaN(got)) {
            return;
        }
        if (Float.floatToRawIntBits(want) == Float.floatToRawIntBits(got)) {
            return;
        }
        if (ulps > 0 && !Float.isNaN(want) && !Float.isNaN(got) && Math.abs(ordered(want) - ordered(got)) <= ulps) {
            return;
        }
        fail(at + ": interpreter " + want + " (0x" + Integer.toHexString(Float.floatToRawIntBits(want)) + "), device " + got
                + " (0x" + Integer.toHexString(Float.floatToRawIntBits(got)) + "), allowed " + ulps + " ulp");
    }

    /** Floats mapped onto integers so that adjacent floats differ by 1 (and -0 == +0). */
    private static long ordered(float f) {
        int bits = Float.floatToRawIntBits(f);
        return bits < 0 ? -(long) (bits & 0x7fffffff) : bits;
    }

    /**
     * Skips each property of a suite whose backend is unavailable, printing the reason. It runs after
     * jqwik has created the property's instance, so the backend it opens is the one the property uses.
     */
    static final class SkipUnavailableBackend implements SkipExecutionHook {

        @Override
        public boolean appliesTo(Optional<AnnotatedElement> element) {
            return element.orElse(null) instanceof Method;
        }

        @Override
        public SkipResult shouldBeSkipped(LifecycleContext context) {
            if (!(context instanceof PropertyLifecycleContext p) || !(p.testInstance() instanceof IrDifferentialSuite suite)) {
                return SkipResult.doNotSkip();
            }
            Optional<String> reason = suite.open();
            if (reason.isEmpty()) {
                return SkipResult.doNotSkip();
            }
            String backendName = suite.backend.name();
            suite.closeBackend();
            System.out.println("[ir differential] skipping " + context.label() + " on backend " + backendName + ": "
                    + reason.get());
            return SkipResult.skip("backend " + backendName + " unavailable: " + reason.get());
        }
    }
}
