package dev.arrayd.benchmarks;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.locks.LockSupport;

/**
 * A TCP proxy on loopback that holds every byte for a set time in each direction before passing it on: a network's
 * latency, without its bandwidth limits, for a benchmark that has only loopback. Each read is forwarded as one
 * piece once {@link #oneWayMicros()} have passed since it arrived, in order: at least that long, since the thread that
 * forwards sleeps until then and is woken by the one that read (a crossing costs those hand-offs and the timer's
 * slack on top of the delay). The delay can change between measurements.
 */
final class DelayProxy implements AutoCloseable {

    private final ServerSocketChannel listener;
    private final InetSocketAddress target;
    private volatile long oneWayNanos;
    private final List<SocketChannel> open = new ArrayList<>();
    private volatile boolean closed;

    /** Listens on 127.0.0.1, any free port, and forwards every connection to {@code targetPort} there. */
    DelayProxy(int targetPort) throws IOException {
        this.target = new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort);
        this.listener = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        Thread.ofPlatform().daemon().name("delay-proxy-accept").start(this::accept);
    }

    int port() {
        return listener.socket().getLocalPort();
    }

    void oneWayMicros(long micros) {
        oneWayNanos = micros * 1000;
    }

    long oneWayMicros() {
        return oneWayNanos / 1000;
    }

    private void accept() {
        while (!closed) {
            try {
                SocketChannel in = listener.accept();
                SocketChannel out = SocketChannel.open(target);
                in.socket().setTcpNoDelay(true);
                out.socket().setTcpNoDelay(true);
                synchronized (open) {
                    open.add(in);
                    open.add(out);
                }
                pump(in, out);
                pump(out, in);
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    /** One direction: a reader that stamps what it reads, a writer that passes it on when due. */
    private void pump(SocketChannel from, SocketChannel to) {
        record Piece(long dueNanos, ByteBuffer bytes) {}
        LinkedBlockingQueue<Piece> queue = new LinkedBlockingQueue<>();
        Piece end = new Piece(0, null);
        Thread.ofPlatform().daemon().name("delay-proxy-read").start(() -> {
            try {
                while (true) {
                    ByteBuffer b = ByteBuffer.allocate(64 << 10);
                    if (from.read(b) < 0) {
                        break;
                    }
                    queue.add(new Piece(System.nanoTime() + oneWayNanos, b.flip()));
                }
            } catch (IOException e) {
                // closed
            }
            queue.add(end);
        });
        Thread.ofPlatform().daemon().name("delay-proxy-write").start(() -> {
            try {
                while (true) {
                    Piece p = queue.take();
                    if (p == end) {
                        break;
                    }
                    for (long left = p.dueNanos() - System.nanoTime(); left > 0; left = p.dueNanos() - System.nanoTime()) {
                        LockSupport.parkNanos(left);
                    }
                    while (p.bytes().hasRemaining()) {
                        to.write(p.bytes());
                    }
                }
                to.shutdownOutput();
            } catch (IOException | InterruptedException e) {
                // closed
            }
        });
    }

    @Override
    public void close() throws IOException {
        closed = true;
        listener.close();
        synchronized (open) {
            for (SocketChannel c : open) {
                c.close();
            }
        }
    }
}
