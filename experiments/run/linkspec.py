"""One direction of an emulated link as the scenario files describe it (`LinkSpec`, units in
the key names), checked and converted: to linkem's SPEC string here, to netem's arguments in
`experiments.run.tc`. Both link drivers (`experiments.run.links`) and tc read it; it reads neither.
A trace file is read by linkem's own parser (`linkem --check-trace`), the one a run uses.
"""

from __future__ import annotations

import functools
import math
import os
import subprocess
from dataclasses import dataclass, fields, replace
from pathlib import Path

LINKEM_BINARY = Path(__file__).resolve().parents[2] / "build" / "linkem" / "linkem"
DISTS = ("const", "normal", "uniform", "pareto", "paretonormal")
# Where a frame chosen for loss is dropped: after its serialization (it used link time;
# linkem's default, what every result before the key existed means) or on arrival (netem).
LOSS_POINTS = ("departure", "enqueue")
ETH_FRAME_BYTES = 1514  # a full-size Ethernet frame, for converting byte queues to packets
MIN_QUEUE_BYTES = ETH_FRAME_BYTES  # a BDP-sized queue still holds one full frame


class LinkSpecError(ValueError):
    """A link description is invalid; the message names the key and what is allowed."""


@dataclass
class LinkSpec:
    """One direction of an emulated link, in the scenario files' units."""

    rate_mbit: float | None = None  # None or 0: unlimited
    delay_ms: float = 0
    delay_cv: float | None = None  # sd = delay_cv * delay_ms
    jitter_ms: float | None = None  # netem's jitter: sd (half-width for dist=uniform)
    dist: str = "normal"
    loss: float = 0  # Bernoulli
    loss_at: str | None = None  # LOSS_POINTS; None: the driver's own (linkem: departure)
    ge: tuple | None = None  # Gilbert-Elliott, netem's order: (p, r[, 1-h[, 1-k]])
    queue_pkts: int | None = None
    queue_bytes: int | None = None
    queue_bdp: float | None = None  # multiples of rate x round trip (2 x delay_ms)
    trace: str | None = None  # Mahimahi trace file
    reorder: bool = False
    burst_bytes: int | None = None

    # -------------------------------------------------------------- validation
    def validate(self) -> LinkSpec:
        def number(key, lo=0.0, hi=math.inf, integer=False):
            v = getattr(self, key)
            if v is None:
                return
            ok = isinstance(v, (int, float)) and not isinstance(v, bool)
            if ok and integer:
                ok = float(v).is_integer()
            if not ok or not lo <= v <= hi or (isinstance(v, float) and math.isnan(v)):
                kind = "an integer" if integer else "a number"
                raise LinkSpecError(f"{key}={v!r}: expected {kind} in [{lo:g}, {hi:g}]")

        number("rate_mbit", hi=100_000)
        number("delay_ms", hi=60_000)
        number("delay_cv", hi=10)
        number("jitter_ms", hi=60_000)
        number("loss", hi=1)
        number("queue_pkts", integer=True, hi=1 << 24)
        number("queue_bytes", integer=True, hi=1 << 34)
        number("queue_bdp", hi=1000)
        number("burst_bytes", integer=True, hi=1 << 32)
        if self.dist not in DISTS:
            raise LinkSpecError(f"dist={self.dist!r}: expected one of {', '.join(DISTS)}")
        if self.loss_at is not None and self.loss_at not in LOSS_POINTS:
            raise LinkSpecError(
                f"loss_at={self.loss_at!r}: expected one of {', '.join(LOSS_POINTS)} (where a "
                "lost frame is dropped: after its serialization, or on arrival as netem)"
            )
        if not isinstance(self.reorder, bool):
            raise LinkSpecError(f"reorder={self.reorder!r}: expected true or false")
        if self.delay_cv is not None and self.jitter_ms is not None:
            raise LinkSpecError("give delay_cv or jitter_ms, not both (both set the spread)")
        queues = [k for k in ("queue_pkts", "queue_bytes", "queue_bdp") if getattr(self, k)]
        if len(queues) > 1:
            raise LinkSpecError(
                f"give one of queue_pkts, queue_bytes, queue_bdp, not " f"{' and '.join(queues)}"
            )
        if self.trace is not None:
            if not isinstance(self.trace, (str, os.PathLike)) or "," in str(self.trace):
                raise LinkSpecError(f"trace={self.trace!r}: expected a file path without commas")
            if not Path(self.trace).is_file():
                raise LinkSpecError(f"trace={self.trace}: no such file")
            trace_mean_mbit(self.trace)  # its content, line by line, before any run starts
            if self.rate_mbit:
                raise LinkSpecError("give rate_mbit or trace, not both (a trace sets the rate)")
        if self.ge is not None:
            ge = self.ge
            if (
                not isinstance(ge, (list, tuple))
                or not 1 <= len(ge) <= 4
                or not all(
                    isinstance(p, (int, float)) and not isinstance(p, bool) and 0 <= p <= 1
                    for p in ge
                )
            ):
                raise LinkSpecError(
                    f"ge={ge!r}: expected [p, r, 1-h, 1-k] (netem's gemodel "
                    "order; r, 1-h, 1-k optional), probabilities in [0, 1]"
                )
        if self.queue_bdp and not (self.delay_ms and (self.rate_mbit or self.trace)):
            raise LinkSpecError(
                "queue_bdp needs delay_ms > 0 and a rate_mbit or trace to "
                "resolve the bandwidth-delay product"
            )
        return self

    def delay_sd_ms(self) -> float:
        """Standard deviation of the delay (jitter_ms is the half-width for uniform)."""
        if self.delay_cv is not None:
            return self.delay_cv * self.delay_ms
        if self.jitter_ms is None:
            return 0.0
        return self.jitter_ms / math.sqrt(3) if self.dist == "uniform" else self.jitter_ms

    def rate_bits(self) -> float | None:
        if self.trace:
            return trace_mean_mbit(self.trace) * 1e6
        return self.rate_mbit * 1e6 if self.rate_mbit else None

    def queue_limit_bytes(self) -> int | None:
        """queue_bytes, or queue_bdp resolved: rate x round trip (2 x delay_ms) x factor."""
        if self.queue_bytes is not None:
            return int(self.queue_bytes)
        if self.queue_bdp:
            bdp = self.rate_bits() / 8 * 2 * self.delay_ms / 1000
            return max(MIN_QUEUE_BYTES, round(self.queue_bdp * bdp))
        return None

    def queue_limit_pkts(self) -> int | None:
        """The queue in packets (for netem): queue_pkts, or bytes over full-size frames."""
        if self.queue_pkts is not None:
            return int(self.queue_pkts)
        limit = self.queue_limit_bytes()
        return None if limit is None else max(1, math.ceil(limit / ETH_FRAME_BYTES))

    # -------------------------------------------------------------- conversion
    def to_spec(self) -> str:
        """The linkem SPEC string (every key explicit, so a change of defaults cannot bite)."""
        self.validate()
        items = [("rate_mbit", _num(self.rate_mbit or 0))]
        if self.trace:
            items = [("trace", str(Path(self.trace).resolve()))]
        items.append(("burst_bytes", str(int(self.burst_bytes or 0))))
        qbytes = self.queue_limit_bytes()
        if qbytes is not None:
            items.append(("queue_bytes", str(qbytes)))
        else:
            items.append(
                ("queue_pkts", str(int(self.queue_pkts if self.queue_pkts is not None else 1000)))
            )
        items.append(("delay_ms", _num(self.delay_ms)))
        if self.delay_cv is not None:
            items.append(("delay_cv", _num(self.delay_cv)))
        else:
            items.append(("jitter_ms", _num(self.jitter_ms or 0)))
        items += [
            ("dist", self.dist),
            ("reorder", "1" if self.reorder else "0"),
            ("loss", _num(self.loss)),
            ("loss_at", self.loss_at or "departure"),
        ]
        items.append(("ge", ",".join(_num(p) for p in self.ge) if self.ge else "off"))
        return ",".join(f"{k}={v}" for k, v in items)

    @classmethod
    def from_dict(cls, d: dict | None) -> LinkSpec:
        """From a scenario's link mapping (keys with units, e.g. rate_mbit, delay_ms)."""
        d = dict(d or {})
        allowed = [f.name for f in fields(cls)]
        unknown = sorted(set(d) - set(allowed))
        if unknown:
            raise LinkSpecError(
                f"unknown link key(s) {', '.join(unknown)}: allowed are " f"{', '.join(allowed)}"
            )
        if isinstance(d.get("ge"), list):
            d["ge"] = tuple(d["ge"])
        if d.get("reorder") in (0, 1) and not isinstance(d.get("reorder"), bool):
            d["reorder"] = bool(d["reorder"])
        d = {k: v for k, v in d.items() if v is not None or k in ("rate_mbit",)}
        return cls(**d).validate()


