"""Counters equal what was sent: per user, per leg (duplicates included), per port.

Run: make ptf PTF_TESTS=counters
"""

from splitter_test import LEG_A, LEG_B, SERVER, SplitterTest


class CountersTest(SplitterTest):
    """User, leg and port counters grow by exactly the packets and bytes sent."""

    def runTest(self):
        self.add_user("10.0.0.2", batch=4, ratio="3:1", name="ue1")
        before_user = self.user_counter("10.0.0.2")
        before = self.port_counters()
        sizes = [60, 200, 1000, 1400, 80, 90, 500, 700]
        frames = []
        for i, size in enumerate(sizes):
            pkt = self.udp_packet("10.0.0.2", seq=i, size=size)
            frames.append(len(bytes(pkt)))
            self.send(SERVER, pkt)
            self.next_frame(LEG_A if i % 4 < 3 else LEG_B)
        self.sw.set_user("ue1", dup=True)
        pkt = self.udp_packet("10.0.0.2", seq=8, size=300)
        self.send(SERVER, pkt)
        self.next_frame(LEG_A)
        self.next_frame(LEG_B)
        self.verify_no_other_packets()
        dup_len = len(bytes(pkt))

        user = self.user_counter("10.0.0.2")
        self.assertEqual(user[0] - before_user[0], 9)
        self.assertEqual(user[1] - before_user[1], sum(frames) + dup_len)
        after = self.port_counters()

        def delta(role, key):
            return after[role][key] - before[role][key]

        leg_a_bytes = sum(n for i, n in enumerate(frames) if i % 4 < 3) + dup_len
        leg_b_bytes = sum(n for i, n in enumerate(frames) if i % 4 == 3) + dup_len
        # Byte counters count the frame as it entered the switch (as BMv2 does).
        self.assertEqual(
            (delta("leg_a", "tx_packets"), delta("leg_a", "tx_bytes")), (7, leg_a_bytes)
        )
        self.assertEqual(
            (delta("leg_b", "tx_packets"), delta("leg_b", "tx_bytes")), (3, leg_b_bytes)
        )
        self.assertEqual(
            (delta("server", "rx_packets"), delta("server", "rx_bytes")), (9, sum(frames) + dup_len)
        )
