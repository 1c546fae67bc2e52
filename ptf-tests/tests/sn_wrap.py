"""SN wrap-around: 12-bit profile by sending 4096+ packets, 18-bit by presetting registers
(over P4Runtime on p4sim, over BMv2's Thrift runtime on BMv2: controlplane/registers.py).

Run: make ptf PTF_TESTS=sn_wrap [TARGET=bmv2]
"""

from splitter_test import LEG_A, SERVER, SplitterTest

from controlplane.pdcp import dc_frame, sn_of


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
        burst, chunk = 4094, 128
        for start in range(0, burst, chunk):  # no per-packet verify: the wrap is checked below
            for i in range(start, min(start + chunk, burst)):
                self.send(SERVER, self.udp_packet("10.0.0.2", seq=i, size=20))
            # Paced by what the switch counted, not by time: a software switch on a loaded
            # machine falls behind a free-running sender, and the host drops the excess.
            self.wait_user_packets("10.0.0.2", base + min(start + chunk, burst))
        for i in range(burst):  # every packet of the burst, numbered in order
            self.assertEqual(sn_of(self.next_frame(LEG_A), sn_bits=12), i)
        numbered = burst
        for j in range(4096 - numbered + 3):
            pkt = self.udp_packet("10.0.0.2", seq=burst + j, size=20)
            self.send(SERVER, pkt)
            self.expect(LEG_A, dc_frame(pkt, sn=(numbered + j) % 4096, sn_bits=12))
        self.verify_no_other_packets()


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
