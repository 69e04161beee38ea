package dev.arrayd.client;

import dev.arrayd.proto.v1.Command;
import dev.arrayd.proto.v1.Download;
import dev.arrayd.proto.v1.Upload;
import java.util.concurrent.CompletableFuture;

/**
 * A session's shared-memory regions ({@link Session#createRegion}): made by the daemon, mapped here through the
 * descriptor it hands over on its Unix socket, destroyed with their {@link MappedRegion}; and the uploads and
 * downloads that name a slice of one instead of carrying bytes.
 */
final class SessionRegions {

    private final SessionImpl session;

    SessionRegions(SessionImpl session) {
        this.session = session;
    }

    CompletableFuture<MappedRegion> create(long bytes) {
        session.checkOpen();
        if (bytes <= 0) {
            throw new IllegalArgumentException("bytes: " + bytes + " (expected: > 0)");
        }
        var req = dev.arrayd.proto.v1.CreateRegionRequest.newBuilder().setSession(session.id()).setSizeBytes(bytes).build();
        return FutureObserver.call(req, session.stubs().regions()::createRegion, r -> r).thenApplyAsync(r -> {
                    // off the transport thread: the claim is a blocking round trip on another socket
                    java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared();
                    try {
                        var segment = RegionClaim.map(java.nio.file.Path.of(r.getDescriptorSocket()), r.getClaim(),
                                r.getSizeBytes(), arena);
                        return new MappedRegion(r.getRegion(), r.getSizeBytes(), arena, segment,
                                () -> destroyRegion(r.getRegion()));
                    } catch (java.io.IOException | RuntimeException e) {
                        arena.close();
                        destroyRegion(r.getRegion());
                        throw new java.util.concurrent.CompletionException(e);
                    }
                });
    }

    private void destroyRegion(long region) {
        if (!session.isClosing()) { // a closed session has freed its regions
            session.orderedUnary(dev.arrayd.proto.v1.DestroyRegionRequest.newBuilder().setSession(session.id()).setRegion(region).build(),
                    session.stubs().regions()::destroyRegion, r -> null);
        }
    }

    Event upload(BufferHandle buffer, long bufferOffset, MappedRegion region, long regionOffset, long bytes,
            CommandOptions options) {
        session.checkOpen();
        BufferChecks.range(buffer, "bufferOffset", bufferOffset, "bytes", bytes, options.wholePadded());
        checkRegion(region, regionOffset, bytes);
        Command.Builder cmd = Command.newBuilder().setUpload(Upload.newBuilder()
                .setBuffer(buffer.id())
                .setOffsetBytes(bufferOffset)
                .setWholePadded(options.wholePadded())
                .setFromRegion(dev.arrayd.proto.v1.RegionSlice.newBuilder().setRegion(region.id())
                        .setOffsetBytes(regionOffset).setSizeBytes(bytes)));
        return session.submit(cmd, options);
    }

    Event download(BufferHandle buffer, long bufferOffset, long sizeBytes, MappedRegion region, long regionOffset,
            CommandOptions options) {
        session.checkOpen();
        BufferChecks.range(buffer, "bufferOffset", bufferOffset, "sizeBytes", sizeBytes, options.wholePadded());
        checkRegion(region, regionOffset, sizeBytes);
        Command.Builder cmd = Command.newBuilder().setDownload(Download.newBuilder()
                .setBuffer(buffer.id())
                .setOffsetBytes(bufferOffset)
                .setWholePadded(options.wholePadded())
                .setSizeBytes(sizeBytes)
                .setIntoRegion(dev.arrayd.proto.v1.RegionSlice.newBuilder().setRegion(region.id())
                        .setOffsetBytes(regionOffset)));
        return session.submit(cmd, options);
    }

    private static void checkRegion(MappedRegion region, long offset, long bytes) {
        if (offset < 0 || bytes < 0 || offset > region.size() || bytes > region.size() - offset) {
            throw new IllegalArgumentException("region: offset " + offset + ", " + bytes + " bytes (expected: inside "
                    + region + ")");
        }
    }

    /** The process wrote the region bytes {@code buffer} lives in: they become its current data. */
    Event hostWritten(BufferHandle buffer, CommandOptions options) {
        session.checkOpen();
        Command.Builder cmd = Command.newBuilder().setHostWritten(
                dev.arrayd.proto.v1.HostWritten.newBuilder().setBuffer(buffer.id()));
        return session.submit(cmd, options);
    }
}
