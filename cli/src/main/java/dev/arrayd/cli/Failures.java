package dev.arrayd.cli;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;

/** Turns a failed call into one clear line on stderr and an exit code. */
final class Failures {

    private Failures() {}

    static int report(String command, String target, Throwable t) {
        Status s = Status.fromThrowable(t);
        if (s.getCode() == Status.Code.UNAVAILABLE) {
            System.err.println("arrayd " + command + ": cannot reach a daemon at " + target
                    + " (is `bin/arrayd serve` running? " + s.getDescription() + ")");
        } else if (t instanceof StatusRuntimeException || s.getCode() != Status.Code.UNKNOWN) {
            System.err.println("arrayd " + command + ": " + s.getCode() + ": " + s.getDescription());
        } else {
            System.err.println("arrayd " + command + ": " + t);
        }
        return 1;
    }
}
