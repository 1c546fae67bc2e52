"""Flow plugins between two namespaces on a plain veth (root): each kind downloads, the
QUIC downloads arrive intact, and RTT/goodput samples come out with plausible values."""

import os
import time

import pytest

from experiments.flows import MB, FlowContext, make_cert, make_flow, make_payload
from experiments.flows.aioquic_flow import LARGE_RCVBUF
from experiments.netns import Topology, unique_prefix, veth_pair
from experiments.scenario import validate_flow
from experiments.testbed import leftovers

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
        ("aioquic", "cubic", 5003),
        ("tcp", "cubic", 5004),
        ("tcp", "newreno", 5005),
    ],
)
def test_download_by_size(pair, kind, cc, port):
    srv, cli, work = pair
    spec = validate_flow("f", {"kind": kind, "cc": cc, "size_mb": 4})
    cert, key = make_cert(work)
    (work / "htdocs").mkdir(exist_ok=True)
    payload = make_payload(work / "htdocs" / "payload.bin", 4 * MB, seed=7)
    ctx = FlowContext(
        f"{kind}-{cc}",
        srv,
        cli,
        "10.0.0.1",
        port,
        work / f"{kind}-{cc}",
        payload,
        cert,
        key,
        time.monotonic(),
    )
    flow = make_flow(spec, ctx)
    try:
        flow.start_server()
        time.sleep(0.5)
        flow.start_client()
        deadline = time.monotonic() + 60
        while flow.running() and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        flow.stop()
    res = flow.result()
    assert res["complete"], res
    assert res["bytes"] >= 4 * MB
    if kind != "tcp":
        assert res["intact"], "QUIC download differs from the served file"
    else:
        assert res["cc_used"] == {"newreno": "reno"}.get(cc, cc)
    samples = flow.samples()
    rtts = [v for _t, m, v in samples if m == "rtt_ms"]
    assert rtts and min(rtts) < 50, "no RTT samples (qlog/TCP_INFO/client log)"
    if kind != "ngtcp2":  # ngtcp2's goodput is sampled live from its download file
        assert max(v for _t, m, v in samples if m == "bytes") >= 4 * MB
    else:
        assert flow.bytes_received() == 4 * MB


@pytest.mark.parametrize("kind", ["ngtcp2", "aioquic", "tcp", "aioquic-large"])
def test_download_by_duration_stops_on_time(pair, kind):
    srv, cli, work = pair
    rcvbuf = "large" if kind.endswith("-large") else "default"
    kind = kind.removesuffix("-large")
    spec = validate_flow("f", {"kind": kind, "cc": "cubic", "duration_s": 2, "udp_rcvbuf": rcvbuf})
    cert, key = make_cert(work)
    (work / "htdocs").mkdir(exist_ok=True)
    payload = make_payload(work / "htdocs" / "loop.bin", 1 * MB, seed=3)
    ctx = FlowContext(
        f"{kind}-{rcvbuf}-dur",
        srv,
        cli,
        "10.0.0.1",
        6000 + len(kind) + (rcvbuf == "large"),
        work / f"{kind}-{rcvbuf}-dur",
        payload,
        cert,
        key,
        time.monotonic(),
    )
    flow = make_flow(spec, ctx)
    try:
        flow.start_server()
        time.sleep(0.5)
        flow.start_client()
        while flow.running() and time.monotonic() - flow.t_client_start < 30:
            time.sleep(0.05)
        took = time.monotonic() - flow.t_client_start
    finally:
        flow.stop()
    res = flow.result()
    assert 1.9 <= took <= 6, f"{kind} ran {took:.1f} s for a 2 s flow"
    assert res["complete"], res
    assert res["bytes"] > 2 * MB  # 50 Mbit/s for ~2 s
    if kind == "aioquic":  # the kernel doubles what was asked (socket(7))
        large = res["udp_rcvbuf_bytes"] >= 2 * LARGE_RCVBUF
        assert large == (rcvbuf == "large"), res
