"""Flow plugins between two namespaces on a plain veth (root): each kind downloads, the
QUIC downloads arrive intact, and RTT/goodput samples come out with plausible values; the
aioquic server started for a cubic_n flow runs our CUBIC-N, read back from its qlog."""

import json
import os
import sys
import time
from pathlib import Path

import pytest
from aioquic.quic.congestion.base import K_MINIMUM_WINDOW

from experiments.flows import (
    LARGE_RCVBUF,
    MB,
    FlowContext,
    make_cert,
    make_flow,
    make_payload,
    sha256_file,
)
from experiments.run.netns import Topology, unique_prefix, veth_pair
from experiments.run.scenario import validate_flow
from experiments.run.testbed import leftovers

pytestmark = pytest.mark.netns
if os.geteuid() != 0:
    raise RuntimeError("experiments flow tests need root (network namespaces); run as root")


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    prefix = unique_prefix("dxf")
    with Topology() as topo:
        srv, cli = topo.ns(prefix + "s"), topo.ns(prefix + "c")
        veth_pair(prefix + "s0", srv, prefix + "c0", cli)
        srv.add_addr(prefix + "s0", "10.0.0.1/24")
        cli.add_addr(prefix + "c0", "10.0.0.2/24")
        # 50 Mbit/s so that a 4 MB download spans several 100 ms sampling intervals
        srv.run(
            [
                "tc",
                "qdisc",
                "add",
                "dev",
                prefix + "s0",
                "root",
                "tbf",
                "rate",
                "50mbit",
                "burst",
                "32kb",
                "latency",
                "50ms",
            ]
        )
        yield srv, cli, tmp_path_factory.mktemp("flows")
    assert leftovers(prefix) == []


@pytest.mark.parametrize(
    "kind,cc,port",
    [
        ("ngtcp2", "cubic", 5001),
        ("ngtcp2", "newreno", 5002),
        ("ngtcp2-large", "cubic", 5008),
        ("aioquic", "cubic", 5003),
        ("aioquic-uvloop", "newreno", 5007),
        ("quicgo", "newreno", 5006),
        ("tcp", "cubic", 5004),
        ("tcp", "newreno", 5005),
    ],
)
def test_download_by_size(pair, kind, cc, port):
    srv, cli, work = pair
    kind, _, option = kind.partition("-")  # the event loop, or a large UDP receive buffer
    rcvbuf, loop = ("large", "") if option == "large" else ("default", option)
    spec = validate_flow(
        "f", {"kind": kind, "cc": cc, "size_mb": 4, "loop": loop or None, "udp_rcvbuf": rcvbuf}
    )
    cert, key = make_cert(work)
    (work / "htdocs").mkdir(exist_ok=True)
    payload = make_payload(work / "htdocs" / "payload.bin", 4 * MB, seed=7)
    ctx = FlowContext(
        f"{kind}-{cc}{option}",
        srv,
        cli,
        "10.0.0.1",
        port,
        work / f"{kind}-{cc}{option}",
        payload,
        cert,
        key,
        time.monotonic(),
    )
    flow = make_flow(spec, ctx)
    try:
        flow.start_server()
        flow.wait_server_ready()
        flow.start_client()
        deadline = time.monotonic() + 60
        while flow.running() and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        flow.stop()
    res = flow.result()
    assert res["complete"], res
    assert res["bytes"] >= 4 * MB
    if kind == "aioquic":  # both endpoints on the flow's event loop
        for proc in (flow.server, flow.client):
            assert f"--loop {loop or 'asyncio'}" in " ".join(map(str, proc.args))
    if kind != "tcp":
        assert res["intact"], "QUIC download differs from the served file"
    else:
        assert res["cc_used"] == {"newreno": "reno"}.get(cc, cc)
        # on the run's clock: after the client started, before the result was read
        assert 0 < res["sender_last_write_s"] <= time.monotonic() - ctx.t0, res
    if rcvbuf == "large":  # the kernel doubles what was asked (socket(7))
        assert res["udp_rcvbuf_bytes"] == 2 * LARGE_RCVBUF, res
    samples = flow.samples()
    rtts = [v for _t, m, v in samples if m == "rtt_ms"]
    assert rtts and min(rtts) < 50, "no RTT samples (qlog/TCP_INFO/client log)"
    if kind != "ngtcp2":  # ngtcp2's goodput is sampled live from its download file
        assert max(v for _t, m, v in samples if m == "bytes") >= 4 * MB
    else:
        assert flow.bytes_received() == 4 * MB


