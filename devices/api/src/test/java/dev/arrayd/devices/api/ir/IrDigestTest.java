package dev.arrayd.devices.api.ir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.devices.api.Access;
import dev.arrayd.devices.api.DType;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The digest a compile cache keys IR sources on: equal modules get one digest, and changing any single field
 * anywhere in a module (found by reflection, so a field the digest forgets fails here) changes it.
 */
class IrDigestTest {

    @Test
    void equalModulesBuiltApartHaveOneDigestAndUnequalOnesDiffer() {
        Map<String, IrKernel> byDigest = new HashMap<>();
        for (long seed = 0; seed < 300; seed++) {
            IrKernel k = RandomIrKernels.kernel(seed, seed % 3 == 0);
            String d = IrDigest.of(new IrModule(List.of(k)));
            assertEquals(d, IrDigest.of(new IrModule(List.of(RandomIrKernels.kernel(seed, seed % 3 == 0)))), "seed " + seed);
            IrKernel earlier = byDigest.putIfAbsent(d, k);
            assertTrue(earlier == null || earlier.equals(k), "seed " + seed + " shares a digest with another kernel");
        }
        assertTrue(byDigest.size() > 250, "the random kernels differ: " + byDigest.size());
    }

    @Test
    void everySingleChangeAnywhereChangesTheDigest() {
        int checked = 0;
        for (long seed = 0; seed < 40; seed++) {
            IrModule m = new IrModule(List.of(RandomIrKernels.kernel(seed, seed % 2 == 0), sample()));
            String d = IrDigest.of(m);
            for (Object variant : variants(m)) {
                if (!variant.equals(m)) {
                    assertNotEquals(d, IrDigest.of((IrModule) variant), "seed " + seed + ": " + variant);
                    checked++;
                }
            }
        }
        assertTrue(checked > 1000, "variants checked: " + checked);
    }

    @Test
    void everyRecordOfTheIrIsEncodedWithTheComponentsItHasToday() {
        // IrDigest writes these components; a record that gains one must be written there too, then listed here
        Map<String, String> expected = new TreeMap<>(Map.ofEntries(
                Map.entry("IrModule", "kernels"),
                Map.entry("IrKernel", "name params gridDims localSize body relaxedMath"),
                Map.entry("Buffer", "name dtype access minExtent"),
                Map.entry("Scalar", "name dtype min max"),
                Map.entry("Let", "name value mutable"),
                Map.entry("Assign", "name value"),
                Map.entry("Store", "array index value"),
                Map.entry("Accumulate", "target index op value"),
                Map.entry("If", "condition thenBody elseBody"),
                Map.entry("For", "var start end step body"),
                Map.entry("LocalArray", "name dtype size"),
                Map.entry("Barrier", ""),
                Map.entry("Const", "type bits"),
                Map.entry("Param", "name"),
                Map.entry("Var", "name"),
                Map.entry("Builtin", "kind dim"),
                Map.entry("Load", "array index"),
                Map.entry("Unary", "op operand"),
                Map.entry("Binary", "op left right"),
                Map.entry("Select", "condition ifTrue ifFalse"),
                Map.entry("Cast", "to operand"),
                Map.entry("Fma", "a b c")));
        Map<String, String> actual = new TreeMap<>();
        List<Class<?>> records = new ArrayList<>(List.of(IrModule.class, IrKernel.class));
        for (Class<?> sealed : List.of(IrParam.class, Stmt.class, Expr.class)) {
            records.addAll(Arrays.asList(sealed.getPermittedSubclasses()));
        }
        for (Class<?> c : records) {
            actual.put(c.getSimpleName(), Arrays.stream(c.getRecordComponents()).map(RecordComponent::getName)
                    .collect(Collectors.joining(" ")));
        }
        assertEquals(expected, actual);
    }

