"""TCP flows: iperf3 in reverse mode (the server host sends, the client host receives).

The congestion control is set per socket (iperf3 -C, TCP_CONGESTION), so the root
namespace's tcp_allowed_congestion_control need not change. Goodput per 100 ms interval comes
from the receiver's report; RTT and cwnd from the sender's TCP_INFO, which iperf3 samples per
interval (--get-server-output brings the sender's report back).
"""

from __future__ import annotations

import json
import time

from experiments.flows import Flow

CC_NAMES = {"newreno": "reno", "cubic": "cubic", "bbr": "bbr"}


class TcpFlow(Flow):
    kind = "tcp"
    server_socket = "tcp"
    tools = ("iperf3",)

    def start_server(self) -> None:
        c = self.ctx
        argv = [
            "iperf3",
            "--server",
            "--one-off",
            "--json",
            "--interval",
            "0.1",
            "--bind",
            c.server_addr,
            "--port",
            str(c.port),
        ]
        self.server = self._popen(c.server_ns, argv, "server.log")

    def start_client(self) -> None:
        c = self.ctx
        argv = [
            "iperf3",
            "--client",
            c.server_addr,
            "--port",
            str(c.port),
            "--reverse",
            "--json",
            "--interval",
            "0.1",
            "--get-server-output",
            "--congestion",
            CC_NAMES[self.spec["cc"]],
        ]
        argv += (
            ["--bytes", str(self.size_bytes)]
            if self.size_bytes
            else ["--time", str(self.spec["duration_s"])]
        )
        self.t_client_start = time.monotonic()
        self.client = self._popen(c.client_ns, argv, "client.json")

    def _report(self) -> dict | None:
        try:
            return json.loads((self.ctx.workdir / "client.json").read_text())
        except (OSError, ValueError):
            return None

    def samples(self) -> list[tuple[float, str, float]]:
        rep = self._report()
        if not rep or "intervals" not in rep:
            return []
        base = self._t(self.t_client_start)
        out, total = [], 0.0
        for iv in rep["intervals"]:
            s = iv["sum"]
            total += s["bytes"]
            out.append((base + s["end"], "bytes", total))
        server = rep.get("server_output_json") or {}
        for iv in server.get("intervals", []):
            for st in iv.get("streams", []):
                t = base + st["end"]
                if "rtt" in st:
                    out.append((t, "rtt_ms", st["rtt"] / 1000))
                if "snd_cwnd" in st:
                    out.append((t, "cwnd_bytes", float(st["snd_cwnd"])))
        return out

    def result(self) -> dict:
        rep = self._report()
        res = {
            "exit_code": self.client.returncode if self.client else None,
            "bytes": 0,
            "complete": False,
        }
        if not rep or "end" not in rep:
            res["error"] = (rep or {}).get("error", "no iperf3 report")
            return res
        received = rep["end"].get("sum_received", {})
        res["bytes"] = int(received.get("bytes", 0))
        res["complete"] = self.client.returncode == 0 and (
            self.size_bytes is None or res["bytes"] >= self.size_bytes
        )
        res["cc_used"] = rep["end"].get("receiver_tcp_congestion") or rep["end"].get(
            "sender_tcp_congestion"
        )
        if self.size_bytes and res["complete"]:
            res["completion_s"] = received.get("seconds")
        # When the server wrote its last bytes (run time, to its 0.1 s interval): iperf3
        # spins from then until the client has them all, which the CPU verdict leaves out.
        written = [
            iv["sum"]["end"]
            for iv in (rep.get("server_output_json") or {}).get("intervals", [])
            if iv.get("sum", {}).get("bytes")
        ]
        if written:
            res["sender_last_write_s"] = round(self._t(self.t_client_start) + max(written), 3)
        return res
