package dev.arrayd.devices.remote;

import dev.arrayd.client.BufferHandle;
import dev.arrayd.client.BufferOptions;
import dev.arrayd.client.CommandOptions;
import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.DType;
import dev.arrayd.devices.api.Device;
import dev.arrayd.devices.api.DeviceId;
import dev.arrayd.devices.api.DeviceInfo;
import dev.arrayd.devices.api.Dialect;
import dev.arrayd.devices.api.ErrorCode;
import dev.arrayd.devices.api.MemRef;
import dev.arrayd.devices.api.NativeStream;
import dev.arrayd.devices.api.support.GuardedBy;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A device of a peer daemon, presented as this daemon's own ({@code <peer>/<backend>:<n>}). Each slab is a byte
 * buffer in this daemon's session on the peer, made on the peer's device; a {@link MemRef} is a byte range of it,
 * which commands pass to the peer as such (launch arguments as byte ranges). Slabs live as long as the session:
 * when the link to the peer is lost, they are lost with it, and commands on them fail with DATA_LOSS.
 */
final class RemoteDevice implements Device {

    /**
     * A slab: a byte buffer made on the peer through connection {@code generation}; made again in the current
     * connection when that one was lost, with everything it held {@link LostRanges lost}.
     */
    static final class Slab {
        final int poolId;
        final long bytes;
        @GuardedBy("this")
        int generation;
        @GuardedBy("this")
        BufferHandle buffer;
        @GuardedBy("this")
        final LostRanges lost = new LostRanges();
        /** A read-only capability of {@link #buffer}, for other peers to fetch from it; null until asked for. */
        @GuardedBy("this")
        String capability;

        Slab(int poolId, int generation, BufferHandle buffer, long bytes) {
            this.poolId = poolId;
            this.generation = generation;
            this.buffer = buffer;
            this.bytes = bytes;
        }
    }

    private final PeerLink link;
    private final DeviceId id;
    private final String peerDevice;
    private final DeviceInfo info;
    private final Map<Integer, Slab> slabs = new ConcurrentHashMap<>();

    RemoteDevice(PeerLink link, dev.arrayd.client.DeviceInfo peer) {
        this.link = link;
        this.peerDevice = peer.id();
        this.id = DeviceId.parse(peer.id()).onPeer(link.name());
        Set<DType> dtypes = EnumSet.noneOf(DType.class);
        peer.dtypes().forEach(t -> dtypes.add(DType.valueOf(t.name())));
        Set<Dialect> dialects = EnumSet.noneOf(Dialect.class);
        peer.dialects().forEach(d -> dialects.add(Dialect.valueOf(d.name())));
        this.info = new DeviceInfo(id, peer.name() + " on " + link.name(), peer.memoryBudgetBytes(), peer.computeUnits(),
                peer.maxWorkGroupSize(), peer.maxWorkItemSizes(), peer.localMemoryBytes(), peer.baseAlignmentBytes(),
                dtypes, peer.suggestedStreams(), false, dialects, peer.maxGridDims());
    }

    PeerLink link() {
        return link;
    }

    /** The peer's own dispatch depth for this device (its default): a command waits there while one runs. */
    @Override
    public int commandsInTransit() {
        return Math.max(2 * Math.max(1, info.suggestedStreams()), Math.max(1, info.computeUnits()));
    }

    /** The device's id on the peer ({@code cuda:0}). */
    String peerDevice() {
        return peerDevice;
    }

    @Override
    public DeviceId id() {
        return id;
    }

    @Override
    public DeviceInfo info() {
        return info;
    }

    @Override
    public String backend() {
        return RemoteBackend.NAME;
    }

    /** The link's measured rate: data from this daemon's host crosses the network. */
    @Override
    public double hostTransferNanosPerByte() {
        return link.nanosPerByte();
    }

    /** Within the peer: its own figure (NaN); from another peer: across the network, as the link measured. */
    @Override
    public double copyNanosPerByte(Device src) {
        return src instanceof RemoteDevice r && r.link != link ? link.nanosPerByte() : Double.NaN;
    }

    @Override
    public boolean isReachable() {
        return link.isUp();
    }

    @Override
    public void watchReachability(Runnable onChange) {
        link.watch(onChange);
    }