LOOP_BYTES = 16 * 1024  # the file a duration flow serves over and over


@pytest.mark.parametrize(
    "kind", ["ngtcp2", "aioquic", "quicgo", "tcp", "aioquic-large", "ngtcp2-large"]
)
def test_download_by_duration_stops_on_time(pair, kind):
    """A duration flow downloads for its duration_s and then stops: by itself (iperf3 -t, our
    aioquic client, which serves its file in a loop) or stopped by running() (ngtcp2). What
    is checked does not depend on how fast a loaded machine moves the bytes: the flow ends
    by its duration, not earlier, not by the test's cap; data flowed beyond one pass of a small
    looped file."""
    srv, cli, work = pair
    rcvbuf = "large" if kind.endswith("-large") else "default"
    kind = kind.removesuffix("-large")
    # cc: each kind's default (cubic; quic-go's only one, newreno)
    spec = validate_flow("f", {"kind": kind, "duration_s": 2, "udp_rcvbuf": rcvbuf})
    cert, key = make_cert(work)
    (work / "htdocs").mkdir(exist_ok=True)
    payload = make_payload(work / "htdocs" / "loop.bin", LOOP_BYTES, seed=3)
    ctx = FlowContext(
        f"{kind}-{rcvbuf}-dur",
        srv,
        cli,
        "10.0.0.1",
        6000 + 2 * ("ngtcp2", "aioquic", "quicgo", "tcp").index(kind) + (rcvbuf == "large"),
        work / f"{kind}-{rcvbuf}-dur",
        payload,
        cert,
        key,
        time.monotonic(),
    )
    flow = make_flow(spec, ctx)
    cap_s = 120  # only a flow that never stops meets it
    try:
        flow.start_server()
        flow.wait_server_ready()
        flow.start_client()
        while flow.running() and time.monotonic() - flow.t_client_start < cap_s:
            time.sleep(0.05)
        ended_by_itself = not flow.running()
        took = time.monotonic() - flow.t_client_start
    finally:
        flow.stop()
    res = flow.result()
    assert ended_by_itself, f"{kind} still ran after {cap_s} s for a 2 s flow"
    assert took >= 1.9, f"{kind} stopped after {took:.1f} s of a 2 s flow"
    if flow.self_timed:  # iperf3 and our client end by their own clock, successfully
        assert flow.client.returncode == 0, res
    else:
        assert flow.stopped_at_duration
    assert res["complete"], res
    assert res["bytes"] > 3 * LOOP_BYTES, res
    if kind in ("aioquic", "ngtcp2"):  # the kernel doubles what was asked (socket(7))
        large = (res.get("udp_rcvbuf_bytes") or 0) >= 2 * LARGE_RCVBUF
        assert large == (rcvbuf == "large"), res


# --- the aioquic server dcexp starts for a cubic_n flow runs our CUBIC-N with that N

CUBIC_N_RATE = "10mbit"  # a drop-tail queue of 12.5 kB (10 ms): losses every few RTTs
MAX_DATAGRAM = 1200  # aioquic's default max_datagram_size
CUBIC_N_TOLERANCE = 0.005  # truncation to whole bytes: below 1/2400 above the minimum window


