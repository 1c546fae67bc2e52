"""The TNA device (p4sim/tna/): the six blocks, the traffic manager and the externs, on TNA
programs the real Tofino compiler accepts (checked here too). Expected values come from the
TNA documentation (tofino1_*.p4) and independent computations (zlib, RFC 1071)."""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest

from p4sim.frontend import compile_file
from p4sim.model import FieldMatch, Replica, TableEntry
from p4sim.native import new_device
from p4sim.tests.tofino_compiler import compile_tna
from p4sim.tna.externs import TNA_HASHES

HERE = Path(__file__).parent / "tna"
FORWARD = HERE / "forward.p4"
DEVICE = HERE / "device.p4"
REGISTER_ACTION = HERE / "register_action.p4"
HASH = HERE / "hash.p4"
METER = HERE / "meter.p4"
DIRECT_REGISTER = HERE / "direct_register.p4"


@pytest.mark.parametrize(
    "program",
    [FORWARD, DEVICE, REGISTER_ACTION, HASH, METER, DIRECT_REGISTER],
    ids=lambda p: p.name,
)
def test_the_tofino_compiler_accepts_the_program(program):
    result = compile_tna(program)
    assert result.accepted, result.log


# ------------------------------------------------------------------ forward.p4


@pytest.fixture(scope="module")
def forward():
    return compile_file(FORWARD)


def test_the_model_names_objects_as_p4info_does_and_keeps_the_pipe(forward):
    model = forward.model
    assert (model.arch, model.pipe) == ("tna", "pipe")
    assert [t.name for t in model.tables] == ["FwdIngress.ports"]
    assert [(c.name, c.size, c.unit) for c in model.counters] == [
        ("FwdIngress.rx_counter", 512, "packets_and_bytes")
    ]


def test_a_table_forwards_by_ingress_port_and_the_counter_counts(forward):
    dev = forward.new_device()
    dev.tables["FwdIngress.ports"].insert(
        TableEntry(
            {"ig_intr_md.ingress_port": FieldMatch("exact", 1)}, "FwdIngress.forward", {"port": 2}
        )
    )
    frame = bytes(range(14)) + b"payload"
    assert dev.process(1, frame) == [(2, frame)]  # bypass_egress: the ingress deparser's bytes
    assert dev.process(3, frame) == []  # default action drop(): drop_ctl = 1
    assert dev.counters["FwdIngress.rx_counter"].read(1) == (1, len(frame))
    assert dev.counters["FwdIngress.rx_counter"].read(3) == (1, len(frame))


def test_a_parser_error_does_not_drop_the_packet_but_sets_parser_err(forward):
    """PARTIAL_HDR (a frame shorter than Ethernet): the ingress still runs (the counter
    counts), and the program drops it because ig_prsr_md.parser_err != 0."""
    dev = forward.new_device()
    dev.tables["FwdIngress.ports"].insert(
        TableEntry(
            {"ig_intr_md.ingress_port": FieldMatch("exact", 1)}, "FwdIngress.forward", {"port": 2}
        )
    )
    assert dev.process(1, b"\x01\x02\x03") == []
    assert dev.counters["FwdIngress.rx_counter"].read(1) == (1, 3)


def test_the_native_engine_falls_back_to_the_interpreter_naming_the_architecture(forward):
    dev = new_device(forward, engine="native")
    assert dev.engine == "interp"
    assert "the tna architecture" in dev.fallback_reason


# ------------------------------------------------------------------ device.p4

ETH = bytes.fromhex("020000000002" "020000000001" "88b5")


def data(op: int, arg: int, csum: int = 0) -> bytes:
    """data_h: op, csum_ok, arg, csum, crc16, crc32, rid, small, large (all zero behind)."""
    return bytes([op, 0]) + arg.to_bytes(2, "big") + csum.to_bytes(2, "big") + bytes(14)


def ones_sum(words: bytes) -> int:
    s = sum(int.from_bytes(words[i : i + 2], "big") for i in range(0, len(words), 2))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def fields(out: bytes) -> dict:
    d = out[14:]
    names = [("op", 1), ("csum_ok", 1), ("arg", 2), ("csum", 2), ("crc16", 2), ("crc32", 4)]
    names += [("rid", 2), ("small", 2), ("large", 2)]
    values, pos = {}, 0
    for name, n in names:
        values[name] = int.from_bytes(d[pos : pos + n], "big")
        pos += n
    return values


@pytest.fixture()
def device():
    dev = compile_file(DEVICE).new_device()
    dev.pre.multicast_groups[5] = [Replica(2, 10), Replica(4, 11), Replica(7, 12)]
    return dev


def test_unicast_goes_through_egress_with_hashes_min_max_and_checksums(device):
    good = (~ones_sum(bytes([1, 0]) + (3).to_bytes(2, "big"))) & 0xFFFF
    [(port, out)] = device.process(0, ETH + data(1, 3, good) + b"tail")
    assert port == 3 and out.endswith(b"tail")
    f = fields(out)
    assert f["csum_ok"] == 1  # Checksum.verify() in the ingress parser
    # Checksum.update() in the ingress deparser: RFC 1071 over op, csum_ok, arg
    assert f["csum"] == (~ones_sum(bytes([1, 1, 0, 3]))) & 0xFFFF
    assert f["crc32"] == zlib.crc32(bytes([1, 0, 3]))
    assert f["crc16"] == TNA_HASHES["CRC16"](bytes([1, 0, 3]))
    assert (f["small"], f["large"], f["rid"]) == (3, 100, 0)
    bad = fields(device.process(0, ETH + data(1, 3, good ^ 1))[0][1])
    assert bad["csum_ok"] == 0


