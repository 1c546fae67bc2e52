"""Link emulation for the DC legs: linkem (ours, the default) or tc netem, from one spec.

    spec = LinkSpec.from_dict({"rate_mbit": 20, "delay_ms": 10, "delay_cv": 0.1})
    link = start_link("linkem", "veth-in", "veth-out", ab=spec, ba=LinkSpec(delay_ms=10),
                      netns=ns, stats_path=Path("link.jsonl"))
    link.set("ab", loss=1)          # leg down, at once
    link.stats()["ab"]["frames"]
    final = link.stop()             # {"ab": {...}, "ba": {...}}

Direction "ab" carries frames received on if_a out of if_b; "ba" the reverse.  The SPEC
language, the stats format and the control protocol are linkem's (experiments/linkem/README.md).
"""

from __future__ import annotations

import json
import math
import os
import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path

from dccommon.jsonlines import read_json_lines
from dccommon.processes import stop_process
from experiments.run import tc
from experiments.run.linkspec import (
    ETH_FRAME_BYTES,
    LINKEM_BINARY,
    LinkSpec,
    LinkSpecError,
    change_spec,
)
from experiments.run.netns import Namespace, run

DIRECTIONS = ("ab", "ba")
# Deadlines for linkem to answer, to exit with its final stats: a loaded machine may starve it
# for seconds, and a linkem that answers or exits ends the wait at once.
START_TIMEOUT_S = 60.0
REPLY_TIMEOUT_S = 30.0
STOP_GRACE_S = 30.0
# linkem runs SCHED_FIFO by default from here: on the 2-core testbed, shared with the switch,
# the agent and the endpoints, an ordinary task's wake-ups are late by up to ~10 ms under
# load, a real-time one's by tens of us. linkem sleeps between departures (no busy-poll
# unless asked), so it costs only what its traffic needs. rt_priority=0 turns this off, and
# so does a niced caller (rt_priority_for_caller): real-time would outrank everyone else's
# work, and a bench at nice 19 then takes the cores from a campaign beside it.
DEFAULT_RT_PRIORITY = 10
# dcexp's departure slack, "auto": a leg whose full-size frames leave less than AUTO_SLACK_US
# apart at its rate (above 242 Mbit/s: NR's legs) runs linkem with that slack, a wake-up per
# few frames instead of one per frame (experiments/docs/measurements.md, "Where the CPU goes
# in the chain, and what was cut"); a slower leg (the paper's 20 Mbit/s) keeps every frame
# at its due time, since a slack below the frame spacing saves no wake-up there.
AUTO_SLACK = "auto"
AUTO_SLACK_US = 50


class LinkError(RuntimeError):
    """A link emulator could not start, refused a change, or died."""


def departure_slack_us(asked: int | str, kind: str, ab: LinkSpec, ba: LinkSpec) -> int:
    """The --departure-slack-us a leg's linkem runs with: `asked` (µs, 0 to 1000), or for
    AUTO_SLACK, AUTO_SLACK_US when a full-size frame takes less than that on the faster
    direction's rate (a trace's mean rate; unlimited counts as no rate), else 0. netem has
    no slack: auto gives it 0, a number above 0 is refused by the testbed."""
    if asked != AUTO_SLACK:
        return int(asked)
    if kind != "linkem":
        return 0
    rate_bits = max(spec.rate_bits() or 0 for spec in (ab, ba))
    spacing_us = ETH_FRAME_BYTES * 8 / rate_bits * 1e6 if rate_bits else math.inf
    return AUTO_SLACK_US if spacing_us < AUTO_SLACK_US else 0


def rt_priority_for_caller(asked: int | None = None) -> int:
    """linkem's SCHED_FIFO priority (0: an ordinary task): `asked` when given, else
    DEFAULT_RT_PRIORITY, unless this process runs niced (nice > 0): then 0, and linkem
    inherits the niceness as the caller's other children do."""
    if asked is not None:
        return int(asked)
    return 0 if os.getpriority(os.PRIO_PROCESS, 0) > 0 else DEFAULT_RT_PRIORITY


def _check_direction(direction: str) -> None:
    if direction not in DIRECTIONS + ("both",):
        raise LinkSpecError(f"direction {direction!r}: expected ab, ba or both")


