"""The leg-rate sweep of `make bench-testbed`: one scenario run by the ordinary runner (so
every point has its manifest, samples and CPU accounting), then reduced to one row per
(stack, rate): goodput against the legs' capacity and each component's CPU.

CPU per packet: a component's CPU seconds over the run (the sampler's per-process 'busy'
samples) divided by the frames it handled, counted by the legs' linkem: a linkem handles its
own leg's frames (both directions); the switch, the agent and the endpoints handle every
frame of both legs (each DC frame crosses each of them once, the ACKs ride leg A).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path

from experiments.run import limits
from experiments.run.links import AUTO_SLACK
from experiments.run.runner import RunOptions, run_scenario
from experiments.run.sampler import SAMPLE_INTERVAL_S
from experiments.run.scenario import TOP_KEYS, from_dict

RATES_MBIT = (20, 50, 100, 250, 500, 1000)  # per leg
STACKS = ("tcp", "ngtcp2")
# ngtcp2's client UDP receive buffer (the flow key udp_rcvbuf): the kernel's default, or
# LARGE_RCVBUF through clib/udprcvbuf; both give side-by-side points.
NGTCP2_RCVBUFS = ("default", "large")
DEFAULT_IO = "afpacket"  # the testbed's (Testbed.io); runs from before --io had it
COMPONENTS = ("switch", "link_a", "link_b", "agent", "server", "client")
T_REORDERING_MS = TOP_KEYS["t_reordering_ms"]  # the paper's, every scenario's default


def scenario_doc(
    rates: list[int],
    stacks: list[str],
    duration_s: float,
    ngtcp2_rcvbufs=("default",),
    reps: int = 1,
    t_reordering_ms: float = T_REORDERING_MS,
) -> dict:
    """DC 1:1, batch 100, CUBIC, the paper's delay (10 ms, cv 10 %) and 1000-packet queues,
    `reps` downloads of `duration_s` per point and stack (ngtcp2: per receive buffer), the
    agent's t-Reordering `t_reordering_ms`."""
    return {
        "name": "bench-testbed",
        "description": "the testbed at 5G NR leg rates (make bench-testbed)",
        "links": {
            "both": {"rate_mbit": rates[0], "delay_ms": 10, "delay_cv": 0.1, "queue_pkts": 1000}
        },
        "dc": {"batch": 100, "ratio": "1:1"},
        "t_reordering_ms": t_reordering_ms,
        "flows": [{"client": "dc", "duration_s": duration_s}],
        "variants": [variant for stack in stacks for variant in _variants(stack, ngtcp2_rcvbufs)],
        "sweep": {"param": "links.both.rate_mbit", "values": list(rates)},
        "repetitions": reps,
        "timeout_s": duration_s + 60,
    }


def _variants(stack: str, ngtcp2_rcvbufs) -> list[dict]:
    if stack != "ngtcp2":
        return [{"kind": stack, "cc": "cubic"}]
    return [
        {"kind": stack, "cc": "cubic", **({"udp_rcvbuf": "large"} if size == "large" else {})}
        for size in ngtcp2_rcvbufs
    ]


def stack_label(
    flow: dict,
    departure_slack_us: int | str = AUTO_SLACK,
    io: str = DEFAULT_IO,
    t_reordering_ms: float = T_REORDERING_MS,
) -> str:
    """A run's flow spec -> its stack in the table: the kind, with the variant label's
    `-rcvbuf-large` when the client had the large UDP receive buffer, `-slack50us` when
    the legs' linkem ran with a slack given in µs (--departure-slack-us) instead of dcexp's
    auto (runs from before auto have 0: `-slack0us`), `-afxdp` when the parts ran on
    AF_XDP (--io), and `-treord50ms` when the agent's t-Reordering was not the paper's."""
    return (
        flow["kind"]
        + ("-rcvbuf-large" if flow.get("udp_rcvbuf") == "large" else "")
        + ("" if departure_slack_us == AUTO_SLACK else f"-slack{departure_slack_us}us")
        + ("" if io == DEFAULT_IO else f"-{io}")
        + treord_suffix(t_reordering_ms)
    )


def treord_suffix(t_reordering_ms: float) -> str:
    """The stack label's mark of a t-Reordering other than the paper's: '-treord50ms'."""
    return "" if t_reordering_ms == T_REORDERING_MS else f"-treord{t_reordering_ms:g}ms"


@dataclass
class Point:
    stack: str
    leg_mbit: float
    offered_mbit: float  # the legs' capacity
    goodput_mbit: float
    frames: float  # through both legs, both directions
    frames_per_s: float = 0.0
    loadavg: float = 0.0  # the machine's 1-minute load average as the run started
    core_share: dict[str, float] = field(default_factory=dict)  # component -> CPUs used
    us_per_frame: dict[str, float] = field(default_factory=dict)
    wait_share: dict[str, float] = field(default_factory=dict)
    cores_busy: float = 0.0
    limit: str = ""
    candidates: list[str] = field(default_factory=list)
    limited: list[str] = field(default_factory=list)  # components CPU-bound at this point
    status: str = "ok"
    udp_rcvbuf_bytes: int | None = None  # the client's UDP buffer as the kernel set it, if known
    rep: int = 0  # which repetition of (stack, leg rate) this run was
    t_reordering_ms: float = T_REORDERING_MS  # the agent's


