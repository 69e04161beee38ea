package dev.arrayd.server.cli;

import dev.arrayd.client.ArraydClient;
import picocli.CommandLine.Option;

/** Options every client subcommand shares: where the daemon is and how to authenticate. */
final class ClientOptions {

    @Option(names = "--target", description = "Daemon address host:port (default: ${DEFAULT-VALUE}).",
            defaultValue = Target.DEFAULT)
    String target;

    @Option(names = "--token", description = "Bearer token (default: the ARRAYD_TOKEN environment variable).",
            defaultValue = "${env:ARRAYD_TOKEN}")
    String token;

    ArraydClient connect() {
        Target t = Target.parse(target);
        ArraydClient.Builder b = ArraydClient.builder().target(t.toString());
        if (token != null && !token.isBlank()) {
            b.bearerToken(token);
        }
        return b.build();
    }
}
