package dev.arrayd.server;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.Message;
import com.google.protobuf.UnknownFieldSet;
import com.google.protobuf.UnsafeByteOperations;
import dev.arrayd.proto.v1.ExecuteRequest;
import io.grpc.Detachable;
import io.grpc.HasByteBuffer;
import io.grpc.KnownLength;
import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServiceDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.ProtoUtils;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How every request is parsed. gRPC's own parser allows 100 levels of message nesting, less than an
 * ordinary IR kernel needs (each level of an expression is two messages), and a request that does not parse
 * ends its call with UNKNOWN and a logged stack trace. Here, every method of every service parses with a
 * nesting limit of {@value #NESTING_LIMIT} messages, and a request that does not parse is answered
 * INVALID_ARGUMENT, saying what could not be parsed, with one throttled log line.
 *
 * <p>A session-stream request with large uploads leaves their data in the transport's receive buffers, where
 * the upload commands copy it from ({@link LiftedUploads}); other large requests are read into one array of
 * their own, which their bytes fields view.
 *
 * <p>A request that fails to parse becomes its type's default message carrying the failure in an unknown field
 * ({@value #FAILURE_FIELD}); {@link #interceptor()} answers it before any handler sees it (a client that sends
 * that field number itself is answered INVALID_ARGUMENT too).
 */
final class RequestParser {

    /** Deepest message nesting a request may have: an IR kernel of {@code IrCodec.MAX_DEPTH} levels, and more. */
    static final int NESTING_LIMIT = 2 * IrCodec.MAX_DEPTH + 64;
    /** Requests of at least this many bytes are parsed by {@code Marshaller#parseAliased}. */
    static final int ALIASED_BYTES = 256 << 10;
    /** The unknown field that carries a parse failure to {@link #interceptor()}; the largest field number. */
    static final int FAILURE_FIELD = (1 << 29) - 1;

    /** Opens the failure this process wrote, so that a client cannot pass off a text of its own as one. */
    private static final ByteString NONCE;

    static {
        byte[] b = new byte[16];
        new java.security.SecureRandom().nextBytes(b);
        NONCE = ByteString.copyFrom(b);
    }

    private static final Logger log = LoggerFactory.getLogger(RequestParser.class);
    private static final ThrottledLog warnings = new ThrottledLog(log, TimeUnit.SECONDS.toNanos(1));

    private RequestParser() {}

    /** {@code service} with every protobuf request parsed as this class says (others unchanged). */
    static ServerServiceDefinition strict(ServerServiceDefinition service) {
        ServiceDescriptor sd = service.getServiceDescriptor();
        ServiceDescriptor.Builder descriptor = ServiceDescriptor.newBuilder(sd.getName())
                .setSchemaDescriptor(sd.getSchemaDescriptor());
        java.util.List<ServerMethodDefinition<?, ?>> methods = new java.util.ArrayList<>();
        for (ServerMethodDefinition<?, ?> m : service.getMethods()) {
            ServerMethodDefinition<?, ?> strict = strict(m);
            descriptor.addMethod(strict.getMethodDescriptor());
            methods.add(strict);
        }
        ServerServiceDefinition.Builder out = ServerServiceDefinition.builder(descriptor.build());
        methods.forEach(out::addMethod);
        return out.build();
    }

    private static <Q, R> ServerMethodDefinition<Q, R> strict(ServerMethodDefinition<Q, R> m) {
        MethodDescriptor<Q, R> md = m.getMethodDescriptor();
        if (!(md.getRequestMarshaller() instanceof MethodDescriptor.PrototypeMarshaller<Q> p)
                || !(p.getMessagePrototype() instanceof Message prototype)) {
            return m;
        }
        MethodDescriptor.Marshaller<Q> parser = new Marshaller<>(prototype, md.getFullMethodName());
        MethodDescriptor<Q, R> strict = md.toBuilder(parser, md.getResponseMarshaller()).build();
        return ServerMethodDefinition.create(strict, m.getServerCallHandler());
    }

    /** The interceptor that answers a request that did not parse; it must see every call. */
    static ServerInterceptor interceptor() {
        return new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                    ServerCallHandler<Q, R> next) {
                return new SimpleForwardingServerCallListener<>(next.startCall(call, headers)) {
                    private boolean refused;

                    @Override
                    public void onMessage(Q message) {
                        if (refused) {
                            return;
                        }
                        String failure = failure(message);
                        if (failure == null) {
                            super.onMessage(message);
                            return;
                        }
                        refused = true;
                        warnings.warn("refused a request to " + call.getMethodDescriptor().getFullMethodName()
                                + ": " + failure);
                        call.close(Status.INVALID_ARGUMENT.withDescription(failure), new Metadata());
                    }

                    @Override
                    public void onHalfClose() {
                        if (!refused) {
                            super.onHalfClose();
                        }
                    }

                    @Override
                    public void onReady() {
                        if (!refused) {
                            super.onReady();
                        }
                    }
                };
            }
        };
    }

    /** The parse failure {@code message} carries, or null for a request that parsed. */
    static String failure(Object message) {
        if (message instanceof Message m && m.getUnknownFields().hasField(FAILURE_FIELD)) {
            var values = m.getUnknownFields().getField(FAILURE_FIELD).getLengthDelimitedList();
            if (values.size() == 1 && values.getFirst().startsWith(NONCE)) {
                return values.getFirst().substring(NONCE.size()).toStringUtf8();
            }
            return "request: field " + FAILURE_FIELD + " is set (expected: unset; the field number is reserved)";
        }
        return null;
    }

    /** Parses with the raised nesting limit; a failure becomes the marked default message. */
    private static final class Marshaller<Q> implements MethodDescriptor.PrototypeMarshaller<Q> {
        private final Message prototype;
        private final MethodDescriptor.Marshaller<Message> delegate;
        private final String method;

        Marshaller(Message prototype, String method) {
            this.prototype = prototype;
            this.delegate = ProtoUtils.marshallerWithRecursionLimit(prototype, NESTING_LIMIT);
            this.method = method;
        }

        @Override
        @SuppressWarnings("unchecked")
        public Q getMessagePrototype() {
            return (Q) prototype;
        }

        @Override
        @SuppressWarnings("unchecked")
        public Class<Q> getMessageClass() {
            return (Class<Q>) prototype.getClass();
        }

        @Override
        public InputStream stream(Q value) {
            return delegate.stream((Message) value);
        }

        @Override
        @SuppressWarnings("unchecked")
        public Q parse(InputStream stream) {
            try {
                if (stream instanceof KnownLength && prototype instanceof ExecuteRequest
                        && stream.available() >= UploadSkeleton.MIN_LIFTED_BYTES && stream instanceof Detachable
                        && stream instanceof HasByteBuffer h && h.byteBufferSupported() && stream.markSupported()) {
                    return (Q) parseLifting((Detachable) stream);
                }
                if (stream instanceof KnownLength && stream.available() >= ALIASED_BYTES) {
                    return (Q) parseAliased(stream);
                }
                return (Q) delegate.parse(stream);
            } catch (StatusRuntimeException e) {
                return failed(e.getCause() != null && e.getCause().getMessage() != null ? e.getCause().getMessage()
                        : String.valueOf(e.getStatus().getDescription()));
            } catch (IOException e) {
                return failed(String.valueOf(e.getMessage()));
            }
        }

        /**
         * A large request (uploads' data) read once into an array of its own, which its bytes fields then view:
         * one copy of the data, where gRPC's parser makes two (into a buffer, then into each field), and for a
         * message over 4 MiB reads it in pieces of 4 KiB.
         */
        private Message parseAliased(InputStream stream) throws IOException {
            int size = stream.available(); // (gRPC has held it to the server's largest message)
            byte[] bytes = new byte[size];
            if (stream.readNBytes(bytes, 0, size) != size || stream.read() != -1) {
                throw new IOException("the request's length changed while it was read");
            }
            return parseArray(bytes);
        }

        /**
         * A session-stream request taken over from the transport, its large uploads' data left in the receive
         * buffers it arrived in ({@link UploadSkeleton}) and handed to the handler ({@link LiftedUploads#offer});
         * the rest parsed as usual. A request with nothing to lift is read like any other.
         */
        private Message parseLifting(Detachable transport) throws IOException {
            InputStream held = transport.detach(); // the buffers are ours now: closing it gives them back
            boolean handedOver = false;
            try {
                held.mark(Integer.MAX_VALUE); // what is read stays in its buffers until close
                List<ByteBuffer> buffers = new ArrayList<>();
                while (held.available() > 0) {
                    ByteBuffer b = ((HasByteBuffer) held).getByteBuffer();
                    if (b == null || !b.hasRemaining()) {
                        throw new IOException("the request's buffers ended before its length");
                    }
                    buffers.add(b.slice());
                    if (held.skip(b.remaining()) != b.remaining()) {
                        throw new IOException("the request's length changed while it was read");
                    }
                }
                UploadSkeleton.Split split = UploadSkeleton.split(buffers);
                if (split == null) {
                    held.reset();
                    return parseAliased(held);
                }
                Message m = parseArray(split.skeleton());
                LiftedUploads.offer(m, new LiftedUploads(held, split.data()));
                handedOver = true;
                return m;
            } finally {
                if (!handedOver) {
                    held.close();
                }
            }
        }

        /** Parses {@code bytes}, which its bytes fields then view. */
        private Message parseArray(byte[] bytes) throws IOException {
            // an input over bytes it may treat as immutable: only then do its bytes fields view them
            CodedInputStream in = UnsafeByteOperations.unsafeWrap(bytes).newCodedInput();
            in.enableAliasing(true);
            in.setRecursionLimit(NESTING_LIMIT);
            in.setSizeLimit(Integer.MAX_VALUE);
            return prototype.getParserForType().parseFrom(in);
        }

        @SuppressWarnings("unchecked")
        private Q failed(String why) {
            if (why.contains("too many levels of nesting")) {
                why = "nested deeper than " + NESTING_LIMIT + " messages";
            }
            String text = "request: does not parse as " + prototype.getDescriptorForType().getFullName() + " ("
                    + why + ") (expected: a serialized " + prototype.getDescriptorForType().getFullName()
                    + " of " + method + ", nested at most " + NESTING_LIMIT + " messages deep)";
            return (Q) prototype.toBuilder().setUnknownFields(UnknownFieldSet.newBuilder()
                    .addField(FAILURE_FIELD, UnknownFieldSet.Field.newBuilder()
                            .addLengthDelimited(NONCE.concat(ByteString.copyFromUtf8(text))).build())
                    .build()).build();
        }
    }
}
