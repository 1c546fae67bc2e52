"""Project PTF base for the PDCP splitter: the controller library (controlplane.splitter) for
the control plane, `add_<table>_entry` helpers for direct table access, and packet helpers
that build the frames DESIGN.md section 3 specifies.
"""

from __future__ import annotations

import random
import struct
import time

from p4runtime_test import P4RuntimeTest
from ptf import testutils
from ptf.mask import Mask
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Ether

from controlplane import entries as E
from controlplane import splitter as S
from controlplane.splitter import Splitter, UserConfig

SERVER, LEG_A, LEG_B = 0, 1, 2
SERVER_MAC = "02:00:00:00:00:01"
SWITCH_MAC = "02:00:00:00:00:fe"
CLIENT_MAC = "02:00:00:00:01:02"
SERVER_IP = "10.0.0.1"
SERVER_IP6 = "2001:db8::1"
SEED = 3823


class SplitterTest(P4RuntimeTest):
    """Starts every test with the default port roles configured through the controller."""

    def setUp(self):
        super().setUp()
        random.seed(SEED)
        self.sw = Splitter(self.client, thrift_addr=self.params.get("thrift_addr"))
        self.sw._set_index(self.index)
        self.sw.configure_ports(SERVER, LEG_A, LEG_B)

    # -- control plane -------------------------------------------------------------

    def add_user(self, addr: str, **kwargs) -> UserConfig:
        return self.sw.add_user(UserConfig(addr=addr, **kwargs))

    def add_ue_sessions_v4_entry(self, ue_addr: str, action: str, params: dict) -> None:
        self._insert(S.T_UE_V4, {"ue_addr": ue_addr}, action, params)

    def add_l2_forwards_entry(
        self, ingress_port: int, ether_type, action: str, params: dict, priority: int
    ) -> None:
        self._insert(
            S.T_L2,
            {"ingress_port": ingress_port, "ether_type": ether_type},
            action,
            params,
            priority,
        )

    def add_egress_macs_entry(self, egress_port: int, action: str, params: dict) -> None:
        self._insert(S.T_MACS, {"egress_port": egress_port}, action, params)

    def _insert(self, table, match, action, params, priority=0) -> None:
        entry = E.table_entry(self.index, table, match, action, params, priority)
        self.client.write([E.update("INSERT", "table_entry", entry)])

    def user_counter(self, addr: str) -> tuple[int, int]:
        u = self.sw.stats()["users"][addr]
        return u["packets"], u["bytes"]

    def port_counters(self) -> dict:
        return self.sw.stats()["ports"]

    def wait_user_packets(self, addr: str, packets: int, timeout_s: float = 60.0) -> None:
        """Wait until the switch has counted `packets` for the user (a software switch may
        lag behind a burst)."""
        deadline = time.monotonic() + timeout_s
        while self.user_counter(addr)[0] < packets:
            if time.monotonic() > deadline:
                self.fail(
                    f"the switch counted {self.user_counter(addr)[0]} of {packets} "
                    f"packets for {addr} within {timeout_s:g} s"
                )
            time.sleep(0.1)

    # -- packets -------------------------------------------------------------------

    @staticmethod
    def udp_packet(
        dst: str,
        seq: int,
        size: int = 100,
        src: str = SERVER_IP,
        sport: int = 4433,
        dport: int = 5555,
    ):
        """A downlink UDP packet whose payload carries `seq` (to recognise it later)."""
        payload = struct.pack("!I", seq) + bytes(max(0, size - 4))
        if ":" in dst:
            l3 = IPv6(src=SERVER_IP6 if src == SERVER_IP else src, dst=dst, hlim=64)
        else:
            l3 = IP(src=src, dst=dst, ttl=64, id=seq & 0xFFFF)
        return Ether(src=SERVER_MAC, dst=SWITCH_MAC) / l3 / UDP(sport=sport, dport=dport) / payload

    @staticmethod
    def tcp_ack(src: str, dst: str = SERVER_IP, seq: int = 1):
        return (
            Ether(src=CLIENT_MAC, dst=SERVER_MAC)
            / IP(src=src, dst=dst)
            / TCP(sport=5555, dport=4433, flags="A", seq=seq, ack=1000)
        )

    @staticmethod
    def arp_request(src_mac: str, src_ip: str, dst_ip: str):
        return Ether(src=src_mac, dst="ff:ff:ff:ff:ff:ff") / ARP(
            op=1, hwsrc=src_mac, psrc=src_ip, pdst=dst_ip
        )

    def send(self, port: int, pkt) -> None:
        testutils.send_packet(self, port, bytes(pkt))

    def expect(self, port: int, frame, timeout: float | None = None) -> bytes:
        """The next frame on `port` must be exactly `frame` (bytes, scapy or Mask): strict
        order, nothing skipped."""
        result = testutils.dp_poll(self, port_number=port, timeout=timeout or 30.0)
        if isinstance(result, self.dataplane.PollFailure):
            self.fail(f"no frame on port {port}; expected {bytes(frame).hex()}")
        got = bytes(result.packet)
        if isinstance(frame, Mask):
            self.assertTrue(frame.pkt_match(got), f"port {port}: got {got.hex()}")
        else:
            self.assertEqual(got.hex(), bytes(frame).hex(), f"unexpected frame on port {port}")
        return got

    def next_frame(self, port: int, timeout: float = 30.0) -> bytes:
        result = testutils.dp_poll(self, port_number=port, timeout=timeout)
        if isinstance(result, self.dataplane.PollFailure):
            self.fail(f"no frame on port {port} within {timeout:g} s")
        return bytes(result.packet)

    def verify_no_other_packets(self) -> None:
        testutils.verify_no_other_packets(self, timeout=0.5)