@pytest.fixture(scope="module")
def lossy_pair(tmp_path_factory):
    prefix = unique_prefix("dxn")
    with Topology() as topo:
        srv, cli = topo.ns(prefix + "s"), topo.ns(prefix + "c")
        veth_pair(prefix + "s0", srv, prefix + "c0", cli)
        srv.add_addr(prefix + "s0", "10.0.0.1/24")
        cli.add_addr(prefix + "c0", "10.0.0.2/24")
        tbf = ["rate", CUBIC_N_RATE, "burst", "8kb", "latency", "10ms"]
        srv.run(["tc", "qdisc", "add", "dev", prefix + "s0", "root", "tbf", *tbf])
        yield srv, cli, tmp_path_factory.mktemp("cubic_n")
    assert leftovers(prefix) == []


def read_qlog(directory: Path) -> tuple[Path, list[dict]] | None:
    """The events of the one qlog in directory, once aioquic has finished writing it."""
    for path in directory.glob("*.qlog"):
        try:
            return path, json.loads(path.read_text())["traces"][0]["events"]
        except ValueError:
            return None
    return None


def loss_backoffs(events: list[dict]) -> list[float]:
    """cwnd after / cwnd before each loss-triggered reduction in an aioquic qlog. aioquic logs
    metrics_updated after each packet_lost (the window before) and again once the controller
    has reacted; a reaction sets ssthresh to the reduced window, which tells it apart from
    CUBIC's own ACK-driven steps down to its Reno-friendly estimate (ssthresh unchanged).
    Reductions to the minimum window (persistent congestion) say nothing of beta."""
    floor = K_MINIMUM_WINDOW * MAX_DATAGRAM
    ratios, cwnd, ssthresh, lost = [], None, None, False
    for ev in events:
        if ev["name"] == "recovery:packet_lost":
            lost = True
        elif ev["name"] == "recovery:metrics_updated" and "cwnd" in ev["data"]:
            new, new_ssthresh = ev["data"]["cwnd"], ev["data"].get("ssthresh")
            if lost and cwnd and new < cwnd and new_ssthresh == new != ssthresh:
                if new > floor:
                    ratios.append(new / cwnd)
                lost = False
            cwnd, ssthresh = new, new_ssthresh
    return ratios


@pytest.mark.parametrize("n,hystart", [(1, True), (2, False), (5, True)])
def test_aioquic_server_runs_cubic_n_read_back_from_its_qlog(lossy_pair, n, hystart):
    from experiments.flows.corbel_cc import beta_n

    srv, cli, work = lossy_pair
    spec = validate_flow(
        "f",
        {
            "kind": "aioquic",
            "cc": "cubic",
            "cubic_n": n,
            "hystart": hystart,
            "qlog": True,
            "size_mb": 2,
        },
    )
    cert, key = make_cert(work)
    payload = make_payload(work / "payload.bin", 2 * MB, seed=5)
    name = f"n{n}-{hystart}"
    ctx = FlowContext(
        name, srv, cli, "10.0.0.1", 7000 + n, work / name, payload, cert, key, time.monotonic()
    )
    flow = make_flow(spec, ctx)
    qlogs = work / name / "qlog-server"
    try:
        flow.start_server()
        flow.wait_server_ready()
        flow.start_client()
        deadline = time.monotonic() + 60
        while flow.running() and time.monotonic() < deadline:
            time.sleep(0.05)
        # aioquic writes a connection's qlog when it ends (after the draining period)
        while (trace := read_qlog(qlogs)) is None and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        flow.stop()
    assert flow.result()["intact"], flow.result()
    assert trace is not None, f"no complete qlog in {qlogs}"
    path, events = trace
    metrics = [e["data"] for e in events if e["name"] == "recovery:metrics_updated"]
    logged = {(m.get("cubic-n"), m.get("hystart")) for m in metrics if "cwnd" in m}
    assert logged == {(n, hystart)}, f"the server's controller logged {logged}"

    ratios = loss_backoffs(events)
    assert len(ratios) >= 3, f"only {len(ratios)} loss backoffs in {path}"
    off = [r for r in ratios if abs(r - beta_n(n)) > CUBIC_N_TOLERANCE]
    assert (
        not off
    ), f"N={n}: cwnd backoff {sorted(off)[:5]} of {len(ratios)} is not beta_N={beta_n(n):.3f}"


