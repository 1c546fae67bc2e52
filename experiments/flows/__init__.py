"""Flow generators as plugins behind one small interface (QUICbench/pantheon habit).

A flow is one download from the server host to a client host. The runner only uses:

    flow = make_flow(spec, ctx)        # spec: a validated flow dict, ctx: FlowContext
    flow.start_server(); flow.wait_server_ready(); flow.start_client()
    flow.bytes_received() -> int|None  # sampled every 100 ms (None: the flow logs it itself)
    flow.running() -> bool
    flow.stop()
    flow.samples() -> list[(t_s, metric, value)]   # after the run: goodput bytes, RTT, cwnd
    flow.result() -> dict                           # bytes, completion_s, complete, intact

Plugins: ngtcp2 (Debian's gtlsserver/gtlsclient), aioquic (our quic_endpoint), quicgo (our
dcexp-quicgo on quic-go), tcp (iperf3), mptcp (our mptcp_endpoint over the two legs as two IP
paths), mpquic (tquic's multipath QUIC client and server over the same two paths), ping (an
RTT probe, iputils ping).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import subprocess
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from dccommon.cliargs import MAX_TCP_PORT, MAX_UINT64, float_range, int_range
from dccommon.jsonlines import read_json_lines
from dccommon.processes import stop_process
from experiments.run.netns import Namespace, NetnsError, wait_bound

MB = 1_000_000  # size_mb is decimal megabytes, as in the paper's "100 MB"
# `udp_rcvbuf: large`: the client's UDP receive buffer, bytes asked for (the kernel doubles it)
LARGE_RCVBUF = 8 * 1024 * 1024
# the options of our endpoints (quic_endpoint, mptcp_endpoint), checked as every CLI's
PORT = int_range(1, MAX_TCP_PORT, "port")
BYTES = int_range(1, MAX_UINT64, "bytes")
DURATION = float_range(0, 86_400, "duration", low_open=True)
SERVER_READY_TIMEOUT_S = 60.0  # a server that has not bound its port by then is broken


@dataclass
class FlowContext:
    """Where a flow runs and where it keeps its files."""

    flow_id: str
    server_ns: Namespace
    client_ns: Namespace
    server_addr: str
    port: int
    workdir: Path  # per-flow directory for logs, qlogs, downloads
    payload: Path  # the file served (exact size in size mode)
    cert: Path
    key: Path
    t0: float  # run start, time.monotonic()


@dataclass
class Flow(ABC):
    spec: dict
    ctx: FlowContext
    server: subprocess.Popen | None = None
    client: subprocess.Popen | None = None
    t_client_start: float | None = None
    t_client_end: float | None = None
    logs: list = field(default_factory=list)

    kind: ClassVar[str]
    tools: ClassVar[tuple[str, ...]]  # programs on PATH (Debian packages)
    built: ClassVar[tuple[Path, ...]] = ()  # programs of ours that `make build` makes
    # The socket the server binds ("tcp" listens, "udp" is bound), what wait_server_ready
    # waits for; None: no server process (ping).
    server_socket: ClassVar[str | None] = None

    # --- helpers shared by the plugins
    @property
    def size_bytes(self) -> int | None:
        return int(self.spec["size_mb"] * MB) if self.spec["size_mb"] is not None else None

    def _our_endpoint(self, program: list[str], role: str) -> list[str]:
        """One of our endpoints (aioquic's, quic-go's, MPTCP's): `program ROLE --addr A --port P`,
        the server's address and port for both roles."""
        return [*program, role, "--addr", self.ctx.server_addr, "--port", str(self.ctx.port)]

    def _download_args(self) -> list[str]:
        """How much our own clients (aioquic, quic-go, MPTCP) fetch: by size or by duration."""
        if self.size_bytes:
            return ["--bytes", str(self.size_bytes)]
        return ["--duration-s", str(self.spec["duration_s"])]

    def _log(self, name: str):
        f = open(self.ctx.workdir / name, "w")  # noqa: SIM115 - open while the process runs
        self.logs.append(f)
        return f

    def _popen(self, ns: Namespace, argv: list[str], log: str) -> subprocess.Popen:
        out = self._log(log)
        return ns.popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=self.ctx.workdir)

    # --- the interface
    @abstractmethod
    def start_server(self) -> None: ...

    @abstractmethod
    def start_client(self) -> None: ...

    def wait_server_ready(self, timeout_s: float = SERVER_READY_TIMEOUT_S) -> None:
        """Wait until the server has bound its port (a fixed pause before the client starts
        is too short on a loaded machine: a TCP client then meets a refused connection)."""
        if self.server is not None and self.server_socket is not None:
            try:
                wait_bound(
                    self.ctx.server_ns, self.ctx.port, self.server_socket, self.server, timeout_s
                )
            except NetnsError as exc:
                raise RuntimeError(f"{self.kind} flow: {exc}; see {self.ctx.workdir}") from None

    def bytes_received(self) -> int | None:
        """Bytes at the client now, for the sampler (None: the flow logs them itself)."""
        return None

    def progress_bytes(self) -> int | None:
        """Bytes at the client now, for the progress bar only."""
        return self.bytes_received()

    # Clients that stop by themselves after duration_s (iperf3 -t, our aioquic client); the
    # others are stopped by running() when their time is up.
    self_timed: ClassVar[bool] = True
    stopped_at_duration: bool = False

    def running(self) -> bool:
        if self.client is None:
            return False
        if self.client.poll() is None:
            dur = self.spec["duration_s"]
            if dur and not self.self_timed and time.monotonic() - self.t_client_start >= dur:
                self.t_client_end = time.monotonic()
                stop_process(self.client)
                self.stopped_at_duration = True
                return False
            return True
        if self.t_client_end is None:
            self.t_client_end = time.monotonic()
        return False

    def stop(self) -> None:
        for proc in (self.client, self.server):
            if proc is not None:
                stop_process(proc)
        if self.client is not None and self.t_client_end is None:
            self.t_client_end = time.monotonic()
        for f in self.logs:
            f.close()
        self.logs.clear()

    def cleanup(self) -> None:
        """Remove bulky artefacts (downloaded bodies) once result() has checked them."""

    @abstractmethod
    def samples(self) -> list[tuple[float, str, float]]: ...

    @abstractmethod
    def result(self) -> dict: ...

    def _t(self, mono: float) -> float:
        return mono - self.ctx.t0


