package dev.arrayd.cli;

import io.grpc.netty.shaded.io.netty.util.ResourceLeakDetector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The daemon turns Netty's buffer leak sampling off, unless the operator set its level. */
class BufferLeakSamplingTest {

    private ResourceLeakDetector.Level before;
    private String property;

    @BeforeEach
    void remember() {
        before = ResourceLeakDetector.getLevel();
        property = System.getProperty(ServeCommand.LEAK_DETECTION_PROPERTY);
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.SIMPLE);
    }

    @AfterEach
    void restore() {
        ResourceLeakDetector.setLevel(before);
        if (property == null) {
            System.clearProperty(ServeCommand.LEAK_DETECTION_PROPERTY);
        } else {
            System.setProperty(ServeCommand.LEAK_DETECTION_PROPERTY, property);
        }
    }

    @Test
    void offByDefault() {
        System.clearProperty(ServeCommand.LEAK_DETECTION_PROPERTY);
        ServeCommand.disableBufferLeakSampling();
        assertEquals(ResourceLeakDetector.Level.DISABLED, ResourceLeakDetector.getLevel());
    }

    @Test
    void aLevelSetByTheOperatorStays() {
        System.setProperty(ServeCommand.LEAK_DETECTION_PROPERTY, "paranoid");
        ServeCommand.disableBufferLeakSampling();
        assertEquals(ResourceLeakDetector.Level.SIMPLE, ResourceLeakDetector.getLevel(), "left as it was");
    }
}
