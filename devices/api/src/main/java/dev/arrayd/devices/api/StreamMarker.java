package dev.arrayd.devices.api;

/**
 * A point in one {@link NativeStream}'s order that other streams of the same backend can wait for
 * without the host in between (OCANNL's device-side events; a {@code CUevent}, a {@code cl_event}, a
 * latch between CPU stream workers). Taken by {@link NativeStream#mark()} at a stream's current end;
 * waited for by {@link NativeStream#submitAfter}.
 *
 * <p>A marker is reached when every command submitted before it has finished on the device, whether
 * they succeeded or not: failure travels on the host side, through the commands' callbacks. A marker is
 * always reached eventually (also one taken on a closed stream), so a stream waiting on it never hangs.
 */
public interface StreamMarker {

    /** Whether the marked command has finished on the device. */
    boolean isReached();
}
