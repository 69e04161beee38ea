package dev.arrayd.devices.api;

/** A kernel failed to compile; {@link #diagnostics()} is the compiler's output, mapped to the user's lines. */
public final class CompileException extends ArraydException {

    private final String diagnostics;

    public CompileException(String summary, String diagnostics) {
        super(ErrorCode.INVALID_ARGUMENT, summary + (diagnostics.isBlank() ? "" : ":\n" + diagnostics));
        this.diagnostics = diagnostics;
    }

    public String diagnostics() {
        return diagnostics;
    }
}
