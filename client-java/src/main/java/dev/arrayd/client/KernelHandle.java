package dev.arrayd.client;

import java.util.Objects;

/**
 * A compiled entry point, launchable on any device of the backends it was compiled for.
 *
 * @param id        the daemon's kernel handle
 * @param name      the entry point's name
 * @param signature its parameters, used to check and convert launch arguments on the client
 */
public record KernelHandle(long id, String name, KernelSpec signature) {
    public KernelHandle {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(signature, "signature");
    }
}
