"""What limited a run: its CPU verdict, and when goodput stays short of the legs' capacity
without a CPU reason, the candidates the machine can show.

CPU-bound means one of (experiments/run/cpu.py's per-thread accounting, the sampler's cores):
- a process of ours ran at >= PROCESS_FULL of one core (its busiest thread, on average);
- a thread of a process (its most delayed one) waited for a core (run-queue delay from
  schedstat) >= WAIT_SHARE of the time;
- the cores were >= CORES_FULL busy on average (nothing left for anyone);
- the sampler's demand rule named it saturated (cpu.saturated_processes).

Link emulation late, a separate flag (`link_late`, not CPU-bound): linkem reports, per
direction and stats window (100 ms; the feedback period when the legs report feedback), the
p99 of its release lateness (`late_us`: when it sent a frame minus when its model said the
frame was due). A direction tolerates the larger of linkem's accuracy goal
(LINK_LATE_GOAL_MS) and LINK_LATE_DELAY_SHARE of the delay its lateness adds to: a
downlink's own one-way delay; an uplink, which carries only the flows' ACKs, the leg's round
trip (the only delay its lateness shows in). A leg is late when more than LINK_LATE_SHARE of
one direction's frames passed in windows whose p99 exceeded that direction's tolerance (a
direction with fewer than LINK_LATE_MIN_FRAMES over the run is not judged): 1 ms on the
paper's 10 ms legs, whose own delay spread is 1 ms (cv 10 %), so the 0.1 to 0.5 ms this
2-core machine adds to a third of the frames does not flag a run, a sustained millisecond
does (docs/testbed.md, "What limited a run"). It triggers no rerun. The reason adds how
long that leg's linkem waited for a core in the late windows against the others: more wait
while late means other work held it off its core.

Short of capacity with none of those: "not CPU-bound: limited by something else", with each
counter that moved during the run: UDP receive-buffer drops (RcvbufErrors) and socket drops
in the endpoints' namespaces, TCP receive-queue drops, linkem's queue and ring drops, the
agent's and the switch's drops, and the sender's congestion window against the path's BDP.
"""

from __future__ import annotations

import bisect
import gzip
from pathlib import Path

from experiments.run import scenario
from experiments.run.netns import run as netns_run
from experiments.run.sampler import SAMPLE_INTERVAL_S

PROCESS_FULL = 0.95  # busiest thread's run time, share of the run
WAIT_SHARE = 0.25  # time spent runnable but waiting for a core, share of the run
CORES_FULL = 0.95  # mean busy share of every core
SHORT_OF_CAPACITY = 0.9  # goodput under this share of capacity needs an explanation
# linkem's delay accuracy goal: p99 delay error <= 100 µs (issue 5; linkem/docs/benchmark.md)
LINK_LATE_GOAL_MS = 0.1
LINK_LATE_DELAY_SHARE = 0.1  # lateness tolerated, share of the delay it adds to (cv 10 %)
LINK_LATE_SHARE = 0.05  # a leg is late when more of a direction's frames were late than this
LINK_LATE_MIN_FRAMES = 1000  # a direction that forwarded fewer over the run is not judged
# Counters read in the endpoints' namespaces: (/proc file section, field) -> what it means
NET_COUNTERS = {
    ("Udp", "RcvbufErrors"): "UDP receive buffer full (RcvbufErrors)",
    ("Udp", "InErrors"): "UDP datagrams dropped on receive (InErrors)",
    ("Udp", "SndbufErrors"): "UDP send buffer full (SndbufErrors)",
    ("TcpExt", "TCPRcvQDrop"): "TCP receive queue drops (TCPRcvQDrop)",
    ("TcpExt", "TCPBacklogDrop"): "TCP backlog drops (TCPBacklogDrop)",
    ("TcpExt", "TCPZeroWindowDrop"): "TCP zero-window drops (TCPZeroWindowDrop)",
}
SOCKET_DROPS = "UDP socket drops (/proc/net/udp)"
RCVBUF_HINT = (
    "a UDP socket without SO_RCVBUF gets net.core.rmem_default ({rmem_default} bytes), which "
    "only the root namespace can raise: the flow key `udp_rcvbuf: large` (aioquic, ngtcp2) "
    "enlarges the client's own socket buffer (experiments/docs/testbed.md)"
)