class ClientLogFlow(Flow):
    """A flow whose client is ours and logs JSON lines every 100 ms: `ts` (CLOCK_MONOTONIC s),
    `bytes`, `srtt_ms`, and a final line with `sha256`, `complete`, `elapsed_s`, `rcvbuf`
    (aioquic's quic_endpoint and quic-go's dcexp-quicgo write the same)."""

    @property
    def _client_log(self) -> Path:
        return self.ctx.workdir / "client.jsonl"

    @abstractmethod
    def _endpoint(self, role: str) -> list[str]:
        """The endpoint's command line for `role` (server or client) up to its own options."""

    def _server_files(self) -> list[str]:
        """What our servers serve over TLS: the run's certificate, key and payload file."""
        c = self.ctx
        return ["--cert", str(c.cert), "--key", str(c.key), "--file", str(c.payload)]

    def _client_options(self) -> list[str]:
        """The endpoint's own client options, after the log and the download size."""
        return []

    def start_client(self) -> None:
        argv = self._endpoint("client") + ["--log", str(self._client_log)]
        argv += self._download_args() + self._client_options()
        self.t_client_start = time.monotonic()
        self.client = self._popen(self.ctx.client_ns, argv, "client.log")

    def progress_bytes(self) -> int | None:
        path = self._client_log
        try:
            with open(path, "rb") as f:
                f.seek(max(0, path.stat().st_size - 512))
                tail = f.read().splitlines()
            return int(json.loads(tail[-2 if len(tail) > 1 else -1])["bytes"])
        except (OSError, ValueError, KeyError, IndexError):
            return None

    def _lines(self) -> list[dict]:
        return read_json_lines(self._client_log)

    def result(self) -> dict:
        lines = self._lines()
        final = next((r for r in reversed(lines) if r.get("final")), None)
        res = {
            "bytes": lines[-1]["bytes"] if lines else 0,
            "exit_code": self.client.returncode if self.client else None,
            "complete": bool(
                final
                and (
                    final.get("complete")
                    or (self.spec["duration_s"] and final["elapsed_s"] >= self.spec["duration_s"])
                )
            ),
        }
        if self.size_bytes:
            res["intact"] = bool(
                final
                and res["bytes"] == self.size_bytes
                and final["sha256"] == sha256_file(self.ctx.payload)
            )
        if final:
            res["udp_rcvbuf_bytes"] = final.get("rcvbuf")
        if self.size_bytes and final and final.get("complete"):
            res["completion_s"] = final["elapsed_s"]
        return res


