"""The pdcp-agent command line, built here for every caller (the testbed, the integration
test, the benches), so a new EAL or app option is added in one place; and the wait until a
started agent forwards.

    agent_argv(AGENT_BIN, "dx0001", [af_packet(0, "dx0001dca"), ...], ["--stats", "a.jsonl"])
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from experiments.run.parts import wait_for

AGENT_BIN = Path(__file__).resolve().parent.parent / "build" / "hostagents" / "pdcp-agent"
# Printed on stderr just before the forwarding loop starts: wait for it before sending.
AGENT_READY_LINE = "pdcp-agent: legs on ports"
# The agent's leg I/O: AF_PACKET (TPACKET ring) or AF_XDP (an XSK socket per leg).
IO_PATHS = ("afpacket", "afxdp")
MEMORY_MB = 256  # without hugepages: enough for the mbuf pools of three ports


def af_packet(index: int, iface: str, framecnt: int | None = None) -> str:
    """A `--vdev` reading and writing `iface` through AF_PACKET (a veth of the agent's
    namespace); `framecnt` sizes its ring (DPDK's default drops bursts at 300k pps)."""
    vdev = f"net_af_packet{index},iface={iface}"
    return vdev if framecnt is None else f"{vdev},framecnt={framecnt}"


def af_xdp(index: int, iface: str) -> str:
    """A `--vdev` reading and writing `iface` through AF_XDP (XDP in veth's driver, the PMD's
    default redirect program, copy mode), queue 0 only: the agent waits on that one queue's
    socket (rxwait.c). busy_budget=0: the PMD's default (64) asks for the kernel's preferred
    busy polling, a spinning receive the agent's blocking wait exists to avoid."""
    return f"net_af_xdp{index},iface={iface},start_queue=0,queue_count=1,busy_budget=0"


def leg_vdev(io: str, index: int, iface: str, framecnt: int | None = None) -> str:
    """The `--vdev` of a leg port on I/O path `io` (one of IO_PATHS); `framecnt` sizes an
    AF_PACKET ring (AF_XDP's rings are the PMD's)."""
    if io == "afpacket":
        return af_packet(index, iface, framecnt)
    if io == "afxdp":
        return af_xdp(index, iface)
    raise ValueError(f"unknown I/O path {io!r}: expected one of {', '.join(IO_PATHS)}")


def agent_argv(
    binary: Path,
    file_prefix: str,
    vdevs: Sequence[str],
    app_args: Sequence[str] = (),
    cpu: int = 0,
) -> list[str]:
    """EAL options for veths without hugepages or PCI, then the app's. Ports are numbered in
    the order of `vdevs`; `file_prefix` keeps concurrent agents' runtime dirs apart (give the
    run's unique prefix)."""
    argv = [str(binary), "-l", str(cpu), "--no-huge", "-m", str(MEMORY_MB), "--no-pci"]
    argv += ["--file-prefix", file_prefix]
    for vdev in vdevs:
        argv += ["--vdev", vdev]
    return [*argv, "--", *app_args]


def wait_ready(proc, log: Path, timeout_s: float = 30) -> None:
    """Return once the agent started as `proc` forwards (its ready line is in `log`, where its
    stderr goes). Until then frames sent into its ports are lost. TestbedError with the log's
    tail if it exits first or `timeout_s` passes."""

    def forwarding() -> bool:
        return AGENT_READY_LINE in log.read_text(errors="replace")

    wait_for(forwarding, timeout_s, "pdcp-agent", proc, log)
