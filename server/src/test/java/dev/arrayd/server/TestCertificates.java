package dev.arrayd.server;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.Key;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * (Public for the process tests of integration-tests.) Throwaway self-signed certificates made by the JDK's keytool in a temp directory at test time (no
 * private key is ever committed): {@code server} (CN=localhost, SAN 127.0.0.1 and localhost) and one
 * per client (CN = its name). Each certificate is its own trust anchor: the client trusts
 * {@code server.pem}, a mutual-TLS server trusts the client's PEM as its "CA". Two keytool runs per
 * certificate, all certificates in parallel (each run is a JVM start).
 */
public final class TestCertificates {

    private static final String PASS = "changeit";

    final Path dir;

    public TestCertificates(Path dir, String... clients) throws Exception {
        this.dir = dir;
        List<java.util.concurrent.Callable<Void>> jobs = new ArrayList<>();
        jobs.add(() -> issue("server", "CN=localhost", "SAN=ip:127.0.0.1,dns:localhost"));
        for (String c : clients) {
            jobs.add(() -> issue(c, "CN=" + c, null));
        }
        try (var pool = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
            for (var f : pool.invokeAll(jobs)) {
                f.get();
            }
        }
    }

    public Path pem(String name) {
        return dir.resolve(name + ".pem");
    }

    public Path key(String name) {
        return dir.resolve(name + ".key");
    }

    private Void issue(String name, String dname, String san) throws Exception {
        List<String> gen = new ArrayList<>(List.of("-genkeypair", "-alias", name, "-keyalg", "EC", "-groupname",
                "secp256r1", "-dname", dname, "-validity", "2", "-keystore", p12(name)));
        if (san != null) {
            gen.add("-ext");
            gen.add(san);
        }
        keytool(gen.toArray(String[]::new));
        keytool("-exportcert", "-rfc", "-alias", name, "-keystore", p12(name), "-file", pem(name).toString());
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(Path.of(p12(name)))) {
            ks.load(in, PASS.toCharArray());
        }
        Key k = ks.getKey(name, PASS.toCharArray());
        Files.writeString(key(name), "-----BEGIN PRIVATE KEY-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(k.getEncoded()) + "\n-----END PRIVATE KEY-----\n");
        return null;
    }

    private String p12(String name) {
        return dir.resolve(name + ".p12").toString();
    }

    private void keytool(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        cmd.addAll(List.of("-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC", "-J-Xshare:auto"));
        cmd.addAll(List.of(args));
        cmd.addAll(List.of("-storepass", PASS, "-keypass", PASS, "-storetype", "PKCS12", "-noprompt"));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("keytool " + String.join(" ", args) + ": " + out);
        }
    }
}
