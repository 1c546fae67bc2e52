"""The `p4sim` console script: `p4sim compile`, bad input, and a switch started with a program.

Run: .venv/bin/pytest -q p4sim/tests/test_runtime_cli.py
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
from pathlib import Path

import grpc
from google.protobuf import json_format, text_format
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from dccommon.processes import stop_process

HERE = Path(__file__).parent
PROGRAM = HERE / "p4" / "runtime_fwd.p4"
P4SIM = str(Path(sys.executable).parent / "p4sim")


def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [P4SIM, *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def test_compile_writes_p4info_in_every_format_and_device_config(tmp_path):
    txt, js, binary = tmp_path / "fwd.p4info.txt", tmp_path / "fwd.json", tmp_path / "fwd.bin"
    config = tmp_path / "fwd.p4sim.json"
    proc = run(
        "compile", str(PROGRAM), "--p4runtime-files", f"{txt},{js},{binary}", "-o", str(config)
    )
    assert proc.returncode == 0, proc.stderr
    info = text_format.Parse(txt.read_text(), p4info_pb2.P4Info())
    assert info.pkg_info.arch == "v1model"
    tables = {t.preamble.name: t for t in info.tables}
    assert set(tables) == {"FwdIngress.l2_fwd", "FwdIngress.ipv4_lpm", "FwdIngress.acl"}
    assert [m.name for m in tables["FwdIngress.l2_fwd"].match_fields] == ["dst_mac"]
    assert tables["FwdIngress.l2_fwd"].preamble.alias == "l2_fwd"
    # p4c hashes the header *type* name for controller headers (see test_runtime_p4info.py)
    from p4sim.p4info import jenkins_one_at_a_time

    headers = {h.preamble.name: h.preamble.id for h in info.controller_packet_metadata}
    assert headers == {
        name: (0x04 << 24) | (jenkins_one_at_a_time(type_name) & 0xFFFFFF)
        for name, type_name in (("packet_in", "packet_in_t"), ("packet_out", "packet_out_t"))
    }, "the front end must fill ControllerHeaderDef.type_name (p4sim/model.py)"
    assert json_format.Parse(js.read_text(), p4info_pb2.P4Info()) == info
    assert p4info_pb2.P4Info.FromString(binary.read_bytes()) == info
    doc = json.loads(config.read_text())
    assert doc["p4sim_device_config"] == 1 and doc["file"] == "runtime_fwd.p4"
    assert "l2_fwd" in doc["program"] and "#include" not in doc["program"]


def test_compile_error_is_file_line_col_without_traceback(tmp_path):
    bad = tmp_path / "bad.p4"
    bad.write_text("#include <core.p4>\n\ncontrol C() {\n  apply { x = ; }\n}\n")
    proc = run("compile", str(bad), "--p4runtime-files", str(tmp_path / "out.txt"))
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    first = proc.stderr.splitlines()[0]
    assert first.startswith(f"{bad}:4:") and ": error: " in first, proc.stderr
    assert not (tmp_path / "out.txt").exists()


def test_compile_without_outputs_checks_the_program(tmp_path):
    """Like p4c without output options: errors are reported, a good program exits 0."""
    bad = tmp_path / "bad.p4"
    bad.write_text("#include <core.p4>\n\ncontrol C() {\n  apply { x = ; }\n}\n")
    proc = run("compile", str(bad))
    assert proc.returncode == 1 and proc.stderr.startswith(f"{bad}:4:"), proc.stderr
    proc = run("compile", str(PROGRAM))
    assert proc.returncode == 0 and "no errors" in proc.stderr, proc.stderr


def test_compile_missing_file_and_bad_suffix(tmp_path):
    proc = run("compile", str(tmp_path / "nope.p4"), "--p4runtime-files", "x.txt")
    assert proc.returncode == 1 and "nope.p4: no such file" in proc.stderr
    proc = run("compile", str(PROGRAM), "--p4runtime-files", str(tmp_path / "x.yaml"))
    assert proc.returncode == 1 and ".txt, .txtpb, .json, .bin" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_missing_interface_is_a_clear_error():
    proc = run("--no-p4", "-i", "0@p4simnosuchif", timeout=30)
    assert proc.returncode == 1
    assert "interface 'p4simnosuchif' does not exist" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_io_afxdp_is_the_native_engines():
    """The interpreter reads its interfaces through AF_PACKET only: --io afxdp without
    --engine native is refused (before any interface is opened), as is an unknown path."""
    proc = run("--no-p4", "-i", "0@p4simnosuchif", "--io", "afxdp", timeout=30)
    assert proc.returncode == 1 and "--io afxdp: the native engine's" in proc.stderr
    proc = run("--no-p4", "-i", "0@lo", "--io", "dpdk", timeout=30)
    assert proc.returncode == 2 and "choose from 'afpacket', 'afxdp'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_bad_usage_is_explained():
    proc = run(timeout=30)
    assert proc.returncode == 2 and "--no-p4" in proc.stderr
    proc = run("--no-p4", "-i", "veth0", timeout=30)
    assert proc.returncode == 2 and "PORT@INTERFACE" in proc.stderr


def test_program_on_command_line_is_committed_at_once(tmp_path):
    """GetForwardingPipelineConfig returns its P4Info and writes work without a push."""
    sock = f"unix:{tmp_path}/p4rt.sock"
    proc = subprocess.Popen(
        [
            P4SIM,
            str(PROGRAM),
            "--grpc-server-addr",
            sock,
            "--cpu-port",
            "64",
            "--thrift-port",
            "9090",
            "--log-level",
            "info",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        channel = grpc.insecure_channel(sock)
        grpc.channel_ready_future(channel).result(timeout=60)
        stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)
        got = stub.GetForwardingPipelineConfig(
            p4runtime_pb2.GetForwardingPipelineConfigRequest(device_id=0), timeout=60
        )
        tables = {t.preamble.name: t.preamble.id for t in got.config.p4info.tables}
        actions = {a.preamble.name: a.preamble.id for a in got.config.p4info.actions}
        assert "FwdIngress.l2_fwd" in tables
        assert json.loads(got.config.p4_device_config)["file"] == "runtime_fwd.p4"
        # become primary and write at once
        arbitration = p4runtime_pb2.StreamMessageRequest()
        arbitration.arbitration.device_id = 0
        arbitration.arbitration.election_id.low = 1
        requests: queue.Queue = queue.Queue()
        requests.put(arbitration)
        stream = stub.StreamChannel(iter(requests.get, None))
        assert next(stream).arbitration.status.code == 0
        write = p4runtime_pb2.WriteRequest(device_id=0)
        write.election_id.low = 1
        entry = write.updates.add(type=p4runtime_pb2.Update.INSERT).entity.table_entry
        entry.table_id = tables["FwdIngress.l2_fwd"]
        entry.match.add(field_id=1).exact.value = bytes.fromhex("020000000002")
        entry.action.action.action_id = actions["FwdIngress.forward"]
        entry.action.action.params.add(param_id=1, value=b"\x01")
        stub.Write(write, timeout=60)
        # the entry is there: read it back
        read = p4runtime_pb2.ReadRequest(device_id=0)
        read.entities.add().table_entry.table_id = tables["FwdIngress.l2_fwd"]
        [response] = stub.Read(read, timeout=60)
        assert len(response.entities) == 1
        requests.put(None)
        channel.close()
    finally:
        stop_process(proc)
    _, err = proc.communicate(timeout=60)
    assert "--thrift-port 9090 ignored" in err
    assert "Traceback" not in err
