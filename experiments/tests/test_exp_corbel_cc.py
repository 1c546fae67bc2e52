"""Corbel's knobs in our aioquic CUBIC: the N-connection arithmetic, in the controller's own
window, and HyStart switchable."""

import pytest
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.congestion.base import create_congestion_control
from aioquic.quic.packet_builder import QuicPacketType, QuicSentPacket
from aioquic.tls import Epoch

from experiments.flows import corbel_cc

MSS = 1200


def packet(n: int, sent: float) -> QuicSentPacket:
    return QuicSentPacket(
        epoch=Epoch.ONE_RTT,
        in_flight=True,
        is_ack_eliciting=True,
        is_crypto_packet=False,
        packet_number=n,
        packet_type=QuicPacketType.ONE_RTT,
        sent_time=sent,
        sent_bytes=MSS,
    )


def after_loss(n: int) -> corbel_cc.CubicN:
    """A controller at 100 segments that sees a loss, then one RTT (0.1 s) of ACKs."""
    cc = corbel_cc.CubicN(MSS, connections=n)
    cc.congestion_window = cc._W_max = 100 * MSS
    cc.ssthresh = 50 * MSS  # in congestion avoidance
    lost = packet(0, 1.0)
    cc.on_packet_sent(packet=lost)
    cc.on_packets_lost(now=1.1, packets=[lost])
    return cc


def test_beta_and_alpha_follow_the_n_connection_formulas():
    assert corbel_cc.beta_n(1) == pytest.approx(0.7)
    assert corbel_cc.beta_n(2) == pytest.approx(0.85)
    assert corbel_cc.alpha_n(1) == pytest.approx(3 * 0.3 / 1.7)
    assert corbel_cc.alpha_n(5) == pytest.approx(3 * 25 * (1 - 0.94) / 1.94)


def test_two_emulated_connections_back_off_less_and_grow_faster_than_one():
    one, two = after_loss(1), after_loss(2)
    assert one.congestion_window == 70 * MSS
    assert two.congestion_window == 85 * MSS
    grown = {}
    for cc in (one, two):
        start = cc.congestion_window
        for i in range(start // MSS):  # one window of ACKs over an RTT
            p = packet(i + 1, 1.2 + i * 1e-4)
            cc.on_packet_sent(packet=p)
            cc.on_packet_acked(now=1.2 + 0.1 * i / (start // MSS), packet=p)
        grown[cc.connections] = cc._W_est - start
    assert grown[2] > grown[1] > 0
    # N = 2 is more aggressive in sum: a larger window after the loss and a faster increase
    assert two.congestion_window > one.congestion_window


def test_hystart_off_stays_in_slow_start_on_rising_rtt():
    on = corbel_cc.CubicN(MSS, connections=1, hystart=True)
    off = corbel_cc.CubicN(MSS, connections=1, hystart=False)
    for cc in (on, off):
        for i in range(40):
            cc.on_rtt_measurement(now=0.01 * i, rtt=0.02 + 0.005 * i)
    assert on.ssthresh is not None, "HyStart leaves slow start when the RTT rises"
    assert off.ssthresh is None


def test_controllers_are_registered_with_aioquic():
    corbel_cc.register()
    for name in corbel_cc.NAMES:
        QuicConfiguration(congestion_control_algorithm=name)
        cc = create_congestion_control(name, max_datagram_size=MSS)
        assert isinstance(cc, corbel_cc.CubicN)
    assert create_congestion_control("cubic-n5-nohystart", max_datagram_size=MSS).connections == 5


def test_sfa_map_draws_the_non_tcp_flow_per_test_and_point(tmp_path):
    import pandas as pd

    from experiments.analysis import plots

    rows = []
    for variant, sfa in (("n1", -0.2), ("n5", 0.3)):
        for point in (0, 0.001):
            rows += [
                {"variant": variant, "point": point, "kind": "tcp", "sfa": -sfa},
                {"variant": variant, "point": point, "kind": "aioquic", "sfa": sfa},
            ]
    fair = pd.DataFrame(rows)
    paths = plots.sfa_map(fair, "links.a.loss", tmp_path)
    assert [p.name for p in paths] == ["sfa_map.png", "sfa_map.pdf"]
    assert paths[0].stat().st_size > 1000
    assert plots.sfa_map(fair[fair.kind == "aioquic"], "loss", tmp_path / "none") == []
