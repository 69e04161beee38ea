package dev.arrayd.devices.api.support;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * On a field: only the named thread reads or writes it (e.g. {@code "worker"}, a stream's worker
 * thread), so it needs no lock. On a method: only that thread calls it. On a class: every instance is used by that thread only.
 */
@Documented
@Retention(RetentionPolicy.CLASS)
@Target({ElementType.FIELD, ElementType.METHOD, ElementType.TYPE})
public @interface ThreadConfined {

    /** The thread, as the class names it. */
    String value();
}
