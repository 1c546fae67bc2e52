"""Corbel et al.'s fairness knobs as aioquic congestion controllers of ours: CUBIC emulating
N TCP connections, with HyStart on or off.

R. Corbel et al., "Assessing the Impact of QUIC on Network Fairness" (J. Commun. 2019) found
that the number of TCP connections a QUIC sender emulates and HyStart decide its fairness
to TCP. The N-connection adjustments are the standard ones (Chromium's QUIC CubicBytes, after
RFC 9438 section 4.6's Reno-friendly region), applied to aioquic's CUBIC:

    backoff   beta_N  = (N - 1 + beta) / N                  beta = 0.7 (RFC 9438)
    increase  alpha_N = 3 N^2 (1 - beta_N) / (1 + beta_N)   segments per RTT, Reno-friendly
                                                            estimate W_est

N aggregate flows each halving (by 1 - beta) on a loss lose 1/N of that in sum; N Reno flows
grow N segments per RTT, and alpha_N is the AIMD increase that, with beta_N, matches N of
them (alpha = 3 (1 - beta) / (1 + beta) for N = 1). The cubic term itself is not scaled.
HyStart off: slow start ends only at the first loss (aioquic's own CUBIC leaves slow start on
an RTT increase, HyStart's delay test).

Registered names: cubic-n1, cubic-n2, cubic-n5 (HyStart on) and cubic-n1-nohystart, ...
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

from aioquic.quic.congestion.base import K_MINIMUM_WINDOW, register_congestion_control
from aioquic.quic.congestion.cubic import CubicCongestionControl
from aioquic.quic.packet_builder import QuicSentPacket

BETA = 0.7  # RFC 9438 beta_cubic
CONNECTIONS = (1, 2, 5)


def beta_n(n: int) -> float:
    return (n - 1 + BETA) / n


def alpha_n(n: int) -> float:
    b = beta_n(n)
    return 3 * n * n * (1 - b) / (1 + b)


class CubicN(CubicCongestionControl):
    """aioquic's CUBIC with the N-connection backoff and increase, HyStart switchable."""

    def __init__(self, max_datagram_size: int, connections: int = 1, hystart: bool = True):
        super().__init__(max_datagram_size)
        self.connections = connections
        self.hystart = hystart
        self.beta = beta_n(connections)
        # aioquic grows W_est by additive_increase_factor * acked / cwnd per ACK
        self.additive_increase_factor = int(alpha_n(connections) * max_datagram_size)

    def on_packets_lost(self, *, now: float, packets: Iterable[QuicSentPacket]) -> None:
        lost_largest_time = 0.0
        for packet in packets:
            self.bytes_in_flight -= packet.sent_bytes
            lost_largest_time = packet.sent_time
        if lost_largest_time <= self._congestion_recovery_start_time:
            return  # one reduction per congestion event
        self._congestion_recovery_start_time = now
        # fast convergence (RFC 9438 section 4.7) with this controller's beta
        if self.congestion_window < self._W_max:
            self._W_max = int(self.congestion_window * (1 + self.beta) / 2)
        else:
            self._W_max = self.congestion_window
        floor = K_MINIMUM_WINDOW * self._max_datagram_size
        self.ssthresh = max(int(self.congestion_window * self.beta), floor)
        self.congestion_window = self.ssthresh
        self._starting_congestion_avoidance = True

    def on_rtt_measurement(self, *, now: float, rtt: float) -> None:
        if self.hystart:
            super().on_rtt_measurement(now=now, rtt=rtt)
        else:
            self.rtt = rtt

    def get_log_data(self) -> dict:
        # in every qlog recovery:metrics_updated: which of our controllers the sender runs
        return {**super().get_log_data(), "cubic-n": self.connections, "hystart": self.hystart}


def cc_name(connections: int, hystart: bool) -> str:
    return f"cubic-n{connections}" + ("" if hystart else "-nohystart")


def register() -> None:
    for n in CONNECTIONS:
        for hystart in (True, False):
            factory = partial(CubicN, connections=n, hystart=hystart)
            register_congestion_control(cc_name(n, hystart), factory)


NAMES = tuple(cc_name(n, h) for n in CONNECTIONS for h in (True, False))
