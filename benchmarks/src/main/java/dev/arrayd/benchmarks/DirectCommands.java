package dev.arrayd.benchmarks;

import dev.arrayd.devices.api.support.CommandFuture;
import dev.arrayd.devices.api.DeviceCommand;
import dev.arrayd.devices.api.NativeStream;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/** Commands run straight on a backend's stream in this process (no daemon), for the in-process scenarios. */
final class DirectCommands {

    private DirectCommands() {}

    /** Runs one command, waits for it (at most 120 s) and returns its device nanoseconds. */
    static long run(NativeStream s, DeviceCommand command) throws Exception {
        CommandFuture done = new CommandFuture();
        s.submit(command, done);
        return done.get(120, TimeUnit.SECONDS);
    }

    /** The median of {@code xs} (the upper one of an even count). */
    static double median(long[] xs) {
        long[] s = xs.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }
}
