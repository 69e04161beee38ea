package dev.arrayd.server.config;

/** Where an effective setting came from, highest precedence first. */
public enum ConfigSource {
    FLAG("flag"), ENVIRONMENT("environment"), FILE("file"), DEFAULT("default");

    private final String label;

    ConfigSource(String label) {
        this.label = label;
    }

    @Override
    public String toString() {
        return label;
    }
}
