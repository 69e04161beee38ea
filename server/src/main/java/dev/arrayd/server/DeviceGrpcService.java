package dev.arrayd.server;

import dev.arrayd.devices.api.BackendStatus;
import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.proto.v1.BackendInfo;
import dev.arrayd.proto.v1.DeviceInfo;
import dev.arrayd.proto.v1.DeviceServiceGrpc;
import dev.arrayd.proto.v1.GetDeviceRequest;
import dev.arrayd.proto.v1.GetDeviceResponse;
import dev.arrayd.proto.v1.ListDevicesRequest;
import dev.arrayd.proto.v1.ListDevicesResponse;
import dev.arrayd.scheduler.DeviceRuntime;
import dev.arrayd.scheduler.Scheduler;
import io.grpc.stub.StreamObserver;
import java.util.List;

/** Lists devices and backends (including unavailable ones, with their reason). */
final class DeviceGrpcService extends DeviceServiceGrpc.DeviceServiceImplBase {

    private final Scheduler scheduler;
    /** The backends' statuses now (a peer's devices join them when the peer comes up). */
    private final java.util.function.Supplier<List<BackendStatus>> backends;

    DeviceGrpcService(Scheduler scheduler, java.util.function.Supplier<List<BackendStatus>> backends) {
        this.scheduler = scheduler;
        this.backends = backends;
    }

    @Override
    public void listDevices(ListDevicesRequest req, StreamObserver<ListDevicesResponse> out) {
        Calls.unary(out, () -> {
            ListDevicesResponse.Builder b = ListDevicesResponse.newBuilder();
            for (DeviceRuntime d : scheduler.devices()) {
                b.addDevices(ProtoCodec.deviceInfo(d));
            }
            for (BackendStatus s : backends.get()) {
                b.addBackends(BackendInfo.newBuilder().setName(s.name()).setAvailable(s.available())
                        .setReason(s.reason()).addAllDevices(s.devices().stream().map(DeviceId::toString).toList()));
            }
            return b.build();
        });
    }

    @Override
    public void getDevice(GetDeviceRequest req, StreamObserver<GetDeviceResponse> out) {
        Calls.unary(out, () -> {
            if (req.getDevice().isEmpty()) {
                throw dev.arrayd.devices.api.ArraydException.invalid("device: empty (expected: an id like cpu:0)");
            }
            return GetDeviceResponse.newBuilder().setDevice(ProtoCodec.deviceInfo(scheduler.device(req.getDevice()))).build();
        });
    }
}
