"""Non-IP and truncated frames follow the documented rule (ptf-tests/README.md).

Run: make ptf PTF_TESTS=malformed
"""

from scapy.layers.l2 import Ether
from splitter_test import LEG_A, LEG_B, SERVER, SERVER_MAC, SWITCH_MAC, SplitterTest

from controlplane.pdcp import ETHERTYPE_PDCP, dc_frame


def raw_frame(ether_type: int, payload: bytes) -> bytes:
    return bytes(Ether(src=SERVER_MAC, dst=SWITCH_MAC, type=ether_type)) + payload


class NonIpFromServerDroppedTest(SplitterTest):
    """A non-IP, non-ARP frame from the server matches no rule and is dropped."""

    def runTest(self):
        self.add_user("10.0.0.2", batch=2, ratio="1:1")
        self.send(SERVER, raw_frame(0x1234, bytes(64)))
        self.verify_no_other_packets()


class NonIpFromLegForwardedTest(SplitterTest):
    """A non-IP frame from a leg goes to the server port unchanged (the leg rule)."""

    def runTest(self):
        frame = raw_frame(0x1234, bytes(range(64)))
        self.send(LEG_A, frame)
        self.expect(SERVER, frame)
        self.verify_no_other_packets()


class TruncatedIpv4DroppedTest(SplitterTest):
    """An IPv4 ethertype with less than a 20-byte header is a parser error: dropped, and it
    does not consume an SN."""

    def runTest(self):
        self.add_user("10.0.0.2", batch=1, ratio="1:0")
        for port in (SERVER, LEG_A):
            self.send(port, raw_frame(0x0800, bytes.fromhex("4500002a0001000040110000")))
        self.send(SERVER, raw_frame(0x86DD, bytes(20)))  # IPv6 needs 40 bytes
        self.verify_no_other_packets()
        pkt = self.udp_packet("10.0.0.2", seq=0)
        self.send(SERVER, pkt)
        frame = self.next_frame(LEG_A)
        self.assertEqual(frame[14:17], bytes([0x80, 0, 0]), "the first good packet has SN 0")
        self.verify_no_other_packets()


class TruncatedPdcpDroppedTest(SplitterTest):
    """A 0x88B5 frame too short for the PDCP header and inner ethertype is dropped."""

    def runTest(self):
        self.send(LEG_B, raw_frame(ETHERTYPE_PDCP, b"\x80\x00"))
        self.verify_no_other_packets()


class PdcpFromLegNotRenumberedTest(SplitterTest):
    """A frame that already carries the PDCP shim is forwarded as is, even when its inner
    destination is a DC user (never numbered twice)."""

    def runTest(self):
        self.add_user("10.0.0.1", batch=1, ratio="1:0")  # the uplink destination as a user
        inner = self.udp_packet("10.0.0.1", seq=7)
        frame = dc_frame(inner, sn=5)
        self.send(LEG_A, frame)
        self.expect(SERVER, frame)
        self.verify_no_other_packets()
