"""Synthetic LTE-like bandwidth traces in Mahimahi's format (no real traces ship with Debian).

Mahimahi format: one integer per line, a millisecond timestamp at which one 1500-byte packet
may leave; several lines with the same timestamp mean several packets in that millisecond;
the trace loops when it ends (so its last timestamp is its period).

Model: the capacity follows an Ornstein-Uhlenbeck process in log space (mean-reverting
fluctuations as a scheduler's share and the channel quality change), updated every 10 ms,
optionally with outages (capacity near zero for a few hundred ms, as in handovers or deep
fades). Packets are emitted by accumulating capacity per millisecond. The seed fixes the trace.

    python -m experiments.traces.generate --mean-mbit 20 --cv 0.3 --duration-s 30 --seed 1 \
        --outages-per-min 0 > my_trace.mahi

The traces shipped here were made with (see README.md "Traces"):
    lte_steady20.mahi   --mean-mbit 20 --cv 0.1 --duration-s 30 --seed 1
    lte_var20.mahi      --mean-mbit 20 --cv 0.4 --duration-s 30 --seed 2
    lte_outage20.mahi   --mean-mbit 20 --cv 0.3 --duration-s 30 --seed 3 --outages-per-min 4
"""

from __future__ import annotations

import math
import random
import sys

from dccommon.cliargs import (
    MAX_UINT64,
    ArgumentParser,
    HelpFormatter,
    add_old_name,
    float_range,
    int_range,
)

PACKET_BITS = 1500 * 8
STEP_MS = 10
CORRELATION_S = 1.0  # how long a capacity level tends to persist


def generate(
    mean_mbit: float,
    cv: float,
    seconds: float,
    seed: int,
    outages_per_min: float = 0.0,
    outage_ms: int = 300,
) -> list[int]:
    rng = random.Random(seed)
    sigma = math.sqrt(math.log(1 + cv * cv))  # log-normal with this cv
    mu = math.log(mean_mbit) - sigma * sigma / 2  # ... and this mean
    theta = STEP_MS / 1000 / CORRELATION_S
    x = mu
    stamps: list[int] = []
    credit = 0.0
    outage_left = 0
    p_outage = outages_per_min / 60_000 * STEP_MS
    for step in range(int(seconds * 1000 / STEP_MS)):
        x += theta * (mu - x) + sigma * math.sqrt(2 * theta) * rng.gauss(0, 1)
        if outage_left <= 0 and rng.random() < p_outage:
            outage_left = outage_ms
        rate = 0.02 * mean_mbit if outage_left > 0 else math.exp(x)
        outage_left -= STEP_MS
        for ms in range(step * STEP_MS, (step + 1) * STEP_MS):
            credit += rate * 1e6 / 1000 / PACKET_BITS
            while credit >= 1:
                stamps.append(ms + 1)  # Mahimahi timestamps start at 1 ms
                credit -= 1
    if not stamps or stamps[-1] != int(seconds * 1000):
        stamps.append(int(seconds * 1000))  # fix the period at exactly `seconds`
    return stamps


# A trace loops, so a short one serves a long run; a long fast one would be a huge file
# (linkem reads at most 256 MiB) and as many Python ints in memory while it is made.
MAX_OPPORTUNITIES = 5_000_000


def main(argv=None) -> int:
    p = ArgumentParser(description=__doc__.splitlines()[0], formatter_class=HelpFormatter)
    p.add_argument(
        "--mean-mbit", type=float_range(0, 100_000, "mean", low_open=True), required=True
    )
    p.add_argument(
        "--cv", type=float_range(0, 10, "cv"), default=0.3, help="coefficient of variation"
    )
    duration = p.add_argument(
        "--duration-s",
        type=float_range(STEP_MS / 1000, 86_400, "duration"),
        default=30.0,
        help="trace length (its period)",
    )
    add_old_name(p, "--seconds", duration)
    p.add_argument("--seed", type=int_range(0, MAX_UINT64, "seed"), default=1)
    p.add_argument(
        "--outages-per-min",
        type=float_range(0, 60_000 / STEP_MS, "outages per minute"),
        default=0.0,
    )
    p.add_argument("--outage-ms", type=int_range(1, 3_600_000, "outage"), default=300)
    args = p.parse_args(argv)
    opportunities = args.mean_mbit * 1e6 / PACKET_BITS * args.duration_s
    if opportunities > MAX_OPPORTUNITIES:
        p.error(
            f"--mean-mbit {args.mean_mbit:g} for --duration-s {args.duration_s:g} makes "
            f"{opportunities:,.0f} lines, more than the {MAX_OPPORTUNITIES:,} allowed: a "
            "trace loops, so give a shorter one"
        )
    stamps = generate(
        args.mean_mbit, args.cv, args.duration_s, args.seed, args.outages_per_min, args.outage_ms
    )
    sys.stdout.write("\n".join(map(str, stamps)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
