package dev.arrayd.server.auth;

import dev.arrayd.server.Clock;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The token file as the interceptor sees it, reloaded when it changes. A change is noticed by the
 * file's modification time and size, checked at most once per {@link #CHECK_INTERVAL_NANOS} by the
 * call that finds the interval over (one {@code stat} a second, not one per call; no watcher thread,
 * which would also miss files replaced through symlinks, as Kubernetes secrets are). A file that
 * fails to parse is logged and the previous contents stay in force: a typo must not lock everyone out.
 */
public final class TokenStore {

    private static final Logger log = LoggerFactory.getLogger(TokenStore.class);

    public static final long CHECK_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

    private record Loaded(TokenFile file, long modifiedMillis, long size) {}

    private final Path path;
    private final Quotas defaults;
    private final Clock clock;
    private final AtomicBoolean checking = new AtomicBoolean();
    private volatile Loaded loaded;
    private volatile long nextCheckNanos;

    /** Reads the file now: a daemon must not start with a token file it cannot read. */
    public TokenStore(Path path, Quotas defaults, Clock clock) throws IOException {
        this.path = path;
        this.defaults = defaults;
        this.clock = clock;
        this.loaded = load();
        this.nextCheckNanos = clock.nanoTime() + CHECK_INTERVAL_NANOS;
        log.info("auth tokens from {}: {} tokens, {} certificate names", path, loaded.file().tokens().size(),
                loaded.file().certificates().size());
    }

    /** The tenant of a bearer token, or null. */
    public Tenant byToken(String token) {
        return current().tokens().get(token);
    }

    /** The tenant mapped to a client certificate's subject CN, or null. */
    public Tenant byCertificate(String commonName) {
        return current().certificates().get(commonName);
    }

    TokenFile current() {
        long now = clock.nanoTime();
        if (now - nextCheckNanos >= 0 && checking.compareAndSet(false, true)) {
            try {
                nextCheckNanos = now + CHECK_INTERVAL_NANOS;
                reloadIfChanged();
            } finally {
                checking.set(false);
            }
        }
        return loaded.file();
    }

    /** Re-reads the file if its modification time or size changed; returns whether it did. */
    public boolean reloadIfChanged() {
        try {
            BasicFileAttributes a = Files.readAttributes(path, BasicFileAttributes.class);
            Loaded l = loaded;
            if (a.lastModifiedTime().toMillis() == l.modifiedMillis() && a.size() == l.size()) {
                return false;
            }
            loaded = load();
            log.info("auth tokens reloaded from {}: {} tokens, {} certificate names", path,
                    loaded.file().tokens().size(), loaded.file().certificates().size());
            return true;
        } catch (IOException | IllegalArgumentException e) {
            log.warn("auth tokens: cannot reload {} ({}); keeping the previous tokens", path, e.getMessage());
            return false;
        }
    }

    private Loaded load() throws IOException {
        BasicFileAttributes a = Files.readAttributes(path, BasicFileAttributes.class);
        return new Loaded(TokenFile.read(path, defaults), a.lastModifiedTime().toMillis(), a.size());
    }
}
