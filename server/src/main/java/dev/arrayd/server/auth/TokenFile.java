package dev.arrayd.server.auth;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code --auth-tokens} file: one credential per line, blank lines and {@code #} comments ignored.
 *
 * <pre>
 * # credential                       tenant  settings (all optional)
 * 3b6f0c9e2d7a41f8a05c6e1d9b2f7a44   alice   weight=3 memory=1GiB inflight=10000 streams=16 compile-seconds=30 message=16MiB
 * 8d1e77c2b9a04a6f93e0d5c4b1a2f6e8   bob
 * cert:worker-7                      bob     # a client certificate whose subject CN is worker-7 (mutual TLS)
 * </pre>
 *
 * A credential is a bearer token (at least 16 characters, no spaces) or {@code cert:<CN>}. Settings
 * not given take the {@code tenant-quotas} defaults. The same tenant may appear on several lines (several
 * tokens); its settings must then agree, since a tenant has one set of quotas.
 *
 * @param tokens       bearer token → tenant
 * @param certificates client certificate subject CN → tenant
 */
public record TokenFile(Map<String, Tenant> tokens, Map<String, Tenant> certificates) {

    public static final int MIN_TOKEN_CHARS = 16;
    static final String CERT_PREFIX = "cert:";

    public TokenFile {
        tokens = Map.copyOf(tokens);
        certificates = Map.copyOf(certificates);
    }

    public static TokenFile read(Path file, Quotas defaults) throws IOException {
        return parse(Files.readAllLines(file), defaults, file.toString());
    }

    /** @throws IllegalArgumentException naming the file, the line and what was expected */
    public static TokenFile parse(List<String> lines, Quotas defaults, String where) {
        Map<String, Tenant> tokens = new HashMap<>();
        Map<String, Tenant> certs = new HashMap<>();
        Map<String, Tenant> tenants = new HashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            int hash = line.indexOf('#');
            if (hash >= 0) {
                line = line.substring(0, hash);
            }
            line = line.strip();
            if (line.isEmpty()) {
                continue;
            }
            String at = where + ":" + (i + 1) + ": ";
            String[] f = line.split("\\s+");
            if (f.length < 2) {
                throw new IllegalArgumentException(at + "expected: <token or cert:CN> <tenant> [key=value ...]");
            }
            int weight = 1;
            Quotas q = defaults;
            try {
                for (int j = 2; j < f.length; j++) {
                    int eq = f[j].indexOf('=');
                    if (eq <= 0) {
                        throw new IllegalArgumentException("\"" + f[j] + "\" (expected key=value)");
                    }
                    String k = f[j].substring(0, eq);
                    String v = f[j].substring(eq + 1);
                    if (k.equals("weight")) {
                        weight = Integer.parseInt(v);
                    } else {
                        q = q.with(k, v);
                    }
                }
                Tenant t = new Tenant(f[1], weight, q);
                Tenant before = tenants.putIfAbsent(t.name(), t);
                if (before != null && !before.equals(t)) {
                    throw new IllegalArgumentException("tenant " + t.name() + " has other settings on an earlier "
                            + "line (a tenant has one weight and one set of quotas)");
                }
                String cred = f[0];
                if (cred.startsWith(CERT_PREFIX)) {
                    String cn = cred.substring(CERT_PREFIX.length());
                    if (cn.isEmpty() || certs.put(cn, t) != null) {
                        throw new IllegalArgumentException("\"" + cred + "\" (empty or repeated certificate name)");
                    }
                } else {
                    if (cred.length() < MIN_TOKEN_CHARS) {
                        throw new IllegalArgumentException("a token of " + cred.length() + " characters (expected: at "
                                + "least " + MIN_TOKEN_CHARS + ", e.g. from `openssl rand -hex 16`)");
                    }
                    if (tokens.put(cred, t) != null) {
                        throw new IllegalArgumentException("a token repeated from an earlier line");
                    }
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(at + "weight: not an integer");
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(at + e.getMessage());
            }
        }
        return new TokenFile(tokens, certs);
    }
}
