package dev.arrayd.devices.api.support;

import dev.arrayd.devices.api.CommandCallback;
import dev.arrayd.devices.api.DeviceCommand;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Unbounded lock-free multi-producer single-consumer FIFO (Vyukov's intrusive MPSC queue). A
 * producer swaps itself in as the tail and then links the old tail to it; the consumer follows the
 * links. One allocation per offer (the node) and no locks on either side.
 *
 * <pre>
 *  head (stub, consumed) ──next──▶ n1 ──next──▶ n2 ◀── tail
 * </pre>
 *
 * <p>Shared by the backends' stream workers (a backend may not depend on another backend).
 */
public final class CommandQueue {

    /** A queued command and its callback. */
    public static final class Node {
        private DeviceCommand command;
        private CommandCallback callback;
        volatile Node next;

        Node(DeviceCommand command, CommandCallback callback) {
            this.command = command;
            this.callback = callback;
        }

        public DeviceCommand command() {
            return command;
        }

        public CommandCallback callback() {
            return callback;
        }

        /** Drops the references once taken, so a finished command is not kept alive by the queue. */
        public void release() {
            command = null;
            callback = null;
        }
    }

    private static final VarHandle NEXT;

    static {
        try {
            NEXT = MethodHandles.lookup().findVarHandle(Node.class, "next", Node.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final AtomicReference<Node> tail;
    private Node head; // consumer only

    public CommandQueue() {
        Node stub = new Node(null, null);
        head = stub;
        tail = new AtomicReference<>(stub);
    }

    /** Any thread. */
    public void offer(DeviceCommand command, CommandCallback callback) {
        Node node = new Node(command, callback);
        Node previous = tail.getAndSet(node);
        NEXT.setRelease(previous, node);
    }

    /**
     * Consumer only. The returned node's command and callback are to be read, then the node is
     * forgotten (it is now the stub; {@link #poll()} clears them on the next call).
     */
    public Node poll() {
        Node h = head;
        Node next = (Node) NEXT.getAcquire(h);
        if (next == null) {
            if (tail.get() == h) {
                return null;
            }
            // a producer swapped the tail but has not linked it yet: it will within a few instructions
            while ((next = (Node) NEXT.getAcquire(h)) == null) {
                Thread.onSpinWait();
            }
        }
        h.release();
        head = next;
        return next;
    }

    /** Consumer only: true when nothing is queued, counting offers not yet linked. */
    public boolean isEmpty() {
        return tail.get() == head;
    }
}
