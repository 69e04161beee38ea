package dev.arrayd.server.auth;

/**
 * Who a call acts for: a name from the token file (or a client certificate), a fair-share weight
 * and quotas. Every session belongs to exactly one tenant; without authentication that is
 * {@code "default"}.
 *
 * @param name   the tenant's name (letters, digits, {@code . _ -}; at most 64 characters)
 * @param weight its share of device time relative to other tenants (default 1)
 */
public record Tenant(String name, int weight, Quotas quotas) {

    public static final String DEFAULT_NAME = "default";

    public Tenant {
        if (!name.matches("[A-Za-z0-9._-]{1,64}")) {
            throw new IllegalArgumentException("tenant \"" + name + "\" (expected: 1 to 64 of A-Z a-z 0-9 . _ -)");
        }
        if (weight < 1 || weight > 1_000_000) {
            throw new IllegalArgumentException("weight=" + weight + " (expected: 1..1000000)");
        }
    }

    public static Tenant defaultTenant(Quotas quotas) {
        return new Tenant(DEFAULT_NAME, 1, quotas);
    }
}
