"""The command lines our own QUIC endpoints are started with (aioquic's quic_endpoint and
quic-go's dcexp-quicgo speak one protocol: ClientLogFlow builds what they share). No process
is started: a stand-in namespace records the argv.

Run: .venv/bin/pytest -q experiments/tests/test_exp_flow_argv.py
"""

from pathlib import Path

import pytest

from experiments.flows import MB, FlowContext, make_flow
from experiments.flows.aioquic_flow import LARGE_RCVBUF
from experiments.flows.quicgo import QUICGO_BIN
from experiments.run.scenario import FLOW_DEFAULTS


class RecordingNamespace:
    """Records what would be started in it."""

    def __init__(self, name: str):
        self.name, self.started = name, []

    def popen(self, argv, **kwargs):
        self.started.append(argv)


def flow_of(kind: str, tmp_path: Path, **spec):
    ctx = FlowContext(
        flow_id="f0-dc",
        server_ns=RecordingNamespace("srv"),
        client_ns=RecordingNamespace("dc"),
        server_addr="10.0.0.1",
        port=4433,
        workdir=tmp_path / "f0-dc",
        payload=tmp_path / "payload.bin",
        cert=tmp_path / "cert.pem",
        key=tmp_path / "key.pem",
        t0=0.0,
    )
    flow = make_flow({**FLOW_DEFAULTS, "kind": kind, **spec}, ctx)
    flow.start_server()
    flow.start_client()
    for log in flow.logs:
        log.close()
    return ctx.server_ns.started[0], ctx.client_ns.started[0], tmp_path


@pytest.mark.parametrize("kind", ["aioquic", "quicgo"])
def test_our_quic_servers_serve_the_runs_files_and_clients_log_and_fetch(kind, tmp_path):
    server, client, tmp = flow_of(kind, tmp_path, size_mb=2)
    files = ["--cert", f"{tmp}/cert.pem", "--key", f"{tmp}/key.pem", "--file", f"{tmp}/payload.bin"]
    assert server[server.index("--cert") : server.index("--cert") + 6] == files, server
    assert client[client.index("--log") :][:4] == [
        "--log",
        f"{tmp}/f0-dc/client.jsonl",
        "--bytes",
        str(int(2 * MB)),
    ], client
    assert "server" in server and "client" in client and "--addr" in client
    if kind == "quicgo":
        assert server[0] == str(QUICGO_BIN) and server[-2:] == [
            "--qlog-dir",
            f"{tmp}/f0-dc/qlog-server",
        ]


def test_aioquic_client_takes_the_large_buffer_and_a_duration(tmp_path):
    _, client, _ = flow_of("aioquic", tmp_path, duration_s=5, udp_rcvbuf="large")
    assert client[-4:] == ["--duration-s", "5", "--rcvbuf", str(LARGE_RCVBUF)], client
    _, default, _ = flow_of("aioquic", tmp_path, duration_s=5)
    assert "--rcvbuf" not in default


@pytest.mark.parametrize("kind", ["aioquic", "quicgo", "mptcp"])
def test_our_endpoints_get_their_role_and_the_servers_address(kind, tmp_path):
    server, client, _ = flow_of(kind, tmp_path, size_mb=1, cc="newreno")
    for role, argv in (("server", server), ("client", client)):
        at = argv.index(role)
        assert argv[at : at + 5] == [role, "--addr", "10.0.0.1", "--port", "4433"], argv
    if kind == "aioquic":
        assert client[client.index("--cc") :][:4] == ["--cc", "reno", "--loop", "asyncio"]
