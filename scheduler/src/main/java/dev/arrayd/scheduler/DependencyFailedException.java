package dev.arrayd.scheduler;

import dev.arrayd.devices.api.ArraydException;

/**
 * A command did not run because an event it waits on (explicitly, or by reading what it wrote)
 * failed. Keeps the root failure's code; the message names the root event, not the whole chain.
 */
public final class DependencyFailedException extends ArraydException {

    private final long rootEvent;
    private final ArraydException root;

    private DependencyFailedException(long rootEvent, ArraydException root) {
        super(root.code(), "waited on event " + rootEvent + ", which failed: " + root.getMessage(), root);
        this.rootEvent = rootEvent;
        this.root = root;
    }

    static DependencyFailedException of(Event failed) {
        ArraydException cause = failed.failure();
        if (cause instanceof DependencyFailedException d) {
            return d;
        }
        return new DependencyFailedException(failed.id(), cause);
    }

    public long rootEvent() {
        return rootEvent;
    }

    public ArraydException root() {
        return root;
    }
}