class _StopOnExit:
    """`with start_link(...) as link:` stops the link however the block ends."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


class Linkem(_StopOnExit):
    """One running linkem process, driven through its control socket."""

    def __init__(self, binary: str | os.PathLike = LINKEM_BINARY):
        self.binary = Path(binary)
        self.proc: subprocess.Popen | None = None
        self.control_path: Path | None = None
        self.stats_path: Path | None = None
        self._tmpdir: tempfile.TemporaryDirectory | None = None
        self._stderr = None
        self.rt_priority: int | None = None  # the SCHED_FIFO priority it started with

    def start(
        self,
        if_a: str,
        if_b: str,
        ab: LinkSpec,
        ba: LinkSpec,
        netns: Namespace | None = None,
        stats_path: str | os.PathLike | None = None,
        control_path: str | os.PathLike | None = None,
        seed: int = 1,
        stats_interval_ms: int = 100,
        busy_poll_us: int | None = None,
        departure_slack_us: int = 0,
        cpu: int | None = None,
        rt_priority: int | None = None,  # None: rt_priority_for_caller's choice
        feedback: str | None = None,
        io: str = "afpacket",  # linkem's --io: afpacket or afxdp (AF_XDP sockets)
    ) -> Linkem:
        if not self.binary.exists():
            raise LinkError(f"{self.binary} is missing: run `make build` (or make linkem-build)")
        if control_path is None:
            self._tmpdir = tempfile.TemporaryDirectory(prefix="linkem-")
            control_path = Path(self._tmpdir.name) / "control.sock"
        self.control_path = Path(control_path)
        self.stats_path = Path(stats_path) if stats_path else None
        argv = [
            str(self.binary),
            "-i",
            if_a,
            "-i",
            if_b,
            "--ab",
            ab.to_spec(),
            "--ba",
            ba.to_spec(),
            "--seed",
            str(int(seed)),
            "--control",
            str(self.control_path),
            "--stats-interval-ms",
            str(int(stats_interval_ms)),
        ]
        if self.stats_path:
            argv += ["--stats", str(self.stats_path)]
        if busy_poll_us is not None:
            argv += ["--busy-poll-us", str(int(busy_poll_us))]
        if departure_slack_us:  # 0 (the default) is linkem's own: each frame at its due time
            argv += ["--departure-slack-us", str(int(departure_slack_us))]
        if cpu is not None:
            argv += ["--cpu", str(int(cpu))]
        self.rt_priority = rt_priority_for_caller(rt_priority)
        if self.rt_priority:
            argv += ["--rt-priority", str(self.rt_priority)]
        if feedback:  # leg feedback reports: linkem's --feedback SPEC
            argv += ["--feedback", feedback]
        if io != "afpacket":  # linkem's default
            argv += ["--io", io]
        # Lives as long as the process (read after it exits), closed in stop().
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115
        kwargs = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL, "stderr": self._stderr}
        if netns is not None:
            self.proc = netns.popen(argv, **kwargs)
        else:
            self.proc = subprocess.Popen(argv, start_new_session=True, **kwargs)
        self._wait_ready()
        return self

    def _error_output(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace").strip()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise LinkError(
                    self._error_output() or f"linkem exited with {self.proc.returncode}"
                )
            try:
                self._command("stats")
                return
            except OSError:
                time.sleep(0.02)
        stop_process(self.proc)
        raise LinkError(
            f"linkem did not open its control socket {self.control_path} "
            f"within {START_TIMEOUT_S:g} s: {self._error_output()}"
        )

    def _command(self, line: str) -> str:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(REPLY_TIMEOUT_S)
            s.connect(str(self.control_path))
            s.sendall(line.encode() + b"\n")
            buf = b""
            while not buf.endswith(b"\n"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                buf += chunk
        return buf.decode().strip()

    def command(self, line: str) -> str:
        """Send one control command; return the reply, raise LinkError on `error: ...`."""
        if self.proc is None or self.proc.poll() is not None:
            raise LinkError(
                f"linkem is not running: {self._error_output() if self._stderr else ''}"
            )
        reply = self._command(line)
        if reply.startswith("error:"):
            raise LinkError(f"linkem refused '{line}': {reply[len('error:'):].strip()}")
        return reply

    def set(self, direction: str, **changes) -> None:
        """Change keys of one direction (or both) at once, e.g. set("ab", loss=1)."""
        _check_direction(direction)
        self.command(f"set {direction} {change_spec(changes)}")

    def stats(self) -> dict:
        """{"ts_ms": .., "ab": {...}, "ba": {...}}: counters since start, delay since last call."""
        return json.loads(self.command("stats"))

    def stop(self) -> dict:
        """Stop (SIGTERM: final stats line) and return {"ab": {...}, "ba": {...}}."""
        if self.proc is None:
            return {}
        final = {}
        try:
            if self.proc.poll() is None:
                final = {d: v for d, v in self.stats().items() if d in DIRECTIONS}
        except (OSError, LinkError, ValueError):
            pass
        rc = stop_process(self.proc, grace_s=STOP_GRACE_S)
        if self.stats_path:
            for rec in read_json_lines(self.stats_path):
                if rec.get("final"):
                    final[rec["dir"]] = rec
        err = self._error_output()
        self._stderr.close()
        self.proc = None
        if self._tmpdir:
            self._tmpdir.cleanup()
        if rc not in (0, None):
            raise LinkError(f"linkem exited with {rc}: {err}")
        return final


class NetemLink(_StopOnExit):
    """The same link with tc netem: a Linux bridge joins if_a and if_b, and each direction is
    a netem qdisc on the interface it leaves by (ab on if_b, ba on if_a)."""

    def __init__(self):
        self.ns: str | None = None
        self.bridge: str | None = None
        self.devs = {}
        self.specs = {}
        self.stats_path: Path | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(
        self,
        if_a: str,
        if_b: str,
        ab: LinkSpec,
        ba: LinkSpec,
        netns: Namespace | None = None,
        stats_path: str | os.PathLike | None = None,
        control_path=None,
        seed: int = 1,
        stats_interval_ms: int = 100,
        **_,
    ) -> NetemLink:
        self.ns = netns.name if netns else None
        tc.require_netem(if_b, self.ns)
        self.devs = {"ab": if_b, "ba": if_a}
        self.specs = {"ab": ab.validate(), "ba": ba.validate()}
        for direction, dev in self.devs.items():
            tc.netem_args(self.specs[direction])  # refuse before changing anything
        self.bridge = f"{if_a[:11]}nbr"
        run(["ip", "link", "add", self.bridge, "type", "bridge"], netns=self.ns)
        for dev in (if_a, if_b):
            run(["ip", "link", "set", dev, "master", self.bridge], netns=self.ns)
        run(["ip", "link", "set", self.bridge, "up"], netns=self.ns)
        for direction, dev in self.devs.items():
            tc.set_netem(dev, self.specs[direction], self.ns)
        if stats_path:
            self.stats_path = Path(stats_path)
            self._thread = threading.Thread(
                target=self._sample, args=(stats_interval_ms,), daemon=True
            )
            self._thread.start()
        return self

    def _sample(self, interval_ms: int) -> None:
        with open(self.stats_path, "w") as f:
            while not self._stop.wait(interval_ms / 1000):
                f.writelines(json.dumps(self._record(direction)) + "\n" for direction in DIRECTIONS)
                f.flush()

    def _record(self, direction: str) -> dict:
        s = tc.qdisc_stats(self.devs[direction], self.ns)
        spec = self.specs[direction]
        return {
            "ts_ms": time.monotonic() * 1000,
            "dir": direction,
            "frames": s["frames"],
            "bytes": s["bytes"],
            "queue_pkts": s["queue_pkts"],
            "queue_bytes": s["queue_bytes"],
            "drops": {"netem": s["drops"]},
            "rate_mbit": (spec.rate_bits() or 0) / 1e6,
        }

    def set(self, direction: str, **changes) -> None:
        _check_direction(direction)
        for d in DIRECTIONS if direction == "both" else (direction,):
            spec = replace(self.specs[d], **changes).validate()
            try:
                tc.set_netem(self.devs[d], spec, self.ns, change=True)
            except tc.TcError as exc:
                raise LinkError(str(exc)) from None
            self.specs[d] = spec

    def stats(self) -> dict:
        return {"ts_ms": time.monotonic() * 1000, **{d: self._record(d) for d in DIRECTIONS}}

    def stop(self) -> dict:
        self._stop.set()
        if self._thread:
            self._thread.join()
        final = {}
        try:
            final = {d: self._record(d) for d in DIRECTIONS}
        except tc.TcError:
            pass
        for dev in self.devs.values():
            tc.delete_root(dev, self.ns)
        if self.bridge:
            run(["ip", "link", "del", self.bridge], netns=self.ns, check=False)
        return final


def start_link(
    kind: str,
    if_a: str,
    if_b: str,
    ab: LinkSpec,
    ba: LinkSpec,
    netns: Namespace | None = None,
    stats_path: str | os.PathLike | None = None,
    control_path: str | os.PathLike | None = None,
    seed: int = 1,
    **options,
):
    """Start the emulated link between if_a and if_b: "linkem" (default) or "netem"."""
    if kind == "linkem":
        link = Linkem()
    elif kind == "netem":
        link = NetemLink()
    else:
        raise LinkSpecError(f"link kind {kind!r}: expected linkem or netem")
    try:
        return link.start(
            if_a,
            if_b,
            ab,
            ba,
            netns=netns,
            stats_path=stats_path,
            control_path=control_path,
            seed=seed,
            **options,
        )
    except tc.TcError as exc:
        raise LinkError(str(exc)) from None
