package dev.arrayd.devices.remote;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.arrayd.devices.api.ir.IrKernel;
import dev.arrayd.devices.api.ir.IrModule;
import dev.arrayd.devices.api.ir.RandomIrKernels;
import dev.arrayd.server.IrCodec;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What the remote backend sends a peer to compile is the kernel this daemon decoded: encoding, then decoding as
 * the peer does, gives back an equal kernel (its relaxed floating point included), for random kernels over every
 * statement and expression kind.
 */
class IrEncoderRoundTripTest {

    @Test
    void randomKernelsRoundTrip() {
        for (long seed = 1; seed <= 300; seed++) {
            for (boolean group : new boolean[] {false, true}) {
                IrKernel drawn = RandomIrKernels.kernel(seed, group);
                // every third kernel allows relaxed floating point: the permission travels to the peer too
                IrKernel k = new IrKernel(drawn.name(), drawn.params(), drawn.gridDims(), drawn.localSize(), drawn.body(),
                        seed % 3 == 0);
                var wire = dev.arrayd.proto.v1.IrModule.newBuilder().addKernels(IrEncoder.kernel(k)).build();
                IrModule back = IrCodec.module(wire, "ir");
                assertEquals(List.of(k), back.kernels(), "seed " + seed + (group ? " (group kernel)" : ""));
            }
        }
    }
}
