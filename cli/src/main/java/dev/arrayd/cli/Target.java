package dev.arrayd.cli;

/**
 * A daemon's address as given to {@code --target}: {@code host:port} (an IPv6 host may be bracketed), or
 * {@code unix:///absolute/path} / {@code unix:relative/path} for its Unix domain socket ({@code serve --uds}).
 *
 * @param socket the socket's path for a {@code unix:} target, else null (and host, port are set)
 */
public record Target(String host, int port, String socket) {

    static final String DEFAULT = "127.0.0.1:7700";
    static final String UNIX = "unix:";

    public Target(String host, int port) {
        this(host, port, null);
    }

    /** Parses a target (port 0..65535: 0 is "any free port" for serve); INVALID names the text. */
    public static Target parse(String text) {
        if (text.startsWith(UNIX)) {
            String path = text.startsWith(UNIX + "//") ? text.substring(UNIX.length() + 2) : text.substring(UNIX.length());
            if (path.isEmpty() || (text.startsWith(UNIX + "//") && !path.startsWith("/"))) {
                throw new IllegalArgumentException("--target: \"" + text + "\" (expected: unix:///absolute/path or "
                        + "unix:relative/path)");
            }
            return new Target(null, -1, path);
        }
        int colon = text.lastIndexOf(':');
        if (colon <= 0 || colon == text.length() - 1) {
            throw new IllegalArgumentException("--target: \"" + text + "\" (expected: host:port, e.g. " + DEFAULT
                    + ", or unix:///path)");
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
        return new Target(host, port, null);
    }

    /** {@link #parse}, for a daemon to connect to: port 0 is refused. */
    public static Target parseRemote(String text) {
        Target t = parse(text);
        if (!t.isUnix() && t.port() == 0) {
            throw new IllegalArgumentException("--target: \"" + text + "\" (expected: a port 1..65535 after the colon)");
        }
        return t;
    }

    /** {@link #parse}, for {@code serve} to listen on: TCP only (the Unix socket is {@code --uds}). */
    public static Target parseListen(String text) {
        Target t = parse(text);
        if (t.isUnix()) {
            throw new IllegalArgumentException("--target: \"" + text + "\" (expected: host:port to listen on; "
                    + "for a Unix domain socket use --uds PATH)");
        }
        return t;
    }

    public boolean isUnix() {
        return socket != null;
    }

    /** The gRPC target string: {@code host:port}, or {@code unix:///path} (relative paths made absolute). */
    @Override
    public String toString() {
        if (isUnix()) {
            return "unix://" + java.nio.file.Path.of(socket).toAbsolutePath();
        }
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }
}
