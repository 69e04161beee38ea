package dev.arrayd.devices.api.support;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The encoding a content digest is written in: tagged values, each a tag byte and a number (a value, or the
 * length of what follows) as a zigzag varint (seven bits a byte, low bits first, the high bit set on every byte
 * but the last), strings as their UTF-16 code units after their length; all fed to SHA-256 in blocks of a few
 * kilobytes. Varints are self-delimiting, so an encoder that writes every part of a value with a tag of its own
 * and every variable-length part after its length writes no two different values as the same bytes.
 */
public final class DigestWriter {

    private static final MessageDigest PROTOTYPE;

    static {
        try {
            PROTOTYPE = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    private final MessageDigest sha;
    /** Encoded bytes not yet given to {@link #sha}: one update per few kilobytes, not one per value. */
    private final byte[] buf = new byte[4096];
    private int pos;

    public DigestWriter() {
        try {
            sha = (MessageDigest) PROTOTYPE.clone(); // a copy of a fresh one: no provider lookup per digest
        } catch (CloneNotSupportedException e) {
            throw new IllegalStateException("SHA-256 digests can be cloned", e);
        }
    }

    /** One tag byte and {@code value} as a zigzag varint (one to ten bytes). */
    public DigestWriter tag(char tag, long value) {
        if (buf.length - pos < 11) {
            flush();
        }
        buf[pos++] = (byte) tag;
        long v = (value << 1) ^ (value >> 63);
        while ((v & ~0x7fL) != 0) {
            buf[pos++] = (byte) ((v & 0x7f) | 0x80);
            v >>>= 7;
        }
        buf[pos++] = (byte) v;
        return this;
    }

    /** {@code s}'s length under {@code tag}, then its UTF-16 code units; null as tag {@code N}. */
    public DigestWriter text(char tag, String s) {
        if (s == null) {
            return tag('N', 0);
        }
        int n = s.length();
        tag(tag, n);
        for (int i = 0; i < n; i++) {
            if (buf.length - pos < 2) {
                flush();
            }
            char c = s.charAt(i);
            buf[pos] = (byte) (c >>> 8);
            buf[pos + 1] = (byte) c;
            pos += 2;
        }
        return this;
    }

    /** The hex SHA-256 of everything written; the writer is spent. */
    public String hex() {
        flush();
        return HexFormat.of().formatHex(sha.digest());
    }

    private void flush() {
        sha.update(buf, 0, pos);
        pos = 0;
    }
}
