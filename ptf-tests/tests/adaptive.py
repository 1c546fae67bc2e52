"""The adaptive profile (-D DC_ADAPTIVE): leg feedback reports punted to the controller,
credit refilled from them and spent per packet by dc-credit users.

Run: make ptf PTF_TESTS=adaptive
"""

from splitter_test import LEG_A, LEG_B, SERVER, SplitterTest

from controlplane.pdcp import Report, dc_frame, decode_report, encode_report

UE = "10.0.0.2"
PKT_SIZE = 100  # UDP payload bytes of each test packet


def feedback(leg: int, desired: int, held: int = 0, delivered: int = 10_000, lost: int = 0):
    """A leg's report about UE, as linkem --feedback sends it towards the switch."""
    r = Report(leg, 0, UE, desired, 1_000_000, held, 0, delivered, lost)
    return encode_report(r, dst_mac=bytes.fromhex("00000000000a"))


class AdaptiveTest(SplitterTest):
    def setUp(self):
        super().setUp()
        self.ensure_pipeline(self.params["adaptive_p4info"], self.params["adaptive_config"])
        self.sw._set_index(self.index)
        self.sw.configure_ports(SERVER, LEG_A, LEG_B)

    def packet_in(self):
        """The next PacketIn (a report the switch punted): a software switch on a loaded
        machine may take seconds, so the deadline is generous; it costs nothing otherwise."""
        packet = self.client.next_packet_in(timeout_s=30.0)
        self.assertIsNotNone(packet, "no PacketIn for the report within 30 s")
        return packet

    def packet_length(self) -> int:
        return len(bytes(self.udp_packet(UE, seq=0, size=PKT_SIZE)))

    def send_and_expect(self, legs: list[int], first_seq: int = 0) -> None:
        for i, leg in enumerate(legs):
            pkt = self.udp_packet(UE, seq=first_seq + i, size=PKT_SIZE)
            self.send(SERVER, pkt)
            self.expect(leg, dc_frame(pkt, sn=first_seq + i))


class FeedbackPuntedTest(AdaptiveTest):
    """A report from leg B reaches the controller as a PacketIn (ingress port 2), no port."""

    def runTest(self):
        frame = feedback(1, desired=12_000, held=3_000, lost=2)
        self.send(LEG_B, frame)
        packet = self.packet_in()
        self.assertEqual(bytes(packet.payload), frame)
        meta = {m.metadata_id: int.from_bytes(m.value, "big") for m in packet.metadata}
        self.assertEqual(meta.get(1), LEG_B, "packet_in.ingress_port")
        r = decode_report(bytes(packet.payload))
        self.assertEqual((r.leg, r.desired_bytes, r.held_bytes, r.lost), (1, 12_000, 3_000, 2))
        self.verify_no_other_packets()


class CreditSplitTest(AdaptiveTest):
    """A may take 3 packets' worth, B 1: the leg with more credit gets each packet."""

    def runTest(self):
        self.add_user(UE, mode="dc-credit", batch=2, ratio="1:1")
        n = self.packet_length()
        self.send(LEG_A, feedback(0, desired=3 * n + 500, held=500))  # credit 3n
        self.send(LEG_B, feedback(1, desired=n))  # credit n
        for _ in range(2):
            self.packet_in()
        # credits (3n, n) -> A (2n, n) -> A (n, n) -> A on the tie (0, n) -> B (0, 0)
        self.send_and_expect([LEG_A, LEG_A, LEG_A, LEG_B])
        self.verify_no_other_packets()


class LegWithoutCreditSkippedTest(AdaptiveTest):
    """Leg A holds all it asked for (no credit): packets go to B while B has credit,
    although the batch split would alternate."""

    def runTest(self):
        self.add_user(UE, mode="dc-credit", batch=2, ratio="1:1")
        n = self.packet_length()
        self.send(LEG_A, feedback(0, desired=20_000, held=20_000))
        self.send(LEG_B, feedback(1, desired=3 * n))
        for _ in range(2):
            self.packet_in()
        self.send_and_expect([LEG_B, LEG_B, LEG_B])
        self.verify_no_other_packets()


class NoCreditToTheLegThatAskedForMoreTest(AdaptiveTest):
    """Both legs hold all they asked for (no credit): the packets go to the leg that asked
    for the larger buffer (B, the faster), not by the batch split, which alternates. B
    reports last, so B is the answer however long the switch takes (B alone live, or both)."""

    def runTest(self):
        self.add_user(UE, mode="dc-credit", batch=2, ratio="1:1")
        self.send(LEG_A, feedback(0, desired=5_000, held=5_000))
        self.packet_in()
        self.send(LEG_B, feedback(1, desired=30_000, held=30_000))
        self.packet_in()
        self.send_and_expect([LEG_B, LEG_B, LEG_B])
        self.verify_no_other_packets()


class BatchSplitBeforeReportsTest(AdaptiveTest):
    """Before any report, a dc-credit user is split by its batch (k=1 of B=3)."""

    def runTest(self):
        self.add_user(UE, mode="dc-credit", batch=3, ratio="1:2")
        self.send_and_expect([LEG_A, LEG_B, LEG_B, LEG_A, LEG_B, LEG_B])
        self.verify_no_other_packets()


class UnheardLegGetsItsBatchShareTest(AdaptiveTest):
    """Leg A has credit, leg B has not reported yet (its base station has seen no frame of
    the user): the batch split stands, so B gets frames and can report; once it has, the
    credit steers (A has more)."""

    def runTest(self):
        self.add_user(UE, mode="dc-credit", batch=2, ratio="1:1")
        n = self.packet_length()
        self.send(LEG_A, feedback(0, desired=100_000))
        self.packet_in()
        self.send_and_expect([LEG_A, LEG_B, LEG_A, LEG_B])
        self.send(LEG_B, feedback(1, desired=n))
        self.packet_in()
        self.send_and_expect([LEG_A, LEG_A], first_seq=4)
        self.verify_no_other_packets()


class DeadLegBeforeOtherReportsTest(AdaptiveTest):
    """Leg A reports that it delivers nothing (dead), leg B has not reported yet: B takes
    the packets, not A's half of the batch."""

    def runTest(self):
        self.add_user(UE, mode="dc-credit", batch=2, ratio="1:1")
        self.send(LEG_A, feedback(0, desired=0))
        self.packet_in()
        self.send_and_expect([LEG_B, LEG_B, LEG_B])
        self.verify_no_other_packets()


class SplitDcUnchangedOnAdaptiveTest(AdaptiveTest):
    """A plain dc-split user ignores the credit on the adaptive profile."""

    def runTest(self):
        self.add_user(UE, mode="dc-split", batch=2, ratio="1:1")
        self.send(LEG_B, feedback(1, desired=100_000))
        self.packet_in()
        self.send_and_expect([LEG_A, LEG_B, LEG_A, LEG_B])
        self.verify_no_other_packets()
