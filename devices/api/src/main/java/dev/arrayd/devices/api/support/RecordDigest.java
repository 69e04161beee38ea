package dev.arrayd.devices.api.support;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.RecordComponent;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/**
 * A SHA-256 over a tree of records, by their content: two trees get the same digest exactly when they
 * are equal (records of the same class with equal components, lists of equal length and items, equal
 * strings, numbers, booleans and enum constants), up to SHA-256 collisions. The encoding is tagged and
 * length-prefixed, so no two different trees encode to the same bytes: a compile cache may key a
 * kernel's source on it and trust that a hit is the source it compiled.
 *
 * <p>Supported values: records (every component, in declaration order), {@link List}s, {@link String}s,
 * {@code long}/{@code int}/{@code boolean} and their boxes, enum constants and null. Anything else is
 * refused with {@link IllegalArgumentException} (a value it cannot encode must not collide silently).
 */
public final class RecordDigest {

    private static final ClassValue<Method[]> ACCESSORS = new ClassValue<>() {
        @Override
        protected Method[] computeValue(Class<?> type) {
            RecordComponent[] rc = type.getRecordComponents();
            Method[] out = new Method[rc.length];
            for (int i = 0; i < rc.length; i++) {
                out[i] = rc[i].getAccessor();
                out[i].setAccessible(true);
            }
            return out;
        }
    };

    private final MessageDigest sha;
    private final byte[] scratch = new byte[9];

    private RecordDigest() {
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    /** The hex SHA-256 of {@code parts}, encoded one after the other (each as a tree of its own). */
    public static String of(Object... parts) {
        RecordDigest d = new RecordDigest();
        for (Object p : parts) {
            d.add(p);
        }
        return HexFormat.of().formatHex(d.sha.digest());
    }

    private void add(Object v) {
        switch (v) {
            case null -> tag('N', 0);
            case String s -> text('S', s);
            case Long l -> tag('J', l);
            case Integer i -> tag('I', i);
            case Boolean b -> tag('Z', b ? 1 : 0);
            case Enum<?> e -> {
                text('E', e.getDeclaringClass().getName());
                text('e', e.name());
            }
            case List<?> list -> {
                tag('L', list.size());
                for (Object item : list) {
                    add(item);
                }
            }
            case Record r -> {
                Method[] accessors = ACCESSORS.get(r.getClass());
                text('R', r.getClass().getName());
                tag('r', accessors.length);
                for (Method m : accessors) {
                    add(component(r, m));
                }
            }
            default -> throw new IllegalArgumentException("cannot digest a " + v.getClass().getName()
                    + " (expected: records, lists, strings, numbers, booleans, enums)");
        }
    }

    private static Object component(Record r, Method accessor) {
        try {
            return accessor.invoke(r);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("record accessor " + accessor + " is not accessible", e);
        } catch (InvocationTargetException e) {
            throw new IllegalStateException("record accessor " + accessor + " failed", e.getCause());
        }
    }

    private void text(char tag, String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        tag(tag, b.length);
        sha.update(b);
    }

    /** One tag byte and eight bytes of value (a number, or the length of what follows). */
    private void tag(char tag, long value) {
        scratch[0] = (byte) tag;
        for (int i = 0; i < 8; i++) {
            scratch[1 + i] = (byte) (value >>> (56 - 8 * i));
        }
        sha.update(scratch);
    }
}