def test_multicast_replicas_see_their_egress_rid_and_egress_drop_ctl_drops(device):
    outs = device.process(0, ETH + data(2, 5))
    assert [(p, fields(o)["rid"]) for p, o in outs] == [(2, 10), (4, 11)]  # port 7: drop_ctl


def test_ingress_drop_ctl_and_no_port_drop(device):
    assert device.process(0, ETH + data(3, 2)) == []
    assert device.process(0, ETH + data(4, 2)) == []


def test_bypass_egress_skips_the_egress_blocks(device):
    [(port, out)] = device.process(0, ETH + data(5, 7))  # egress would drop port 7
    assert port == 7 and fields(out)["op"] == 5


@pytest.mark.parametrize(
    "algorithm,check", [("CRC8", 0xF4), ("CRC16", 0xBB3D), ("CRC32", 0xCBF43926)]
)
def test_hash_crcs_give_the_catalogue_check_values(algorithm, check):
    assert TNA_HASHES[algorithm](b"123456789") == check


# ------------------------------------------------------------------ register_action.p4


@pytest.fixture()
def ra():
    dev = compile_file(REGISTER_ACTION).new_device()
    dev.tables["RaIngress.ports"].insert(
        TableEntry(
            {"ig_intr_md.ingress_port": FieldMatch("exact", 1)}, "RaIngress.forward", {"port": 2}
        )
    )
    return dev


def ra_result(dev, limit: int) -> tuple[int, int]:
    frame = ETH + limit.to_bytes(2, "big") + bytes(4)
    [(port, out)] = dev.process(1, frame)
    assert port == 2
    return int.from_bytes(out[16:18], "big"), int.from_bytes(out[18:20], "big")


def test_register_action_returns_the_value_and_writes_back_under_a_condition(ra):
    """Register(512, 100): cells start at 100; apply() returns the stored value and stores
    value + 1 below the packet's limit, 0 at or above it."""
    assert [ra_result(ra, 102)[0] for _ in range(4)] == [100, 101, 102, 0]
    assert ra.registers["RaIngress.seqs"].read(1) == 1
    assert ra_result(ra, 0) == (0, 1)  # the read-only action: rv = value, no change
    assert ra.registers["RaIngress.seqs"].read(1) == 1
    ra.registers["RaIngress.seqs"].write(1, 7)  # the control plane's write is seen
    assert ra_result(ra, 102)[0] == 7
    assert ra.registers["RaIngress.seqs"].read(5) == 100  # never written: the initial value


def test_direct_counter_counts_the_hits_of_its_table(ra):
    ra_result(ra, 102)
    ra_result(ra, 102)
    [entry] = ra.tables["RaIngress.ports"].entries()
    assert (entry.packets, entry.bytes) == (2, 2 * (14 + 6))


def test_hash_predefined_and_crcpolynomial_outputs_are_the_catalogue_check_values():
    """CRC16 0xBB3D and CRC32 0xCBF43926 (predefined), CRC-16/CCITT-FALSE 0x29B1 and CRC-32C
    0xE3069283 (CRCPolynomial) over "123456789"."""
    dev = compile_file(HASH).new_device()
    [(port, out)] = dev.process(3, bytes(14) + b"123456789" + bytes(12))
    r = out[23:]
    assert port == 3
    assert (r[0:2].hex(), r[2:6].hex(), r[6:8].hex(), r[8:12].hex()) == (
        "bb3d",
        "cbf43926",
        "29b1",
        "e3069283",
    )


def test_meter_colours_random_and_counter_byte_adjustment():
    """An unconfigured meter marks GREEN (0); one with a 1-packet committed and 2-packet peak
    bucket marks GREEN, YELLOW, then RED (MeterColor_t 3). Random gives varying 16-bit
    values; count(i, 4) counts 4 bytes fewer per packet (adjust_byte_count is subtracted)."""
    dev = compile_file(METER).new_device(seed=7)
    frame = ETH + bytes(4)

    def color_and_random(port: int) -> tuple[int, int]:
        [(_, out)] = dev.process(port, frame)
        return out[14], int.from_bytes(out[16:18], "big")

    assert color_and_random(1)[0] == 0
    dev.meters["MeterIngress.port_meter"].set_config(3, (1, 1, 1, 2))
    assert [color_and_random(3)[0] for _ in range(3)] == [0, 1, 3]
    randoms = {color_and_random(1)[1] for _ in range(20)}
    assert len(randoms) > 10
    assert dev.counters["MeterIngress.port_bytes"].read(1) == (
        21,
        21 * (len(frame) - 4),
    )  # 1 + 20 packets


def test_direct_register_cells_belong_to_the_entries():
    """DirectRegister(10): each entry's cell starts at 10 and counts that entry's hits; a
    MODIFY keeps it, a DELETE and re-INSERT starts again; a miss runs the default action."""
    dev = compile_file(DIRECT_REGISTER).new_device()
    table = dev.tables["DrIngress.ports"]

    def entry(mac: int, port: int) -> TableEntry:
        match = {"hdr.ethernet.dst_addr": FieldMatch("exact", mac)}
        return TableEntry(match, "DrIngress.forward", {"port": port})

    def send(mac: int) -> tuple[int, int]:
        [(port, out)] = dev.process(1, mac.to_bytes(6, "big") + bytes(8) + bytes(4))
        return port, int.from_bytes(out[14:18], "big")

    table.insert(entry(2, 2))
    table.insert(entry(3, 3))
    assert [send(2) for _ in range(3)] == [(2, 10), (2, 11), (2, 12)]
    assert send(3) == (3, 10)
    table.modify(entry(2, 4))
    assert send(2) == (4, 13)
    table.delete(entry(2, 4))
    table.insert(entry(2, 2))
    assert send(2) == (2, 10)
    assert send(9) == (1, 0)  # miss: back(), no cell
