"""`python -m p4sim.coverage` on two of p4c's samples, through the real p4c-bm2-ss (the whole
corpus takes minutes and is `make p4sim-coverage`): one both compile with equal P4Info, one
p4sim refuses for a construct it names."""

import io
import shutil

from p4sim import coverage
from p4sim.conformance.differential import DEFAULT_SAMPLES

BOTH = "issue1566-bmv2"  # control constructor parameters
REFUSED = "v1model-digest-custom-type"  # a digest field of an error or enum type


def test_coverage_tells_accepted_from_refused_and_compares_p4info(tmp_path):
    for name in (BOTH, REFUSED):
        shutil.copy(DEFAULT_SAMPLES / f"{name}.p4", tmp_path)
    programs = {p.name: p for p in coverage.measure(tmp_path, jobs=2)}
    both, refused = programs[BOTH], programs[REFUSED]
    assert both.p4c_accepts and both.p4sim == "accepts", both
    assert both.p4info == [], both.p4info
    assert refused.p4c_accepts and refused.p4sim != "accepts", refused
    assert refused.group.startswith(
        "not supported: a digest field of an error or enum"
    ), refused.group
    out = io.StringIO()
    coverage.report(list(programs.values()), verbose=False, out=out)
    assert "p4sim accepts 1 of the 2 (50.0 %); refuses 1 as not supported" in out.getvalue()
