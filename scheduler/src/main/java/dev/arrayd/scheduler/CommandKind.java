package dev.arrayd.scheduler;

import dev.arrayd.devices.api.DeviceCommand;
import java.util.Locale;

/** What a command does, as observers and metrics name it. */
public enum CommandKind {
    LAUNCH, COPY, FILL, UPLOAD, DOWNLOAD,
    /**
     * Nothing for a device to run: a streaming merge, a transfer request already satisfied, a host-written notice, a
     * download into its buffer's own region bytes (whose copy is an internal download).
     */
    MARKER;

    private final String label = name().toLowerCase(Locale.ROOT);

    /** Lower-case name, e.g. {@code "launch"} (a metric label value). */
    public String label() {
        return label;
    }

    /** Whether the command moves bytes (upload, download, copy) rather than computing. */
    public boolean isTransfer() {
        return this == UPLOAD || this == DOWNLOAD || this == COPY;
    }

    static CommandKind of(DeviceCommand op) {
        return switch (op) {
            case null -> MARKER;
            case DeviceCommand.Launch l -> LAUNCH;
            case DeviceCommand.Copy c -> COPY;
            case DeviceCommand.PeerCopy c -> COPY;
            case DeviceCommand.Fill f -> FILL;
            case DeviceCommand.Upload u -> UPLOAD;
            case DeviceCommand.Download d -> DOWNLOAD;
            case DeviceCommand.RingTransfer r -> r.intoRef() ? UPLOAD : DOWNLOAD;
            case DeviceCommand.Sequence s -> of(s.parts().get(0));
        };
    }
}
