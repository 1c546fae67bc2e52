"""`dcexp campaign DIR`: every scenario file of a directory as one study, run after another
into OUT/<scenario name>/, resumable run by run, with one progress bar and ETA over all.

experiments/paper/ is the campaign that reproduces Hasselquist et al. (`make paper`): one
file per study of the paper's Table 3 and one for its Table 2 (overhead), in the order of
their file names. `--quick` applies each file's `quick:` block (about 30 minutes on 2 cores),
`--paper` its `paper:` block (the paper's sizes, stacks and sweep points, 5 repetitions), the
files as written are every stack at 10 repetitions (`--full`, the default).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from dccommon.cliargs import printable
from experiments.run import progress
from experiments.run.runner import LocalExecutor, RunOptions, expected_s, pending_runs, run_scenario
from experiments.run.scenario import Scenario, ScenarioError, load
from experiments.run.testbed import TestbedError


def load_campaign(
    directory: Path, quick: bool = False, reps: int | None = None, paper: bool = False
) -> list[Scenario]:
    """The studies of a campaign directory, in file-name order; names must be unique."""
    paths = sorted(Path(directory).glob("*.yaml"))
    if not paths:
        raise ScenarioError(f"{printable(directory)}: no scenario files (*.yaml) in this directory")
    studies = [load(p, quick=quick, reps=reps, paper=paper) for p in paths]
    names = [s.name for s in studies]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ScenarioError(
            f"{printable(directory)}: scenario names must be unique, repeated: {dupes}"
        )
    return studies


def run_campaign(
    studies: list[Scenario],
    out: Path,
    opts: RunOptions,
    stream=sys.stderr,
    meta: dict | None = None,
    executor=None,
) -> dict:
    """Run every study; a study whose testbed cannot be built is reported and skipped.
    `executor` as in run_scenario (this host, or Ray workers)."""
    executor = executor or LocalExecutor()
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    for study in studies:
        executor.check(study, out, opts)
    todo = {s.name: pending_runs(s, out / s.name) for s in studies}
    total = sum(len(s.runs) for s in studies)
    left = sum(len(t) for t in todo.values())
    bar = progress.Progress(
        total=total,
        done=total - left,
        stream=stream,
        cost_left=sum(expected_s(r) for t in todo.values() for r in t),
    )
    bar.note(
        f"campaign: {len(studies)} studies, {total} runs, {total - left} already saved, "
        f"about {progress.format_duration(bar.cost_left)} of runs expected -> {out}"
    )
    record = {
        **(meta or {}),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "studies": [s.name for s in studies],
    }
    (out / "campaign.json").write_text(json.dumps(record, indent=1))
    summary = {"ok": 0, "failed": 0, "skipped": total - left, "studies_failed": []}
    for study in studies:
        if not todo[study.name]:
            continue
        bar.note(f"== {study.name}: {len(todo[study.name])} runs to do")
        try:
            got = run_scenario(
                study, out / study.name, opts, stream=stream, bar=bar, executor=executor
            )
        except TestbedError as exc:
            bar.note(f"{study.name}: {exc}; going on with the next study")
            summary["studies_failed"].append(study.name)
            continue
        summary["ok"] += got["ok"]
        summary["failed"] += got["failed"]
    record["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    record["summary"] = summary
    (out / "campaign.json").write_text(json.dumps(record, indent=1))
    return summary
