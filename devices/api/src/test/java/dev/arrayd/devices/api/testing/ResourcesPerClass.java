package dev.arrayd.devices.api.testing;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * On a test class whose fixture outlives each test (made in {@code @BeforeAll}, shared by its tests):
 * {@link InvariantsExtension} checks what was left after the whole class instead of after each test.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface ResourcesPerClass {

    /** Why the class shares its fixture. */
    String value();
}