def _num(v: float) -> str:
    return f"{v:.10g}"


def trace_mean_mbit(path: str | os.PathLike) -> float:
    """Mean rate of a Mahimahi trace in Mbit/s (1500-byte opportunities over its period), as
    linkem reads it: `linkem --check-trace`, so that a file passes here exactly when a link
    takes it. LinkSpecError naming the file and line of a malformed trace."""
    try:
        st = os.stat(path)
    except (OSError, ValueError) as exc:
        raise LinkSpecError(f"trace={path}: {getattr(exc, 'strerror', None) or exc}") from None
    return _linkem_trace_mean(str(Path(path).resolve()), st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=64)
def _linkem_trace_mean(path: str, _mtime_ns: int, _size: int) -> float:
    """Once per version of a file: a study checks each leg's trace in every run."""
    if not LINKEM_BINARY.exists():
        raise LinkSpecError(
            f"trace={path}: cannot read it: {LINKEM_BINARY} is missing: run `make build` "
            "(or make linkem-build)"
        )
    argv = [str(LINKEM_BINARY), "--check-trace", path]
    proc = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=60)
    if proc.returncode != 0:
        error = proc.stderr.strip().removeprefix("linkem: error: ")
        raise LinkSpecError(error or f"trace={path}: linkem exited with {proc.returncode}")
    return float(proc.stdout.split()[0].removeprefix("mean_mbit="))


