package dev.arrayd.devices.cuda;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/**
 * The content hash a compiled module is cached under: SHA-256 over the exact text NVRTC compiles, its
 * options and the target architecture, each length-prefixed so that no two different inputs run
 * together into the same bytes. Anything that changes the PTX changes the key.
 */
record ModuleKey(String hex) {

    static ModuleKey of(String unit, List<String> options, String arch) {
        MessageDigest sha;
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JDK", e);
        }
        update(sha, "arrayd-cuda-module-v1");
        update(sha, unit);
        update(sha, Integer.toString(options.size()));
        for (String option : options) {
            update(sha, option);
        }
        update(sha, arch);
        return new ModuleKey(HexFormat.of().formatHex(sha.digest()));
    }

    private static void update(MessageDigest sha, String part) {
        byte[] bytes = part.getBytes(StandardCharsets.UTF_8);
        sha.update(ByteArray.ofInt(bytes.length));
        sha.update(bytes);
    }

    private static final class ByteArray {
        static byte[] ofInt(int v) {
            return new byte[] {(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v};
        }
    }

    @Override
    public String toString() {
        return hex.substring(0, 16);
    }
}
