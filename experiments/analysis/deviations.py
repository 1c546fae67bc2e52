"""Every difference between our testbed and the paper's (PAPER.md), with its expected effect:
the reproduction report's deviation table. Software versions are those the runs stamped in
their manifests when the run directories are there, else read from this machine when the
report is written (and the table says which)."""

from __future__ import annotations

from experiments.analysis.stats import NON_NEGATIVE, estimate, welch
from experiments.run.runner import provenance

# (what, the paper, ours, expected effect)
FIXED = [
    (
        "Testbed",
        "two hosts, two 10 GbE links, NFQUEUE proxies in user space (about 1 ms of RTT each)",
        (
            "network namespaces on one 2-core host; a P4 switch (p4sim) numbers and splits, a DPDK "
            "agent reorders"
        ),
        (
            "less machinery delay (Table 2: our idle cost under 0.2 ms); all processes share two "
            "cores, so CPU-bound runs are flagged and reported apart"
        ),
    ),
    (
        "TCP traffic",
        "HTTP/2 over TLS, downloaded with curl",
        "iperf3 in reverse mode (the server sends), no TLS, no HTTP",
        (
            "no TLS/HTTP framing cost or application pacing; TCP is slightly favoured; TCP is not "
            "in the paper's fairness tests at all (ours, no counterpart)"
        ),
    ),
    (
        "Loss emulation",
        "netem drops a packet at enqueue (it never uses the link)",
        "linkem drops a lost frame after serialisation (it used the leg's rate)",
        (
            "a lost frame still costs leg time: at loss p up to p more queueing, which matters "
            "only to a flow that fills the leg (measured below the table)"
        ),
    ),
    (
        "PDCP header",
        "2 bytes (SN) added by the server proxy",
        "18-bit SN PDCP Data PDU (3 bytes) + 2-byte inner ethertype in an 0x88B5 frame",
        "3 more bytes per packet: 0.2 % of a 1500-byte frame's leg time",
    ),
    (
        "Queue",
        "not stated; we assume netem's default limit",
        "1000 packets per leg",
        "sets the standing queue (RTT under load) of loss-based CC; unknown in the paper",
    ),
    (
        "SC flows",
        "through the proxies (numbered, single leg)",
        "bypass the agent: the switch forwards SC clients unnumbered on their leg",
        "SC flows save the agent's reordering step (well under 1 ms), not their share of a leg",
    ),
    (
        "Fairness run",
        "1 GB downloads of which the first 3 minutes count",
        "downloads that last the run (180 s in the paper profile), whole run measured",
        "includes slow start in the index; over 180 s its weight is small",
    ),
    (
        "Enlarged UDP buffer",
        "for QUIC (the paper's fair comparison with TCP)",
        (
            "aioquic's fairness lines (8 MiB, SO_RCVBUFFORCE); ngtcp2 runs the system default "
            "(the flow key `udp_rcvbuf: large` would enlarge it too; the paper files do not ask)"
        ),
        (
            "ngtcp2 may lose packets at its socket under load where the paper's did not "
            "(make bench-testbed counts none below 2 x 100 Mbit/s)"
        ),
    ),
    (
        "aioquic CUBIC",
        "did not exist (NewReno only)",
        "an extra line where a study lists it",
        "none on the paper's lines; reported as no counterpart",
    ),
    (
        "Trace study",
        "one LTE trace (Raca et al., Static A) on both downlinks, several sweeps",
        "a synthetic LTE-like trace with that trace's mean (4.5 Mbit/s), batch sweep only",
        "same mean, different short-term variation: trends comparable, numbers not",
    ),
    (
        "Sweep points",
        "batch 50, 100-150, 500 and larger named; loss rates not listed (0.08 % discussed)",
        "our own grid around the named points (experiments/paper/*.yaml)",
        "none; points the paper does not name are ours",
    ),
    (
        "Rates",
        "20 Mbit/s per leg",
        "20 Mbit/s per leg, unscaled (no study runs at scaled rates)",
        (
            "none where runs are CPU-clean; aioquic on asyncio is CPU-bound on this host from "
            "about 18-30 Mbit/s per client (make aioquic-limit measures where), hence uvloop below"
        ),
    ),
    (
        "aioquic's event loop",
        "asyncio (aioquic's examples)",
        (
            "asyncio for the throughput studies; uvloop for the fairness studies' aioquic line "
            "(the paper profile's `loop: uvloop`), so that three flows stay CPU-clean"
        ),
        (
            "the same protocol code with 40 % less CPU per datagram; timers on libuv's "
            "millisecond clock (aioquic's timers are milliseconds apart); judged as the paper's "
            "stack (experiments/docs/aioquic-cpu.md)"
        ),
    ),
]
LOSS_PLACEMENT = "loss-placement"  # experiments/paper/deviations/loss_placement.yaml