# --- our quic-go endpoint: bad requests cost a stream, not the server; it interoperates with
# our aioquic endpoint (the same protocol) both ways

BAD_REQUESTS = (b"GET lots\n", b"PUT 10\n", b"GET -7\n", b"G" * 200)
BAD_REQUEST_CLIENT = """
import asyncio, json, sys
from aioquic.asyncio import QuicConnectionProtocol, connect
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import StreamDataReceived, StreamReset

class Probe(QuicConnectionProtocol):
    answers = {}
    def quic_event_received(self, event):
        if isinstance(event, StreamReset):
            self.answers[event.stream_id] = "reset"
        elif isinstance(event, StreamDataReceived) and event.data:
            self.answers.setdefault(event.stream_id, "data")

async def main(addr, port, requests):
    config = QuicConfiguration(alpn_protocols=["dcexp"], is_client=True, verify_mode=False)
    async with connect(addr, port, configuration=config, create_protocol=Probe) as proto:
        ids = []
        for request in requests:
            ids.append(proto._quic.get_next_available_stream_id())
            proto._quic.send_stream_data(ids[-1], request.encode(), end_stream=True)
        proto.transmit()
        # until every stream has its answer (a fixed pause is too short on a loaded machine)
        deadline = asyncio.get_running_loop().time() + 60
        while len(proto.answers) < len(ids) and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.05)
        print(json.dumps([proto.answers.get(i, "nothing") for i in ids]))

asyncio.run(main(sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])))
"""


def test_quicgo_server_resets_bad_requests_and_serves_our_aioquic_client(pair):
    srv, cli, work = pair
    spec = validate_flow("f", {"kind": "quicgo", "size_mb": 1})
    cert, key = make_cert(work)
    payload = make_payload(work / "interop.bin", 1 * MB, seed=11)
    ctx = FlowContext(
        "interop",
        srv,
        cli,
        "10.0.0.1",
        5100,
        work / "interop",
        payload,
        cert,
        key,
        time.monotonic(),
    )
    flow = make_flow(spec, ctx)
    try:
        flow.start_server()
        flow.wait_server_ready()
        requests = json.dumps([r.decode() for r in BAD_REQUESTS])
        probe = cli.run([sys.executable, "-c", BAD_REQUEST_CLIENT, "10.0.0.1", "5100", requests])
        assert json.loads(probe.stdout) == ["reset"] * len(BAD_REQUESTS), probe.stdout
        log = work / "interop" / "aioquic-client.jsonl"
        endpoint = [sys.executable, "-m", "experiments.flows.quic_endpoint", "client"]
        endpoint += ["--addr", "10.0.0.1", "--port", "5100", "--bytes", str(MB), "--log", str(log)]
        cli.run(endpoint)
        assert flow.server.poll() is None, "the quic-go server stopped"
    finally:
        flow.stop()
    final = json.loads(log.read_text().splitlines()[-1])
    assert final["complete"] and final["sha256"] == sha256_file(payload), final


def test_quicgo_client_downloads_intact_from_our_aioquic_server(pair):
    from experiments.flows.quicgo import QUICGO_BIN

    srv, cli, work = pair
    spec = validate_flow("f", {"kind": "aioquic", "size_mb": 1})
    cert, key = make_cert(work)
    payload = make_payload(work / "interop.bin", 1 * MB, seed=11)
    ctx = FlowContext(
        "interop-back", srv, cli, "10.0.0.1", 5101, work / "interop-back", payload, cert, key, 0
    )
    flow = make_flow(spec, ctx)
    log = work / "interop-back" / "quicgo-client.jsonl"
    try:
        flow.start_server()
        flow.wait_server_ready()  # the Python server imports aioquic first
        client = [str(QUICGO_BIN), "client", "--addr", "10.0.0.1", "--port", "5101"]
        cli.run(client + ["--bytes", str(MB), "--log", str(log)])
    finally:
        flow.stop()
    final = json.loads(log.read_text().splitlines()[-1])
    assert final["complete"] and final["sha256"] == sha256_file(payload), final
