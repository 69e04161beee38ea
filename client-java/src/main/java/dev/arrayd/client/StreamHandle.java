package dev.arrayd.client;

import java.util.Objects;

/**
 * An in-order command queue on one device, owned by a session.
 *
 * @param id     the daemon's stream handle
 * @param device the device it runs on
 */
public record StreamHandle(long id, String device) {
    public StreamHandle {
        Objects.requireNonNull(device, "device");
    }
}
