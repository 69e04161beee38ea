package dev.arrayd.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.arrayd.devices.api.Device;
import org.junit.jupiter.api.Test;

/**
 * A device whose commands and completions cross a network (a peer's) is handed as many more commands as it says are
 * in transit, so that its next command is already there when one ends; an explicit dispatch depth stays as given.
 */
class CommandsInTransitTest {

    private static final class FarAway extends DelegatingDevice {
        FarAway(Device d) {
            super(d);
        }

        @Override
        public int commandsInTransit() {
            return 3;
        }
    }

    private static int depth(int dispatchDepth, boolean farAway) throws Exception {
        SchedulerFixture f = new SchedulerFixture(1, 1L << 26, 1L << 22, dispatchDepth, System::nanoTime,
                (i, d) -> farAway ? new FarAway(d) : d);
        try {
            return f.scheduler.devices().getFirst().dispatchDepth();
        } finally {
            f.close();
        }
    }

    @Test
    void aDeviceWithCommandsInTransitGetsThatManyMoreSlots() throws Exception {
        int local = depth(0, false);
        assertEquals(local + 3, depth(0, true));
        assertEquals(5, depth(5, true), "an explicit dispatch depth is the depth");
    }
}
