"""P4Info of TNA programs as p4c-barefoot writes it with --p4runtime-force-std-externs.

How the Tofino compiler names and numbers objects (backends/tofino/bf-p4c/control-plane/
bfruntime_arch_handler.h and p4runtime_force_std.cpp in p4lang/p4c): a table or an extern is
the symbol `<pipe>.<name>` (the Pipeline instance's name), which its id is hashed from and
its alias is a suffix of, and the converter to standard P4Info strips the pipe from its
name; actions have no pipe. An extern's id is hashed under its Tofino prefix (Counter 0x83,
Register 0x8B, ...) and keeps the low 24 bits under the standard one; its @id is not read.
The ingress parser's port metadata stays a Tofino `PortMetadata` extern.

The unit tests below pin these rules on hand-made models; test_p4info_equals_the_tofino_compilers
checks the whole P4Info against the real compiler's (cached in build/p4sim-tofino).

Run: .venv/bin/pytest -q p4sim/tests/test_tna_p4info.py
"""

from __future__ import annotations

from pathlib import Path

import pytest

from p4sim import frontend, p4info
from p4sim.model import ActionDef, ActionRefDef, CounterDef, ProgramModel, RegisterDef, TableDef
from p4sim.p4info_compare import differences, read_text
from p4sim.tests.tofino_compiler import compile_tna


def tna_model(**kwargs) -> ProgramModel:
    model = ProgramModel([], [], [], [], [], [], arch="tna", pipe="pipe", ingress_parser="IgParser")
    for name, value in kwargs.items():
        setattr(model, name, value)
    return model


def hashed(prefix: int, symbol: str) -> int:
    return (prefix << 24) | (p4info.jenkins_one_at_a_time(symbol) & 0xFFFFFF)


def test_tables_and_externs_hash_the_pipe_prefixed_name_actions_their_own():
    model = tna_model(
        tables=[TableDef("Ig.t", [], [ActionRefDef("Ig.a")], 512, "Ig.a", {}, False, None)],
        actions=[ActionDef("Ig.a", [])],
        counters=[CounterDef("Ig.c", 16, "packets")],
        registers=[RegisterDef("Ig.r", 8, 32, ["@id(9)"])],
    )
    info = p4info.generate(model)
    [table], [action], [counter], [register] = (
        info.tables,
        info.actions,
        info.counters,
        info.registers,
    )
    assert (table.preamble.name, table.preamble.id) == ("Ig.t", hashed(0x02, "pipe.Ig.t"))
    assert (action.preamble.name, action.preamble.id) == ("Ig.a", hashed(0x01, "Ig.a"))
    assert (counter.preamble.name, counter.preamble.id) == ("Ig.c", hashed(0x12, "pipe.Ig.c"))
    # bf-p4c adds a TNA extern by name: the register's @id plays no part
    assert register.preamble.id == hashed(0x16, "pipe.Ig.r")
    assert info.pkg_info.arch == "tna"


def test_aliases_are_suffixes_of_the_pipe_prefixed_symbols():
    """An action `Ig.x` and a table `pipe.Ig.x` share only the suffixes `x` and `Ig.x`: the
    table's alias is then its whole symbol, pipe included, though its name has no pipe."""
    model = tna_model(
        tables=[TableDef("Ig.x", [], [ActionRefDef("Ig.x")], 512, "Ig.x", {}, False, None)],
        actions=[ActionDef("Ig.x", [])],
    )
    info = p4info.generate(model)
    assert (info.tables[0].preamble.name, info.tables[0].preamble.alias) == ("Ig.x", "pipe.Ig.x")
    assert info.actions[0].preamble.alias == "Ig.x"


def test_extern_ids_collide_and_probe_as_p4c_does():
    """`pipe.Ig.c1742` and `pipe.Ig.c527` hash to the same low 24 bits (their names without
    the pipe do not): the second in name order is probed to the next value."""
    names = ["Ig.c527", "Ig.c1742"]
    assert hashed(0x12, f"pipe.{names[0]}") == hashed(0x12, f"pipe.{names[1]}")
    model = tna_model(counters=[CounterDef(n, 4, "packets") for n in names])
    ids = {c.preamble.name: c.preamble.id for c in p4info.generate(model).counters}
    taken = hashed(0x12, "pipe.Ig.c1742")
    assert ids == {"Ig.c1742": taken, "Ig.c527": taken + 1}


def test_port_metadata_of_the_ingress_parser_stays_a_tofino_extern():
    [extern] = p4info.generate(tna_model()).externs
    assert (extern.extern_type_id, extern.extern_type_name) == (0x90, "PortMetadata")
    [instance] = extern.instances
    assert instance.preamble.name == "IgParser.$PORT_METADATA"
    assert instance.preamble.alias == "$PORT_METADATA"
    assert instance.preamble.id == hashed(0x90, "pipe.IgParser.$PORT_METADATA")
    assert instance.info.type_url == "type.googleapis.com/barefoot.PortMetadata"
    assert instance.info.value == b"ig_intr_md.ingress_port"


def test_v1model_programs_have_no_pipe_and_no_externs():
    model = tna_model(arch="v1model", counters=[CounterDef("Ig.c", 4, "packets")])
    info = p4info.generate(model)
    assert not info.externs
    assert info.counters[0].preamble.id == hashed(0x12, "Ig.c")


@pytest.mark.parametrize("arch", ["tna", "t2na"])
def test_pkg_info_names_the_architecture(arch):
    assert p4info.generate(tna_model(arch=arch)).pkg_info.arch == arch


# ------------------------------------------------ against the real compiler, program by program

HERE = Path(__file__).parent
SPLITTER = HERE.parents[1] / "p4src" / "dc_splitter_tna.p4"
# (program, chip, -D defines)
COMPILED = [
    (HERE / "tna" / "forward.p4", "tofino", {}),
    (HERE / "tna" / "p4info_objects.p4", "tofino", {}),
]


def compiled_id(case) -> str:
    path, chip, defines = case
    return f"{path.stem}-{chip}" + "".join(f"-D{k}" for k in defines)


@pytest.mark.parametrize("case", COMPILED, ids=compiled_id)
def test_p4info_equals_the_tofino_compilers(case):
    path, chip, defines = case
    reference = compile_tna(path, chip, defines)
    assert reference.accepted, f"the Tofino compiler rejects {path.name}:\n{reference.log}"
    p4sim_defines = {"__TARGET_TOFINO__": "2" if chip == "tofino2" else "1", **defines}
    ours = p4info.generate(frontend.compile_file(path, defines=p4sim_defines).model)
    diffs = differences(ours, read_text(reference.p4info))
    assert not diffs, "\n".join(diffs)
