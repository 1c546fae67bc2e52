"""ngtcp2 flows: Debian's gtlsserver/gtlsclient (ngtcp2 0.12, GnuTLS).

The server serves the payload file from its document root (size mode) or `GET /N` dynamic
bytes (duration mode). Goodput comes from the size of the client's --download file, sampled
every 100 ms; RTT and cwnd from the server's (the sender's) qlog `recovery:metrics_updated`.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from experiments.flows import Flow, compress_qlogs, qlog_metrics, sha256_file

CC_NAMES = {"newreno": "reno", "cubic": "cubic", "bbr": "bbr"}
DYNAMIC_BYTES = 100 * 10**9  # duration mode: a body the client never finishes


class Ngtcp2Flow(Flow):
    kind = "ngtcp2"
    server_socket = "udp"
    tools = ("gtlsserver", "gtlsclient")
    self_timed = False  # duration mode: the body never ends; running() stops the client

    def start_server(self) -> None:
        c = self.ctx
        (c.workdir / "qlog-server").mkdir(exist_ok=True)
        argv = [
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

    @property
    def _download(self) -> Path:
        return self.ctx.workdir / "download" / self._resource

    @property
    def _resource(self) -> str:
        return self.ctx.payload.name if self.size_bytes else str(DYNAMIC_BYTES)

    def start_client(self) -> None:
        c = self.ctx
        (c.workdir / "download").mkdir(exist_ok=True)
        argv = [
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
        return res
