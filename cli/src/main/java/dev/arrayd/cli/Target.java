package dev.arrayd.cli;

/** A {@code host:port} as given to {@code --target}. */
record Target(String host, int port) {

    static final String DEFAULT = "127.0.0.1:7700";

    static Target parse(String text) {
        int colon = text.lastIndexOf(':');
        if (colon <= 0 || colon == text.length() - 1) {
            throw new IllegalArgumentException("--target: \"" + text + "\" (expected: host:port, e.g. " + DEFAULT + ")");
        }
        String host = text.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(text.substring(colon + 1));
        } catch (NumberFormatException e) {
            port = -1;
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("--target: \"" + text + "\" (expected: a port 0..65535 after the colon)");
        }
        return new Target(host, port);
    }

    @Override
    public String toString() {
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }
}
