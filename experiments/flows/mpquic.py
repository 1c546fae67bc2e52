"""Multipath QUIC flows: tquic's client and server (crate tquic_tools, pinned, built by
`make build` into build/tquic/) over the two legs as two IP paths.

As for MPTCP, the client runs on the testbed's `mp` device (an address per leg, each an SC
user of its leg) and the server behind the switch; with `paths: 2` the client offers both
addresses and multipath is negotiated (the IETF multipath draft), `paths: 1` is single-path
QUIC with the same implementation (the reference), which may also run on an SC client
(`client: sc-a|sc-b`, its one address). A `size_mb` download is an HTTP/0.9 GET of the
payload, dumped to disk and checksummed; a `duration_s` download repeats GETs of the 4 MiB
payload on one connection (two at a time, so that the pipe never empties between them)
until the runner stops the client at the time limit: its goodput is the bytes delivered
over duration_s, and there is nothing to checksum.

tquic prints no periodic statistics, and its qlog (JSON-SEQ, both ends) names no path: 1-RTT
packet headers carry no connection ID and `recovery:metrics_updated` no path ID (tquic 1.6).
So:
- `bytes`: the client's stream data handed to the application (qlog `stream_data_moved`),
  so goodput counts from the application's own first byte;
- `rtt_ms`, `cwnd_bytes`: the server's (the sender's) metrics_updated, of whichever path an
  ACK just updated: per-path RTT and cwnd are not available from tquic;
- per-path bytes (result `path_bytes`, on the dual-connected device only): what the device
  received on each leg's interface while the client ran (the device carries only multipath
  flows: concurrent ones share it);
  the per-leg time series is linkem's (`link` rows).
The runner keeps the last value per metric per 100 ms.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from experiments.flows import Flow, compress_qlogs, metrics_samples, sha256_file
from experiments.run.netns import NetnsError
from experiments.run.parts import BUILD, MP_ADDRS

TQUIC_DIR = BUILD / "tquic" / "bin"
TQUIC_CLIENT = TQUIC_DIR / "tquic_client"
TQUIC_SERVER = TQUIC_DIR / "tquic_server"
# tquic's congestion controllers (tquic::CongestionControlAlgorithm in 1.6.0): it has no NewReno
CCS = {"cubic": "CUBIC", "bbr": "BBR", "bbr3": "BBR3", "copa": "COPA"}
# its multipath schedulers (tquic::MultipathAlgorithm)
SCHEDULERS = {"minrtt": "MINRTT", "roundrobin": "ROUNDROBIN", "redundant": "REDUNDANT"}
PATHS = (1, 2)
LEGS = ("a", "b")


def qlog_events(path: Path, name: str) -> list[dict]:
    """The records of one JSON-SEQ qlog naming event `name` (a record cut short by a kill is
    skipped); the others are not parsed (a 180 s download logs about a million events)."""
    out = []
    for record in path.read_text(errors="replace").split("\x1e"):
        if name not in record:
            continue
        try:
            ev = json.loads(record)
        except ValueError:
            continue
        if ev.get("name") == name:
            out.append(ev)
    return out


class MpquicFlow(Flow):
    kind = "mpquic"
    server_socket = "udp"
    tools = ()
    built = (TQUIC_CLIENT, TQUIC_SERVER)
    self_timed = False
    _rx_start: dict[str, int] | None = None  # the legs' receive counters at client start
    _rx_end: dict[str, int] | None = None  # ... and when the client ended

    @property
    def _qlog_dir(self) -> Path:
        return self.ctx.workdir / "qlog"

    def _transport_args(self, role: str) -> list[str]:
        argv = ["--congestion-control-algor", CCS[self.spec["cc"]], "--log-level", "WARN"]
        if self.spec["paths"] == 2:
            argv += ["--enable-multipath", "--multipath-algor"]
            argv += [SCHEDULERS[self.spec["scheduler"]]]
        return argv + ["--qlog-dir", str(self._qlog_dir / role)]

    def start_server(self) -> None:
        c = self.ctx
        (self._qlog_dir / "server").mkdir(parents=True, exist_ok=True)
        argv = [str(TQUIC_SERVER), "-l", f"{c.server_addr}:{c.port}", "-c", str(c.cert)]
        argv += ["-k", str(c.key), "-r", str(c.payload.parent)] + self._transport_args("server")
        self.server = self._popen(c.server_ns, argv, "server.log")

    @property
    def _on_device(self) -> bool:
        """On the dual-connected device (an address per leg), not on an SC client."""
        return self.spec["client"] == "dc"

    def _request_args(self) -> list[str]:
        if self.size_bytes:
            return ["--dump-dir", str(self.ctx.workdir / "download")]
        # "0": no limit on requests; stopped at duration_s by running()
        argv = ["--max-requests-per-conn", "0", "--total-requests-per-thread", "0"]
        return argv + ["--max-concurrent-requests", "2"]

    def start_client(self) -> None:
        c = self.ctx
        (self._qlog_dir / "client").mkdir(parents=True, exist_ok=True)
        argv = [str(TQUIC_CLIENT), "-c", f"{c.server_addr}:{c.port}", "--alpn", "http/0.9"]
        if self._on_device:  # an SC client's one address is its default source
            local = [MP_ADDRS[leg] for leg in LEGS[: self.spec["paths"]]]
            argv += ["--local-addresses", ",".join(local)]
        # idle timeout 5 s (tquic's 30 s would hold a dead run): longer than a 3 s leg outage
        argv += ["--idle-timeout", "5000"] + self._request_args()
        argv += self._transport_args("client") + [
            f"https://{c.server_addr}:{c.port}/{c.payload.name}"
        ]
        self._rx_start = self._leg_rx_bytes() if self._on_device else None
        self.t_client_start = time.monotonic()
        self.client = self._popen(c.client_ns, argv, "client.log")

    @property
    def _download(self) -> Path:
        return self.ctx.workdir / "download" / self.ctx.payload.name

    def _qlog(self, role: str, name: str) -> list[dict]:
        files = sorted((self._qlog_dir / role).glob("*.qlog"))
        return qlog_events(files[0], name) if files else []

    def _leg_rx_bytes(self) -> dict[str, int]:
        """Bytes received so far on each leg's interface of the device."""
        out = self.ctx.client_ns.run(["ip", "-j", "-s", "addr", "show"]).stdout
        by_addr = {
            a["local"]: i["stats64"]["rx"]["bytes"]
            for i in json.loads(out)
            for a in i.get("addr_info", [])
        }
        return {leg: by_addr.get(MP_ADDRS[leg], 0) for leg in LEGS}

    def running(self) -> bool:
        alive = super().running()
        if not alive and self._rx_start is not None and self._rx_end is None:
            self._rx_end = self._leg_rx_bytes()
        return alive

    def stop(self) -> None:
        if self._rx_start is not None and self._rx_end is None:
            try:
                self._rx_end = self._leg_rx_bytes()
            except NetnsError:  # torn down first (a failed or interrupted run): no per-leg bytes
                pass
        super().stop()

    def _client_samples(self) -> list[tuple[float, str, float]]:
        base = self._t(self.t_client_start)
        out, delivered = [], 0
        for ev in self._qlog("client", "quic:stream_data_moved"):
            data = ev.get("data", {})
            if data.get("to") == "application":
                delivered += int(data["length"])
                out.append((base + ev["time"] / 1000, "bytes", float(delivered)))
        return out

    def _server_samples(self) -> list[tuple[float, str, float]]:
        base = self._t(self.t_client_start)
        return metrics_samples(self._qlog("server", "recovery:metrics_updated"), base)

    def samples(self) -> list[tuple[float, str, float]]:
        return self._client_samples() + self._server_samples()

    def result(self) -> dict:
        client = self._client_samples()
        res = {
            "exit_code": self.client.returncode if self.client else None,
            "scheduler": self.spec["scheduler"] if self.spec["paths"] == 2 else "single-path",
        }
        if not self.size_bytes:  # by duration: what reached the application until stopped
            res["bytes"] = int(client[-1][2]) if client else 0
            res["complete"] = self.stopped_at_duration and res["bytes"] > 0
            return self._with_path_bytes(res)
        res["bytes"] = self._download.stat().st_size if self._download.exists() else 0
        res["complete"] = bool(res["exit_code"] == 0 and res["bytes"] == self.size_bytes)
        res["intact"] = res["complete"] and sha256_file(self._download) == sha256_file(
            self.ctx.payload
        )
        delivered = [t for t, metric, _ in client if metric == "bytes"]
        if res["complete"] and delivered:
            res["completion_s"] = delivered[-1] - self._t(self.t_client_start)
            span = delivered[-1] - delivered[0]
            res["goodput_mbit_from_first_byte"] = res["bytes"] * 8 / span / 1e6 if span else None
        return self._with_path_bytes(res)

    def _with_path_bytes(self, res: dict) -> dict:
        if self._rx_start is not None and self._rx_end is not None:
            res["path_bytes"] = {leg: self._rx_end[leg] - self._rx_start[leg] for leg in LEGS}
        return res

    def cleanup(self) -> None:
        self._download.unlink(missing_ok=True)
        for role in ("client", "server"):
            for path in (self._qlog_dir / role).glob("*.qlog"):
                path.rename(path.with_suffix(".sqlog"))
            compress_qlogs(self._qlog_dir / role)
