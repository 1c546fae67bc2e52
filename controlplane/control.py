"""The controller's feedback loop (`dcctl control`): reads the legs' feedback reports as
PacketIns (the -D DC_ADAPTIVE profile punts them to the CPU port), runs a split policy
(controlplane/policies/) and applies its decisions live, one MODIFY of the user's entry
each (the PDCP SN continues). Every report and decision is logged as one JSON line:

    {"event": "report", "t": 1767.123, "leg": "b", "drain_rate": 1250000, ...}
    {"event": "decision", "t": 1767.131, "share_a": 0.75, "ratio": "75:25", "reason": ...}

`t` is wall-clock time (s), so decisions line up with a run's events and samples.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import signal
import sys
import threading
import time
from pathlib import Path
from typing import IO

from controlplane.client import P4RuntimeError
from controlplane.model import SplitterError
from controlplane.pdcp import FeedbackError, decode_report, is_report
from controlplane.policies import (
    KNOB_NAMES,
    POLICY_NAMES,
    Decision,
    Tuning,
    make_policy,
    unused_knob,
)
from controlplane.splitter import Splitter
from dccommon.cliargs import add_old_name, float_range, parse_float, parse_int

PACKET_IN_PORT_ID = 1  # packet_in.ingress_port in the adaptive profile's P4Info
TICK_S = 0.005  # how often silence is checked when no report arrives


class ControlError(SplitterError):
    pass


class JsonLog:
    def __init__(self, out: IO[str]):
        self.out = out

    def __call__(self, event: str, **fields) -> None:
        self.out.write(json.dumps({"event": event, "t": round(time.time(), 6), **fields}) + "\n")
        self.out.flush()


def _ingress_port(packet) -> int | None:
    for meta in packet.metadata:
        if meta.metadata_id == PACKET_IN_PORT_ID:
            return int.from_bytes(meta.value, "big")
    return None


def run_control(
    sw: Splitter,
    user: str,
    policy_name: str,
    tuning: Tuning,
    log: JsonLog,
    duration_s: float | None = None,
    log_reports: bool = True,
    stop_event: threading.Event | None = None,
) -> dict:
    """Runs until duration_s has passed, `stop_event` is set (in-process callers), SIGTERM or
    Ctrl-C. Returns counts of what it did."""
    if not sw.adaptive:
        raise ControlError(
            "the switch does not run the adaptive profile (-D DC_ADAPTIVE), which punts the "
            "legs' feedback reports to the controller: push build/p4/dc_splitter_adaptive.*"
        )
    cfg = next(
        (u for u in sw.users() if user in (u.addr, u.name)),
        None,
    )
    if cfg is None or cfg.mode == "sc":
        known = ", ".join(f"{u.name or u.addr} ({u.mode})" for u in sw.users()) or "none"
        raise ControlError(f"user {user!r} is not a DC user of this switch (users: {known})")
    base_mode = "dc-split" if cfg.mode == "dc-dup" else cfg.mode
    batch, base_share = cfg.batch, cfg.k / cfg.batch
    legs = {cfg.leg_a: "a", cfg.leg_b: "b"}
    start = time.monotonic()
    policy = make_policy(policy_name, base_share, tuning, now=start)
    counts = {"reports": 0, "decisions": 0, "write_errors": 0, "ignored": 0}
    log(
        "start",
        policy=policy_name,
        user=cfg.addr,
        batch=batch,
        share_a=base_share,
        mode=cfg.mode,
        tuning=vars(tuning),
    )

    stop = []
    in_main = threading.current_thread() is threading.main_thread()  # signals: main only
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.append(True)) if in_main else None

    inst = sw.installed_user(cfg.addr)
    dup_on = cfg.mode == "dc-dup"

    def apply(decision: Decision | None, now: float) -> None:
        nonlocal inst, dup_on
        if decision is None:
            return
        k = min(max(round(decision.share_a * batch), 0), batch)
        t0 = time.monotonic()
        try:
            if decision.dup or dup_on:  # duplication on or off: groups too, the full path
                mode = "dc-dup" if decision.dup else base_mode
                sw.set_user(cfg.addr, mode=mode, ratio=(k, batch - k))
                inst, dup_on = sw.installed_user(cfg.addr), decision.dup
            else:  # a ratio change: the one MODIFY, no read first (cheap under load)
                sw.write_ratio(inst, (k, batch - k))
            error = None
        except (P4RuntimeError, SplitterError) as exc:  # logged; the loop goes on
            counts["write_errors"] += 1
            error = str(exc)
        counts["decisions"] += 1
        log(
            "decision",
            policy=policy_name,
            share_a=round(decision.share_a, 4),
            ratio=f"{k}:{batch - k}",
            dup=decision.dup,
            reason=decision.reason,
            write_ms=round((time.monotonic() - t0) * 1e3, 2),
            error=error,
        )

    try:
        while not stop and (duration_s is None or time.monotonic() - start < duration_s):
            if stop_event is not None and stop_event.is_set():
                break
            packet = sw.client.next_packet_in(TICK_S)
            now = time.monotonic()
            if packet is not None:
                port = _ingress_port(packet)
                frame = bytes(packet.payload)
                leg = legs.get(port)
                try:
                    report = decode_report(frame, port, now) if is_report(frame) else None
                except FeedbackError as exc:
                    log("bad_report", port=port, error=str(exc))
                    report = None
                if report is None or leg is None or report.ue != cfg.addr:
                    counts["ignored"] += 1
                else:
                    counts["reports"] += 1
                    if log_reports:
                        fields = report.as_dict()
                        del fields["t"]
                        log("report", leg_name=leg, **fields)
                    apply(policy.on_report(leg, report, now), now)
            apply(policy.on_tick(now), now)
    except KeyboardInterrupt:
        pass
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, previous)
    log("stop", **counts)
    return counts


__all__ = ["ControlError", "JsonLog", "run_control"]


# ---------------------------------------------------------------------------
# `dcctl control` (its arguments live here, beside the loop they configure)
# ---------------------------------------------------------------------------


def _fraction(text: str) -> float:
    try:
        value = parse_float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a number from 0 to 1")
    return value


def _non_negative(text: str) -> float:
    try:
        value = parse_float(text)
    except ValueError:
        value = -1.0
    if not math.isfinite(value) or value < 0:  # nan and inf, too
        raise argparse.ArgumentTypeError(f"{text!r} must be a finite number >= 0")
    return value


def _count(text: str) -> int:
    try:
        value = parse_int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be a whole number >= 1")
    return value


def add_control_parser(sub, fmt) -> None:
    d = Tuning()
    p = sub.add_parser(
        "control",
        formatter_class=fmt,
        help="feedback loop: change a user's split live from the legs' reports",
        description="Read the legs' feedback reports (PacketIn; needs the -D DC_ADAPTIVE "
        "profile) and change the user's split live with a policy. Logs JSON lines.",
    )
    p.add_argument("user", help="name or address of the DC user")
    p.add_argument("--policy", choices=POLICY_NAMES, default="capacity", help="split policy")
    p.add_argument("--log", type=Path, help="JSON-lines log file (default: stdout)")
    duration = p.add_argument(
        "--duration-s", type=_non_negative, metavar="S", help="stop after this many seconds"
    )
    add_old_name(p, "--duration", duration)
    p.add_argument("--no-reports", action="store_true", help="log decisions only")
    # The knobs: None when not given (the policy's default applies), so that a knob the
    # chosen policy does not read is refused instead of changing nothing.
    knob = functools.partial(_add_knob, p, d)
    knob("--alpha", float_range(0, 1, "alpha", low_open=True), "EWMA weight of a report")
    knob("--hysteresis", _fraction, "smallest share change")
    knob("--min-interval-ms", _non_negative, "least time between two changes", 1e3)
    knob(
        "--min-share",
        float_range(0, 0.5, "min share"),  # each of two legs: at most half
        "probe share each leg keeps (capacity, delay, failover)",
    )
    knob("--gain", float_range(0, 1e6, "gain", low_open=True), "delay policy gain")
    knob(
        "--silence-ms",
        float_range(0, 3.6e6, "silence", low_open=True),
        "failover: a leg silent this long (while the other reports) is down",
        1e3,
    )
    knob(
        "--down-reports",
        _count,
        "failover: consecutive reports losing everything before a leg is down",
    )
    knob(
        "--up-reports", _count, "failover: consecutive delivering reports before a leg is up again"
    )
    p.add_argument(
        "--dup",
        action="store_const",
        const=True,
        help="failover: duplicate instead of moving the traffic",
    )


def _add_knob(p, defaults: Tuning, option: str, kind, text: str, unit: float = 1.0) -> None:
    field = KNOB_NAMES[option[2:].replace("-", "_")]
    default = getattr(defaults, field) * unit
    p.add_argument(option, type=kind, help=f"{text} (default: {default:g})")


def check_control_options(args) -> None:
    """Before connecting: a knob the chosen policy does not read (it would change nothing).
    ValueError naming the option and the policies that read it."""
    given = [k for k in KNOB_NAMES if getattr(args, k) is not None]
    problem = unused_knob(args.policy, given)
    if problem:
        raise ValueError("--" + problem.replace("_", "-", problem.index(":")))


def _tuning(args) -> Tuning:
    """The policy's Tuning: its defaults, with the knobs given on the command line."""
    scale = {"min_interval_ms": 1e-3, "silence_ms": 1e-3}
    return Tuning(
        **{
            KNOB_NAMES[k]: getattr(args, k) * scale.get(k, 1)
            for k in KNOB_NAMES
            if getattr(args, k) is not None
        }
    )


def cmd_control(args, sw: Splitter) -> None:
    tuning = _tuning(args)
    if args.log:
        with open(args.log, "w") as out:
            run_control(
                sw,
                args.user,
                args.policy,
                tuning,
                JsonLog(out),
                args.duration_s,
                not args.no_reports,
            )
    else:
        run_control(
            sw,
            args.user,
            args.policy,
            tuning,
            JsonLog(sys.stdout),
            args.duration_s,
            not args.no_reports,
        )
