package dev.arrayd.server;

import dev.arrayd.proto.v1.DiagnosticsServiceGrpc;
import dev.arrayd.proto.v1.EchoMessage;
import io.grpc.stub.StreamObserver;

/** A plain bidi echo on the same server stack: the anchor of the latency benchmark. */
final class DiagnosticsGrpcService extends DiagnosticsServiceGrpc.DiagnosticsServiceImplBase {

    @Override
    public StreamObserver<EchoMessage> echo(StreamObserver<EchoMessage> out) {
        return new StreamObserver<>() {
            @Override
            public void onNext(EchoMessage m) {
                out.onNext(m);
            }

            @Override
            public void onError(Throwable t) {
                // the client went away
            }

            @Override
            public void onCompleted() {
                out.onCompleted();
            }
        };
    }
}
