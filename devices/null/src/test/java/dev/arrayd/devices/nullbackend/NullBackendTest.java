package dev.arrayd.devices.nullbackend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.CompileException;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.Dialect;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.KernelModule;
import dev.arrayd.devices.api.KernelSignature;
import dev.arrayd.devices.api.KernelSource;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.NativeStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What the null backend does beyond the conformance suite: its completion modes, its counters, its compiler. */
class NullBackendTest {

    private static final class Calls implements CommandCallback {
        final List<String> log = new ArrayList<>();

        @Override
        public void completed(long deviceNanos) {
            log.add("ok " + deviceNanos);
        }

        @Override
        public void failed(ArraydException cause) {
            log.add("failed " + cause.code());
        }
    }

    @Test
    void immediateStreamsCompleteInsideSubmitWithNoDeviceTime() {
        try (NullBackend b = new NullBackend(NullOptions.defaults().withStoresData(false)
                .withCompletion(NullOptions.Completion.IMMEDIATE))) {
            NullDevice d = (NullDevice) b.openDevices(1).getFirst();
            NativeStream s = d.newStream("s");
            d.allocPool(1, 4096, 16);
            Calls calls = new Calls();
            s.submit(new DeviceCommand.Fill(new MemRef(1, 0, 64), 7, 1), calls);
            assertEquals(List.of("ok 0"), calls.log, "completed inside submit, 0 ns: no behaviour, no work");
            assertTrue(s.tryRunInline(new DeviceCommand.Fill(new MemRef(1, 0, 64), 7, 1), calls));
            assertEquals(1, d.inlineRuns());
            s.submit(new DeviceCommand.Fill(new MemRef(1, 4090, 64), 7, 1), calls);
            assertEquals("failed " + ErrorCode.OUT_OF_RANGE, calls.log.getLast(), "memory is checked though no byte moves");
            ArraydException noData = assertThrows(ArraydException.class, () -> d.segment(new MemRef(1, 0, 8)));
            assertEquals(ErrorCode.FAILED_PRECONDITION, noData.code(), noData::getMessage);
            assertEquals(null, s.mark(), "no markers without a worker");
        }
    }

    @Test
    void manualStreamsCompleteWhenDrained() {
        try (NullBackend b = new NullBackend(NullOptions.defaults().withCompletion(NullOptions.Completion.MANUAL))) {
            NullDevice d = (NullDevice) b.openDevices(1).getFirst();
            NativeStream s = d.newStream("s");
            d.allocPool(1, 64, 16);
            Calls calls = new Calls();
            s.submit(new DeviceCommand.Fill(new MemRef(1, 0, 64), 1, 1), calls);
            s.submit(new DeviceCommand.Fill(new MemRef(1, 0, 64), 2, 1), calls);
            assertFalse(s.isIdle());
            assertFalse(s.tryRunInline(new DeviceCommand.Fill(new MemRef(1, 0, 64), 3, 1), calls), "nothing runs inline");
            assertTrue(calls.log.isEmpty());
            assertEquals(2, d.drainAll());
            assertEquals(List.of("ok 0", "ok 0"), calls.log);
            assertEquals(2, d.segment(new MemRef(1, 0, 64)).get(java.lang.foreign.ValueLayout.JAVA_BYTE, 63));
            assertTrue(s.isIdle());
        }
    }

    @Test
    void peerCopiesOnlyWhereBothDevicesAllowThem() {
        try (NullBackend b = new NullBackend(); Arena arena = Arena.ofShared()) {
            List<NullDevice> ds = b.openDevices(2).stream().map(NullDevice.class::cast).toList();
            NullDevice from = ds.get(0);
            NullDevice to = ds.get(1);
            assertFalse(to.canCopyFrom(from), "off by default: the caller stages through host memory");
            from.setPeerCopies(true);
            to.setPeerCopies(true);
            assertTrue(to.canCopyFrom(from));
            assertFalse(to.canCopyFrom(to), "not from itself");
            from.allocPool(1, 64, 16);
            to.allocPool(1, 64, 16);
            MemorySegment data = arena.allocate(64);
            data.fill((byte) 9);
            NativeStream sf = from.newStream("f");
            NativeStream st = to.newStream("t");
            dev.arrayd.devices.api.conformance.Conformance.run(sf, new DeviceCommand.Upload(data, new MemRef(1, 0, 64)));
            dev.arrayd.devices.api.conformance.Conformance.run(st,
                    new DeviceCommand.PeerCopy(from, new MemRef(1, 0, 64), new MemRef(1, 0, 64)));
            assertEquals(-1, to.segment(new MemRef(1, 0, 64)).mismatch(data));
            sf.close();
            st.close();
        }
    }

    @Test
    void theCompilerChecksEntryPointsAndCountsLoadedModules() {
        try (NullBackend b = new NullBackend()) {
            b.openDevices(1);
            KernelSignature k = new KernelSignature("k", List.of());
            KernelModule m = b.compiler().compile(new KernelSource(Dialect.C, "void k() {}", List.of(k)));
            assertEquals(1, b.loadedModules());
            assertEquals("null", m.kernels().getFirst().backend());
            m.close();
            assertEquals(0, b.loadedModules());
            CompileException missing = assertThrows(CompileException.class,
                    () -> b.compiler().compile(new KernelSource(Dialect.C, "nothing here", List.of(k))));
            assertTrue(missing.diagnostics().contains("no kernel 'k'"), missing::diagnostics);
            ArraydException badName = assertThrows(ArraydException.class, () -> b.compiler().compile(
                    new KernelSource(Dialect.C, "x", List.of(new KernelSignature("1x", List.of())))));
            assertEquals(ErrorCode.INVALID_ARGUMENT, badName.code());
        }
    }

    @Test
    void workerThreadsEndWithTheirStreams() {
        try (NullBackend b = new NullBackend()) {
            NullDevice d = (NullDevice) b.openDevices(1).getFirst();
            NativeStream s = d.newStream("s");
            d.allocPool(1, 64, 16);
            dev.arrayd.devices.api.conformance.Conformance.run(s, new DeviceCommand.Fill(new MemRef(1, 0, 64), 0, 1));
            assertEquals(1, d.workerThreads());
            s.close();
            assertEquals(0, d.workerThreads());
        }
    }
}
