package dev.arrayd.server;

import dev.arrayd.devices.api.ArraydException;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one table that turns exceptions into gRPC statuses. Expected failures carry their own code
 * ({@link ArraydException}); anything else is a bug on our side, logged and reported as INTERNAL.
 */
final class StatusMapper {

    private static final Logger log = LoggerFactory.getLogger(StatusMapper.class);

    private StatusMapper() {}

    static Status toStatus(Throwable t) {
        if (t instanceof java.util.concurrent.CompletionException && t.getCause() != null) {
            t = t.getCause();
        }
        return switch (t) {
            case ArraydException a -> Status.fromCodeValue(codeValue(a)).withDescription(a.getMessage());
            case StatusRuntimeException s -> s.getStatus();
            case StatusException s -> s.getStatus();
            case IllegalArgumentException i -> Status.INVALID_ARGUMENT.withDescription(i.getMessage());
            case OutOfMemoryError o -> Status.RESOURCE_EXHAUSTED.withDescription("daemon heap exhausted: " + o.getMessage());
            default -> {
                log.error("internal error", t);
                yield Status.INTERNAL.withDescription("internal error: " + t);
            }
        };
    }

    static StatusRuntimeException toException(Throwable t) {
        return toStatus(t).asRuntimeException();
    }

    /** gRPC code number of an ArraydException (the enums share names). */
    static int codeValue(ArraydException a) {
        return Status.Code.valueOf(a.code().name()).value();
    }
}