def _rmem_default() -> str:
    try:
        with open("/proc/sys/net/core/rmem_default") as f:
            return f.read().strip()
    except OSError:
        return "unknown"


def leg_rates_mbit(config: dict, unlimited_mbit: float = 0.0) -> list[float]:
    """Legs A and B's downlink rates; a leg without a rate counts as `unlimited_mbit`.
    Their sum is what every flow on the legs together can carry."""
    return [config["links"][leg].get("rate_mbit") or unlimited_mbit for leg in ("a", "b")]


def capacity_mbit(config: dict, unlimited_mbit: float = 0.0) -> float:
    """What the legs can carry for the DC client: both legs' rates (one when it runs as SC
    or duplicated). A static split A:B bounds it by the leg it overloads first: 70:30 on
    20 + 20 Mbit/s carries 20 / 0.7. An MPTCP or MPQUIC flow bypasses the splitter: both
    legs, or leg A alone for single-path QUIC (`paths: 1`) and MPTCP with leg B as backup;
    MPQUIC's redundant scheduler sends every packet on both paths, so, like DC duplication,
    it carries what its faster leg carries."""
    dc = config["dc"]
    rates = leg_rates_mbit(config, unlimited_mbit)
    for flow in config.get("flows") or []:
        if flow.get("client") == "dc" and flow.get("kind") in ("mptcp", "mpquic"):
            one_leg = flow.get("paths") == 1 or flow.get("mptcp_leg_b") == "backup"
            if flow.get("scheduler") == "redundant" and not one_leg:
                return max(rates)
            return rates[0] if one_leg else sum(rates)
    if dc.get("mode") == "sc" or dc.get("dup"):
        return rates[0]
    if scenario.split_is_static(config) and dc.get("ratio"):
        a, b = scenario.parse_ratio("dc.ratio", dc["ratio"])
        shares = (a / (a + b), b / (a + b))
        return min(rate / share for rate, share in zip(rates, shares) if share > 0)
    return sum(rates)


# ---------------------------------------------------------------- namespace counters
def parse_net_counters(text: str) -> dict[str, float]:
    """`cat /proc/net/snmp /proc/net/netstat /proc/net/udp /proc/net/udp6` -> NET_COUNTERS'
    fields (by their description) and the sum of every UDP socket's drops."""
    out = {SOCKET_DROPS: 0.0}
    header: dict[str, list[str]] = {}
    for line in text.splitlines():
        head, _, rest = line.partition(":")
        fields = rest.split()
        if head in ("Udp", "TcpExt") and fields and not fields[0].lstrip("-").isdigit():
            header[head] = fields
        elif head in header and fields:
            for name, value in zip(header.pop(head), fields):
                if (head, name) in NET_COUNTERS:
                    out[NET_COUNTERS[(head, name)]] = float(value)
        elif head.strip().isdigit() and fields:  # a socket of /proc/net/udp: drops is last
            out[SOCKET_DROPS] += float(fields[-1])
    return out


def read_net_counters(netns: str) -> dict[str, float]:
    files = ["/proc/net/snmp", "/proc/net/netstat", "/proc/net/udp", "/proc/net/udp6"]
    proc = netns_run(["cat", *files], netns=netns, check=False)
    return parse_net_counters(proc.stdout)


def counters_delta(before: dict, after: dict) -> dict[str, dict[str, float]]:
    """Per namespace role, what each counter gained during the run (zeros left out)."""
    out = {}
    for role, end in after.items():
        start = before.get(role, {})
        moved = {k: v - start.get(k, 0.0) for k, v in end.items() if v - start.get(k, 0.0) > 0}
        out[role] = moved
    return out


