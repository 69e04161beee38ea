package dev.arrayd.devices.remote;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.devices.api.DeviceId;
import java.util.List;
import org.junit.jupiter.api.Test;

class PeerAddressTest {

    @Test
    void namedAndUnnamedPeers() {
        assertEquals(new PeerAddress("gpu-1", "10.0.0.7:7700"), PeerAddress.parse(" gpu-1=10.0.0.7:7700 "));
        assertEquals(new PeerAddress("127.0.0.1-7811", "127.0.0.1:7811"), PeerAddress.parse("127.0.0.1:7811"));
        assertEquals("pool-a.svc-7700", PeerAddress.parse("Pool-A.svc:7700").name());
    }

    @Test
    void badPeersAreRefusedWithTheValue() {
        var e = assertThrows(IllegalArgumentException.class, () -> PeerAddress.parse("nohost"));
        assertTrue(e.getMessage().contains("nohost"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> PeerAddress.parse("http://pool.gpu.svc:7700"));
        assertTrue(e.getMessage().contains("dns:///host:port"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> RemoteOptions.parse("dns:///pool", "", "me"));
        assertTrue(e.getMessage().contains("dns:///pool"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> RemoteOptions.parse("dns:///pool:0", "", "me"));
        assertTrue(e.getMessage().contains("pool:0"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> PeerAddress.parse("Bad_Name=h:1"));
        assertTrue(e.getMessage().contains("Bad_Name"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> RemoteOptions.parse("a=h:1,a=h:2", "", "me"));
        assertTrue(e.getMessage().contains("named twice"), e.getMessage());
    }

    @Test
    void aPoolMemberSkipsItsOwnEntry() {
        RemoteOptions o = RemoteOptions.parse("gpu-0=gpu-0.pool:7700,gpu-1=gpu-1.pool:7700", "", "me");
        assertEquals(List.of("gpu-1"), o.without("gpu-0").peers().stream().map(PeerAddress::name).toList());
        assertEquals(o.peers(), o.without("elsewhere").peers());
        assertEquals("elsewhere", o.without("elsewhere").self());
        assertEquals(o, o.without(null));
    }

    @Test
    void setsAreParsedBesideListedPeers() {
        RemoteOptions o = RemoteOptions.parse("a=h:1, dns:///arrayd-pool.gpu.svc.cluster.local:7700", "", "me");
        assertEquals(List.of("a"), o.peers().stream().map(PeerAddress::name).toList());
        assertEquals(List.of(new PeerSet("arrayd-pool.gpu.svc.cluster.local", 7700)), o.sets());
        assertEquals("dns:///arrayd-pool.gpu.svc.cluster.local:7700", o.sets().getFirst().toString());
        assertTrue(RemoteOptions.parse("dns:///p:1", "", "me").hasPeers());
        assertEquals(new PeerSet("::1", 7700), PeerSet.parse("dns:///[::1]:7700"));
    }

    @Test
    void aSetsMembersAreNamedByTheirAddressesNames() throws Exception {
        PeerSet set = new PeerSet("localhost", 7700);
        var loopback = java.net.InetAddress.ofLiteral("127.0.0.1");
        PeerAddress m = set.member(loopback);
        assertEquals("127.0.0.1:7700", m.target());
        assertTrue(DeviceId.isPeerName(m.name()), m.name());
        assertEquals("[0:0:0:0:0:0:0:1]:7700", set.member(java.net.InetAddress.ofLiteral("::1")).target());
    }

    @Test
    void deviceIdsCarryThePeer() {
        DeviceId id = DeviceId.parse("gpu-1/cuda:0");
        assertEquals(new DeviceId("cuda", 0, "gpu-1"), id);
        assertEquals("gpu-1/cuda:0", id.toString());
        assertEquals(DeviceId.parse("cuda:0").onPeer("gpu-1"), id);
        assertThrows(IllegalArgumentException.class, () -> DeviceId.parse("/cuda:0"));
        assertThrows(IllegalArgumentException.class, () -> DeviceId.parse("GPU/cuda:0"));
    }
}
