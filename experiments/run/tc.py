"""The one module that runs `tc`: netem as the alternative to linkem where the kernel has it.

Every command is an argument list whose return code is checked (STYLE.md, "Experiments").
The translation from a LinkSpec to netem's arguments lives here, next to its limits: what
netem cannot express (bandwidth traces, byte-sized queues, token bucket bursts, Bernoulli and
Gilbert-Elliott loss together) is refused with a message that names linkem.
"""

from __future__ import annotations

import json
import math

from experiments.run.linkspec import LinkSpec
from experiments.run.netns import NetnsError, run

UNKNOWN_QDISC = "Specified qdisc kind is unknown"


class TcError(RuntimeError):
    """A tc command failed, or netem cannot express the requested link."""


def tc(argv: list[str], netns: str | None = None) -> str:
    """Run `tc ARGV` (in `netns`), return stdout; raise TcError with tc's own message."""
    try:
        return run(["tc"] + argv, netns=netns).stdout
    except NetnsError as exc:
        raise TcError(str(exc)) from None


def _ms(value: float) -> str:
    return f"{value:.6g}ms"


def _pct(p: float) -> str:
    return f"{p * 100:.6g}%"


def netem_args(spec: LinkSpec) -> list[str]:
    """The netem parameters for one direction of `spec` (after `netem`)."""
    spec.validate()
    if spec.trace:
        raise TcError(
            f"netem cannot replay a bandwidth trace ({spec.trace}); use linkem, "
            "which replays Mahimahi traces"
        )
    if spec.burst_bytes:
        raise TcError("netem's rate has no token bucket burst (burst_bytes); use linkem")
    if spec.loss_at == "departure" and (spec.loss or spec.ge):
        raise TcError(
            "netem drops lost frames on arrival (loss_at=enqueue); loss_at=departure (after "
            "serialization) needs linkem"
        )
    if spec.ge and spec.loss:
        raise TcError("netem takes one loss model: give loss or ge, not both (linkem takes both)")
    if spec.queue_bytes is not None:
        raise TcError(
            "netem limits its queue in packets, not bytes: use queue_pkts, or "
            "queue_bdp with a rate, or linkem"
        )
    args: list[str] = []
    sd = spec.delay_sd_ms()
    if spec.delay_ms or sd:
        args += ["delay", _ms(spec.delay_ms)]
        if sd and spec.dist != "const":
            # netem's tables are scaled by the jitter: the standard deviation for normal,
            # pareto and paretonormal, the half-width for uniform (its built-in default).
            jitter = sd * math.sqrt(3) if spec.dist == "uniform" else sd
            args += [_ms(jitter)]
            if spec.dist != "uniform":
                args += ["distribution", spec.dist]
    if spec.loss:
        args += ["loss", "random", _pct(spec.loss)]
    if spec.ge:
        args += ["loss", "gemodel"] + [_pct(p) for p in spec.ge]
    if spec.rate_mbit:
        args += ["rate", f"{spec.rate_mbit * 1000:.6g}kbit"]
    limit = spec.queue_limit_pkts()
    if limit is not None:
        args += ["limit", str(limit)]
    # reorder: netem keeps jittered frames in order only when it also limits the rate
    # (without one it sorts them by send time); experiments/linkem/docs/netem-differences.md lists this difference.
    return args


def has_netem(dev: str, netns: str | None = None) -> bool:
    """Whether this kernel has sch_netem: try it on `dev` (its root qdisc is restored)."""
    try:
        tc(["qdisc", "add", "dev", dev, "root", "handle", "1:", "netem", "delay", "0ms"], netns)
    except TcError as exc:
        if UNKNOWN_QDISC in str(exc):
            return False
        raise
    tc(["qdisc", "del", "dev", dev, "root"], netns)
    return True


def require_netem(dev: str, netns: str | None = None) -> None:
    if not has_netem(dev, netns):
        raise TcError(
            f"this kernel has no netem (`tc qdisc add dev {dev} root netem` answers "
            f'"{UNKNOWN_QDISC}"); use linkem, the user-space link emulator '
            '(start_link(kind="linkem"), dcexp run --link linkem, the default)'
        )


def set_netem(dev: str, spec: LinkSpec, netns: str | None = None, change: bool = False) -> None:
    """Install (or change in place) netem as the root qdisc of `dev`."""
    verb = "change" if change else "replace"
    tc(["qdisc", verb, "dev", dev, "root", "handle", "1:", "netem"] + netem_args(spec), netns)


def delete_root(dev: str, netns: str | None = None) -> None:
    """Back to the default qdisc; a device without one of ours is left alone."""
    try:
        tc(["qdisc", "del", "dev", dev, "root"], netns)
    except TcError as exc:
        if "No such file or directory" not in str(exc) and "Cannot find device" not in str(exc):
            raise


def qdisc_stats(dev: str, netns: str | None = None) -> dict:
    """Counters of the root qdisc of `dev` (`tc -s -j qdisc show`)."""
    out = tc(["-s", "-j", "qdisc", "show", "dev", dev], netns)
    try:
        qdiscs = json.loads(out)
    except ValueError:
        raise TcError(f"tc -j qdisc show dev {dev}: unreadable output {out[:200]!r}") from None
    root = next((q for q in qdiscs if q.get("root")), qdiscs[0] if qdiscs else {})
    return {
        "kind": root.get("kind"),
        "frames": root.get("packets", 0),
        "bytes": root.get("bytes", 0),
        "drops": root.get("drops", 0),
        "queue_pkts": root.get("qlen", 0),
        "queue_bytes": root.get("backlog", 0),
    }