def versions(studies: dict) -> tuple[dict, str]:
    """Tool versions: from the runs' manifests when present, else from this machine."""
    for s in studies.values():
        for m in s.manifests:
            if m.get("tools"):
                return m["tools"], "as the runs stamped them"
    return provenance()["tools"], "read from this machine when the report was written"


# what a campaign's profile changes against the paper's sizes
PROFILE_SIZES = {
    "quick": (
        (
            "10 MB downloads (3 MB over the trace), 15 s fairness runs, 2-3 swept values and 2-3 "
            "stacks per study (fairness: ngtcp2 NewReno and TCP NewReno, not the paper's aioquic), "
            "1-3 repetitions"
        ),
        (
            "a check of direction with a first spread: slow start weighs more, the paper's points "
            "and its fairness stack are missing (those findings say not run)"
        ),
    ),
    "paper": (
        (
            "the paper's sizes: 100 MB downloads (trace 25 MB), 180 s fairness runs, 5 "
            "repetitions, the paper's stacks and points (each study's paper: block)"
        ),
        "5 runs instead of the paper's 10: wider CIs",
    ),
}


def section(studies: dict, profiles: list[str] = ()) -> list[str]:
    tools, where = versions(studies)
    stack = ", ".join(
        f"{k} {tools[k]}" for k in ("ngtcp2", "aioquic", "iperf3", "kernel") if k in tools
    )
    lines = [
        "## Deviations from the paper's testbed",
        "",
        "| what | the paper | ours | expected effect |",
        "|---|---|---|---|",
        (
            f"| Software versions | aioquic, ngtcp2 and kernel of 2020 (not all stated) | {stack} "
            f"({where}) | newer stacks: different pacing and loss recovery than the paper's |"
        ),
    ]
    for profile in (p for p in profiles if p in PROFILE_SIZES):
        ours, effect = PROFILE_SIZES[profile]
        lines.append(
            f"| Campaign size ({profile} profile) | 100 MB downloads, 3-minute fairness runs, "
            f"10 runs per point | {ours} | {effect} |"
        )
    lines += [f"| {w} | {p} | {o} | {e} |" for w, p, o, e in FIXED]
    return lines + ["", *loss_placement(studies.get(LOSS_PLACEMENT)), ""]


def loss_placement(study) -> list[str]:
    """The loss-emulation deviation measured: goodput with frames dropped on arrival (netem's
    way, `loss_at: enqueue`) against after serialisation (linkem's default), per loss rate."""
    if study is None:
        return [
            (
                "Not measured in this campaign: the size of the loss-placement difference "
                "(`dcexp run experiments/paper/deviations/loss_placement.yaml`)."
            )
        ]
    values = study.values()
    lines = [
        (
            "Loss placement, measured (study `loss-placement`: 5 MB downloads, goodput in "
            "Mbit/s, mean [95 % CI] (n); difference enqueue - departure, Welch's 95 % CI):"
        ),
        "",
        (
            "| stack | loss | dropped after serialisation (linkem) | dropped on arrival "
            "(netem) | difference |"
        ),
        "|---|---|---|---|---|",
    ]
    for variant, points in values.items():
        for loss in dict.fromkeys(str(p).split()[0] for p in points):
            late = points.get(f"{loss} % departure", [])
            early = points.get(f"{loss} % enqueue", [])
            lines.append(
                f"| {variant} | {loss} % | {estimate(late, NON_NEGATIVE).text()} | "
                f"{estimate(early, NON_NEGATIVE).text()} "
                f"| {welch(late, early).text()} |"
            )
    return lines
