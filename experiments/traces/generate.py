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

from dccommon.cliargs import ArgumentParser, add_old_name

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


def main(argv=None) -> int:
    p = ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mean-mbit", type=float, required=True)
    p.add_argument("--cv", type=float, default=0.3, help="coefficient of variation")
    duration = p.add_argument("--duration-s", type=float, default=30, help="trace length")
    add_old_name(p, "--seconds", duration)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--outages-per-min", type=float, default=0.0)
    p.add_argument("--outage-ms", type=int, default=300)
    args = p.parse_args(argv)
    if args.mean_mbit <= 0 or args.cv < 0 or args.duration_s <= 0:
        p.error("--mean-mbit and --duration-s must be positive, --cv non-negative")
    stamps = generate(
        args.mean_mbit, args.cv, args.duration_s, args.seed, args.outages_per_min, args.outage_ms
    )
    sys.stdout.write("\n".join(map(str, stamps)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
