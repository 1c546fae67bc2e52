"""DC duplication through a P4Runtime multicast group.

Run: make ptf PTF_TESTS=dc_dup
"""

from splitter_test import LEG_A, LEG_B, SERVER, SplitterTest

from controlplane.pdcp import dc_frame


class DuplicationTest(SplitterTest):
    """Both legs get every packet with the same SN and identical bytes."""

    def runTest(self):
        self.add_user("10.0.0.2", mode="dc-dup", batch=10, ratio="7:3")
        for i in range(5):
            pkt = self.udp_packet("10.0.0.2", seq=i)
            self.send(SERVER, pkt)
            a = self.expect(LEG_A, dc_frame(pkt, sn=i))
            b = self.expect(LEG_B, dc_frame(pkt, sn=i))
            self.assertEqual(a, b)
        self.verify_no_other_packets()


class DuplicationIpv6Test(SplitterTest):
    """Duplication works for an IPv6 user too."""

    def runTest(self):
        self.add_user("2001:db8::2", mode="dc-dup")
        for i in range(3):
            pkt = self.udp_packet("2001:db8::2", seq=i)
            self.send(SERVER, pkt)
            self.expect(LEG_A, dc_frame(pkt, sn=i))
            self.expect(LEG_B, dc_frame(pkt, sn=i))
        self.verify_no_other_packets()
