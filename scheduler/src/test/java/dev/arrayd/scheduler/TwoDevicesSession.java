package dev.arrayd.scheduler;

import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * The set-up the example tests of the scheduler share: two test devices, one session with every
 * fixture kernel compiled, and an event-id counter. On tear-down the session closes and the fixture
 * checks that no slab bytes are left allocated.
 */
abstract class TwoDevicesSession {

    SchedulerFixture f;
    Scheduler sch;
    Session s;
    Map<String, CompiledKernel> k;
    long nextEvent = 1;

    /** The session's client name. */
    abstract String sessionName();

    @BeforeEach
    void setUpSession() {
        f = new SchedulerFixture(2);
        sch = f.scheduler;
        s = sch.openSession(sessionName(), 10_000);
        k = f.compileAll(s);
    }

    @AfterEach
    void tearDownSession() {
        sch.closeSession(s);
        f.close();
    }
}
