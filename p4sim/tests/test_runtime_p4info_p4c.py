"""p4sim's P4Info against the real p4c's, program by program: the splitter (both SN profiles)
and every program of p4sim's own tests (p4sim/tests/p4, p4sim/tests/stf). Equal up to the
order of the top-level entities (p4sim.p4info_compare), `initial_default_action` included.

Needs p4c-bm2-ss (`make setup`, see README.md); SKIP_BMV2=1 leaves these tests out.
Run: .venv/bin/pytest -q p4sim/tests/test_runtime_p4info_p4c.py
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from controlplane import bmv2
from p4sim import frontend, p4info
from p4sim.p4info_compare import differences, read_text

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
SPLITTER = ROOT / "p4src" / "dc_splitter.p4"

# (program, -D defines)
PROGRAMS = [(SPLITTER, {}), (SPLITTER, {"PDCP_SN_12": "1"}), (SPLITTER, {"DC_ADAPTIVE": "1"})] + [
    (path, {}) for path in sorted((HERE / "p4").glob("*.p4")) + sorted((HERE / "stf").glob("*.p4"))
]


def case_id(case) -> str:
    path, defines = case
    return path.stem + "".join(f"-D{k}" for k in defines)


# p4sim test programs the real p4c's front end rejects, so that it writes no P4Info (p4sim
# accepts them; listed, not hidden):
P4C_REJECTS: dict[str, str] = {}
# Others p4c's front end accepts but its BMv2 back end refuses after writing the P4Info
# (signed: a slice assigned into an int<8>): compared.


def p4c_p4info(path: Path, defines: dict, out: Path) -> tuple[Path | None, str]:
    p4c = shutil.which("p4c-bm2-ss")
    assert p4c, f"p4c-bm2-ss is not on PATH: {bmv2.INSTALL_HINT}; or SKIP_BMV2=1"
    reference = out / "p4c.p4info.txtpb"
    proc = subprocess.run(
        [p4c, *[f"-D{k}={v}" for k, v in defines.items()], str(path)]
        + ["--p4runtime-files", str(reference), "-o", str(out / "p4c.json")],
        capture_output=True,
        text=True,
        check=False,
    )
    return (reference if reference.is_file() else None), proc.stderr


@pytest.mark.parametrize("case", PROGRAMS if "bmv2" in bmv2.suite_targets() else [], ids=case_id)
def test_p4info_equals_p4c(case, tmp_path):
    path, defines = case
    reference, stderr = p4c_p4info(path, defines, tmp_path)
    if path.stem in P4C_REJECTS:
        assert reference is None, f"p4c now accepts {path.name}: take it off P4C_REJECTS"
        assert stderr.strip(), "p4c wrote no P4Info and no error"
        return
    assert reference is not None, f"p4c wrote no P4Info for {path}:\n{stderr}"
    ours = p4info.generate(frontend.compile_file(str(path), defines=defines).model)
    diffs = differences(ours, read_text(reference))
    assert not diffs, "\n".join(diffs)
