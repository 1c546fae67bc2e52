"""MPTCP flows: the baseline that runs the same two legs end to end, as two IP paths.

The DC client's device gets an address on each leg instead of the PDCP agent (the testbed's
`mp` host: 10.0.0.3 behind leg A, 10.0.0.4 behind leg B, each an `sc` user of the switch), and
kernel MPTCP with the flow's `scheduler` (one of net.mptcp.available_schedulers; a
kernel without BPF schedulers offers only `default`) spreads one download over a subflow per leg. Server
and client are ours (`experiments.flows.mptcp_endpoint`): the client logs bytes and the
SHA-256 of the download, the server each subflow's sender-side TCP_INFO every 100 ms.

Samples: `bytes` (client), `rtt_ms` (the subflows' smoothed RTTs weighted by the bytes each
carried in the interval, i.e. the delay the data saw), `cwnd_bytes` (sum), and per leg
`subflow_<leg>_bytes` (acked), `subflow_<leg>_rtt_ms`, `subflow_<leg>_cwnd_bytes`.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from dccommon.jsonlines import read_json_lines
from experiments.flows import Flow, sha256_file
from experiments.run.parts import MP_ADDRS

CC_NAMES = {"newreno": "reno", "cubic": "cubic", "bbr": "bbr"}
SCHEDULERS_SYSCTL = Path("/proc/sys/net/mptcp/available_schedulers")


def kernel_schedulers() -> tuple[str, ...]:
    """The MPTCP packet schedulers this kernel offers (before BPF schedulers: `default`)."""
    try:
        return tuple(SCHEDULERS_SYSCTL.read_text().split()) or ("default",)
    except OSError:
        return ("default",)


class MptcpFlow(Flow):
    kind = "mptcp"
    server_socket = "tcp"
    tools = ()

    def _endpoint(self, role: str) -> list[str]:
        return self._our_endpoint([sys.executable, "-m", "experiments.flows.mptcp_endpoint"], role)

    def start_server(self) -> None:
        argv = self._endpoint("server") + [
            "--file",
            str(self.ctx.payload),
            "--cc",
            CC_NAMES[self.spec["cc"]],
            "--log",
            str(self.ctx.workdir / "server.jsonl"),
        ]
        self.server = self._popen(self.ctx.server_ns, argv, "server.log")

    def start_client(self) -> None:
        argv = self._endpoint("client") + ["--log", str(self.ctx.workdir / "client.jsonl")]
        argv += self._download_args()
        self.t_client_start = time.monotonic()
        self.client = self._popen(self.ctx.client_ns, argv, "client.log")

    def progress_bytes(self) -> int | None:
        lines = read_json_lines(self.ctx.workdir / "client.jsonl")
        return int(lines[-1]["bytes"]) if lines else None

    def _leg(self, sub: dict) -> str:
        return next((leg for leg, a in MP_ADDRS.items() if a == sub["remote"]), "x")

    def _leg_records(self) -> list[tuple[float, dict[str, dict]]]:
        """Each server record as (time, {leg: subflow}), the leg's `bytes_acked` made
        cumulative over the run. A subflow's counter only grows; a smaller value on the
        same leg is a new subflow (re-joined after an outage), so its count adds on; a
        leg missing from a record (torn down at the end) keeps what it carried."""
        carried: dict[str, int] = {}  # bytes of the leg's earlier subflows
        last: dict[str, int] = {}
        out = []
        for rec in read_json_lines(self.ctx.workdir / "server.jsonl"):
            legs = {}
            for sub in rec["subflows"]:
                leg = self._leg(sub)
                acked = sub["bytes_acked"]
                if acked < last.get(leg, 0):
                    carried[leg] = carried.get(leg, 0) + last[leg]
                last[leg] = acked
                legs[leg] = dict(sub, bytes_acked=carried.get(leg, 0) + acked)
            out.append((self._t(rec["ts"]), legs))
        return out

    def samples(self) -> list[tuple[float, str, float]]:
        out = []
        for rec in read_json_lines(self.ctx.workdir / "client.jsonl"):
            out.append((self._t(rec["ts"]), "bytes", float(rec["bytes"])))
        last: dict[str, int] = {}
        for t, legs in self._leg_records():
            weighted, weight, rtts, cwnd = 0.0, 0, [], 0
            for leg, sub in legs.items():
                delta = sub["bytes_acked"] - last.get(leg, 0)
                last[leg] = sub["bytes_acked"]
                out.append((t, f"subflow_{leg}_bytes", float(sub["bytes_acked"])))
                out.append((t, f"subflow_{leg}_rtt_ms", sub["rtt_ms"]))
                out.append((t, f"subflow_{leg}_cwnd_bytes", float(sub["cwnd_bytes"])))
                weighted += delta * sub["rtt_ms"]
                weight += delta
                rtts.append(sub["rtt_ms"])
                cwnd += sub["cwnd_bytes"]
            if rtts:
                rtt = weighted / weight if weight else sum(rtts) / len(rtts)
                out.append((t, "rtt_ms", rtt))
                out.append((t, "cwnd_bytes", float(cwnd)))
        return out

    def result(self) -> dict:
        lines = read_json_lines(self.ctx.workdir / "client.jsonl")
        final = next((r for r in reversed(lines) if r.get("final")), None)
        res = {
            "bytes": lines[-1]["bytes"] if lines else 0,
            "exit_code": self.client.returncode if self.client else None,
            "complete": bool(final and final["complete"]),
        }
        res["scheduler"] = self.spec["scheduler"]
        if self.size_bytes:
            res["intact"] = bool(
                final
                and res["bytes"] == self.size_bytes
                and final["sha256"] == sha256_file(self.ctx.payload)
            )
            if final and final["complete"]:
                res["completion_s"] = final["elapsed_s"]
        subflow_bytes: dict[str, int] = {}
        for _t, legs in self._leg_records():
            for leg, sub in legs.items():
                subflow_bytes[leg] = max(subflow_bytes.get(leg, 0), sub["bytes_acked"])
        if subflow_bytes:
            res["subflow_bytes"] = subflow_bytes
        return res