# ---------------------------------------------------------------- the verdict
def process_limit(name: str, s: dict, saturated: list[str]) -> str | None:
    """Why process `name` (its cpu.saturated_processes stats `s`) was CPU-bound, or None."""
    if s.get("mean_run_max", 0.0) >= PROCESS_FULL:
        return f"{name} at {s['mean_run_max']:.0%} of a core"
    wait = s.get("mean_wait_max", s["mean_wait"])  # its most delayed thread (cpu.process_usage)
    if wait >= WAIT_SHARE:
        return f"{name} waited for a core {wait:.0%} of the time"
    if name in saturated:
        return f"{name} short of CPU ({s['saturated_share']:.0%} of samples)"
    return None


def cpu_affected(manifest: dict) -> bool:
    """The one CPU flag of a saved run, for every reader (the run's progress line, reports,
    figures, loop tables): a process of ours with a saturated core (`cpu_saturated`, the
    sampler's older flag) or, in runs made since the verdict exists, any of its reasons
    (`cpu_bound`: a process at >= 95 % of a core or waiting for one >= 25 % of the time, or
    every core busy)."""
    return bool(manifest.get("cpu_saturated")) or bool(manifest.get("cpu_bound"))


def cpu_bound_processes(manifest: dict) -> list[str]:
    """The processes a saved run's CPU verdict names, with the sampler's older saturated
    ones. Runs saved before the verdict carried the names (`cpu_bound_processes`) have them
    read off the front of their reasons; "every core busy" names none."""
    named = manifest.get("cpu_bound_processes")
    if named is None:
        named = [
            why.split(" ", 1)[0]
            for why in manifest.get("cpu_reasons") or []
            if not why.startswith("every core busy")
        ]
    return sorted(set(named) | set(manifest.get("saturated_processes") or []))


def cpu_findings(sat: dict) -> list[tuple[str | None, str]]:
    """sampler.saturation()'s output -> (process, reason) per way the run was CPU-bound;
    None for "every core busy", which names no process."""
    saturated = sat.get("saturated_processes", [])
    found: list[tuple[str | None, str]] = [
        (name, why)
        for name, s in sorted(sat.get("process_cpu", {}).items())
        if (why := process_limit(name, s, saturated))
    ]
    cores = sat.get("mean_busy") or {}
    if cores and min(cores.values()) >= CORES_FULL:
        found.append((None, f"every core busy (mean {sum(cores.values()) / len(cores):.0%})"))
    return found


def cpu_verdict(sat: dict) -> list[str]:
    """sampler.saturation()'s output -> one reason per way the run was CPU-bound."""
    return [why for _, why in cpu_findings(sat)]


def link_tolerance(links: dict, ident: str) -> tuple[float, str]:
    """The lateness (ms) a direction of a leg ('a/ab': downlink, 'a/ba': uplink) tolerates,
    and why in words, from the run's links (resolved or as the scenario file gives them)."""
    leg, direction = ident.split("/", 1)
    links = scenario.resolve_links(links)
    delay = links.get(leg, {}).get("delay_ms") or 0.0
    what = f"its {delay:.3g} ms delay"
    if direction == "ba":  # the ACK path: its lateness shows in the leg's round trip only
        delay += links.get(f"{leg}_uplink", {}).get("delay_ms") or 0.0
        what = f"the leg's {delay:.3g} ms round trip"
    if LINK_LATE_DELAY_SHARE * delay <= LINK_LATE_GOAL_MS:
        return LINK_LATE_GOAL_MS, f"linkem's {LINK_LATE_GOAL_MS} ms goal"
    return LINK_LATE_DELAY_SHARE * delay, f"{LINK_LATE_DELAY_SHARE:.0%} of {what}"


