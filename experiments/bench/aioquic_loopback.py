"""CPU seconds of our aioquic client per download over loopback, per event loop.

    .venv/bin/python -m experiments.bench.aioquic_loopback [--loops asyncio,uvloop]
        [--runs 4] [--mb 40] [--profile DIR]

Per run: our quic_endpoint server (on uvloop, CPU 0) and client (NewReno, enlarged UDP
buffer, on the loop under test, CPU 1 when the host has two), one download of --mb MB,
checked complete; the client's user + system CPU seconds from wait4. The loops alternate run
by run so that a change of the machine's load falls on each alike. With --profile DIR one more
run per loop writes the client's cProfile (DIR/<loop>.prof) and prints where its time goes
per datagram: aioquic's receive path, its transmit attempt after every datagram, our code
(events, SHA-256, the 100 ms report) and the rest (socket calls, the event loop). cProfile
measures wall time and slows Python down: only its shares count. On a shared machine run it
at nice 19 and compare only figures of one invocation (experiments/docs/aioquic-cpu.md).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from dccommon.cliargs import (
    ArgumentParser,
    InputFileError,
    float_range,
    int_range,
    make_output_dir,
    once_each,
)
from dccommon.ports import free_port
from experiments.flows import LARGE_RCVBUF, MB, make_cert, make_payload
from experiments.flows.aioquic_flow import LOOPS

ENDPOINT = [sys.executable, "-m", "experiments.flows.quic_endpoint"]
SERVER_LOOP = "uvloop"  # the lighter server, so that the client is what runs out of CPU


def _pinned(cpu: int, argv: list[str]) -> list[str]:
    """argv on one CPU when the host has two or more (taskset); as it is otherwise."""
    return ["taskset", "-c", str(cpu), *argv] if (os.cpu_count() or 1) > 1 else argv


def client_cpu_s(loop: str, nbytes: int, work: Path, profile: Path | None = None) -> float:
    """One download over loopback; the client's CPU seconds (user + system)."""
    cert, key = make_cert(work)
    payload = make_payload(work / "payload.bin", 4 * 1024 * 1024, seed=3)
    common = ["--addr", "127.0.0.1", "--port", str(free_port("udp"))]
    server_argv = [*ENDPOINT, "server", *common, "--loop", SERVER_LOOP]
    server_argv += ["--cert", str(cert), "--key", str(key), "--file", str(payload)]
    server = subprocess.Popen(_pinned(0, server_argv), stdout=subprocess.PIPE, text=True)
    log = work / f"client-{loop}.jsonl"
    try:
        if server.stdout.readline().strip() != "listening":
            raise RuntimeError(f"aioquic_loopback: the server did not start (exit {server.poll()})")
        python = [sys.executable, "-m", "cProfile", "-o", str(profile)] if profile else ENDPOINT[:1]
        argv = [*python, *ENDPOINT[1:], "client", *common, "--loop", loop, "--cc", "reno"]
        argv += ["--bytes", str(nbytes), "--rcvbuf", str(LARGE_RCVBUF), "--log", str(log)]
        client = subprocess.Popen(_pinned(1, argv))
        _pid, status, usage = os.wait4(client.pid, 0)
    finally:
        server.terminate()
        server.wait(timeout=10)
    final = json.loads(log.read_text().splitlines()[-1])
    if os.waitstatus_to_exitcode(status) != 0 or not final.get("complete"):
        raise RuntimeError(f"aioquic_loopback: the {loop} client's download failed: {final}")
    return usage.ru_utime + usage.ru_stime


# Where the client's time goes: cProfile entries (file part, function) per category, as
# shares of the event loop's run (imports and start-up left out); the rest of the run is the
# socket calls, the event loop and its waits for datagrams.
CATEGORIES = {
    "aioquic receive (header, decryption, frames)": ("aioquic/quic/connection", "receive_datagram"),
    "aioquic transmit attempt after each datagram": ("aioquic/asyncio/protocol", "transmit"),
    "ours: events, SHA-256": ("quic_endpoint", "quic_event_received"),
    "ours: 100 ms report": ("quic_endpoint", "report"),
}


def profile_shares(path: Path) -> tuple[int, dict[str, float]]:
    """Datagrams received and each category's share of the client's profiled time."""
    import pstats

    stats = pstats.Stats(str(path)).stats  # (file, line, function) -> (cc, nc, tt, ct, callers)

    def cumulative(where: str, function: str) -> tuple[int, float]:
        hits = [v for (f, _l, fn), v in stats.items() if where in f and fn == function]
        return sum(v[1] for v in hits), sum(v[3] for v in hits)

    total = cumulative("asyncio/runners", "run")[1]  # asyncio.Runner.run, on either loop

    datagrams = cumulative(*CATEGORIES["aioquic receive (header, decryption, frames)"])[0]
    shares = {name: cumulative(*key)[1] / total for name, key in CATEGORIES.items()}
    shares["the rest: socket calls, the event loop, waiting"] = 1 - sum(shares.values())
    return datagrams, shares


def _loops(text: str) -> list[str]:
    loops = [v.strip() for v in text.split(",") if v.strip()]
    if not loops or any(v not in LOOPS for v in loops):
        raise argparse.ArgumentTypeError(
            f"--loops: a comma-separated list of {', '.join(LOOPS)}, got {text!r}"
        )
    return once_each(text, loops)


def main(argv=None) -> int:
    p = ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--loops", type=_loops, default=list(LOOPS), help="event loops, alternated")
    p.add_argument("--runs", type=int_range(1, 50, "runs"), default=4, help="downloads per loop")
    p.add_argument("--mb", type=float_range(0.1, 1000, "size"), default=40.0,
                   help="download size in MB (0.1..1000)")  # fmt: skip
    p.add_argument("--profile", type=Path, metavar="DIR", help="also one cProfile per loop")
    args = p.parse_args(argv)
    if args.profile:  # now, not after the minutes of the runs
        try:
            make_output_dir(args.profile)
        except InputFileError as exc:
            p.error(f"--profile: {exc}")
    nbytes = int(args.mb * MB)
    cpu = {loop: [] for loop in args.loops}
    with tempfile.TemporaryDirectory(prefix="aioquic-loopback-") as tmp:
        for _ in range(args.runs):
            for loop in args.loops:
                cpu[loop].append(client_cpu_s(loop, nbytes, Path(tmp)))
        if args.profile:
            for loop in args.loops:
                client_cpu_s(loop, nbytes, Path(tmp), args.profile / f"{loop}.prof")
    print(f"client CPU seconds per {args.mb:g} MB download, {args.runs} runs per loop:")
    for loop, values in cpu.items():
        print(
            f"  {loop:8} mean {statistics.mean(values):.2f} s "
            f"(range {min(values):.2f}-{max(values):.2f})"
        )
    for loop in args.loops if args.profile else ():
        datagrams, shares = profile_shares(args.profile / f"{loop}.prof")
        print(f"{loop}: where the client's profiled time goes ({datagrams} datagrams received)")
        for name, share in shares.items():
            print(f"  {share:6.1%}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
