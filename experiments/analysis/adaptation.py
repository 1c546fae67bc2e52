"""The split-loop studies' report: a table per results directory (markdown, metrics from
experiments/analysis/loop_metrics.py), for a study with an `oracle` point the loops against
it (goodput as % of the oracle's, leg share's distance from its, the goal's pass or fail per
row), and its figures (experiments/analysis/adaptation_plots.py).

    python -m experiments.analysis.adaptation results/loop_ratio [more dirs]
    # a table per study (markdown) and DIR/figures/{leg_share_over_time,goodput_by_ratio}.png
"""

from __future__ import annotations

import sys

from dccommon.cliargs import ArgumentParser, input_dir
from experiments.analysis import adaptation_plots, loop_metrics
from experiments.analysis.report import _table  # the project's dependency-free markdown table


def main(argv: list[str] | None = None) -> int:
    p = ArgumentParser(prog="python -m experiments.analysis.adaptation", description=__doc__)
    # a missing folder printed "(no runs)" and exit 0, as if the study had none
    p.add_argument("dirs", nargs="+", type=input_dir, help="results directories of dcexp run")
    args = p.parse_args(argv)
    for d in args.dirs:
        table = loop_metrics.loop_table(d)
        print(f"## {d}\n")
        if table.empty:
            print("(no runs)\n")
            continue
        print(_table(table, "{:.3g}") + "\n")
        goal = loop_metrics.against_oracle(table)
        if not goal.empty:
            print(_table(goal, "{:.3g}") + "\n")
        figures = d / "figures"
        paths = adaptation_plots.leg_share_over_time(d, figures)
        if table.point.astype(str).str.contains("/").all():
            paths += adaptation_plots.goodput_by_ratio(table, figures)
        print("figures: " + ", ".join(str(p) for p in paths if p.suffix == ".png") + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
