package dev.arrayd.devices.api.support;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * On a field: the lock that must be held to read or write it. On a method: the lock its caller must
 * hold. The value names the lock as a reader finds it from the annotated class, e.g. {@code "this"},
 * {@code "submitLock"} or {@code "SchedulerContext.submitLock"} (the scheduler's one submit lock).
 *
 * <p>Where a method says so, it also checks the claim when assertions are on (tests run with them):
 * {@code assert ctx.holdsSubmitLock()}.
 */
@Documented
@Retention(RetentionPolicy.CLASS)
@Target({ElementType.FIELD, ElementType.METHOD})
public @interface GuardedBy {

    /** The lock, as a reader names it from here. */
    String value();
}
