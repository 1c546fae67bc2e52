"""Priorities of a program's own table entries, as p4c, BMv2 and simple_switch_grpc have them.

p4c gives entries without `priority =` the spec's numbers (P4_16, "Entry priorities") and
sorts a table's entries by priority (highest first, lowest first with
`largest_priority_wins = false`, equal ones as listed); its BMv2 back end gives each entry its
position in that order, or N for `@priority(N)`, and BMv2 matches the smallest. The
P4Runtime server of simple_switch_grpc (PI) reads a BMv2 priority b back as 2^31-1 - b:
test_const_entries_read_as_on_simple_switch_grpc reads p4sim and the real one (p4c-bm2-ss's
output pushed to simple_switch_grpc; SKIP_BMV2=1 leaves it out). The frames are checked
against BMv2 by `make p4sim-conformance` (stf/priorities.p4 and .stf) and on both engines
by test_lang_stf.py and test_native_equivalence.py.

Run: PATH=/opt/p4tools/bin:$PATH .venv/bin/pytest -q p4sim/tests/test_lang_priorities.py
"""

from __future__ import annotations

import queue
import subprocess
from pathlib import Path

import grpc
import pytest
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from controlplane.bmv2 import suite_targets
from p4sim import frontend, native
from p4sim.conformance import bmv2
from p4sim.io import InProcessPorts
from p4sim.p4info_compare import read_text
from p4sim.p4runtime import P4RuntimeServer
from p4sim.p4runtime.device_config import DeviceConfig
from p4sim.p4runtime.pipeline import from_program
from p4sim.switch import Switch

PROGRAM = Path(__file__).parent / "stf" / "priorities.p4"
TOP = 2**31 - 1  # simple_switch_grpc: P4Runtime priority = TOP - BMv2 priority


@pytest.fixture(scope="module")
def program():
    return frontend.compile_file(str(PROGRAM))


def listed(program, table: str) -> list[tuple[int, int]]:
    """(set's argument, P4Runtime priority) of the table's entries, in the model's order."""
    (t,) = [t for t in program.model.tables if t.name == f"I.{table}"]
    return [(e.args["v"], e.priority) for e in (t.const_entries or t.initial_entries)]


@pytest.mark.parametrize(
    "table, order",
    [
        ("largest", [2, 1, 3]),  # given 10, 20, 5: the largest first
        ("smallest", [3, 1, 2]),  # the same, largest_priority_wins = false
        ("delta", [3, 4, 1, 2]),  # 100, 100-10, 200, 200-10
        ("none_smallest", [1, 2]),  # none given: numbered so that the first wins
        ("ties", [3, 4, 1, 2]),  # 5, 5, 7, 7: equal ones keep their order
        ("delta_zero", [3, 4, 1, 2]),  # priority_delta = 0: 5, 5, 7, 7 as well
        ("ranges", [2, 3, 1]),
        ("opt", [4, 2, 3, 1]),  # smallest first: 2, 4, 6, 9
        ("lpm_ternary", [3, 2, 1]),  # the priority decides, not the prefix length
        ("listed", [1, 2]),  # const entries, which cannot have priorities
    ],
)
def test_entries_in_p4c_order_with_their_positions_as_bmv2_priorities(program, table, order):
    assert listed(program, table) == [(v, TOP - pos) for pos, v in enumerate(order, 1)]


def test_priority_annotation_replaces_the_position(program):
    # @priority(3), @priority(1), position 3, @priority(9), position 5
    assert listed(program, "annotated") == [
        (1, TOP - 3),
        (2, TOP - 1),
        (3, TOP - 3),
        (4, TOP - 9),
        (5, TOP - 5),
    ]


def test_priority_annotation_beside_given_priorities(program):
    # sorted by `priority =` (9, 7, 5); BMv2 gets position 1, @priority(9), @priority(2)
    assert listed(program, "annotated_given") == [(2, TOP - 1), (3, TOP - 9), (1, TOP - 2)]


def test_tables_without_priorities_get_zero():
    src = PROGRAM.read_text().replace(
        "key = { hdr.h.k: ternary; }\n        actions = { set; }\n        const entries = {\n"
        "            0x10 &&& 0xf0 : set(1);\n            0x11 &&& 0xff : set(2);",
        "key = { hdr.h.k: exact; }\n        actions = { set; }\n        const entries = {\n"
        "            0x10 : set(1);\n            0x11 : set(2);",
    )
    assert listed(frontend.compile_source(src, "exact.p4"), "listed") == [(1, 0), (2, 0)]


@pytest.fixture(params=["interp", "native"])
def served(program, request):
    """The program on a switch with ports 0 and 1 and a P4Runtime server, on both engines."""
    ports = InProcessPorts([0, 1])
    switch = Switch(ports, cpu_port=64)
    compiled = native.compiler(request.param)(program.source, PROGRAM.name)
    config = DeviceConfig(program.source, PROGRAM.name).encode()
    switch.set_pipeline(from_program(compiled, config, 64))
    assert getattr(switch.pipeline.device, "engine", "interp") == request.param
    server = P4RuntimeServer(switch, "127.0.0.1:0")
    switch.start()
    server.start()
    channel = grpc.insecure_channel(server.address)
    yield p4runtime_pb2_grpc.P4RuntimeStub(channel), switch.pipeline.p4info, ports
    channel.close()
    server.stop()
    switch.close()