def qlog_metrics(qlog_dir: Path, base: float) -> list[tuple[float, str, float]]:
    """The sender's RTT and cwnd from the `recovery:metrics_updated` events of JSON-SEQ qlogs
    (ngtcp2's and quic-go's servers write them); `base` is the connection start in run time."""
    events = []
    for path in sorted(qlog_dir.glob("*.sqlog")):
        for record in path.read_text(errors="replace").split("\x1e"):
            if "metrics_updated" not in record:
                continue
            try:
                events.append(json.loads(record))
            except ValueError:
                continue
    return metrics_samples(events, base)


def metrics_samples(events: Iterable[dict], base: float) -> list[tuple[float, str, float]]:
    """RTT and cwnd samples from a sender's `recovery:metrics_updated` events (ms since the
    connection start; `base` is that start in run time). A qlog may log only the metrics
    that changed (tquic does): an event without `smoothed_rtt` or `congestion_window` adds
    no sample of it."""
    out, measured = [], False
    for ev in events:
        data = ev.get("data", {})
        t = base + float(ev.get("time", 0)) / 1000
        # before the first RTT sample (latest_rtt) smoothed_rtt is the 333 ms guess
        measured = measured or bool(data.get("latest_rtt"))
        if measured and "smoothed_rtt" in data:
            out.append((t, "rtt_ms", float(data["smoothed_rtt"])))
        if "congestion_window" in data:
            out.append((t, "cwnd_bytes", float(data["congestion_window"])))
    return out


def compress_qlogs(qlog_dir: Path) -> None:
    """gzip a sender's qlogs (tens of MB per 100 MB download)."""
    for path in qlog_dir.glob("*.sqlog"):
        with open(path, "rb") as src, gzip.open(f"{path}.gz", "wb") as dst:
            shutil.copyfileobj(src, dst)
        path.unlink()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def payload_bytes(flow: dict) -> int:
    """The file a flow's server sends: its size_mb, or 4 MiB served in a loop for duration_s."""
    return int(flow["size_mb"] * MB) if flow["size_mb"] else 4 * 1024 * 1024


def run_payload_bytes(flows: list[dict]) -> int:
    """The disk a run's payload files take: one file per distinct size (payload-<size>.bin)."""
    return sum({payload_bytes(f) for f in flows})


def make_payload(path: Path, nbytes: int, seed: int) -> Path:
    """Random bytes (checksummed after download); reused if already the right size."""
    if not path.exists() or path.stat().st_size != nbytes:
        import random

        rng = random.Random(seed)
        with open(path, "wb") as f:
            left = nbytes
            while left:
                n = min(left, 1 << 20)
                f.write(rng.randbytes(n))
                left -= n
    return path


def make_cert(directory: Path) -> tuple[Path, Path]:
    """An EC P-256 self-signed certificate for the QUIC servers."""
    key, cert = directory / "server.key", directory / "server.crt"
    if not cert.exists():
        argv = [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "30",
            "-subj",
            "/CN=dcexp-server",
        ]
        proc = subprocess.run(argv, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"openssl failed: {proc.stderr.strip()}")
    return cert, key


def registry() -> dict[str, type[Flow]]:
    from experiments.flows.aioquic_flow import AioquicFlow
    from experiments.flows.mpquic import MpquicFlow
    from experiments.flows.mptcp import MptcpFlow
    from experiments.flows.ngtcp2 import Ngtcp2Flow
    from experiments.flows.ping import PingFlow
    from experiments.flows.quicgo import QuicgoFlow
    from experiments.flows.tcp import TcpFlow

    kinds = (Ngtcp2Flow, AioquicFlow, QuicgoFlow, TcpFlow, MptcpFlow, MpquicFlow, PingFlow)
    return {cls.kind: cls for cls in kinds}


def make_flow(spec: dict, ctx: FlowContext) -> Flow:
    plugins = registry()
    if spec["kind"] not in plugins:
        raise ValueError(f"flow kind {spec['kind']!r} is not one of {', '.join(plugins)}")
    os.makedirs(ctx.workdir, exist_ok=True)
    return plugins[spec["kind"]](spec=spec, ctx=ctx)
