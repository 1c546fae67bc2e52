"""SN wrap-around: 12-bit profile by sending 4096+ packets, 18-bit by presetting registers
(over P4Runtime on p4sim, over BMv2's Thrift runtime on BMv2: controlplane/registers.py).

Run: make ptf PTF_TESTS=sn_wrap [TARGET=bmv2]
"""

import time

from splitter_test import LEG_A, SERVER, SplitterTest, dc_frame


class Wrap12BitTest(SplitterTest):
    """With -D PDCP_SN_12, SN 4095 is followed by 0 (4100 packets through the switch)."""

    def setUp(self):
        super().setUp()
        self.ensure_pipeline(self.params["sn12_p4info"], self.params["sn12_config"])
        self.sw._set_index(self.index)
        self.sw.configure_ports(SERVER, 1, 2)

    def runTest(self):
        self.add_user("10.0.0.2", batch=1, ratio="1:0")
        base = self.user_counter("10.0.0.2")[0]
        burst = 4094
        for i in range(burst):  # no per-packet verify: the wrap is checked at the end
            self.send(SERVER, self.udp_packet("10.0.0.2", seq=i, size=20))
            if i % 256 == 255:
                time.sleep(0.05)  # let a software switch keep up with the sender
        numbered = self.settled_user_packets("10.0.0.2", base + burst) - base
        # A frame the host dropped on the way in never got an SN: continue from what the
        # switch counted, through the wrap.
        self.assertGreater(numbered, 4000, "most of the burst must reach the switch")
        self.dataplane.flush()
        for j in range(4096 - numbered + 3):
            pkt = self.udp_packet("10.0.0.2", seq=burst + j, size=20)
            self.send(SERVER, pkt)
            self.expect(LEG_A, dc_frame(pkt, sn=(numbered + j) % 4096, sn_bits=12))
        self.verify_no_other_packets()

    def settled_user_packets(self, addr: str, target: int, timeout_s: float = 180) -> int:
        """The user's packet counter once it reached `target` or stopped moving for 2 s."""
        deadline = time.monotonic() + timeout_s
        last, since = -1, time.monotonic()
        while time.monotonic() < deadline:
            count = self.user_counter(addr)[0]
            if count >= target:
                return count
            if count != last:
                last, since = count, time.monotonic()
            elif time.monotonic() - since > 2.0:
                return count
            time.sleep(0.1)
        self.fail(f"the switch was still numbering {addr}'s burst after {timeout_s:g} s")


class Wrap18BitTest(SplitterTest):
    """With 18-bit SNs, SN 262143 is followed by 0 (next-SN register preset by the controller)."""

    def runTest(self):
        self.add_user("10.0.0.2", batch=2, ratio="1:1")
        index = self.sw._installed()["10.0.0.2"].index
        before = self.sw.preset_user_registers("10.0.0.2", next_sn=(1 << 18) - 2, batch_pos=0)
        self.on_undo(lambda: [self.sw.registers.write(r, index, v) for r, v in before.items()])
        self.assertEqual(
            self.sw.user_registers("10.0.0.2"), {"next_sn": (1 << 18) - 2, "batch_pos": 0}
        )
        for i, sn in enumerate(((1 << 18) - 2, (1 << 18) - 1, 0, 1)):
            pkt = self.udp_packet("10.0.0.2", seq=i)
            self.send(SERVER, pkt)
            self.expect(LEG_A if i % 2 == 0 else 2, dc_frame(pkt, sn=sn))
        self.assertEqual(self.sw.user_registers("10.0.0.2"), {"next_sn": 2, "batch_pos": 0})
        self.verify_no_other_packets()
