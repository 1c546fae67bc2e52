"""Conformance: every program + .stf pair in p4sim/tests/stf/ and p4sim/tests/conformance/
(expected outputs derived from the P4_16 spec and BMv2's v1model by hand or with scapy, never
by running p4sim; make p4sim-conformance also runs those of tests/conformance/ on BMv2).

Run: .venv/bin/pytest p4sim/tests/test_lang_stf.py
"""

from pathlib import Path

import pytest

from p4sim.stf import StfError, run_stf

STF_DIR = Path(__file__).parent / "stf"
CONFORMANCE_DIR = Path(__file__).parent / "conformance"  # also run on BMv2
REPO = Path(__file__).resolve().parents[2]
# Tests of programs that live elsewhere in the repository.
EXTERNAL = {"dc_splitter": REPO / "p4src" / "dc_splitter.p4"}


def cases():
    for stf in sorted([*STF_DIR.glob("*.stf"), *CONFORMANCE_DIR.glob("*.stf")]):
        program = EXTERNAL.get(stf.stem, stf.with_suffix(".p4"))
        yield pytest.param(program, stf, id=stf.stem)


@pytest.mark.parametrize("program, stf", list(cases()))
def test_stf(program: Path, stf: Path):
    result = run_stf(program, stf)
    assert result.ok, "\n".join(result.failures)
    assert result.packets > 0


