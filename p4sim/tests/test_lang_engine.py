"""Engine and v1model: the runtime objects the control plane drives (tables, registers,
counters, PRE), robustness against malformed frames, the per-packet trace.

Run: .venv/bin/pytest p4sim/tests/test_lang_engine.py
"""

import logging
import random
from pathlib import Path

import pytest

from p4sim.engine import bench_inprocess
from p4sim.frontend import compile_file
from p4sim.model import (
    ConstViolation,
    EntryExists,
    EntryNotFound,
    FieldMatch,
    InvalidEntry,
    Replica,
    TableEntry,
    TableFull,
)

STF_DIR = Path(__file__).parent / "stf"
SPLITTER = Path(__file__).resolve().parents[2] / "p4src" / "dc_splitter.p4"


@pytest.fixture(scope="module")
def tables_prog():
    return compile_file(STF_DIR / "tables.p4")


@pytest.fixture(scope="module")
def splitter():
    return compile_file(SPLITTER)


def frame(mode, kx=0, lpm=0, tern=0, opt=0, rng=0):
    return (
        bytes([mode, kx])
        + lpm.to_bytes(4, "big")
        + bytes([tern, opt])
        + rng.to_bytes(2, "big")
        + b"\0\0"
    )


def test_exact_table_crud(tables_prog):
    dev = tables_prog.new_device()
    t = dev.tables["I.t_exact"]
    e = TableEntry({"kx": FieldMatch("exact", 5)}, "I.set_out", {"v": 0x11})
    t.insert(e)
    with pytest.raises(EntryExists):
        t.insert(TableEntry({"kx": FieldMatch("exact", 5)}, "I.set_out", {"v": 0x22}))
    assert dev.process(0, frame(0, kx=5))[0][1][-2:] == b"\x11\xa1"
    t.modify(TableEntry({"kx": FieldMatch("exact", 5)}, "I.set_out", {"v": 0x33}))
    assert dev.process(0, frame(0, kx=5))[0][1][-2:] == b"\x33\xa1"
    assert t.find({"kx": FieldMatch("exact", 5)}, 0).args == {"v": 0x33}
    t.delete(TableEntry({"kx": FieldMatch("exact", 5)}, "", {}))
    assert dev.process(0, frame(0, kx=5))[0][1][-2:] == b"\x00\xa0"
    with pytest.raises(EntryNotFound):
        t.delete(TableEntry({"kx": FieldMatch("exact", 5)}, "", {}))
    with pytest.raises(EntryNotFound):
        t.modify(TableEntry({"kx": FieldMatch("exact", 6)}, "I.set_out", {"v": 1}))


def test_entry_validation(tables_prog):
    dev = tables_prog.new_device()
    t = dev.tables["I.t_exact"]
    bad = [
        TableEntry({"kx": FieldMatch("exact", 256)}, "I.set_out", {"v": 1}),  # too wide
        TableEntry({}, "I.set_out", {"v": 1}),  # exact key missing
        TableEntry({"kx": FieldMatch("exact", 1)}, "I.set_out2", {"v": 1}),  # not in table
        TableEntry({"kx": FieldMatch("exact", 1)}, "I.set_out", {}),  # missing param
        TableEntry({"kx": FieldMatch("exact", 1)}, "I.set_out", {"v": 300}),  # param too wide
        TableEntry(
            {"kx": FieldMatch("exact", 1)}, "I.set_out", {"v": 1}, priority=5
        ),  # no priority here
        TableEntry({"nope": FieldMatch("exact", 1)}, "I.set_out", {"v": 1}),
    ]
    for e in bad:
        with pytest.raises(InvalidEntry):
            t.insert(e)
    tern = dev.tables["I.t_tern"]
    with pytest.raises(InvalidEntry, match="priority"):
        tern.insert(
            TableEntry(
                {"hdr.h.k_tern": FieldMatch("ternary", 1, mask=0xFF)}, "I.set_out2", {"v": 1}
            )
        )
    with pytest.raises(InvalidEntry, match="outside its mask"):
        tern.insert(
            TableEntry(
                {"hdr.h.k_tern": FieldMatch("ternary", 0x11, mask=0xF0)}, "I.set_out2", {"v": 1}, 1
            )
        )
    lpm = dev.tables["I.t_lpm"]
    with pytest.raises(InvalidEntry):
        lpm.insert(
            TableEntry(
                {"hdr.h.k_lpm": FieldMatch("lpm", 0x0A000001, prefix_len=8)}, "I.set_out", {"v": 1}
            )
        )