def read_table(stub, p4info, table: str) -> list[p4runtime_pb2.TableEntry]:
    req = p4runtime_pb2.ReadRequest(device_id=0)
    req.entities.add().table_entry.table_id = _id(p4info.tables, f"I.{table}")
    return [e.table_entry for r in stub.Read(req, timeout=60) for e in r.entities]


def _id(entities, name: str) -> int:
    return next(e.preamble.id for e in entities if e.preamble.name == name)


@pytest.fixture(scope="module")
def simple_switch_grpc_reads(tmp_path_factory) -> dict[str, list[tuple]]:
    """The const tables of the program as the real simple_switch_grpc reads them back after
    a push of p4c-bm2-ss's output. The switch runs in a network namespace of its own (its
    Thrift port stays inside) and serves P4Runtime on a unix socket."""
    work = tmp_path_factory.mktemp("bmv2")
    compiled = bmv2.compile_p4c(PROGRAM, work)
    assert compiled.ok, compiled.message
    sock = work / "p4rt.sock"
    argv = ["unshare", "--net", bmv2.tool("simple_switch_grpc"), "--no-p4", "--"]
    switch = subprocess.Popen(
        [*argv, "--grpc-server-addr", f"unix:{sock}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    channel = grpc.insecure_channel(f"unix:{sock}")
    requests: queue.Queue = queue.Queue()
    try:
        grpc.channel_ready_future(channel).result(timeout=60)
        stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)
        requests.put(_arbitration())
        stream = stub.StreamChannel(iter(requests.get, None))  # primary while it is open
        next(stream)
        req = p4runtime_pb2.SetForwardingPipelineConfigRequest(device_id=0)
        req.election_id.low = 1
        req.action = req.VERIFY_AND_COMMIT
        req.config.p4_device_config = compiled.json_path.read_bytes()
        req.config.p4info.CopyFrom(read_text(compiled.p4info_path))
        stub.SetForwardingPipelineConfig(req, timeout=30)
        return {t: _comparable(read_table(stub, req.config.p4info, t)) for t in CONST_TABLES}
    finally:
        requests.put(None)
        channel.close()
        switch.terminate()
        switch.wait(timeout=30)


CONST_TABLES = ("annotated", "listed")


def _comparable(entries) -> list[tuple]:
    """What simple_switch_grpc and p4sim must read alike (PI leaves is_const unset)."""
    return [(e.priority, [m.SerializeToString() for m in e.match], e.action) for e in entries]


def test_read_gives_simple_switch_grpcs_priorities(served):
    stub, p4info, _ = served
    got = read_table(stub, p4info, "annotated")
    assert [e.priority for e in got] == [TOP - 3, TOP - 1, TOP - 3, TOP - 9, TOP - 5]
    assert all(e.is_const for e in got)
    # simple_switch_grpc cannot read a table with non-const entries (INTERNAL "Table state
    # out-of-sync with target"); p4sim reads them with the numbers const entries have
    got = read_table(stub, p4info, "largest")
    assert [(e.match[0].ternary.value, e.priority) for e in got] == [
        (b"\x11", TOP - 1),
        (b"\x10", TOP - 2),
        (b"\x12", TOP - 3),
    ]


@pytest.mark.parametrize("target", ["bmv2"] if "bmv2" in suite_targets() else [])
def test_const_entries_read_as_on_simple_switch_grpc(served, simple_switch_grpc_reads, target):
    stub, p4info, _ = served
    for table in CONST_TABLES:
        assert _comparable(read_table(stub, p4info, table)) == simple_switch_grpc_reads[table]


def test_controller_entries_rank_among_the_programs_by_bmv2s_numbers(served):
    """Non-const `entries` may be changed by the control plane (P4_16 1.2.4; BMv2 makes
    them immutable). A controller's priority p is BMv2's 2^31-1 - p, as in
    simple_switch_grpc, so it ranks against the program's entries as BMv2 would rank it."""
    stub, p4info, ports = served

    def insert(priority: int, v: int) -> None:
        req = p4runtime_pb2.WriteRequest(device_id=0)
        req.election_id.low = 1
        e = req.updates.add(type=p4runtime_pb2.Update.INSERT).entity.table_entry
        e.table_id = _id(p4info.tables, "I.largest")
        m = e.match.add(field_id=1)
        m.ternary.value, m.ternary.mask = b"\x11", b"\xff"
        e.priority = priority
        e.action.action.action_id = _id(p4info.actions, "I.set")
        e.action.action.params.add(param_id=1, value=bytes([v]))
        stub.Write(req, timeout=60)

    def hit() -> int:
        ports.inject(0, bytes([1, 0x11, 0, 0]))
        [(port, frame)] = ports.wait_for(1, 5)
        assert port == 1
        return frame[3]

    requests: queue.Queue = queue.Queue()  # the stream stays open while the test writes
    requests.put(_arbitration())
    stream = stub.StreamChannel(iter(requests.get, None))
    next(stream)  # primary: may write
    assert hit() == 2  # the program's priority-20 entry, BMv2 priority 1
    insert(100, 7)  # BMv2 priority 2^31-1 - 100: after every entry of the program
    assert hit() == 2
    insert(TOP, 8)  # BMv2 priority 0: before them
    assert hit() == 8
    requests.put(None)


def _arbitration() -> p4runtime_pb2.StreamMessageRequest:
    msg = p4runtime_pb2.StreamMessageRequest()
    msg.arbitration.device_id = 0
    msg.arbitration.election_id.low = 1
    return msg
