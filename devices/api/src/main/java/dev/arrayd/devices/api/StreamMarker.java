package dev.arrayd.devices.api;

/**
 * A point in one {@link NativeStream}'s order that other streams of the same backend can wait for
 * without the host in between (OCANNL's device-side events; a {@code CUevent}, a {@code cl_event}, a
 * latch between CPU stream workers). Made by {@link NativeStream#submitMarked}; waited for by
 * {@link NativeStream#submitAfter}.
 *
 * <p>A marker is reached when its command has finished on the device, whether it succeeded or not:
 * failure travels on the host side, through the command's callback. A marker is always reached
 * eventually (also when its command was refused), so a stream waiting on it never hangs.
 */
public interface StreamMarker {

    /** Whether the marked command has finished on the device. */
    boolean isReached();
}