def test_default_actions_and_const_tables(tables_prog):
    dev = tables_prog.new_device()
    lpm = dev.tables["I.t_lpm"]
    assert lpm.default_entry().action == "I.set_out" and lpm.default_entry().args == {"v": 0xEE}
    lpm.set_default("I.set_out", {"v": 0x42})
    assert dev.process(0, frame(1, lpm=0x0B000001))[0][1][-2:] == b"\x42\x00"
    lpm.reset_default()
    assert dev.process(0, frame(1, lpm=0x0B000001))[0][1][-2:] == b"\xee\x00"
    const = dev.tables["I.t_const"]
    assert len(const.entries()) == 3 and all(e.is_const for e in const.entries())
    with pytest.raises(ConstViolation):
        const.insert(
            TableEntry(
                {"hdr.h.k_tern": FieldMatch("ternary", 1, mask=0xFF)}, "I.set_out2", {"v": 1}, 1
            )
        )


def test_table_size_is_enforced(tables_prog):
    dev = tables_prog.new_device()
    t = dev.tables["I.t_exact"]  # size = 16
    for k in range(16):
        t.insert(TableEntry({"kx": FieldMatch("exact", k)}, "I.set_out", {"v": k}))
    with pytest.raises(TableFull):
        t.insert(TableEntry({"kx": FieldMatch("exact", 99)}, "I.set_out", {"v": 1}))
    t.clear()
    assert t.entries() == []


def test_splitter_counters_registers_and_pre(splitter):
    dev = splitter.new_device()
    dev.tables["DcIngress.ue_sessions.ue_sessions_v4"].insert(
        TableEntry(
            {"ue_addr": FieldMatch("exact", 0x0A000003)},
            "DcIngress.ue_sessions.duplicate_dc",
            {"user_idx": 1, "session": 9, "mcast_grp": 7},
        )
    )
    dev.pre.multicast_groups[7] = [Replica(1, 0), Replica(2, 0)]
    dev.registers["DcIngress.pdcp_sequencer.user_session"].write(1, 9)
    dev.registers["DcIngress.pdcp_sequencer.next_sn"].write(1, (1 << 18) - 1)  # SN wraps next
    ip = bytes.fromhex("4500001c00010000401100000a0900010a000003") + bytes(8)
    eth = bytes(6) + bytes(5) + b"\x01" + b"\x08\x00"
    out = dev.process(0, eth + ip)
    assert sorted(p for p, _ in out) == [1, 2]
    assert out[0][1][12:17] == b"\x88\xb5\x83\xff\xff"  # D/C=1, SN = 2^18-1
    out = dev.process(0, eth + ip)
    assert out[0][1][14:17] == b"\x80\x00\x00"  # bit<18> wrapped to 0
    assert dev.counters["DcIngress.ue_sessions.user_counter"].read(1) == (2, 2 * len(eth + ip))
    dev.counters["DcIngress.ue_sessions.user_counter"].write(1, 0, 0)
    assert dev.counters["DcIngress.ue_sessions.user_counter"].read(1) == (0, 0)
    with pytest.raises(IndexError):
        dev.registers["DcIngress.pdcp_sequencer.next_sn"].read(5000)


def test_malformed_frames_never_raise(splitter, tables_prog, caplog):
    """Random and truncated frames through every conformance program: no exception out of
    process() and no internal error logged inside it (parser errors are not failures)."""
    from p4sim.model import CloneSession

    rng = random.Random(7)
    good = bytes.fromhex(
        "00000000000200000000000108004500002000010000401166c10a0900010a00000213881770000ce80f64617461"
    )
    programs = [splitter, tables_prog] + [
        compile_file(STF_DIR / f"{n}.p4")
        for n in ("parser", "tm", "varbit", "union", "subparser", "lang")
    ]
    with caplog.at_level(logging.ERROR, logger="p4sim"):
        for prog in programs:
            dev = prog.new_device()
            for g in range(1, 10):
                dev.pre.multicast_groups[g] = [Replica(1, 1), Replica(2, 2)]
                dev.pre.clone_sessions[g] = CloneSession([Replica(3, 0)])
            samples = [b"", b"\x00", good[:13], good[:14], good[:33], good[:40]]
            samples += [
                bytes(rng.randrange(256) for _ in range(rng.randrange(80))) for _ in range(300)
            ]
            samples += [good[: rng.randrange(len(good))] for _ in range(100)]
            for s in samples:
                for port, data in dev.process(rng.randrange(512), s):
                    assert 0 <= port < 512 and isinstance(data, bytes)
    assert not [r for r in caplog.records if "internal error" in r.getMessage()]


