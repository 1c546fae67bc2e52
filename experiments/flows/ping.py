"""An RTT probe: iputils ping from the client host to the server every 50 ms.

The echo request takes the uplink (for the DC client: its agent, leg A's uplink, the
switch), the reply the downlink (numbered and split by the switch, reordered by the agent),
so the RTT covers the whole path the DC machinery adds to. Used idle (before a download
starts) it measures the path itself, not the queue a transport builds. It carries no payload:
no goodput, `bytes` None.

ping ends once every probe is answered, or REPLY_GRACE_S after the last probe (`-w`): a reply
held up by a busy machine is an RTT sample, not a loss (without `-w`, ping gives up two RTTs
after its last probe and counts every reply still on its way as lost).
"""

from __future__ import annotations

import math
import re
import time

from experiments.flows import Flow

INTERVAL_S = 0.05  # below 0.2 s iputils needs root, which dcexp run has
REPLY_GRACE_S = 2  # how long after the probes a reply still counts
REPLY = re.compile(r"icmp_seq=(\d+) .*time=([\d.]+) ms")


class PingFlow(Flow):
    kind = "ping"
    tools = ("ping",)

    def start_server(self) -> None:
        """The server's kernel answers; nothing to start."""

    def start_client(self) -> None:
        c = self.ctx
        count = max(1, int(self.spec["duration_s"] / INTERVAL_S))
        deadline = math.ceil(self.spec["duration_s"] + REPLY_GRACE_S)  # -w takes whole seconds
        argv = ["ping", "-n", "-i", str(INTERVAL_S), "-c", str(count), "-w", str(deadline)]
        argv += ["-W", "1", c.server_addr]
        self.t_client_start = time.monotonic()
        self.client = self._popen(c.client_ns, argv, "ping.log")

    def _replies(self) -> list[tuple[int, float]]:
        try:
            text = (self.ctx.workdir / "ping.log").read_text(errors="replace")
        except OSError:
            return []
        return [(int(m[1]), float(m[2])) for m in REPLY.finditer(text)]

    def samples(self) -> list[tuple[float, str, float]]:
        if self.t_client_start is None:
            return []
        base = self._t(self.t_client_start)
        return [(base + seq * INTERVAL_S, "rtt_ms", rtt) for seq, rtt in self._replies()]

    def result(self) -> dict:
        replies = self._replies()
        sent = max(1, int(self.spec["duration_s"] / INTERVAL_S))
        rtts = sorted(rtt for _seq, rtt in replies)
        return {
            "exit_code": self.client.returncode if self.client else None,
            "bytes": None,
            "complete": bool(replies),
            "replies": len(replies),
            "loss": 1 - len(replies) / sent,
            "rtt_ms_median": rtts[len(rtts) // 2] if rtts else None,
        }
