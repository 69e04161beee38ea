package dev.arrayd.server;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Calls a method with bytes as its request, as they are (they need not parse): what a hostile client sends. */
public final class RawCalls {

    private RawCalls() {}

    static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }
    };

    /**
     * Sends {@code body} as the one request of {@code method} (with a 20 s deadline), half-closes, reads whatever
     * comes back; the status the call ends with, or DEADLINE_EXCEEDED when none came within 30 s.
     */
    public static Status call(Channel channel, MethodDescriptor<?, ?> method, byte[] body) {
        MethodDescriptor<byte[], byte[]> md = MethodDescriptor.<byte[], byte[]>newBuilder().setType(method.getType())
                .setFullMethodName(method.getFullMethodName()).setRequestMarshaller(BYTES).setResponseMarshaller(BYTES)
                .build();
        ClientCall<byte[], byte[]> call = channel.newCall(md, CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS));
        CompletableFuture<Status> closed = new CompletableFuture<>();
        call.start(new ClientCall.Listener<>() {
            @Override
            public void onClose(Status status, Metadata trailers) {
                closed.complete(status);
            }
        }, new Metadata());
        call.request(Integer.MAX_VALUE);
        call.sendMessage(body);
        call.halfClose();
        try {
            return closed.get(30, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            return Status.DEADLINE_EXCEEDED.withDescription("no answer within 30 s");
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