def link_windows(rows: list[tuple]) -> dict[str, list[tuple[float, float, float]]]:
    """Per direction ('a/ab'), (end time s, frames, late_us p99 in ms) of each stats window
    from the run's start: the frames are the step of linkem's cumulative `frames` counter
    since the previous window (setup's windows count towards none; 0 where the counter is
    missing)."""
    frames: dict[str, dict[float, float]] = {}
    late: dict[str, dict[float, float]] = {}
    for t, source, ident, metric, value in rows:
        if source == "link" and metric in ("frames", "late_us.p99"):
            (frames if metric == "frames" else late).setdefault(ident, {})[t] = value
    out = {}
    for ident, p99 in late.items():
        counter = frames.get(ident, {})
        before, windows = 0.0, []
        for t in sorted(set(p99) | set(counter)):
            now = counter.get(t, before)
            if t >= 0 and t in p99:
                windows.append((t, now - before, p99[t] / 1e3))
            before = now
        out[ident] = windows
    return out


def link_lateness(rows: list[tuple], config: dict) -> dict[str, dict]:
    """Per leg: `worst_ms`, the largest window p99 of either direction; and for the direction
    with the larger share of frames in windows beyond its tolerance (of those that forwarded
    LINK_LATE_MIN_FRAMES), `share`, `tolerance_ms`, `why` (the tolerance in words),
    `direction` ('downlink' or 'uplink') and `wait` (linkem_wait: (late, other) or None);
    `share` None when neither direction was judged."""
    out: dict[str, dict] = {}
    for ident, windows in sorted(link_windows(rows).items()):
        name = ident.split("/", 1)[0]
        leg = out.setdefault(name, {"worst_ms": 0.0, "share": None})
        leg["worst_ms"] = max([leg["worst_ms"], *(p99 for _, _, p99 in windows)])
        total = sum(n for _, n, _ in windows)
        if total < LINK_LATE_MIN_FRAMES:
            continue
        tolerance, why = link_tolerance(config["links"], ident)
        share = sum(n for _, n, p99 in windows if p99 > tolerance) / total
        if leg["share"] is None or share > leg["share"]:
            direction = "uplink" if ident.endswith("/ba") else "downlink"
            late_ends = [t for t, _, p99 in windows if p99 > tolerance]
            leg.update(share=share, tolerance_ms=tolerance, why=why, direction=direction)
            window_s = (windows[-1][0] - windows[0][0]) / max(len(windows) - 1, 1)
            leg["wait"] = linkem_wait(rows, f"link_{name}", late_ends, window_s)
    return out


def linkem_wait(rows: list[tuple], process: str, late_ends: list[float], window_s: float):
    """(late, other): the mean share of the time linkem's process waited for a core (the
    sampler's `wait`) in the samples that overlap a late stats window (of `window_s`, ending
    at a time of `late_ends`), and in the others; None without samples of both kinds. A
    real-time linkem that waits was held off its core by other work: the machine, not
    linkem's model, made it late (linkem/docs/benchmark.md, "Late around a leg outage?")."""
    ends = sorted(late_ends)
    reach = (window_s + SAMPLE_INTERVAL_S) / 2  # a sample and a window overlap

    def overlaps(t: float) -> bool:
        i = bisect.bisect_left(ends, t - reach)
        return i < len(ends) and ends[i] < t + reach

    late, other = [], []
    for t, source, ident, metric, value in rows:
        if (source, ident, metric) == ("proc", process, "wait"):
            (late if overlaps(t) else other).append(value)
    if not late or not other:
        return None
    return sum(late) / len(late), sum(other) / len(other)


def link_verdict(lateness: dict[str, dict]) -> list[str]:
    """One reason per leg that link_lateness found late (more than LINK_LATE_SHARE), with how
    long linkem waited for a core in those windows when the sampler measured it."""
    return [
        f"link emulation late: leg {leg.upper()}: {late['share']:.1%} of its {late['direction']} "
        f"frames passed in stats windows whose p99 was more than "
        f"{ms_text(late['tolerance_ms'])} ms late ({late['why']}; worst window "
        f"{ms_text(late['worst_ms'])} ms)" + wait_text(leg, late.get("wait"))
        for leg, late in sorted(lateness.items())
        if late["share"] is not None and late["share"] > LINK_LATE_SHARE
    ]


def wait_text(leg: str, wait: tuple[float, float] | None) -> str:
    if wait is None:
        return ""
    return (
        f"; linkem {leg.upper()} waited for a core {wait[0]:.1%} of the time in those windows, "
        f"{wait[1]:.1%} in the others"
    )


