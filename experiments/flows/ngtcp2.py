"""ngtcp2 flows: Debian's gtlsserver/gtlsclient (ngtcp2 0.12, GnuTLS).

The server serves the payload file from its document root (size mode) or `GET /N` dynamic
bytes (duration mode). Goodput comes from the size of the client's --download file, sampled
every 100 ms; RTT and cwnd from the server's (the sender's) qlog `recovery:metrics_updated`.

The programs never set SO_RCVBUF, so their UDP sockets get net.core.rmem_default, which is not
per namespace. `udp_rcvbuf: large` starts both under clib/udprcvbuf (LD_PRELOAD), which gives
each UDP socket LARGE_RCVBUF bytes; the client's buffer as the kernel set it is the result's
`udp_rcvbuf_bytes`.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from experiments.flows import LARGE_RCVBUF, Flow, compress_qlogs, qlog_metrics, sha256_file
from experiments.run.parts import BUILD

CC_NAMES = {"newreno": "reno", "cubic": "cubic", "bbr": "bbr"}
DYNAMIC_BYTES = 100 * 10**9  # duration mode: a body the client never finishes
UDPRCVBUF_LIB = BUILD / "clib" / "libudprcvbuf.so"


class Ngtcp2Flow(Flow):
    kind = "ngtcp2"
    server_socket = "udp"
    tools = ("gtlsserver", "gtlsclient")
    built = (UDPRCVBUF_LIB,)
    self_timed = False  # duration mode: the body never ends; running() stops the client

    def start_server(self) -> None:
        c = self.ctx
        (c.workdir / "qlog-server").mkdir(exist_ok=True)
        argv = self._rcvbuf_env("server") + [
            "gtlsserver",
            "--quiet",
            "--no-quic-dump",
            "--no-http-dump",
            f"--htdocs={c.payload.parent}",
            f"--cc={CC_NAMES[self.spec['cc']]}",
            f"--qlog-dir={c.workdir / 'qlog-server'}",
            f"--max-dyn-length={DYNAMIC_BYTES}",
            c.server_addr,
            str(c.port),
            str(c.key),
            str(c.cert),
        ]
        self.server = self._popen(c.server_ns, argv, "server.log")

    def _rcvbuf_env(self, role: str) -> list[str]:
        """`env` with the preload ahead of the program when the flow asks for a large buffer
        (set on the program alone, not on `ip netns exec`)."""
        if self.spec["udp_rcvbuf"] != "large":
            return []
        self._rcvbuf_report(role).unlink(missing_ok=True)  # the library appends
        return [
            "env",
            f"LD_PRELOAD={UDPRCVBUF_LIB}",
            f"DC_UDP_RCVBUF={LARGE_RCVBUF}",
            f"DC_UDP_RCVBUF_REPORT={self._rcvbuf_report(role)}",
        ]

    def _rcvbuf_report(self, role: str) -> Path:
        return self.ctx.workdir / f"{role}.rcvbuf"

    def _client_rcvbuf(self) -> int | None:
        """The smallest buffer the kernel gave any of the client's UDP sockets (None: not
        preloaded, or no socket opened)."""
        try:
            sizes = [int(line) for line in self._rcvbuf_report("client").read_text().split()]
        except (OSError, ValueError):
            return None
        return min(sizes, default=None)

    @property
    def _download(self) -> Path:
        return self.ctx.workdir / "download" / self._resource

    @property
    def _resource(self) -> str:
        return self.ctx.payload.name if self.size_bytes else str(DYNAMIC_BYTES)

    def start_client(self) -> None:
        c = self.ctx
        (c.workdir / "download").mkdir(exist_ok=True)
        argv = self._rcvbuf_env("client") + [
            "gtlsclient",
            "--quiet",
            "--no-quic-dump",
            "--no-http-dump",
            "--exit-on-all-streams-close",
            f"--download={c.workdir / 'download'}",
            "--timeout=10s",
            c.server_addr,
            str(c.port),
            f"https://{c.server_addr}:{c.port}/{self._resource}",
        ]
        self.t_client_start = time.monotonic()
        self.client = self._popen(c.client_ns, argv, "client.log")

    def bytes_received(self) -> int:
        try:
            return self._download.stat().st_size
        except FileNotFoundError:
            return 0

    def cleanup(self) -> None:
        """Drop the body; compress the sender's qlog."""
        shutil.rmtree(self.ctx.workdir / "download", ignore_errors=True)
        compress_qlogs(self.ctx.workdir / "qlog-server")

    def samples(self) -> list[tuple[float, str, float]]:
        """RTT and cwnd from the sender's qlog (times relative to the connection start)."""
        return qlog_metrics(
            self.ctx.workdir / "qlog-server", self._t(self.t_client_start or self.ctx.t0)
        )

    def result(self) -> dict:
        got = self.bytes_received()
        if self.size_bytes is not None:
            complete = (
                got == self.size_bytes and self.client is not None and self.client.returncode == 0
            )
        else:
            complete = self.stopped_at_duration
        res = {
            "bytes": got,
            "complete": bool(complete),
            "exit_code": self.client.returncode if self.client else None,
        }
        if self.size_bytes:
            res["intact"] = bool(
                complete and sha256_file(self._download) == sha256_file(self.ctx.payload)
            )
        if self.size_bytes and complete:
            res["completion_s"] = self.t_client_end - self.t_client_start
        if self.spec["udp_rcvbuf"] == "large":
            res["udp_rcvbuf_bytes"] = self._client_rcvbuf()
        return res