    /** A kernel with what the random ones may lack: every optional field set and unset, local sizes, relaxed math. */
    private static IrKernel sample() {
        Expr i = new Expr.Builtin(Expr.Builtin.Kind.GLOBAL_ID, 0);
        return new IrKernel("sample", List.of(
                new IrParam.Buffer("x", DType.F32, Access.READ_WRITE, new Expr.Param("n")),
                new IrParam.Buffer("y", DType.F32, Access.READ, null),
                new IrParam.Scalar("n", DType.I64, 0L, 1024L),
                new IrParam.Scalar("s", DType.F32, null, null)), 1, List.of(64L), List.of(
                new Stmt.LocalArray("t", DType.F32, 64),
                new Stmt.Let("acc", Expr.Const.f32(0), true),
                new Stmt.For("j", Expr.Const.i64(0), new Expr.Param("n"), 2, List.of(
                        new Stmt.Accumulate("acc", null, Stmt.Accumulate.Op.ADD, new Expr.Fma(new Expr.Load("y", new Expr.Var("j")),
                                new Expr.Cast(IrType.F32, new Expr.Var("j")), new Expr.Unary(Expr.Unary.Op.NEG, new Expr.Param("s")))))),
                new Stmt.Barrier(),
                new Stmt.If(new Expr.Binary(Expr.Binary.Op.LT, i, new Expr.Param("n")),
                        List.of(new Stmt.Store("x", i, new Expr.Select(Expr.Const.bool(true), new Expr.Var("acc"), Expr.Const.f32(1)))),
                        List.of(new Stmt.Assign("acc", Expr.Const.f32(2)),
                                new Stmt.Accumulate("t", Expr.Const.i64(0), Stmt.Accumulate.Op.MAX, new Expr.Var("acc"))))),
                true);
    }

    /** {@code v} with exactly one leaf changed, or one list item dropped, anywhere in it (those that construct). */
    private static List<Object> variants(Object v) {
        List<Object> out = new ArrayList<>();
        switch (v) {
            case null -> { }
            case String s -> out.add(s + "'");
            case Long l -> out.add(l + 1);
            case Integer n -> out.add(n + 1);
            case Boolean b -> out.add(!b);
            case Enum<?> e -> {
                Object[] all = e.getDeclaringClass().getEnumConstants();
                out.add(all[(e.ordinal() + 1) % all.length]);
            }
            case List<?> list -> {
                for (int i = 0; i < list.size(); i++) {
                    List<Object> dropped = new ArrayList<>(list);
                    dropped.remove(i);
                    out.add(dropped);
                    for (Object item : variants(list.get(i))) {
                        List<Object> changed = new ArrayList<>(list);
                        changed.set(i, item);
                        out.add(changed);
                    }
                }
            }
            case Record r -> {
                RecordComponent[] rc = r.getClass().getRecordComponents();
                Object[] args = new Object[rc.length];
                for (int i = 0; i < rc.length; i++) {
                    args[i] = component(r, rc[i]);
                }
                for (int i = 0; i < rc.length; i++) {
                    List<Object> changes = variants(args[i]);
                    if (args[i] == null && rc[i].getType() == Long.class) {
                        changes.add(7L);
                    }
                    for (Object change : changes) {
                        Object[] copy = args.clone();
                        copy[i] = change;
                        Object built = construct(r.getClass(), rc, copy);
                        if (built != null) {
                            out.add(built);
                        }
                    }
                }
            }
            default -> throw new AssertionError("unexpected value in the IR: " + v.getClass());
        }
        return out;
    }

    private static Object component(Record r, RecordComponent c) {
        try {
            c.getAccessor().setAccessible(true);
            return c.getAccessor().invoke(r);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    private static Object construct(Class<?> type, RecordComponent[] rc, Object[] args) {
        try {
            Constructor<?> ctor = type.getDeclaredConstructor(Arrays.stream(rc).map(RecordComponent::getType).toArray(Class<?>[]::new));
            ctor.setAccessible(true);
            return ctor.newInstance(args);
        } catch (InvocationTargetException | IllegalArgumentException e) {
            return null; // a change the record refuses (a null name, ...)
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }
}