def test_empty_frame_is_a_packet(tables_prog):
    # BMv2 runs a frame of no bytes through the pipeline like any other (its first extract
    # fails with PacketTooShort): simple_switch with pcap input sends an empty frame on for
    # p4c's gauntlet_enum_assign-bmv2, whose ingress forwards every packet to port 2.
    dev = tables_prog.new_device()
    assert dev.process(0, b"") != []
    assert dev.process(0, b"\x00") != []


def test_trace_logging_is_off_by_default_and_shows_the_path(splitter, caplog):
    dev = splitter.new_device()
    good = bytes.fromhex(
        "00000000000200000000000108004500002000010000401166c10a0900010a00000213881770000ce80f64617461"
    )
    with caplog.at_level(logging.INFO, logger="p4sim.trace"):
        dev.process(0, good)
    assert not [r for r in caplog.records if r.name == "p4sim.trace"]
    with caplog.at_level(logging.DEBUG, logger="p4sim.trace"):
        dev.process(0, good)
    text = "\n".join(r.getMessage() for r in caplog.records if r.name == "p4sim.trace")
    assert "Parser state parse_ipv4" in text
    assert "Table DcIngress.ue_sessions.ue_sessions_v4: miss" in text
    assert (
        "Table DcIngress.l2_forwarding.l2_forwards: miss, default action DcIngress.l2_forwarding.drop"
        in text
    )
    assert "Dropped at the end of ingress" in text


def test_bench_inprocess_reports_rates(splitter):
    good = bytes.fromhex(
        "00000000000200000000000108004500002000010000401166c10a0900010a00000213881770000ce80f64617461"
    )
    r = bench_inprocess(splitter, [(0, good)] * 50)
    assert r["packets"] == 50 and r["pps"] > 0 and r["p99_us"] >= r["p50_us"] > 0


def test_lpm_index_agrees_with_longest_prefix_rule(tables_prog):
    """Random prefixes: the indexed lookup picks the longest matching prefix, like a scan."""
    rng = random.Random(11)
    dev = tables_prog.new_device()
    t = dev.tables["I.t_lpm"]
    prefixes = {}
    while len(prefixes) < 200:
        plen = rng.choice([0, 1, 7, 8, 12, 16, 23, 24, 31, 32])
        mask = ((1 << 32) - 1) ^ ((1 << (32 - plen)) - 1)
        value = rng.getrandbits(32) & mask
        if (value, plen) in prefixes:
            continue
        prefixes[(value, plen)] = len(prefixes) % 250
        match = {} if plen == 0 else {"hdr.h.k_lpm": FieldMatch("lpm", value, prefix_len=plen)}
        t.insert(TableEntry(match, "I.set_out", {"v": prefixes[(value, plen)]}))
    victims = list(prefixes)[:20]
    for value, plen in victims:  # deletions must be seen by the index too
        match = {} if plen == 0 else {"hdr.h.k_lpm": FieldMatch("lpm", value, prefix_len=plen)}
        t.delete(TableEntry(match, "", {}))
        del prefixes[(value, plen)]
    for _ in range(300):
        addr = rng.getrandbits(32)
        if rng.random() < 0.5:  # aim at a stored prefix
            value, plen = rng.choice(list(prefixes))
            addr = value | (addr & ((1 << (32 - plen)) - 1))
        best = max(
            (
                (plen, v)
                for (value, plen), v in prefixes.items()
                if addr >> (32 - plen) == value >> (32 - plen) or plen == 0
            ),
            default=None,
        )
        out = dev.process(0, frame(1, lpm=addr))[0][1]
        if best is None:
            assert out[-2:] == b"\xee\x00"
        else:
            assert out[-2:] == bytes([best[1], 1])


