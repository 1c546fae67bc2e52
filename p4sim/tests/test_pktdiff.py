"""The packet differential's generators (p4sim.conformance.packets and pktdiff), on p4sim
alone: frames crafted from a parser take each of its branches, and table entries made
from the keys p4sim looked up do match. The run against BMv2 is `make p4sim-conformance`
(a subset) and `make p4sim-pktdiff` (every sample).

Run: .venv/bin/pytest -q p4sim/tests/test_pktdiff.py
"""

from __future__ import annotations

import random

from p4sim.conformance.packets import ParserExplorer, _plant, protocol_stack, select_cases
from p4sim.conformance.pktdiff import entry_lines
from p4sim.conformance.stf import parse_script
from p4sim.frontend import compile_file
from p4sim.stf import StfRunner

# A parser whose branches need a constant in a sub-byte field, a masked 16-bit field two
# headers in, a tuple of two fields and a range: random frames rarely take them.
PROGRAM = """
#include <core.p4>
#include <v1model.p4>

header A { bit<4> kind; bit<4> pad; bit<8> x; }
header B { bit<16> tag; bit<8> y; bit<8> z; }
header C { bit<32> v; }

struct Headers { A a; B b; C c; }
struct Meta {}

parser P(packet_in pkt, out Headers hdr, inout Meta m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.a);
        transition select(hdr.a.kind) {
            0x9: with_b;
            default: accept;
        }
    }
    state with_b {
        pkt.extract(hdr.b);
        transition select(hdr.b.tag) {
            0xbe00 &&& 0xff00: pair;
            default: accept;
        }
    }
    state pair {
        transition select(hdr.b.y, hdr.b.z) {
            (0x12, 0x34): with_c;
            (0x50 .. 0x5f, _): accept;
            default: reject;
        }
    }
    state with_c {
        pkt.extract(hdr.c);
        transition accept;
    }
}

control Ing(inout Headers hdr, inout Meta m, inout standard_metadata_t sm) {
    action set(bit<9> port) { sm.egress_spec = port; }
    table by_v {
        key = { hdr.c.v: exact; hdr.a.x: lpm; }
        actions = { set; NoAction; }
        default_action = NoAction();
    }
    table by_tag {
        key = { hdr.b.tag: ternary; }
        actions = { set; NoAction; }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 511;
        by_v.apply();
        by_tag.apply();
    }
}

control Eg(inout Headers hdr, inout Meta m, inout standard_metadata_t sm) { apply {} }
control Vrfy(inout Headers hdr, inout Meta m) { apply {} }
control Upd(inout Headers hdr, inout Meta m) { apply {} }
control Dep(packet_out pkt, in Headers hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), Vrfy(), Ing(), Eg(), Upd(), Dep()) main;
"""


def compiled(tmp_path):
    p4 = tmp_path / "branches.p4"
    p4.write_text(PROGRAM)
    return compile_file(p4)


def test_plant_writes_only_the_masked_bits():
    frame = bytes.fromhex("ffff")
    assert _plant(frame, 4, 0x0, 8, 0xFF, random.Random(1)) == bytes.fromhex("f00f")
    assert _plant(frame, 4, 0x00, 8, 0x0F, random.Random(1)) == bytes.fromhex("ff0f")
    grown = _plant(b"", 8, 0xAB, 8, 0xFF, random.Random(1))
    assert len(grown) == 2 and grown[1] == 0xAB


def test_parser_explorer_takes_every_label(tmp_path):
    program = compiled(tmp_path)
    rng = random.Random(7)
    explorer = ParserExplorer(program, rng)
    for _ in range(4):
        explorer.add(protocol_stack(rng))
    explorer.explore(budget_s=20, most=20)
    labels = {(c.state, c.target) for c in select_cases(program)}
    assert labels == {
        ("start", "with_b"),
        ("with_b", "pair"),
        ("pair", "with_c"),
        ("pair", "accept"),
    }
    assert labels <= explorer.covered, labels - explorer.covered


def test_entries_match_the_keys_p4sim_looked_up(tmp_path):
    program = compiled(tmp_path)
    rng = random.Random(3)
    explorer = ParserExplorer(program, rng)
    explorer.add(protocol_stack(rng))
    frames = [frame for frame, _ in explorer.pool] + explorer.explore(20, 10)
    adds = entry_lines(program, explorer.keys, rng)
    tables = {line.split()[1] for line in adds}
    assert tables == {"Ing.by_v", "Ing.by_tag"}, adds
    runner = StfRunner(program)
    for cmd in parse_script("\n".join(adds)).commands:
        runner.command(cmd)
    sent = 0
    for frame in frames:
        sent += len(runner.device.process(0, frame))
    # without entries every frame is dropped (egress_spec 511): each one that leaves hit one
    assert sent > 0


def test_walk_offsets_count_advance_and_varbit_extracts():
    """The parser walk's byte spans (where ParserExplorer plants select keys) move past bytes
    that advance() skips and a varbit header extracts, as they move past fixed headers."""
    from p4sim.conformance.packets import Tracer

    samples = "/opt/p4tools/p4c-testdata/p4_16_samples"
    # issue1755-1-bmv2.p4's start: advance(8); extract(hdr.byte); advance(byte * 8)
    tracer = Tracer(compile_file(f"{samples}/issue1755-1-bmv2.p4"))
    walk = tracer.walk(0, bytes([0xAA, 2, 0xBB, 0xCC]) + bytes(60))
    assert walk.states == ["start"] and walk.spans == [(1, 2)]
    # issue1765-bmv2.p4: Ethernet, IPv4 with 4 bytes of options (a varbit), then TCP
    tracer = Tracer(compile_file(f"{samples}/issue1765-bmv2.p4"))
    ipv4 = bytes([0x46, 0, 0, 44, 0, 0, 0, 0, 64, 6, 0, 0]) + bytes(8) + bytes(4)
    frame = bytes(12) + b"\x08\x00" + ipv4 + bytes(20) + bytes(30)
    walk = tracer.walk(0, frame)
    assert walk.states == ["start", "parse_ipv4", "parse_tcp"]
    assert walk.spans == [(0, 14), (14, 38), (38, 58)]