def ms_text(value: float) -> str:
    """A duration in ms, to two decimals below 1 ms (0.13, not 0.1 beside a 0.1 ms goal)."""
    return f"{value:.1f}" if value >= 1 else f"{value:.2f}"


def _last_minus_first(rows: list[tuple], source: str, ident: str, metric: str) -> float:
    values = [r[4] for r in rows if r[1] == source and r[2] == ident and r[3] == metric]
    return values[-1] - values[0] if len(values) > 1 else (values[0] if values else 0.0)


def chain_drops(rows: list[tuple]) -> dict[str, float]:
    """Drops inside the emulated network during the run, from its parts' own stats rows."""
    out = {}
    for leg in ("a", "b"):
        for kind, what in (("queue", "queue (drop-tail)"), ("rx", "receive ring overrun")):
            n = _last_minus_first(rows, "link", f"{leg}/ab", f"drops.{kind}")
            if n > 0:
                out[f"linkem {leg.upper()} {what}"] = n
    for metric in ("tx_dropped_host", "tx_dropped_uplink"):
        n = _last_minus_first(rows, "agent", "dc", metric)
        if n > 0:
            out[f"agent {metric}"] = n
    return out


def reordering_stall_note(rows: list[tuple], config: dict) -> str | None:
    """The time the agent held the DC flow for gaps that never filled: each gap a leg lost
    (a queue drop) holds every later PDU for the whole t-Reordering (TS 38.323 5.2.2.2),
    and the sender, its window full of unacknowledged data, waits with it."""
    expiries = _last_minus_first(rows, "agent", "dc", "t_reordering_expiries")
    times = [r[0] for r in rows if r[1] == "agent" and r[2] == "dc"]
    if expiries <= 0 or len(times) < 2:
        return None
    t_reordering_ms = config.get("t_reordering_ms", 0)
    held_s = expiries * t_reordering_ms / 1e3
    return (
        f"agent t-Reordering stalls: {expiries:.0f} gaps never filled, each held the flow "
        f"{t_reordering_ms:g} ms: {held_s:.1f} s of the run's {times[-1] - times[0]:.1f} s "
        f"({held_s / (times[-1] - times[0]):.0%})"
    )


def window_note(rows: list[tuple], flow_ids: list[str], capacity: float) -> str | None:
    """The sender's mean cwnd against the BDP of the legs' capacity at the flow's RTT."""
    for fid in flow_ids:
        cwnd = [r[4] for r in rows if r[1] == "flow" and r[2] == fid and r[3] == "cwnd_bytes"]
        rtt = [r[4] for r in rows if r[1] == "flow" and r[2] == fid and r[3] == "rtt_ms"]
        if cwnd and rtt:
            mean_cwnd, mean_rtt = sum(cwnd) / len(cwnd), sum(rtt) / len(rtt)
            bdp = capacity * 1e6 / 8 * mean_rtt / 1e3
            return (
                f"{fid} sender's cwnd {mean_cwnd / 1e3:.0f} kB on average, "
                f"{mean_cwnd / bdp:.0%} of the BDP ({bdp / 1e3:.0f} kB at {mean_rtt:.1f} ms)"
            )
    return None


def sender_qlog_note(logs: Path, fid: str) -> str | None:
    """A QUIC sender's own account from its qlog (logs/<fid>/qlog-server, plain or gzipped):
    packets it declared lost, and DATA_BLOCKED / STREAM_DATA_BLOCKED frames it sent (it
    waited for the receiver's flow-control window); None without a qlog."""
    paths = sorted((logs / fid / "qlog-server").glob("*.sqlog*"))
    if not paths:
        return None
    lost = blocked = 0
    for path in paths:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", errors="replace") as f:
            for line in f:
                lost += line.count('"recovery:packet_lost"')
                blocked += line.count('"frame_type":"data_blocked"')
                blocked += line.count('"frame_type":"stream_data_blocked"')
    return (
        f"{fid} sender's qlog: {lost} packets declared lost, {blocked} DATA_BLOCKED or "
        f"STREAM_DATA_BLOCKED frames ({'flow-control blocked' if blocked else 'never blocked by flow control'})"
    )


