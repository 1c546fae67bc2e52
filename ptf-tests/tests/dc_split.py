"""DC split: SN numbering per user and exact batch patterns.

Run: make ptf PTF_TESTS=dc_split   (all: make ptf)
"""

from splitter_test import LEG_A, LEG_B, SERVER, SplitterTest

from controlplane.pdcp import dc_frame


class SnPerUserTest(SplitterTest):
    """Two DC users have independent SN spaces, each starting at 0."""

    def runTest(self):
        self.add_user("10.0.0.2", batch=1, ratio="1:0")  # everything on leg A
        self.add_user("10.0.0.3", batch=1, ratio="0:1")  # everything on leg B
        for i in range(6):
            for addr, port in (("10.0.0.2", LEG_A), ("10.0.0.3", LEG_B)):
                pkt = self.udp_packet(addr, seq=i)
                self.send(SERVER, pkt)
                self.expect(port, dc_frame(pkt, sn=i))
        self.verify_no_other_packets()


class BatchPatternTest(SplitterTest):
    """B=10, k=7: seven packets on leg A, then three on leg B, repeating; SN 0, 1, 2, ..."""

    def runTest(self):
        self.add_user("10.0.0.2", batch=10, ratio="7:3")
        for i in range(25):
            pkt = self.udp_packet("10.0.0.2", seq=i)
            self.send(SERVER, pkt)
            self.expect(LEG_A if i % 10 < 7 else LEG_B, dc_frame(pkt, sn=i))
        self.verify_no_other_packets()


class AllOnLegATest(SplitterTest):
    """k=B sends every packet to leg A."""

    def runTest(self):
        self.add_user("10.0.0.2", batch=4, ratio="100%")
        for i in range(9):
            pkt = self.udp_packet("10.0.0.2", seq=i)
            self.send(SERVER, pkt)
            self.expect(LEG_A, dc_frame(pkt, sn=i))
        self.verify_no_other_packets()


class AllOnLegBTest(SplitterTest):
    """k=0 sends every packet to leg B."""

    def runTest(self):
        self.add_user("10.0.0.2", batch=4, ratio="0:4")
        for i in range(9):
            pkt = self.udp_packet("10.0.0.2", seq=i)
            self.send(SERVER, pkt)
            self.expect(LEG_B, dc_frame(pkt, sn=i))
        self.verify_no_other_packets()


class SwappedLegsTest(SplitterTest):
    """leg_a=2, leg_b=1: the first k packets of a batch go to port 2."""

    def runTest(self):
        self.add_user("10.0.0.2", batch=3, ratio="2:1", leg_a=LEG_B, leg_b=LEG_A)
        for i in range(6):
            pkt = self.udp_packet("10.0.0.2", seq=i)
            self.send(SERVER, pkt)
            self.expect(LEG_B if i % 3 < 2 else LEG_A, dc_frame(pkt, sn=i))
        self.verify_no_other_packets()


class Ipv6UserTest(SplitterTest):
    """An IPv6 DC user is split and numbered; the inner ethertype is 0x86DD."""

    def runTest(self):
        self.add_user("2001:db8::2", batch=4, ratio="1:1")
        for i in range(8):
            pkt = self.udp_packet("2001:db8::2", seq=i)
            self.send(SERVER, pkt)
            frame = self.expect(LEG_A if i % 4 < 2 else LEG_B, dc_frame(pkt, sn=i))
            self.assertEqual(frame[17:19], b"\x86\xdd")
        self.verify_no_other_packets()


class TcpDownlinkTest(SplitterTest):
    """TCP downlink of a DC user is numbered like UDP (the L4 protocol does not matter)."""

    def runTest(self):
        from scapy.layers.inet import IP, TCP
        from scapy.layers.l2 import Ether

        self.add_user("10.0.0.2", batch=2, ratio="1:1")
        for i in range(4):
            pkt = (
                Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:fe")
                / IP(src="10.0.0.1", dst="10.0.0.2")
                / TCP(sport=80, dport=5555, seq=i)
                / bytes(60)
            )
            self.send(SERVER, pkt)
            self.expect(LEG_A if i % 2 == 0 else LEG_B, dc_frame(pkt, sn=i))
        self.verify_no_other_packets()
