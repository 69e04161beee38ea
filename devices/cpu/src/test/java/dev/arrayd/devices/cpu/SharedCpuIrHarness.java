package dev.arrayd.devices.cpu;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One {@link CpuIrHarness} for all the tests of a class ({@code @RegisterExtension static final}): opened before
 * them, the class skipped with the reason printed where the CPU backend is unavailable (no gcc), closed after them.
 */
final class SharedCpuIrHarness implements BeforeAllCallback, AfterAllCallback {

    private CpuIrHarness harness;

    @Override
    public void beforeAll(ExtensionContext context) {
        harness = new CpuIrHarness();
        Assumptions.assumeTrue(harness.available(), "cpu backend unavailable");
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (harness != null) {
            harness.close();
            harness = null;
        }
    }

    /** The class's harness (between its first and last test). */
    CpuIrHarness get() {
        return harness;
    }
}