DIGEST_PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<16> b; }
struct headers_t { h_t h; }
struct learn_t { bit<8> a; bit<9> port; }
struct meta_t { }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        digest<learn_t>(1, { hdr.h.a, sm.ingress_port });
        assert(hdr.h.b != 0);
        sm.egress_spec = 1;
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def test_digest_and_assert():
    from p4sim.frontend import compile_source

    prog = compile_source(DIGEST_PROGRAM, "digest.p4")
    assert [(d.name, [(f.name, f.bitwidth) for f in d.fields]) for d in prog.model.digests] == [
        ("learn_t", [("a", 8), ("port", 9)])
    ]
    dev = prog.new_device()
    assert dev.process(5, b"\x2a\x00\x01") == [(1, b"\x2a\x00\x01")]
    assert list(dev.digests) == [("learn_t", 1, [0x2A, 5])]
    assert dev.process(5, b"\x2a\x00\x00") == []  # assert() failed: dropped, not raised


def test_initial_entries_are_ordinary_entries():
    prog = compile_file(STF_DIR / "initial_entries.p4")
    (table,) = [t for t in prog.model.tables if t.name.endswith(".t")]
    assert table.const_entries is None and len(table.initial_entries) == 3
    dev = prog.new_device()
    t = dev.tables[table.name]
    entries = t.entries()
    assert [e.args for e in entries] == [{"v": 1}, {"v": 2}, {"v": 3}]
    assert not any(e.is_const for e in entries)
    # BMv2 matches them by their positions 1, 2, 3 (the smallest wins); simple_switch_grpc
    # shows those as P4Runtime priorities 2^31-1 - position (the largest wins)
    assert [e.priority for e in entries] == [2**31 - 2, 2**31 - 3, 2**31 - 4]
    t.delete(entries[0])  # the control plane may remove them
    assert dev.process(0, bytes([0x11, 0])) == [(1, bytes([0x11, 2]))]
    t.modify(TableEntry(entries[2].match, "I.set", {"v": 9}, entries[2].priority))
    assert dev.process(0, bytes([0x20, 0])) == [(1, bytes([0x20, 9]))]


@pytest.mark.parametrize("engine", ["interp", "native"])
def test_an_entry_declared_const_stays_put_among_initial_entries(engine):
    """`const` on one entry of a non-const `entries` list (P4_16 1.2.4, p4c's
    init-entries-bmv2): that entry reads back const and refuses MODIFY and DELETE, its
    neighbours stay ordinary entries; the priorities are those of the list as written."""
    from p4sim.native import new_device

    prog = compile_file(Path(__file__).parent / "conformance" / "entry_const_each.p4")
    (table,) = [t for t in prog.model.tables if t.name.endswith(".t")]
    # in BMv2's order, smallest priority first: 5 (set 4), 10 (1), 15 (5), 20 (2), 30 (3)
    listed = [(e.args["v"], e.is_const) for e in table.initial_entries]
    assert listed == [(4, False), (1, True), (5, True), (2, False), (3, True)]
    dev = prog.new_device() if engine == "interp" else new_device(prog)
    t = dev.tables[table.name]
    const, plain = [e for e in t.entries() if e.is_const], [
        e for e in t.entries() if not e.is_const
    ]
    assert sorted(e.args["v"] for e in const) == [1, 3, 5]
    for entry in const:
        with pytest.raises(ConstViolation, match="declared const"):
            t.delete(entry)
        with pytest.raises(ConstViolation, match="declared const"):
            t.modify(TableEntry(entry.match, "I.set", {"v": 9}, entry.priority))
    assert dev.process(0, bytes([1, 0x11, 0])) == [(1, bytes([1, 0x11, 1]))]
    for entry in plain:
        t.delete(entry)  # the unmarked ones are the control plane's to remove
    assert dev.process(0, bytes([2, 0x22, 0])) == [(1, bytes([2, 0x22, 5]))]  # was set(4)
    assert len(t.entries()) == 3


