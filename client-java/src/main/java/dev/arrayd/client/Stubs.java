package dev.arrayd.client;

import dev.arrayd.proto.v1.BufferServiceGrpc;
import dev.arrayd.proto.v1.DeviceServiceGrpc;
import dev.arrayd.proto.v1.ExecutionServiceGrpc;
import dev.arrayd.proto.v1.KernelServiceGrpc;
import dev.arrayd.proto.v1.RegionServiceGrpc;
import dev.arrayd.proto.v1.SessionServiceGrpc;
import io.grpc.Channel;

/** The async stubs of one client, with its message size limits applied. */
record Stubs(
        DeviceServiceGrpc.DeviceServiceStub devices,
        SessionServiceGrpc.SessionServiceStub sessions,
        BufferServiceGrpc.BufferServiceStub buffers,
        KernelServiceGrpc.KernelServiceStub kernels,
        ExecutionServiceGrpc.ExecutionServiceStub execution,
        RegionServiceGrpc.RegionServiceStub regions) {

    static Stubs of(Channel channel, int maxMessageBytes) {
        return new Stubs(
                DeviceServiceGrpc.newStub(channel)
                        .withMaxInboundMessageSize(maxMessageBytes).withMaxOutboundMessageSize(maxMessageBytes),
                SessionServiceGrpc.newStub(channel)
                        .withMaxInboundMessageSize(maxMessageBytes).withMaxOutboundMessageSize(maxMessageBytes),
                BufferServiceGrpc.newStub(channel)
                        .withMaxInboundMessageSize(maxMessageBytes).withMaxOutboundMessageSize(maxMessageBytes),
                KernelServiceGrpc.newStub(channel)
                        .withMaxInboundMessageSize(maxMessageBytes).withMaxOutboundMessageSize(maxMessageBytes),
                ExecutionServiceGrpc.newStub(channel)
                        .withMaxInboundMessageSize(maxMessageBytes).withMaxOutboundMessageSize(maxMessageBytes),
                RegionServiceGrpc.newStub(channel));
    }
}
