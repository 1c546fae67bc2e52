"""quic-go flows: our dcexp-quicgo server and client (experiments/flows/quicgo_endpoint/,
built by `make build` against the quic-go version pinned in its go.mod).

The program speaks our aioquic endpoint's protocol and its client writes the same JSON lines
(bytes every 100 ms, SHA-256 at the end); RTT and cwnd come from the server's (the sender's)
qlog `recovery:metrics_updated`, as for ngtcp2.

quic-go offers no choice of congestion controller: it always runs its NewReno (see CC).
"""

from __future__ import annotations

from experiments.flows import ClientLogFlow, compress_qlogs, qlog_metrics
from experiments.run.parts import BUILD

QUICGO_BIN = BUILD / "quicgo" / "dcexp-quicgo"
# quic-go's internal/ackhandler creates its cubicSender with reno=true, and its Config has no
# congestion-control field: NewReno with Chromium's backoff 0.7, hybrid slow start (HyStart's
# delay test) and pacing, for every connection.
CC = "newreno"


class QuicgoFlow(ClientLogFlow):
    kind = "quicgo"
    server_socket = "udp"
    tools = ()
    built = (QUICGO_BIN,)

    def _endpoint(self, role: str) -> list[str]:
        return self._our_endpoint([str(QUICGO_BIN)], role)

    def start_server(self) -> None:
        c = self.ctx
        argv = self._endpoint("server") + self._server_files()
        argv += ["--qlog-dir", str(c.workdir / "qlog-server")]
        self.server = self._popen(c.server_ns, argv, "server.log")

    def cleanup(self) -> None:
        compress_qlogs(self.ctx.workdir / "qlog-server")

    def samples(self) -> list[tuple[float, str, float]]:
        """Goodput from the client's log; the sender's RTT and cwnd from its qlog."""
        out = [(self._t(rec["ts"]), "bytes", float(rec["bytes"])) for rec in self._lines()]
        base = self._t(self.t_client_start or self.ctx.t0)
        return out + qlog_metrics(self.ctx.workdir / "qlog-server", base)