def run_sweep(
    out: Path,
    rates,
    stacks,
    duration_s: float,
    pin: str,
    resume: bool = False,
    ngtcp2_rcvbufs=("default",),
    departure_slack_us: int | str = AUTO_SLACK,
    io: str = DEFAULT_IO,
    reps: int = 1,
    t_reordering_ms: float = T_REORDERING_MS,
) -> list[Point]:
    """Every point run afresh (runs left in `out` by an earlier sweep, perhaps on a busier
    machine, are removed first) unless `resume`; the points of this sweep only. The legs'
    linkem runs with `departure_slack_us` (its --departure-slack-us, or auto as in dcexp),
    the parts on I/O path `io` (dcexp run --io), the agent with `t_reordering_ms`."""
    doc = scenario_doc(rates, stacks, duration_s, ngtcp2_rcvbufs, reps, t_reordering_ms)
    scenario = from_dict(doc, where="bench-testbed")
    if not resume:
        shutil.rmtree(out / "runs", ignore_errors=True)
    run_scenario(scenario, out, RunOptions(pin=pin, departure_slack_us=departure_slack_us, io=io))
    return [reduce_run(out / "runs" / run.run_id) for run in scenario.runs]


def _component(part: str) -> str:
    """A process name of the run ('f0-dc/server') -> its component ('server')."""
    return part.rsplit("/", 1)[-1]


def reduce_run(run_dir: Path) -> Point:
    """One saved run -> its Point."""
    m = json.loads((run_dir / "manifest.json").read_text())
    rows = read_samples(run_dir / "samples.csv")
    leg = m["config"]["links"]["a"]["rate_mbit"]
    flow = next(iter(m["flows"].values()))
    frames = {
        leg_: sum(_last(rows, "link", f"{leg_}/{d}", "frames") for d in ("ab", "ba"))
        for leg_ in ("a", "b")
    }
    total = frames["a"] + frames["b"]
    link_t = [r[0] for r in rows if r[1] == "link" and r[3] == "frames"]
    span = max(link_t) - min(link_t) if link_t else 0.0
    cpu_s: dict[str, float] = {}
    for _t, source, part, metric, value in rows:
        if source == "proc" and metric == "busy":
            name = _component(part)
            cpu_s[name] = cpu_s.get(name, 0.0) + value * SAMPLE_INTERVAL_S
    handled = {"link_a": frames["a"], "link_b": frames["b"]}
    stats = m.get("process_cpu", {})
    t_reordering = m["config"].get("t_reordering_ms", T_REORDERING_MS)
    point = Point(
        stack=stack_label(
            m["config"]["flows"][0],
            m.get("departure_slack_us", 0),
            m.get("io", DEFAULT_IO),
            t_reordering,
        ),
        t_reordering_ms=t_reordering,
        leg_mbit=leg,
        offered_mbit=m.get("capacity_mbit") or limits.capacity_mbit(m["config"]),
        goodput_mbit=flow.get("goodput_mbit") or 0.0,
        frames=total,
        frames_per_s=total / span if span else 0.0,
        loadavg=(m.get("loadavg_start") or [0.0])[0],
        cores_busy=sum(m["mean_busy"].values()) / max(len(m["mean_busy"]), 1),
        limit=m.get("limit", ""),
        candidates=m.get("limit_candidates", []),
        status=m["status"],
        udp_rcvbuf_bytes=flow.get("udp_rcvbuf_bytes"),
        rep=m.get("rep", 0),
    )
    for part, s in stats.items():
        name = _component(part)
        point.core_share[name] = s["mean_busy"]
        point.wait_share[name] = s["mean_wait"]
        n = handled.get(name, total)
        point.us_per_frame[name] = cpu_s.get(name, 0.0) * 1e6 / n if n else 0.0
        if limits.process_limit(part, s, m.get("saturated_processes", [])):
            point.limited.append(name)
    return point


def read_samples(path: Path) -> list[tuple]:
    """A run's samples.csv as (t_s, source, id, metric, value) rows, read by the analysis's
    one reader (a torn last line dropped and named, a damaged file a RunFileError)."""
    from experiments.analysis import metrics  # pandas: only where a sweep is reduced

    return list(metrics.load_samples(path.parent).itertuples(index=False, name=None))


def _last(rows: list[tuple], source: str, ident: str, metric: str) -> float:
    values = [r[4] for r in rows if r[1] == source and r[2] == ident and r[3] == metric]
    return values[-1] if values else 0.0


def saturation_points(points: list[Point]) -> dict[str, dict[str, float | None]]:
    """Per stack, per component: the lowest leg rate at which it was CPU-bound (None: never)."""
    out: dict[str, dict[str, float | None]] = {}
    for p in sorted(points, key=lambda p: p.leg_mbit):
        per = out.setdefault(p.stack, {c: None for c in COMPONENTS})
        for name in p.limited:
            if per.get(name) is None:
                per[name] = p.leg_mbit
    return out


def repetitions(points: list[Point]) -> dict[tuple[str, float], list[Point]]:
    """The points grouped by (stack, leg rate), each group in repetition order."""
    groups: dict[tuple[str, float], list[Point]] = {}
    for p in sorted(points, key=lambda p: (p.stack, p.leg_mbit, p.rep)):
        groups.setdefault((p.stack, p.leg_mbit), []).append(p)
    return groups


def as_dict(point: Point) -> dict:
    return asdict(point)