def flows_of(results: dict, clients: tuple[str, ...]) -> list[str]:
    """The flows of these clients that have a goodput (a probe, ping, has none)."""
    return [
        f
        for f, r in results.items()
        if r.get("client") in clients and r.get("goodput_mbit") is not None
    ]


def assess(
    config: dict, results: dict, sat: dict, rows: list, net_delta: dict, logs: Path | None = None
) -> dict:
    """The run's limit: {'capacity_mbit', 'goodput_share', 'cpu_bound', 'cpu_reasons',
    'cpu_bound_processes', 'link_late', 'link_late_ms', 'link_late_share',
    'link_late_tolerance_ms', 'link_reasons', 'limit', 'limit_candidates'} for its manifest.
    Goodput is the DC client's flows' (with SC flows beside them, every flow's against both
    legs); `logs` (the run's logs folder) adds QUIC senders' qlog accounts."""
    capacity = capacity_mbit(config)
    dc_flows = flows_of(results, ("dc",))
    goodput = sum(results[f]["goodput_mbit"] for f in dc_flows)
    sc_flows = flows_of(results, ("sc-a", "sc-b"))
    if dc_flows and sc_flows:
        # Flows sharing the legs (the fairness set-up): together they can fill both legs,
        # the DC flow alone need not. A duplicated DC flow occupies both legs per byte.
        capacity = sum(leg_rates_mbit(config))
        goodput *= 2 if config["dc"].get("dup") else 1
        goodput += sum(results[f]["goodput_mbit"] for f in sc_flows)
    share = goodput / capacity if capacity and dc_flows else None
    findings = cpu_findings(sat)
    reasons = [why for _, why in findings]
    lateness = link_lateness(rows, config)
    link_reasons = link_verdict(lateness)
    candidates = []
    if reasons:
        limit = "CPU-bound: " + "; ".join(reasons)
    elif share is None or share >= SHORT_OF_CAPACITY:
        limit = "at capacity" if share is not None else "no goodput or rate limit to compare"
    else:
        limit = "not CPU-bound: limited by something else"
        for role, moved in sorted(net_delta.items()):
            candidates += [
                f"{what} in the {role}'s namespace: {n:.0f}" for what, n in moved.items()
            ]
        if any(NET_COUNTERS[("Udp", "RcvbufErrors")] in moved for moved in net_delta.values()):
            candidates.append(RCVBUF_HINT.format(rmem_default=_rmem_default()))
        candidates += [f"{what}: {n:.0f}" for what, n in chain_drops(rows).items()]
        stalls = reordering_stall_note(rows, config)
        if stalls:
            candidates.append(stalls)
        note = window_note(rows, dc_flows, capacity)
        if note:
            candidates.append(note)
        if logs is not None:
            candidates += [n for f in dc_flows if (n := sender_qlog_note(logs, f))]
        if not stalls and not any("drop" in c.lower() or "full" in c for c in candidates):
            candidates.append(
                "no drop anywhere on the path: the sender held back (its congestion or "
                "flow-control window, pacing, or the endpoint program's own I/O)"
            )
    return {
        "capacity_mbit": capacity,
        "goodput_share": share,
        "cpu_bound": bool(reasons),
        "cpu_reasons": reasons,
        "cpu_bound_processes": sorted({name for name, _ in findings if name}),
        "link_late": bool(link_reasons),
        "link_late_ms": {leg: late["worst_ms"] for leg, late in lateness.items()},
        "link_late_share": {leg: late["share"] for leg, late in lateness.items()},
        "link_late_tolerance_ms": {
            leg: late["tolerance_ms"] for leg, late in lateness.items() if "tolerance_ms" in late
        },
        "link_late_wait": {
            leg: list(late["wait"]) for leg, late in lateness.items() if late.get("wait")
        },
        "link_reasons": link_reasons,
        "limit": limit,
        "limit_candidates": candidates,
    }