def test_select_without_expressions_takes_its_default():
    """`transition select() { default: ... }` (p4c's grammar allows an empty list; only
    `default` can match it), on both engines."""
    from p4sim.frontend import compile_source
    from p4sim.native import new_device

    prog = compile_source(
        """#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
struct headers_t { h_t h; h_t g; }
struct meta_t { }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition select() { default: more; } }
    state more { pkt.extract(hdr.g); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply {} }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { hdr.g.a = hdr.g.a + 1; sm.egress_spec = 1; }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply {} }
control CC(inout headers_t hdr, inout meta_t meta) { apply {} }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
""",
        "select_empty.p4",
    )
    for engine in ("interp", "native"):
        dev = new_device(prog, engine=engine)
        assert dev.process(0, b"\x05\x06\x07") == [(1, b"\x05\x07\x07")], engine


def extracted(program: str, frames: list[str], caplog) -> list[str]:
    dev = compile_file(STF_DIR / f"{program}.p4").new_device()
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="p4sim.trace"):
        for frame in frames:
            dev.process(0, bytes.fromhex(frame))
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("Extracted")]


def test_trace_names_each_extracted_header_stack_elements_and_union_members_too(caplog):
    """One extract path for plain headers, stack elements and union members, so each shows
    in the trace (pktdiff's parser search counts the bytes a state extracted from it)."""
    assert extracted("union", ["01001234ff", "020012345678ff"], caplog) == [
        "Extracted sel_t (2 bytes)",
        "Extracted short_t (2 bytes)",
        "Extracted sel_t (2 bytes)",
        "Extracted long_t (4 bytes)",
    ]
    # a count of 2, then two hops
    assert extracted("trace_stack", ["020a0b"], caplog) == [
        "Extracted count_t (1 bytes)",
        "Extracted hop_t (1 bytes)",
        "Extracted hop_t (1 bytes)",
    ]


FUNCTION_PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
header extra_t { bit<8> x; }
struct headers_t { h_t h; extra_t e; }
struct meta_t { }
void add_extra(inout extra_t e, in bit<8> v) { e.setValid(); e.x = v; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control I(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply { add_extra(hdr.e, hdr.h.a + 1); sm.egress_spec = 1; }
}
control E(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); pkt.emit(hdr.e); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def test_a_function_runs_on_the_device_that_calls_it():
    """Each device compiles the program's functions for itself. A function's body was
    bound to the first device, which the front end makes only to check the program, so
    every device that ran packets ran that one's setValid() (no packet there: a crash)."""
    from p4sim.frontend import compile_source

    prog = compile_source(FUNCTION_PROGRAM, "function.p4")
    first, second = prog.new_device(), prog.new_device()
    assert first.process(0, b"\x05") == [(1, b"\x05\x06")]
    assert second.process(0, b"\x07") == [(1, b"\x07\x08")]
    assert first.process(0, b"\x09") == [(1, b"\x09\x0a")]


def test_a_digest_of_a_list_is_named_as_p4c_names_it():
    """`digest(1, {a, b})` sends a tuple: P4Info lists it as digest_0 (p4c's auto name), one
    per call, with a tuple type_spec; the device records its values under that name and
    P4Runtime sends them as a P4Data tuple. A call in an `if (false)` counts for nothing."""
    from p4sim import p4info
    from p4sim.frontend import compile_source
    from p4sim.p4runtime.digests import digest_data

    source = DIGEST_PROGRAM.replace(
        "digest<learn_t>(1, { hdr.h.a, sm.ingress_port });",
        "digest<learn_t>(1, { hdr.h.a, sm.ingress_port }); digest(2, { hdr.h.b, hdr.h.a });"
        " if (false) { digest(3, { hdr.h.a }); } digest(4, { sm.ingress_port });",
    )
    prog = compile_source(source, "digest_list.p4")
    info = p4info.generate(prog.model)
    shapes = {
        d.preamble.name: [m.bitstring.bit.bitwidth for m in d.type_spec.tuple.members]
        for d in info.digests
    }
    assert shapes == {"learn_t": [], "digest_0": [16, 8], "digest_1": [9]}
    dev = prog.new_device()
    dev.process(5, b"\x2a\x01\x02")
    assert list(dev.digests) == [
        ("learn_t", 1, [0x2A, 5]),
        ("digest_0", 2, [0x0102, 0x2A]),
        ("digest_1", 4, [5]),
    ]
    [tuple_digest] = [d for d in prog.model.digests if d.name == "digest_0"]
    data = digest_data(tuple_digest, [0x0102, 0x2A])
    assert [m.bitstring for m in data.tuple.members] == [b"\x01\x02", b"\x2a"]
