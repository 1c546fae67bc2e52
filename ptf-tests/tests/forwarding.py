"""SC users, uplink, ARP and MAC rewrite: everything that is not numbered.

Run: make ptf PTF_TESTS=forwarding
"""

from scapy.layers.l2 import Ether
from splitter_test import (
    CLIENT_MAC,
    LEG_A,
    LEG_B,
    SERVER,
    SERVER_IP,
    SERVER_MAC,
    SplitterTest,
)

from controlplane.pdcp import dc_frame


class ScPassthroughTest(SplitterTest):
    """An SC user's downlink leaves its port byte for byte unchanged."""

    def runTest(self):
        self.add_user("10.0.0.4", mode="sc", port=LEG_B)
        self.add_user("10.0.0.3", mode="sc", port=LEG_A)
        for i in range(3):
            pkt = self.udp_packet("10.0.0.4", seq=i)
            self.send(SERVER, pkt)
            self.expect(LEG_B, pkt)
            pkt = self.udp_packet("10.0.0.3", seq=i)
            self.send(SERVER, pkt)
            self.expect(LEG_A, pkt)
        self.verify_no_other_packets()


class UplinkTest(SplitterTest):
    """Frames from either leg go to the server port unchanged, also for a DC user."""

    def runTest(self):
        self.add_user("10.0.0.2", batch=2, ratio="1:1")
        for port in (LEG_A, LEG_B, LEG_A):
            ack = self.tcp_ack("10.0.0.2")
            self.send(port, ack)
            self.expect(SERVER, ack)
        self.verify_no_other_packets()


class UnknownDownlinkDroppedTest(SplitterTest):
    """IP downlink to an address that is no user is dropped (flood_unknown off)."""

    def runTest(self):
        self.send(SERVER, self.udp_packet("10.0.0.99", seq=1))
        self.verify_no_other_packets()


class FloodUnknownTest(SplitterTest):
    """With flood_unknown, non-user downlink reaches both legs unchanged."""

    def runTest(self):
        self.sw.configure_ports(SERVER, LEG_A, LEG_B, flood_unknown=True)
        pkt = self.udp_packet("10.0.0.99", seq=1)
        self.send(SERVER, pkt)
        self.expect(LEG_A, pkt)
        self.expect(LEG_B, pkt)
        self.verify_no_other_packets()


class ArpTest(SplitterTest):
    """ARP from the server is flooded to both legs; ARP from a leg goes to the server."""

    def runTest(self):
        request = self.arp_request(SERVER_MAC, SERVER_IP, "10.0.0.2")
        self.send(SERVER, request)
        self.expect(LEG_A, request)
        self.expect(LEG_B, request)
        reply = self.arp_request(CLIENT_MAC, "10.0.0.2", SERVER_IP)
        self.send(LEG_B, reply)
        self.expect(SERVER, reply)
        self.verify_no_other_packets()


class MacRewriteTest(SplitterTest):
    """Per-egress-port MAC rewrite applies to DC frames, SC frames and uplink."""

    def runTest(self):
        leg_mac, host_mac = "02:00:00:00:0a:01", "02:00:00:00:0a:02"
        srv_side, srv_mac = "02:00:00:00:0b:01", "02:00:00:00:0b:02"
        self.sw.configure_ports(
            SERVER,
            LEG_A,
            LEG_B,
            macs={LEG_A: (leg_mac, host_mac), SERVER: (srv_side, srv_mac), LEG_B: (leg_mac, None)},
        )
        self.add_user("10.0.0.2", batch=1, ratio="1:0")
        self.add_user("10.0.0.4", mode="sc", port=LEG_B)
        pkt = self.udp_packet("10.0.0.2", seq=0)
        self.send(SERVER, pkt)
        rewritten = pkt.copy()
        rewritten[Ether].src, rewritten[Ether].dst = leg_mac, host_mac
        self.expect(LEG_A, dc_frame(rewritten, sn=0))
        sc = self.udp_packet("10.0.0.4", seq=0)
        self.send(SERVER, sc)
        sc_out = sc.copy()
        sc_out[Ether].src = leg_mac  # src only: dst stays what the server chose
        self.expect(LEG_B, sc_out)
        ack = self.tcp_ack("10.0.0.2")
        self.send(LEG_A, ack)
        ack_out = ack.copy()
        ack_out[Ether].src, ack_out[Ether].dst = srv_side, srv_mac
        self.expect(SERVER, ack_out)
        self.verify_no_other_packets()
