"""aioquic flows: our quic_endpoint server and client (aioquic has no example programs).

The client logs bytes, smoothed RTT and cwnd every 100 ms and the SHA-256 of the download.
"""

from __future__ import annotations

import sys

from experiments.flows import LARGE_RCVBUF, ClientLogFlow
from experiments.flows.corbel_cc import cc_name

CC_NAMES = {"newreno": "reno", "cubic": "cubic"}
# The endpoints' event loops (--loop): asyncio's, or uvloop's on libuv, which spends less CPU
# per datagram (experiments/docs/aioquic-cpu.md).
LOOPS = ("asyncio", "uvloop")


class AioquicFlow(ClientLogFlow):
    kind = "aioquic"
    server_socket = "udp"
    tools = ()

    def _endpoint(self, role: str) -> list[str]:
        argv = self._our_endpoint([sys.executable, "-m", "experiments.flows.quic_endpoint"], role)
        return argv + ["--cc", self._cc(), "--loop", self.spec.get("loop") or "asyncio"]

    def _cc(self) -> str:
        """aioquic's own controllers, or ours when a Corbel knob is set (corbel_cc)."""
        n, hystart = self.spec.get("cubic_n"), self.spec.get("hystart")
        if n is None and hystart is None:
            return CC_NAMES[self.spec["cc"]]
        return cc_name(n or 1, hystart is not False)

    def start_server(self) -> None:
        c = self.ctx
        argv = self._endpoint("server") + self._server_files()
        if self.spec.get("qlog"):
            (c.workdir / "qlog-server").mkdir(exist_ok=True)
            argv += ["--qlog-dir", str(c.workdir / "qlog-server")]
        self.server = self._popen(c.server_ns, argv, "server.log")

    def _client_options(self) -> list[str]:
        return ["--rcvbuf", str(LARGE_RCVBUF)] if self.spec["udp_rcvbuf"] == "large" else []

    def samples(self) -> list[tuple[float, str, float]]:
        out = []
        for rec in self._lines():
            t = self._t(rec["ts"])
            out.append((t, "bytes", float(rec["bytes"])))
            if rec.get("srtt_ms"):
                out.append((t, "rtt_ms", float(rec["srtt_ms"])))
            out.append((t, "cwnd_bytes", float(rec["cwnd"])))
        return out
