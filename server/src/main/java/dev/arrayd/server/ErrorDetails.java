package dev.arrayd.server;

import com.google.protobuf.Any;
import com.google.rpc.BadRequest;
import com.google.rpc.ErrorInfo;
import com.google.rpc.ResourceInfo;
import io.grpc.Metadata;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.protobuf.ProtoUtils;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Structured details beside every error's text, in the {@code grpc-status-details-bin} trailer (the
 * {@code google.rpc.Status} that grpc-java's {@code StatusProto}, Python's {@code grpc_status} and Go's
 * {@code status.FromError} read):
 * <ul>
 *   <li>{@code ErrorInfo}, always: {@code domain} "arrayd.dev", a stable {@code reason} (e.g.
 *       SHUTTING_DOWN, QUOTA_EXCEEDED, BUFFER_NOT_FOUND, or the code's name), {@code metadata.code};</li>
 *   <li>{@code BadRequest} for INVALID_ARGUMENT and OUT_OF_RANGE whose message names a field (every
 *       message does: {@code "commands[2]: launch.args[1]: …"} is field {@code commands[2].launch.args[1]});</li>
 *   <li>{@code ResourceInfo} for NOT_FOUND of a session, buffer, kernel, stream, graph, event or device.</li>
 * </ul>
 * Derived from the final status as the call ends (outermost interceptor, after {@link StatusText} bounded
 * it), so every error carries them, whichever layer made it. Texts inside are cut short: the trailer
 * must stay well under the 8 KiB of metadata a client accepts by default.
 */
final class ErrorDetails {

    static final String DOMAIN = "arrayd.dev";
    /** The trailer every gRPC implementation reads the details from (what {@code StatusProto} writes). */
    static final Metadata.Key<com.google.rpc.Status> KEY = Metadata.Key.of("grpc-status-details-bin",
            ProtoUtils.metadataMarshaller(com.google.rpc.Status.getDefaultInstance()));
    /** Most characters of the message and of a field's description inside the details. */
    static final int MAX_TEXT = 512;

    private static final Pattern FIELD = Pattern.compile("^([a-z_][a-z0-9_]*(?:\\[\\d+])*(?:\\.[a-z_][a-z0-9_]*(?:\\[\\d+])*)*): ");
    private static final Set<String> RESOURCES = Set.of("session", "buffer", "kernel", "stream", "graph", "event",
            "device");
    private static final Pattern RESOURCE = Pattern.compile("^(session|buffer|kernel|stream|graph|event|device)"
            + "(?::? (\"[^\"]*\"…?|\\S+))?");

    private ErrorDetails() {}

    static ServerInterceptor interceptor() {
        return FinalStatus.rewriting((status, trailers) -> {
            if (!status.isOk() && !trailers.containsKey(KEY)) {
                trailers.put(KEY, of(status.getCode(), status.getDescription()));
            }
            return status;
        });
    }

    /** The details of an error with this code and message. */
    static com.google.rpc.Status of(Status.Code code, String message) {
        String text = message == null ? "" : message;
        com.google.rpc.Status.Builder s = com.google.rpc.Status.newBuilder().setCode(code.value())
                .setMessage(cut(text, MAX_TEXT));
        // the field path: "commands[0]: wait_events[1]: event 4 (…)" is commands[0].wait_events[1]
        StringBuilder field = new StringBuilder();
        String rest = text;
        Matcher m;
        while ((m = FIELD.matcher(rest)).find()) {
            field.append(field.isEmpty() ? "" : ".").append(m.group(1));
            rest = rest.substring(m.end());
        }
        String[] resource = code == Status.Code.NOT_FOUND ? resource(field.toString(), rest) : null;
        String reason = reason(code, text, resource);
        s.addDetails(Any.pack(ErrorInfo.newBuilder().setDomain(DOMAIN).setReason(reason)
                .putMetadata("code", code.name()).build()));
        if ((code == Status.Code.INVALID_ARGUMENT || code == Status.Code.OUT_OF_RANGE) && !field.isEmpty()) {
            s.addDetails(Any.pack(BadRequest.newBuilder().addFieldViolations(BadRequest.FieldViolation.newBuilder()
                    .setField(cut(field.toString(), MAX_TEXT)).setDescription(cut(rest, MAX_TEXT))).build()));
        }
        if (resource != null) {
            s.addDetails(Any.pack(ResourceInfo.newBuilder().setResourceType(resource[0])
                    .setResourceName(cut(resource[1], 80)).setDescription(cut(text, MAX_TEXT)).build()));
        }
        return s.build();
    }

    /**
     * {type, name} of what was not found: "buffer 0x5 (…)", "events[0]: event 777 (…)", or a field named
     * for the resource ("session: \"3f9a…\" (…)"); null when the message names none.
     */
    static String[] resource(String field, String rest) {
        Matcher r = RESOURCE.matcher(rest);
        if (r.find()) {
            return new String[] {r.group(1), r.group(2) == null ? "" : r.group(2)};
        }
        String last = field.substring(field.lastIndexOf('.') + 1).replaceAll("\\[\\d+]", "");
        if (RESOURCES.contains(last)) {
            int space = rest.indexOf(' ');
            return new String[] {last, space < 0 ? rest : rest.substring(0, space)};
        }
        return null;
    }

    /** A stable name for what went wrong, for programs to branch on (the message is for people). */
    static String reason(Status.Code code, String text, String[] resource) {
        if (code == Status.Code.UNAVAILABLE && text.startsWith("arrayd is shutting down")) {
            return "SHUTTING_DOWN";
        }
        if (code == Status.Code.RESOURCE_EXHAUSTED && text.contains("quota")) {
            return "QUOTA_EXCEEDED";
        }
        if (code == Status.Code.PERMISSION_DENIED && text.contains("--allow-native-source")) {
            return "NATIVE_SOURCE_NOT_ALLOWED";
        }
        if (resource != null) {
            return resource[0].toUpperCase(Locale.ROOT) + "_NOT_FOUND";
        }
        return code.name();
    }

    private static String cut(String s, int max) {
        return s.length() <= max ? s : s.substring(0, max - 1) + "…";
    }
}
