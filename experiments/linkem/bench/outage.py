"""Is linkem late around a live change? One leg as the mptcp-outage study runs it, alone.

    .venv/bin/python experiments/linkem/bench/outage.py [--reps 2] [--rt-priority 10]

Topology as in the integration tests: ns1 --veth-- [linkem] --veth-- ns2, one iperf3 TCP
CUBIC download ns1 -> ns2 ("ab") for 20 s. The downlink is the study's (20 Mbit/s, delay
normal 10 ms cv 10 %, 1000-frame queue), the uplink carries the ACKs with a 10 ms (cv 10 %)
or no delay. Each pair of runs, one after the other in the same minute: "change" takes the
downlink down at 8 s (`set ab loss=1`) and back at 11 s (`set ab loss=0`), as the study's
events do; "steady" has no change. Printed per run and direction: the share of frames that
passed in stats windows whose late_us p99 exceeded the direction's tolerance (the link-late
rule of experiments/run/limits.py), before 8 s, during the outage and after it, and how late
linkem wrote its stats lines (its process, not a frame, was late).

linkem runs at SCHED_FIFO 10 as dcexp runs it; on a shared machine run the script under
`nice -n 19`, and linkem is then an ordinary niced task (as dcexp's driver does for a niced
caller; --rt-priority N forces one). Findings: ../docs/benchmark.md, "Late around a leg
outage?".
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from dccommon.cliargs import ArgumentParser, InputFileError, int_range, make_output_dir
from dccommon.processes import stop_process
from experiments.run import limits
from experiments.run.links import start_link
from experiments.run.linkspec import LinkSpec
from experiments.run.netns import Topology, unique_prefix, veth_pair, wait_bound
from experiments.run.runner import stats_rows

DOWN = {"rate_mbit": 20, "delay_ms": 10, "delay_cv": 0.1, "queue_pkts": 1000}
OUTAGE_S = (8.0, 11.0)  # the study's events: leg A down at 8 s, up at 11 s
DURATION_S = 20
ADDR1, ADDR2, PORT = "10.79.0.1", "10.79.0.2", 5301
PHASES = ("run", "before", "outage", "after")
STATS_INTERVAL_S = 0.1  # linkem's default, as dcexp runs it


def phase(t: float) -> str:
    """The phase of the stats window that ended at t, by its start (the window that ends
    just after 8 s holds frames sent before the change)."""
    start = t - STATS_INTERVAL_S
    return "before" if start < OUTAGE_S[0] else "outage" if start < OUTAGE_S[1] else "after"


def late_shares(stats: Path, uplink_ms: float, start: float) -> dict[str, dict[str, float]]:
    """Per direction: the late share (limits' rule) over the run and per phase, and the
    largest delay of a stats line past its 100 ms interval (ms). `start`: the download's
    start on CLOCK_MONOTONIC (s), linkem's clock too."""
    rows = stats_rows(stats, "link", "a", start)
    links = {"a": DOWN, "a_uplink": {"delay_ms": uplink_ms}}
    out = {}
    for ident, windows in limits.link_windows(rows).items():
        tolerance, _ = limits.link_tolerance(links, ident)
        total: dict[str, float] = {}
        late: dict[str, float] = {}
        for t, n, p99_ms in windows:
            for key in ("run", phase(t)):
                total[key] = total.get(key, 0) + n
                late[key] = late.get(key, 0) + (n if p99_ms > tolerance else 0)
        stalls = [
            v - 100 for t, _s, i, m, v in rows if i == ident and m == "interval_ms" and t >= 0
        ]
        out[ident[2:]] = {k: late[k] / total[k] for k in total if total[k]}
        out[ident[2:]]["stats_line_late_ms"] = max(stalls, default=0.0)
    return out


def one_run(
    bed: dict, uplink_ms: float, change: bool, stats: Path, rt_priority: int | None
) -> dict:
    up = {"delay_ms": uplink_ms, "delay_cv": 0.1} if uplink_ms else {}
    link = start_link(
        "linkem",
        bed["if_a"],
        bed["if_b"],
        ab=LinkSpec.from_dict(DOWN),
        ba=LinkSpec.from_dict(up),
        netns=bed["nsl"],
        stats_path=stats,
        seed=7,
        rt_priority=rt_priority,
    )
    server = bed["ns2"].popen(
        ["iperf3", "-s", "-1", "-p", str(PORT)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    client = None
    try:
        wait_bound(bed["ns2"], PORT, "tcp", server)
        argv = ["iperf3", "-c", ADDR2, "-p", str(PORT), "-t", str(DURATION_S), "-C", "cubic"]
        client = bed["ns1"].popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        start = time.monotonic()
        if change:
            for at_s, loss in zip(OUTAGE_S, (1, 0)):
                time.sleep(max(0.0, at_s - (time.monotonic() - start)))
                link.set("ab", loss=loss)
        client.wait(timeout=DURATION_S + 20)
    finally:
        for proc in (client, server):
            if proc is not None:
                stop_process(proc)
        link.stop()
    return late_shares(stats, uplink_ms, start)


def main(argv: list[str] | None = None) -> None:
    ap = ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--reps",
        type=int_range(1, 100, "repetitions"),
        default=1,
        help="pairs of runs per uplink delay",
    )
    ap.add_argument(
        "--rt-priority",
        type=int_range(0, 99, "priority"),
        default=None,
        help="linkem's SCHED_FIFO priority (0: ordinary task; default 10, or 0 when run niced)",
    )
    ap.add_argument("--out", type=Path, default=Path("/tmp"), help="folder for the stats")
    args = ap.parse_args(argv)
    try:
        make_output_dir(args.out)
    except InputFileError as exc:
        ap.error(f"--out {exc}")
    print("run                   dir  late share: run  before outage  after  stats line late")
    with Topology() as topo:
        p = unique_prefix("lo")
        bed = {"ns1": topo.ns(f"{p}n1"), "nsl": topo.ns(f"{p}nl"), "ns2": topo.ns(f"{p}n2")}
        bed.update(if_a=f"{p}la", if_b=f"{p}lb")
        veth_pair(f"{p}h1", bed["ns1"], bed["if_a"], bed["nsl"])
        veth_pair(bed["if_b"], bed["nsl"], f"{p}h2", bed["ns2"])
        bed["ns1"].add_addr(f"{p}h1", f"{ADDR1}/24")
        bed["ns2"].add_addr(f"{p}h2", f"{ADDR2}/24")
        for rep in range(args.reps):
            for uplink_ms in (10, 0):
                for change in (True, False):
                    name = f"up{uplink_ms}-{'change' if change else 'steady'}-{rep}"
                    stats = args.out / f"linkem-outage-{p}-{name}.jsonl"
                    got = one_run(bed, uplink_ms, change, stats, args.rt_priority)
                    for d, s in got.items():
                        cells = [f"{s[k]:6.1%}" if k in s else "     -" for k in PHASES]
                        print(
                            f"{name:20s}  {d}  {'  '.join(cells)}  "
                            f"{s['stats_line_late_ms']:6.1f} ms",
                            flush=True,
                        )


if __name__ == "__main__":
    main()