    @Override
    public void allocPool(int poolId, long bytes, long alignment) {
        if (slabs.containsKey(poolId)) {
            throw new ArraydException(ErrorCode.ALREADY_EXISTS, id + ": pool " + poolId + " exists");
        }
        if (alignment > info.baseAlignment()) {
            throw ArraydException.invalid(id + ": alignment " + alignment + " (expected: at most " + info.baseAlignment() + ")");
        }
        PeerLink.Connection c = link.connection();
        slabs.put(poolId, new Slab(poolId, c.generation(), create(c, poolId, bytes), bytes));
    }

    private BufferHandle create(PeerLink.Connection c, int poolId, long bytes) {
        return link.await(c, c.session().createBuffer(dev.arrayd.client.DType.U8, new long[] {bytes},
                new BufferOptions(peerDevice, false, "slab " + poolId + " of " + link.options().clientName())));
    }

    @Override
    public void freePool(int poolId) {
        Slab s = slabs.remove(poolId);
        PeerLink.Connection c = link.currentOrNull();
        if (s != null && c != null) {
            synchronized (s) {
                if (c.generation() == s.generation) {
                    c.session().destroy(s.buffer); // not awaited: a lost link frees it with the session
                }
            }
        }
    }

    @Override
    public void memsetZero(MemRef ref) {
        PeerLink.Connection c = link.connection();
        BufferHandle b = buffer(c, ref, false, true);
        link.await(c, c.session().fill(b, 0, ref.offset(), ref.bytes(), CommandOptions.defaults()).future());
    }

    /**
     * The peer buffer of the slab {@code ref} lies in, in connection {@code c}, for a command that {@code reads}
     * and / or {@code writes} the range. A slab of a lost connection is made again in {@code c} first, everything
     * in it lost; reading a lost byte is DATA_LOSS, writing a range makes it valid.
     */
    BufferHandle buffer(PeerLink.Connection c, MemRef ref, boolean reads, boolean writes) {
        Slab s = slabs.get(ref.poolId());
        if (s == null) {
            throw ArraydException.invalid(id + ": " + ref + " (pool " + ref.poolId() + " not allocated)");
        }
        if (ref.offset() + ref.bytes() > s.bytes) {
            throw ArraydException.invalid(id + ": " + ref + " (past the end of the pool's " + s.bytes + " bytes)");
        }
        synchronized (s) {
            if (s.generation != c.generation()) {
                s.buffer = create(c, s.poolId, s.bytes);
                s.generation = c.generation();
                s.capability = null;
                s.lost.loseAll(s.bytes);
            }
            if (reads && s.lost.overlaps(ref.offset(), ref.bytes())) {
                throw new ArraydException(ErrorCode.DATA_LOSS, id + ": " + ref + " was lost: it lived only on peer "
                        + link.name() + ", in a session that ended when the link was lost (data there is not recomputed)");
            }
            if (writes) {
                s.lost.written(ref.offset(), ref.bytes());
            }
            return s.buffer;
        }
    }

    /**
     * A read-only capability of the slab {@code ref} lies in (shared once per slab and connection), for another
     * peer to fetch {@code ref} from; the range is checked as read first.
     */
    String capability(PeerLink.Connection c, MemRef ref) {
        BufferHandle b = buffer(c, ref, true, false);
        Slab s = slabs.get(ref.poolId());
        synchronized (s) {
            if (s.capability == null) {
                var share = dev.arrayd.proto.v1.SharingServiceGrpc.newFutureStub(c.channel()).shareBuffer(
                        dev.arrayd.proto.v1.ShareBufferRequest.newBuilder().setSession(c.session().id())
                                .setBuffer(b.id()).setReadOnly(true).build());
                s.capability = link.await(c, PeerReads.toCompletable(share)).getCapability();
            }
            return s.capability;
        }
    }

    /**
     * Any peer's device: a device of the same peer copies on the peer; a device of another peer is fetched
     * from directly by this device's peer ({@code PeerService.Fetch}), never through this daemon.
     */
    @Override
    public boolean canCopyFrom(Device src) {
        return src instanceof RemoteDevice;
    }

    @Override
    public NativeStream newStream(String name) {
        return new RemoteStream(this, name);
    }

    @Override
    public void close() {
        for (Integer pool : slabs.keySet()) {
            freePool(pool);
        }
    }

    @Override
    public String toString() {
        return id.toString();
    }
}