def change_spec(changes: dict) -> str:
    """A partial SPEC for `set`: only the given keys (LinkSpec names and units)."""
    allowed = [f.name for f in fields(LinkSpec)]
    items = []
    for key, value in changes.items():
        if key not in allowed:
            raise LinkSpecError(f"unknown link key {key}: allowed are {', '.join(allowed)}")
        if key == "queue_bdp":
            raise LinkSpecError("queue_bdp cannot be changed live; give queue_bytes")
        probe = replace(LinkSpec(), **{key: value})
        if key == "trace" and value is not None:
            probe.rate_mbit = None
        probe.validate()
        if value is None and key in (
            "rate_mbit",
            "jitter_ms",
            "delay_cv",
            "queue_pkts",
            "queue_bytes",
            "burst_bytes",
        ):
            value = 0  # "none" of these in linkem's SPEC
        if value is None and key == "ge":
            value = "off"
        if isinstance(value, bool):
            value = "1" if value else "0"
        elif isinstance(value, (tuple, list)):
            value = ",".join(_num(p) for p in value)
        elif isinstance(value, (int, float)):
            value = _num(value)
        elif key == "trace":
            value = str(Path(value).resolve())
        items.append(f"{key}={value}")
    if not items:
        raise LinkSpecError("nothing to change: give at least one link key")
    return ",".join(items)
