package dev.arrayd.server;

import static dev.arrayd.server.Protos.buf;
import static dev.arrayd.server.Protos.f32;
import static dev.arrayd.server.Protos.i32;
import static dev.arrayd.server.Protos.launch;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.proto.v1.SubmitRequest;
import dev.arrayd.proto.v1.WaitEventsRequest;
import org.junit.jupiter.api.Test;

/** With metrics-kernel-limit set, a launch counts under its kernel's name with its device time. */
class KernelLabelEndToEndTest {

    @Test
    void launchesCountUnderTheirKernelName() throws Exception {
        try (ServerFixture f = new ServerFixture(ServerOptions.defaults().withPort(0).withAllowNativeSource(true)
                .withCpuMemoryBytes(64L << 20).withMetricsKernelLimit(4))) {
            String s = f.openSession();
            long vadd = f.kernels.compile(Protos.compile(s, Protos.VADD, Protos.VADD_SIG)).getModules(0).getKernels(0)
                    .getKernel();
            long a = f.buffers.createBuffer(f32(s, 16)).getBuffer().getBuffer();
            long b = f.buffers.createBuffer(f32(s, 16)).getBuffer().getBuffer();
            long c = f.buffers.createBuffer(f32(s, 16)).getBuffer().getBuffer();
            var events = f.exec.submit(SubmitRequest.newBuilder().setSession(s)
                    .addCommands(launch(0, vadd, 16, buf(a), buf(b), buf(c), i32(16)))
                    .addCommands(launch(0, vadd, 16, buf(a), buf(b), buf(c), i32(16))).build()).getEventsList();
            f.exec.waitEvents(WaitEventsRequest.newBuilder().setSession(s).addAllEvents(events).build());
            var registry = f.server.metrics().registry();
            assertEquals(2, registry.get("arrayd.kernel.launches").tag("kernel", "vadd").counter().count());
            assertTrue(registry.get("arrayd.kernel.device").tag("kernel", "vadd").counter().count() > 0);
            assertEquals(0, registry.get("arrayd.kernel.launches").tag("kernel", "other").counter().count(),
                    "fills and zero fills are no launches");
        }
    }
}
