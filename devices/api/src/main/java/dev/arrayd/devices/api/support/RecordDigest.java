package dev.arrayd.devices.api.support;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
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

    /** A record class's encoded name and its components' accessors, typed {@code (Object)Object}. */
    private record Shape(byte[] name, MethodHandle[] accessors) {}

    private static final MethodType ACCESSOR = MethodType.methodType(Object.class, Object.class);

    private static final ClassValue<Shape> SHAPES = new ClassValue<>() {
        @Override
        protected Shape computeValue(Class<?> type) {
            RecordComponent[] rc = type.getRecordComponents();
            MethodHandle[] out = new MethodHandle[rc.length];
            for (int i = 0; i < rc.length; i++) {
                Method m = rc[i].getAccessor();
                m.setAccessible(true);
                try {
                    out[i] = MethodHandles.lookup().unreflect(m).asType(ACCESSOR);
                } catch (IllegalAccessException e) {
                    throw new IllegalStateException("record accessor " + m + " is not accessible", e);
                }
            }
            return new Shape(type.getName().getBytes(StandardCharsets.UTF_8), out);
        }
    };

    /** An enum class's encoded name and its constants' encoded names, by ordinal. */
    private static final ClassValue<byte[][]> ENUM_NAMES = new ClassValue<>() {
        @Override
        protected byte[][] computeValue(Class<?> type) {
            Object[] constants = type.getEnumConstants();
            byte[][] out = new byte[constants.length + 1][];
            out[0] = type.getName().getBytes(StandardCharsets.UTF_8);
            for (int i = 0; i < constants.length; i++) {
                out[i + 1] = ((Enum<?>) constants[i]).name().getBytes(StandardCharsets.UTF_8);
            }
            return out;
        }
    };

    private final MessageDigest sha;
    /** Encoded bytes not yet given to {@link #sha}: one update per few kilobytes, not one per value. */
    private final byte[] buf = new byte[4096];
    private int pos;

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
        d.flush();
        return HexFormat.of().formatHex(d.sha.digest());
    }

    private void add(Object v) {
        switch (v) {
            case null -> tag('N', 0);
            case String s -> text('S', s.getBytes(StandardCharsets.UTF_8));
            case Long l -> tag('J', l);
            case Integer i -> tag('I', i);
            case Boolean b -> tag('Z', b ? 1 : 0);
            case Enum<?> e -> {
                byte[][] names = ENUM_NAMES.get(e.getDeclaringClass());
                text('E', names[0]);
                text('e', names[e.ordinal() + 1]);
            }
            case List<?> list -> {
                tag('L', list.size());
                for (Object item : list) {
                    add(item);
                }
            }
            case Record r -> {
                Shape shape = SHAPES.get(r.getClass());
                text('R', shape.name());
                tag('r', shape.accessors().length);
                for (MethodHandle m : shape.accessors()) {
                    add(component(r, m));
                }
            }
            default -> throw new IllegalArgumentException("cannot digest a " + v.getClass().getName()
                    + " (expected: records, lists, strings, numbers, booleans, enums)");
        }
    }

    private static Object component(Record r, MethodHandle accessor) {
        try {
            return (Object) accessor.invokeExact((Object) r);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("record accessor of " + r.getClass().getName() + " failed", t);
        }
    }

    private void text(char tag, byte[] b) {
        tag(tag, b.length);
        if (b.length > buf.length - pos) {
            flush();
            if (b.length > buf.length) {
                sha.update(b);
                return;
            }
        }
        System.arraycopy(b, 0, buf, pos, b.length);
        pos += b.length;
    }

    /** One tag byte and eight bytes of value (a number, or the length of what follows). */
    private void tag(char tag, long value) {
        if (buf.length - pos < 9) {
            flush();
        }
        buf[pos] = (byte) tag;
        for (int i = 0; i < 8; i++) {
            buf[pos + 1 + i] = (byte) (value >>> (56 - 8 * i));
        }
        pos += 9;
    }

    private void flush() {
        sha.update(buf, 0, pos);
        pos = 0;
    }
}
