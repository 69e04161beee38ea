package dev.arrayd.devices.api.ir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** How many seeds each try of {@link IrDifferentialSuite} checks, from its system property's text. */
class SeedsPerTryTest {

    @Test
    void unsetIsOneSeedPerTry() {
        assertEquals(1, IrDifferentialSuite.seedsPerTry(null));
    }

    @Test
    void aWholeNumberInRangeIsTaken() {
        assertEquals(1, IrDifferentialSuite.seedsPerTry("1"));
        assertEquals(30, IrDifferentialSuite.seedsPerTry(" 30 "));
        assertEquals(IrDifferentialSuite.MAX_SEEDS_PER_TRY,
                IrDifferentialSuite.seedsPerTry(Integer.toString(IrDifferentialSuite.MAX_SEEDS_PER_TRY)));
    }

    @Test
    void anythingElseIsRefusedByName() {
        for (String bad : new String[] {"0", "-3", "10001", "", "many", "2.5", "99999999999"}) {
            var e = assertThrows(IllegalArgumentException.class, () -> IrDifferentialSuite.seedsPerTry(bad), bad);
            assertEquals("arrayd.ir.seedsPerTry: " + bad + " (expected: a whole number from 1 to 10000)",
                    e.getMessage());
        }
    }

    @Test
    void aLongValueIsQuotedByItsPrefix() {
        String value = "7".repeat(400);
        var e = assertThrows(IllegalArgumentException.class, () -> IrDifferentialSuite.seedsPerTry(value));
        assertEquals("arrayd.ir.seedsPerTry: " + "7".repeat(20) + "... (expected: a whole number from 1 to 10000)",
                e.getMessage());
    }
}
