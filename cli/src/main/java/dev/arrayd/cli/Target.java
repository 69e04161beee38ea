package dev.arrayd.cli;

/** A {@code host:port} as given to {@code --target}; an IPv6 host may be bracketed. */
public record Target(String host, int port) {

    static final String DEFAULT = "127.0.0.1:7700";

    /** Parses {@code host:port} (port 0..65535: 0 is "any free port" for serve); INVALID names the text. */
    public static Target parse(String text) {
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

    /** {@link #parse}, for a daemon to connect to: port 0 is refused. */
    public static Target parseRemote(String text) {
        Target t = parse(text);
        if (t.port() == 0) {
            throw new IllegalArgumentException("--target: \"" + text + "\" (expected: a port 1..65535 after the colon)");
        }
        return t;
    }

    @Override
    public String toString() {
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }
}
