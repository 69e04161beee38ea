package dev.arrayd.devices.remote;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.Backend;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.KernelCompiler;
import dev.arrayd.devices.api.Quote;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The devices of peer daemons ({@code --peers}), presented as this daemon's own and named by peer
 * ({@code gpu-node-1/cuda:0}). This daemon is a client of each peer: one session per peer, whose tenant, quotas and
 * fair share the peer applies as to any client. A probe checks every link each {@link RemoteOptions#probeInterval()}
 * and connects lost ones again; a peer's devices are unreachable (health NOT_SERVING, commands UNAVAILABLE) while
 * its link is down. A peer whose devices are not known yet (unreachable at the start, or a member of a
 * {@code dns:///} set that appeared later) adds them when a probe first reaches it ({@link #onDevicesAdded}).
 */
public final class RemoteBackend implements Backend {

    /** The backend name: the compiler of peers' devices, and their devices' backend in launches and metrics. */
    public static final String NAME = "remote";

    private static final Logger log = LoggerFactory.getLogger(RemoteBackend.class);

    private final RemoteOptions options;
    /** Every peer's link (members of sets that appear later are added). */
    private final List<PeerLink> links = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** Links whose devices are known (listed at the start, or joined later). */
    private final java.util.Set<PeerLink> listed = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** Set by {@link #openDevices}: see {@link #awaitsPeers()}. */
    private volatile boolean awaitsPeers;
    /** Told about devices of peers that join after the start; null until the server asks. */
    private volatile java.util.function.Consumer<List<Device>> added;
    private final RemoteCompiler compiler;
    private final List<RemoteDevice> devices = new java.util.concurrent.CopyOnWriteArrayList<>();
    private ScheduledExecutorService probe;
    private ScheduledExecutorService resolver;
    /** The peers' channels' transport threads: not the server's (see {@link PeerLink}). */
    private final EventLoopGroup eventLoop = new NioEventLoopGroup(2,
            Thread.ofPlatform().daemon().name("arrayd-peer-io-", 0).factory());
    /** Reports completions of peers' commands (see {@link PeerLink#completions()}); its threads retire when idle. */
    private final ExecutorService completions = Executors.newCachedThreadPool(
            Thread.ofPlatform().daemon().name("arrayd-peer-completion-", 0).factory());

    /** When opening the devices stops waiting for peers (a {@link System#nanoTime()}). */
    private final long startUntil;

    /** How often the sets are resolved again (their members' addresses change as pods come and go). */
    static final java.time.Duration RESOLVE_INTERVAL = java.time.Duration.ofSeconds(5);

    public RemoteBackend(RemoteOptions options) {
        this.options = options;
        this.startUntil = System.nanoTime() + options.startWait().toNanos();
        for (PeerAddress p : options.peers()) {
            links.add(new PeerLink(p, options, completions, eventLoop));
        }
        for (PeerSet set : options.sets()) {
            for (PeerAddress member : firstMembers(set)) {
                if (member.name().equals(options.self()) || linkNamed(member.name()) != null) {
                    continue; // this daemon itself, or a member also listed by name
                }
                links.add(new PeerLink(member, options, completions, eventLoop));
            }
        }
        this.compiler = new RemoteCompiler(links); // the live list: a module compiles on a later peer at its first launch
    }

    /** The members {@code set} resolves to, trying again each probe interval until the start wait is over. */
    private List<PeerAddress> firstMembers(PeerSet set) {
        while (true) {
            var addresses = set.resolve();
            long left = startUntil - System.nanoTime();
            if (!addresses.isEmpty() || left <= 0) {
                List<PeerAddress> members = set.members(addresses);
                log.info("peer set {}: {}", set, members.isEmpty() ? "no addresses (it adds no devices)" : members);
                return members;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(Math.min(left, options.probeInterval().toNanos()));
        }
    }

    private PeerLink linkNamed(String name) {
        for (PeerLink l : links) {
            if (l.name().equals(name)) {
                return l;
            }
        }
        return null;
    }

    /**
     * Resolves every set again. A member whose name is known at a new address (its pod came back elsewhere) is
     * reached there once its link is down; a name not seen before gets a link, and its devices join at the next
     * probe that reaches it ({@link #joinNewPeers}).
     */
    void resolveSets() {
        for (PeerSet set : options.sets()) {
            for (var address : set.resolve()) {
                String target = set.target(address);
                if (links.stream().anyMatch(l -> l.target().equals(target))) {
                    continue; // a known member where it was (no reverse lookup)
                }
                PeerAddress member = set.member(address);
                PeerLink known = linkNamed(member.name());
                if (member.name().equals(options.self())) {
                    continue;
                }
                if (known != null) {
                    if (known.retarget(member.target())) {
                        log.info("peer {} of {} is now at {}", member.name(), set, member.target());
                    }
                } else {
                    log.info("peer {} ({}) of {} appeared: its devices join when it answers", member.name(),
                            member.target(), set);
                    links.add(new PeerLink(member, options, completions, eventLoop));
                }
            }
        }
    }

    /**
     * Lists the devices of every reachable peer whose devices are not known yet, and hands them to the listener
     * ({@link #onDevicesAdded}); a peer that does not answer is tried again at the next probe.
     */
    void joinNewPeers() {
        java.util.function.Consumer<List<Device>> to = added;
        if (to == null) {
            return;
        }
        for (PeerLink link : links) {
            if (listed.contains(link) || !link.isUp()) {
                continue;
            }
            List<Device> found;
            try {
                found = List.copyOf(open(link, link.devices()));
            } catch (ArraydException e) {
                log.debug("peer {} ({}): its devices are not listed yet: {}", link.name(), link.target(), e.getMessage());
                continue;
            }
            log.info("peer {} ({}) joined with devices {}", link.name(), link.target(),
                    found.stream().map(Device::id).toList());
            if (!found.isEmpty()) {
                to.accept(found);
            }
        }
    }

    /**
     * Whether peers not up at the start may still add devices: one was unreachable (not one that refused this
     * daemon), or a set named no daemon yet. Known once {@link #openDevices} returned.
     */
    public boolean awaitsPeers() {
        return awaitsPeers;
    }

    @Override
    public void onDevicesAdded(java.util.function.Consumer<List<Device>> listener) {
        added = listener;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Optional<String> unavailableReason() {
        return options.hasPeers() ? Optional.empty() : Optional.of("no peers (--peers)");
    }

    /**
     * Connects to every peer and opens all their devices ({@code count} is ignored), waiting up to
     * {@link RemoteOptions#startWait()} for peers that are not up yet. A peer unreachable by then adds no devices
     * now (logged); they join when a probe first reaches it ({@link #joinNewPeers}).
     */
    @Override
    public List<Device> openDevices(int count) {
        // every peer at once, each given until the start wait is over to come up (members of a pool start together)
        List<CompletableFuture<List<dev.arrayd.client.DeviceInfo>>> lists = new ArrayList<>();
        long until = startUntil;
        List<PeerLink> atStart = List.copyOf(links);
        for (PeerLink link : atStart) {
            lists.add(CompletableFuture.supplyAsync(() -> listWhenUp(link, until), completions));
        }
        for (int i = 0; i < atStart.size(); i++) {
            PeerLink link = atStart.get(i);
            try {
                open(link, lists.get(i).join());
            } catch (ArraydException | java.util.concurrent.CompletionException e) {
                Throwable cause = e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
                log.warn("peer {} ({}) adds no devices for now (they join when it answers): {}", link.name(),
                        link.target(), cause.getMessage());
                if (!(cause instanceof ArraydException ae) || ae.code() == ErrorCode.UNAVAILABLE
                        || ae.code() == ErrorCode.DEADLINE_EXCEEDED) {
                    awaitsPeers = true; // not up yet; a peer that refused this daemon does not count
                }
            }
        }
        if (atStart.isEmpty() && !options.sets().isEmpty()) {
            awaitsPeers = true; // the sets named no daemon yet
        }
        probe = Executors.newSingleThreadScheduledExecutor(r -> Thread.ofPlatform().daemon().name("arrayd-peer-probe").unstarted(r));
        long every = options.probeInterval().toMillis();
        probe.scheduleWithFixedDelay(() -> {
            try {
                links.forEach(PeerLink::probe);
                joinNewPeers();
            } catch (RuntimeException e) { // (an exception would end the schedule)
                log.warn("probing the peers failed: {}", e.toString());
            }
        }, every, every, TimeUnit.MILLISECONDS);
        if (!options.sets().isEmpty()) {
            // a thread of its own: a lookup that waits for a slow name server must not hold the links' probes back
            resolver = Executors.newSingleThreadScheduledExecutor(r -> Thread.ofPlatform().daemon()
                    .name("arrayd-peer-resolve").unstarted(r));
            long resolve = RESOLVE_INTERVAL.toMillis();
            resolver.scheduleWithFixedDelay(() -> {
                try {
                    resolveSets();
                } catch (RuntimeException e) { // (an exception would end the schedule)
                    log.warn("resolving the peer sets {} failed: {}", options.sets(), e.toString());
                }
            }, resolve, resolve, TimeUnit.MILLISECONDS);
        }
        return List.copyOf(devices);
    }

    /**
     * Opens the devices {@code link}'s peer lists as its own (not those of its peers), measures the link with the
     * first, and marks the link listed; returns them.
     */
    private List<RemoteDevice> open(PeerLink link, List<dev.arrayd.client.DeviceInfo> infos) {
        List<RemoteDevice> opened = new ArrayList<>();
        String first = null;
        for (var info : infos) {
            if (!info.id().contains("/")) {
                opened.add(new RemoteDevice(link, info));
                first = first == null ? info.id() : first;
            }
        }
        if (first != null) {
            link.measure(first);
        }
        devices.addAll(opened);
        listed.add(link);
        return opened;
    }

    /** The peer's devices, trying again each probe interval until {@code until} (a {@link System#nanoTime()}). */
    private List<dev.arrayd.client.DeviceInfo> listWhenUp(PeerLink link, long until) {
        while (true) {
            try {
                return link.devices();
            } catch (ArraydException e) {
                long left = until - System.nanoTime();
                if (left <= 0 || e.code() != ErrorCode.UNAVAILABLE) {
                    throw e;
                }
                java.util.concurrent.locks.LockSupport.parkNanos(Math.min(left, options.probeInterval().toNanos()));
            }
        }
    }

    /**
     * Receives the chunks of a {@link #fetch}, in order, {@code offset} from the start of the range; runs {@code done}
     * once it no longer needs {@code data} (it may keep it until then: an upload that has not run yet). A sink that
     * throws keeps nothing and never runs {@code done}.
     */
    public interface ChunkSink {
        void accept(long offset, java.nio.ByteBuffer data, Runnable done);
    }

    /**
     * Streams {@code size} bytes from {@code offset} of a buffer on the peer {@code target} names, opened there
     * by {@code capability}, to {@code sink} (what a {@code PeerService.Fetch} of another daemon asks of this
     * one). Completes with the byte count; PERMISSION_DENIED when {@code target} is not one of this daemon's
     * peers, UNAVAILABLE when it is unreachable.
     */
    public CompletableFuture<Long> fetch(String target, String capability, long offset, long size, ChunkSink sink) {
        try {
            return PeerReads.read(link(target), capability, offset, size, sink::accept);
        } catch (ArraydException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Streams {@code bytes} raw bytes from peer {@code target}; completes with the nanoseconds it took. */
    public CompletableFuture<Long> measureLink(String target, long bytes, int chunkBytes) {
        try {
            return PeerReads.measure(link(target), bytes, chunkBytes);
        } catch (ArraydException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private PeerLink link(String target) {
        for (PeerLink l : links) {
            if (l.target().equals(target)) {
                return l;
            }
        }
        throw new ArraydException(ErrorCode.PERMISSION_DENIED, "source_target: " + Quote.string(target)
                + " (not one of this daemon's peers: " + links.stream().map(PeerLink::target).toList() + ")");
    }

    @Override
    public KernelCompiler compiler() {
        return compiler;
    }

    @Override
    public void close() {
        if (probe != null) {
            probe.shutdownNow();
        }
        if (resolver != null) {
            resolver.shutdownNow();
        }
        links.forEach(PeerLink::close);
        completions.shutdown();
        eventLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
}
