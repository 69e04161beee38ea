package dev.arrayd.cli;

import picocli.CommandLine;

/** Version from the jar manifest (or "dev" when run from classes). */
final class Version implements CommandLine.IVersionProvider {

    @Override
    public String[] getVersion() {
        String v = Version.class.getPackage().getImplementationVersion();
        return new String[] {"arrayd " + (v == null ? "dev" : v)};
    }
}