# --------------------------------------------------------------------------- p4c's STF syntax
P4C_STYLE_PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<16> t; bit<32> l; bit<8> e; bit<8> res; }
struct headers { h_t h; h_t[2] st; }
struct metadata { }
parser P(packet_in pk, out headers hdr, inout metadata m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control I(inout headers hdr, inout metadata m, inout standard_metadata_t sm) {
    counter(4, CounterType.packets_and_bytes) seen;
    action to(bit<9> port, bit<8> v) { sm.egress_spec = port; hdr.h.res = v; }
    action mcast(bit<16> grp) { sm.mcast_grp = grp; }
    action mirror(bit<9> port) { sm.egress_spec = port; clone(CloneType.I2E, 7); }
    table tern { key = { hdr.h.t: ternary; } actions = { to; mcast; mirror; NoAction; } }
    table lpm { key = { hdr.h.l: lpm; } actions = { to; NoAction; } }
    table ex { key = { hdr.h.e: exact; hdr.st[1].e: exact; } actions = { to; NoAction; } }
    apply {
        seen.count((bit<32>)hdr.h.e);
        if (hdr.h.e == 0) { tern.apply(); } else if (hdr.h.e == 1) { lpm.apply(); } else { ex.apply(); }
    }
}
control E(inout headers hdr, inout metadata m, inout standard_metadata_t sm) {
    apply { if (sm.egress_rid != 0) { hdr.h.res = (bit<8>)sm.egress_rid; } }
}
control VC(inout headers hdr, inout metadata m) { apply { } }
control CC(inout headers hdr, inout metadata m) { apply { } }
control D(packet_out pk, in headers hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""

P4C_STYLE_STF = """
# priority 0 is valid; larger wins; `*` digits are wildcards, written digits are matched
add tern 0 h.t:0x12** to(port:1, v:0x10)
add tern 5 h.t:0x1234 I.to(port:2, v:0x20)
add tern 9 h.t:0x9*** mcast(grp:3)
add tern 9 h.t:0x8*** mirror(port:6)
# lpm prefix from the written digits: 0x0a01**** = 0x0a010000/16
add lpm h.l:0x0a01**** to(port:3, v:0x30)
# exact key left out (st[1].e): 0; a stack index as st$1
add ex h.e:2 to(port:4, v:0x40)
add ex h.e:3 st$1.e:0 to(port:5, v:0x50)
mc_mgrp_create 3
mc_node_create 11 9 8
mc_node_create 12 7
mc_node_associate 3 1
mc_node_associate 3 0
mirroring_add 7 5

expect 1 1299 00000000 00 10 $
packet 0 1299 00000000 00 00
expect 2 1234 ******** ** 20
packet 0 1234 00000000 00 00 aabb
packet 1 0000 0a01ff00 01 00
expect 3 0000 0a01ff00 01 30
packet 0 0000 00000000 02 00
expect 4 0000 00000000 02 4
expect 5 0000 00000000 03 50 $
packet 0 0000 00000000 03 00
# multicast copies: node handles in creation order, ports of a node in port order
packet 0 9000 00000000 00 00
expect 7 9000 00000000 00 0c $
expect 8 9000 00000000 00 0b $
expect 9 9000 00000000 00 0b $
# a clone session from mirroring_add: any number of frames is fine on port 5 (bare expect)
packet 0 8000 00000000 00 00
expect 6 8000 00000000 00 00 $
expect 5
wait
check_counter seen(0) packets == 4
check_counter seen(2) bytes >= 8
check_counter seen(3) packets < 2
"""


def test_p4c_stf_syntax(tmp_path):
    (tmp_path / "prog.p4").write_text(P4C_STYLE_PROGRAM)
    (tmp_path / "prog.stf").write_text(P4C_STYLE_STF)
    result = run_stf(tmp_path / "prog.p4", tmp_path / "prog.stf")
    assert result.ok, "\n".join(result.failures)
    assert result.packets == 7 and result.checks == 3


@pytest.mark.parametrize(
    "expect, ok",
    [
        ("expect 1 1299 00000000 00 10 $", True),
        ("expect 1 1299 00000000 00 10", True),  # prefix
        ("expect 1 1299 00000000 00 1", True),  # odd number of digits: nibble prefix
        ("expect 1 1299 00000000 00 10 ff", False),  # longer than the frame
        ("expect 1 1299 00000000 00 $", False),  # `$`: the whole frame
        ("expect 1 12** 00000000 00 11", False),
        ("expect 2 1299 00000000 00 10", False),  # wrong port: port 1 sends unexpected
    ],
)
def test_p4c_expect_matching(tmp_path, expect, ok):
    (tmp_path / "prog.p4").write_text(P4C_STYLE_PROGRAM)
    stf = "add tern 0 h.t:0x12** to(port:1, v:0x10)\npacket 0 1299 00000000 00 00\n" + expect
    (tmp_path / "prog.stf").write_text(stf)
    assert run_stf(tmp_path / "prog.p4", tmp_path / "prog.stf").ok is ok


def test_p4c_check_counter_failure_is_reported(tmp_path):
    (tmp_path / "prog.p4").write_text(P4C_STYLE_PROGRAM)
    (tmp_path / "prog.stf").write_text(
        "packet 0 0000 00000000 02 00\nexpect 0\ncheck_counter seen(2) packets == 2\n"
    )
    result = run_stf(tmp_path / "prog.p4", tmp_path / "prog.stf")
    assert result.failures == ["counter seen(2) packets = 1, expected == 2"]


@pytest.mark.parametrize(
    "line, message",
    [
        ("mcast", "too few arguments for 'mcast'"),
        ("packet 0 zz", "bad hex in packet 'zz'"),
        ("expect 1 0g", "bad expected packet '0g'"),
        ("mc_node_associate 3 0", "multicast group 3 was not created"),
        ("mc_mgrp_create 65536", "multicast group 65536 is out of range 1..65535"),
        ("mcast 0 1", "multicast group 0 is out of range 1..65535"),
        ("mirroring_add 32768 1", "clone session 32768 is out of range 1..32767"),
        ("clone_session 70000 1", "clone session 70000 is out of range 1..32767"),
        ("add lpm h.l:1/40 to(port:1, v:1)", "prefix length 40 outside 0..32"),
        ("check_counter nosuch(1) packets == 1", "unknown counter 'nosuch'"),
        ("frobnicate 1", "unknown command 'frobnicate'"),
    ],
)
def test_malformed_stf_lines_name_the_problem(tmp_path, line, message):
    (tmp_path / "prog.p4").write_text(P4C_STYLE_PROGRAM)
    (tmp_path / "prog.stf").write_text("# comment\n" + line + "\n")
    with pytest.raises(StfError) as info:
        run_stf(tmp_path / "prog.p4", tmp_path / "prog.stf")
    assert str(info.value).startswith(f"{tmp_path / 'prog.stf'}:2: ")
    assert message in str(info.value)
