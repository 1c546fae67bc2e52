"""The paper's findings, each against what we measured: a verdict per finding and stack.

A finding quotes the paper (its own words where PAPER.md quotes them, PAPER.md's summary of
its text otherwise), names the quantity compared, and judges it with a rule the noise can
support: a difference counts when Welch's 95 % CI of it excludes 0 (stats.welch), a value the
paper states agrees when it lies in our 95 % CI of the mean. Verdicts:

    agree          the claimed effect is there, significant at 95 %
    partly         no significant difference either way (the data neither confirm nor
                   refute it), or it holds for some stacks only
    disagree       the opposite, significant at 95 %, or a significant change where the
                   paper sees none
    no counterpart a stack the paper did not run for this figure (TCP in fairness tests,
                   aioquic CUBIC): reported, not judged
    not run        the points the finding needs are not in the data; says which

Fairness: every JFI the paper quotes is aioquic NewReno with the enlarged UDP buffer
(PAPER_STACK); its ngtcp2 figures (12-19) back the trends only.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from experiments.analysis.stats import BOUNDS, NON_NEGATIVE, estimate, welch

PAPER_STACK = "aioquic-newreno-rcvbuf-large"


def is_paper_stack(variant: str) -> bool:
    """The paper's stack on either event loop: uvloop runs the same protocol code faster
    (experiments/docs/aioquic-cpu.md), so an `-uvloop` variant answers the paper's figures."""
    return variant.removesuffix("-uvloop") == PAPER_STACK


AIOQUIC_VALUES = "the paper's values are aioquic NewReno's"
VERDICTS = ("agree", "partly", "disagree", "no counterpart", "not run")
MINUS = " − "  # a row of two stacks: their difference, "high − low"


@dataclass
class Row:
    """One stack's judgement of a finding."""

    variant: str
    ours: str  # our value(s) with CI and n
    verdict: str
    note: str = ""


# variant -> point -> per-run values (DC goodput in Mbit/s, or whole-run JFI)
Values = dict[str, dict[object, list[float]]]


@dataclass
class Finding:
    key: str
    study: str  # the study (experiments/paper/ name) whose values it judges
    figure: str
    quote: str
    source: str  # where the quote is from
    quantity: str  # goodput | jfi
    rule: str  # the rule in words
    judge: Callable[[Values, dict], list[Row]]  # (values, every study's values) -> rows


def counterpart(variant: str, quantity: str) -> str | None:
    """None when the paper ran this stack for this kind of figure, else why not."""
    if variant.startswith("aioquic-cubic"):
        return "aioquic had no CUBIC when the paper ran"
    if quantity == "jfi" and variant.startswith("tcp"):
        return "ours, no counterpart: TCP is not in the paper's fairness tests"
    return None


def combine(rows: list[Row]) -> str:
    """One verdict for a finding over the stacks the paper ran."""
    judged = [r.verdict for r in rows if r.verdict in ("agree", "partly", "disagree")]
    if not judged:
        return "not run" if any(r.verdict == "not run" for r in rows) else "no counterpart"
    if all(v == "agree" for v in judged):
        return "agree"
    if all(v == "disagree" for v in judged):
        return "disagree"
    return "partly"


def _fmt_point(p) -> str:
    return f"{p:g}" if isinstance(p, float) else str(p)


def _pooled(points: dict, wanted) -> tuple[list[float], list]:
    """The runs of the wanted points present (pooled), and which points they were."""
    present = [p for p in points if p in wanted]
    return [v for p in present for v in points[p]], present


def _between(variant: str, points: dict, first, second, word: str, quantity: str):
    """Our two settings of one stack: (None, their difference, our text), or a 'not run'
    row naming the missing points instead of the first."""
    a, pa = _pooled(points, first)
    b, pb = _pooled(points, second)
    if not pa or not pb:
        missing = [_fmt_point(p) for p in (*first, *second) if p not in points]
        return Row(variant, "-", "not run", f"missing points: {', '.join(missing)}"), None, ""
    d = welch(a, b)
    ours = (
        f"{'+'.join(map(_fmt_point, pa))}: {estimate(a, BOUNDS[quantity]).text()}; "
        f"{'+'.join(map(_fmt_point, pb))}: {estimate(b, BOUNDS[quantity]).text()}; "
        f"{word} {d.text()}"
    )
    return None, d, ours


def _verdict(paper_direction: bool, significant: bool) -> str:
    """A difference judged by its 95 % CI: only a significant one confirms or refutes."""
    if not significant:
        return "partly"
    return "agree" if paper_direction else "disagree"


def direction(values: Values, quantity: str, first, second, sign: int) -> list[Row]:
    """The paper: `second` is higher (sign +1) or lower (-1) than `first`. Points are
    collections pooled over the runs present; missing points make the row 'not run'."""
    rows = []
    for variant, points in values.items():
        missing, d, ours = _between(variant, points, first, second, "difference", quantity)
        why = counterpart(variant, quantity)
        if missing or why:
            rows.append(missing or Row(variant, ours, "no counterpart", why))
            continue
        same = math.copysign(1, d.diff) == sign and d.diff != 0
        verdict = _verdict(same, d.significant)
        note = {
            (True, False): "the paper's direction, not significant at 95 %",
            (False, False): "against the paper's direction, not significant at 95 %",
            (False, True): "against the paper's direction, significant at 95 %",
        }.get((same, d.significant), "")
        rows.append(Row(variant, ours, verdict, note))
    return rows


def flat(values: Values, quantity: str, first, second, tolerance: float) -> list[Row]:
    """The paper: no change from `first` to `second`. Agree when the 95 % CI of the change
    lies within ±tolerance; disagree when the change is significant and larger than it."""
    rows = []
    for variant, points in values.items():
        missing, d, ours = _between(variant, points, first, second, "change", quantity)
        why = counterpart(variant, quantity)
        if missing or why:
            rows.append(missing or Row(variant, ours, "no counterpart", why))
        elif d.significant and abs(d.diff) > tolerance:
            rows.append(Row(variant, ours, "disagree", f"significant change beyond ±{tolerance:g}"))
        elif not math.isnan(d.half) and abs(d.diff) + d.half <= tolerance:
            rows.append(Row(variant, ours, "agree", f"CI of the change within ±{tolerance:g}"))
        else:
            rows.append(
                Row(variant, ours, "partly", f"no significant change, CI wider than ±{tolerance:g}")
            )
    return rows


def value(values: Values, quantity: str, point, paper: float) -> list[Row]:
    """The paper states `paper` at `point` for PAPER_STACK: agree when it lies in our CI."""
    rows = []
    for variant, points in values.items():
        if point not in points:
            rows.append(Row(variant, "-", "not run", f"missing point {_fmt_point(point)}"))
            continue
        est = estimate(points[point], BOUNDS[quantity])
        ours = f"{_fmt_point(point)}: {est.text()}"
        if not is_paper_stack(variant):
            why = counterpart(variant, quantity) or AIOQUIC_VALUES
            rows.append(Row(variant, ours, "no counterpart", why))
        elif est.n < 2:
            rows.append(Row(variant, ours, "not run", "one run: no CI"))
        elif est.low <= paper <= est.high:
            rows.append(Row(variant, ours, "agree", f"the paper's {paper:g} is in our CI"))
        else:
            rows.append(Row(variant, ours, "disagree", f"the paper's {paper:g} is outside our CI"))
    return rows


def stacks_below(values: Values, low: str, high: str) -> list[Row]:
    """The paper: stack kind `low` (e.g. ngtcp2) gets less than `high` (aioquic) at every
    point. Per pair of variants, agree when significant at every point, disagree when
    significantly the other way somewhere and nowhere the paper's way, else partly."""
    paper = [v for v in values if counterpart(v, "goodput") is None]
    lows = [v for v in paper if v.startswith(low)]
    highs = [v for v in paper if v.startswith(high)]
    if not lows or not highs:
        return [Row(f"{low} vs {high}", "-", "not run", f"needs both {low} and {high}")]
    rows = []
    for lo in lows:
        for hi in highs:
            points = [p for p in values[hi] if p in values[lo]]
            diffs = {p: welch(values[lo][p], values[hi][p]) for p in points}  # hi - lo
            ours = "; ".join(
                ("" if p == "-" else f"{_fmt_point(p)}: ")
                + f"{estimate(values[hi][p], BOUNDS['goodput']).text()} against "
                f"{estimate(values[lo][p], BOUNDS['goodput']).text()}, "
                f"difference {d.text()}"
                for p, d in diffs.items()
            )
            below = [p for p, d in diffs.items() if d.significant and d.diff > 0]
            above = [p for p, d in diffs.items() if d.significant and d.diff < 0]
            verdict = (
                "agree"
                if len(below) == len(points)
                else "disagree" if above and not below else "partly"
            )
            swept = points != ["-"]  # a study without a sweep has the one point "-"
            parts = [
                f"{lo} significantly {how}" + (" at " + ", ".join(map(_fmt_point, found))) * swept
                for how, found in (("below", below), ("above", above))
                if found
            ]
            note = "; ".join(parts) or "no significant difference" + " at any point" * swept
            rows.append(Row(f"{hi}{MINUS}{lo}", ours, verdict, note))
    return rows


def _stability_missing(variant: str, dpoints: dict, spoints: dict | None) -> str:
    """What keeps `more_stable` from comparing a variant, in words ("" when nothing)."""
    if not spoints:
        return f"the loss study has no {variant} runs"
    lacking = [
        study for study, points in (("duplication", dpoints), ("loss", spoints)) if 0 not in points
    ]
    if lacking:
        return f"no loss-free runs in the {' and '.join(lacking)} study"
    top = max(dpoints)
    if top == 0:
        return "the duplication study ran no loss"
    if top not in spoints:
        return f"the loss study has no {variant} runs at loss {top:g} (the duplication study's largest)"
    return ""


def more_stable(dup: Values, split: Values) -> list[Row]:
    """The paper: with duplication goodput is much more stable as losses grow than with the
    split under the same losses. Compared: the share of the loss-free goodput kept at the
    duplication study's largest loss rate ("as losses increase": the top of the range, not
    whichever small rate both studies happen to share)."""
    rows = []
    for variant, dpoints in dup.items():
        spoints = split.get(variant)
        missing = _stability_missing(variant, dpoints, spoints)
        if missing:
            rows.append(Row(variant, "-", "not run", missing))
            continue
        p = max(dpoints)
        d_keep = [v / estimate(dpoints[0]).mean for v in dpoints[p]]
        s_keep = [v / estimate(spoints[0]).mean for v in spoints[p]]
        d = welch(s_keep, d_keep)
        ours = (
            f"kept at loss {p:g}: duplication {estimate(d_keep, NON_NEGATIVE).text()}, split "
            f"{estimate(s_keep, NON_NEGATIVE).text()}"
        )
        verdict = _verdict(d.diff > 0, d.significant)
        rows.append(Row(variant, ours, verdict, f"difference {d.text()}"))
    return rows


def at_most(values: Values, quantity: str, points, bound: float, what: str) -> list[Row]:
    """The paper: the value stays at or below `bound` at the given points (every one
    present): agree when every CI's upper end is at or below it."""
    rows = []
    for variant, per in values.items():
        present = [p for p in points if p in per]
        if not present:
            rows.append(Row(variant, "-", "not run", "none of the points"))
            continue
        ests = {p: estimate(per[p], BOUNDS[quantity]) for p in present}
        ours = "; ".join(f"{_fmt_point(p)}: {e.text()}" for p, e in ests.items())
        why = counterpart(variant, quantity) or (
            AIOQUIC_VALUES if quantity == "jfi" and not is_paper_stack(variant) else None
        )
        if why:
            rows.append(Row(variant, ours, "no counterpart", why))
            continue
        highs = [e.high if e.n > 1 else e.mean for e in ests.values()]
        lows = [e.low if e.n > 1 else e.mean for e in ests.values()]
        verdict = "agree" if max(highs) <= bound else "disagree" if min(lows) > bound else "partly"
        rows.append(Row(variant, ours, verdict, what))
    return rows


def at_points(values: Values, *points) -> Values:
    """The values of the given points only."""
    return {v: {p: x for p, x in per.items() if p in points} for v, per in values.items()}


def variants_order(values: Values, low: str, high: str) -> list[Row]:
    """The paper: variant `low` gets less than variant `high` (at the study's one point)."""
    if low not in values or high not in values:
        return [Row(f"{high}{MINUS}{low}", "-", "not run", f"needs {low} and {high}")]
    a = [v for vs in values[low].values() for v in vs]
    b = [v for vs in values[high].values() for v in vs]
    d = welch(a, b)
    a_est, b_est = estimate(a, BOUNDS["goodput"]), estimate(b, BOUNDS["goodput"])
    ours = f"{low}: {a_est.text()}; {high}: {b_est.text()}; difference {d.text()}"
    verdict = _verdict(d.diff > 0, d.significant)
    return [Row(f"{high}{MINUS}{low}", ours, verdict)]


def across(values: Values, other: Values, point, sign: int) -> list[Row]:
    """The paper: at `point` this study's value is higher (sign +1) than `other` study's."""
    rows = []
    for variant, points in values.items():
        if point not in points or point not in other.get(variant, {}):
            rows.append(Row(variant, "-", "not run", f"needs {_fmt_point(point)} in both studies"))
            continue
        d = welch(other[variant][point], points[point])
        ours = (
            f"{estimate(points[point], BOUNDS['jfi']).text()} vs "
            f"{estimate(other[variant][point], BOUNDS['jfi']).text()}; "
            f"difference {d.text()}"
        )
        why = counterpart(variant, "jfi")
        same = d.diff * sign > 0
        verdict = "no counterpart" if why else _verdict(same, d.significant)
        rows.append(Row(variant, ours, verdict, why or ""))
    return rows


SMALL_LOSS = 0.0008  # the loss rate the paper looks at closely (Fig. 13(c))
DIFF = "the difference of the means is significant at 95 % (Welch) in the paper's direction"
CI = "the paper's value lies in our 95 % CI"


def _f(key, study, figure, quote, source, quantity, rule, judge) -> Finding:
    return Finding(key, study, figure, quote, source, quantity, rule, judge)


FINDINGS = [
    _f("buffer", "paper-default", "§ receive buffer",
       "aioquic with the default UDP receive buffer gets less than with an enlarged one",
       "PAPER.md item 8", "goodput", DIFF,
       lambda v, a: variants_order(v, "aioquic-newreno", PAPER_STACK)),
    _f("buffer-batch", "batch-size", "§ receive buffer, Fig. 4(c)",
       "aioquic with the default UDP receive buffer gets less than with an enlarged one",
       "PAPER.md item 8", "goodput", DIFF + " at batch 500 (the paper's Fig. 4(c) batch)",
       lambda v, a: variants_order(at_points(v, 500), "aioquic-newreno", PAPER_STACK)),
    _f("greedier", "paper-default", "§ stacks", "ngtcp2 is greedier than aioquic",
       "PAPER.md item 8", "goodput", DIFF + " at every point",
       lambda v, a: stacks_below(v, "aioquic", "ngtcp2")),
    _f("batch-large", "batch-size", "Fig. 4(a)-(c)",
       "very large batches (500 and up) lose throughput because one leg idles while the "
       "other carries the batch", "PAPER.md item 1", "goodput",
       DIFF + " (batch 50, the paper's Fig. 4(b) example, against 500, its Fig. 4(c))",
       lambda v, a: direction(v, "goodput", (50,), (500,), -1)),
    _f("batch-mid", "batch-size", "Fig. 4(a)",
       "Throughput against batch size is best in the mid range (about 100-150)",
       "PAPER.md item 1", "goodput", DIFF + " (batches 100 and 150 pooled above batch 10)",
       lambda v, a: direction(v, "goodput", (10,), (100, 150), +1)),
    _f("batch-small", "batch-size", "Fig. 4(a)",
       "very small batches also cost a little through more reordering", "PAPER.md item 1",
       "goodput", DIFF + " (batch 10 below batch 50)",
       lambda v, a: direction(v, "goodput", (50,), (10,), -1)),
    _f("batch-fair", "batch-size-fairness", "Fig. 5(a)",
       "Fairness falls with large batches (from about 150) as the SC clients take the legs "
       "during the DC client's off periods", "PAPER.md item 7", "jfi",
       DIFF + " (batch 10 against 500)",
       lambda v, a: direction(v, "jfi", (10,), (500,), -1)),
    _f("split", "batch-split", "Fig. 7(a)",
       "throughput peaks at 50/50 on equal legs and falls off convexly as the split skews",
       "PAPER.md item 2", "goodput", DIFF + " (50:50 against 90:10)",
       lambda v, a: direction(v, "goodput", ("50:50",), ("90:10",), -1)),
    _f("split-fair", "batch-split-fairness", "Fig. 8(a)",
       "symmetric legs, 50/50 and small batches give Jain ≈ 1.00", "PAPER.md item 7", "jfi",
       DIFF + " (50:50 above 90:10)",
       lambda v, a: direction(v, "jfi", ("50:50",), ("90:10",), -1)),
    _f("bw-1-1", "bw-ratio-split-1-1", "Fig. 7(b)",
       "with a 1:1 split, throughput falls as the legs become unequal", "PAPER.md item 3",
       "goodput", DIFF + " (1:1 against 5:1)",
       lambda v, a: direction(v, "goodput", ("1:1",), ("5:1",), -1)),
    _f("bw-1-1-fair", "bw-ratio-split-1-1-fairness", "Fig. 8(b)",
       "Jain's index ... 0.59 with 50/50 [at ratio 5:1]", "PAPER.md item 3", "jfi", CI,
       lambda v, a: value(v, "jfi", "5:1", 0.59)),
    _f("bw-match", "bw-ratio-matching", "Fig. 7(c)",
       "with a matching split it stays high", "PAPER.md item 3", "goodput",
       "the 95 % CI of the change from 1:1 to 5:1 lies within ±4 Mbit/s (10 % of 40)",
       lambda v, a: flat(v, "goodput", ("1:1",), ("5:1",), 4.0)),
    _f("bw-match-fair", "bw-ratio-matching-fairness", "Fig. 8(c)",
       "Fairness at ratio 5:1: Jain's index 0.70 with the matching split", "PAPER.md item 3",
       "jfi", CI, lambda v, a: value(v, "jfi", "5:1", 0.70)),
    _f("bw-match-vs-1-1", "bw-ratio-matching-fairness", "Fig. 8(b), 8(c)",
       "Jain's index 0.70 with the matching split against 0.59 with 50/50", "PAPER.md item 3",
       "jfi", DIFF + " (matching split above 1:1 split at 5:1)",
       lambda v, a: across(v, a.get("bw-ratio-split-1-1-fairness", {}), "5:1", +1)),
    _f("delay-low", "delay-ratio-low", "Fig. 9(a)",
       "in the low-delay study the delay ratio barely matters", "PAPER.md item 4", "goodput",
       "the 95 % CI of the change from 1:1 to 5:1 lies within ±2 Mbit/s",
       lambda v, a: flat(v, "goodput", ("1:1",), ("5:1",), 2.0)),
    _f("delay-low-fair", "delay-ratio-low-fairness", "Fig. 10(a)",
       "Jain 0.9996 → 0.9986 from 1:1 to 5:1", "PAPER.md item 4", "jfi",
       "the 95 % CI of the change from 1:1 to 5:1 lies within ±0.02",
       lambda v, a: flat(v, "jfi", ("1:1",), ("5:1",), 0.02)),
    _f("delay-high", "delay-ratio-high", "Fig. 9(b)",
       "in the high-delay study throughput ... fall[s] with the ratio", "PAPER.md item 4",
       "goodput", DIFF + " (1:1 against 5:1)",
       lambda v, a: direction(v, "goodput", ("1:1",), ("5:1",), -1)),
    _f("delay-high-ngtcp2", "delay-ratio-high", "Fig. 9(b), 14(b)",
       "ngtcp2 gets clearly less throughput than aioquic there (pacing differences)",
       "PAPER.md item 4", "goodput", DIFF + " at every delay ratio (aioquic above ngtcp2)",
       lambda v, a: stacks_below(v, "ngtcp2", "aioquic")),
    _f("delay-high-fair", "delay-ratio-high-fairness", "Fig. 10(b)",
       "fairness fall[s] with the ratio (Jain 0.9903 → 0.8758)", "PAPER.md item 4", "jfi",
       DIFF + " (1:1 against 5:1)", lambda v, a: direction(v, "jfi", ("1:1",), ("5:1",), -1)),
    _f("delay-high-fair-value", "delay-ratio-high-fairness", "Fig. 10(b)",
       "Jain ... 0.8758 [at 5:1]", "PAPER.md item 4", "jfi", CI,
       lambda v, a: value(v, "jfi", "5:1", 0.8758)),
    _f("loss", "loss", "Fig. 9(c)", "Loss lowers throughput", "PAPER.md item 5", "goodput",
       DIFF + " (no loss against 1 %)",
       lambda v, a: direction(v, "goodput", (0,), (0.01,), -1)),
    _f("loss-fair", "loss-fairness", "Fig. 10(c), 13(c)",
       "small packet losses have very limited impact on the fairness index",
       "the paper, quoted in PAPER.md item 5", "jfi",
       f"the 95 % CI of the change from no loss to {SMALL_LOSS:.2%} lies within ±0.05",
       lambda v, a: flat(v, "jfi", (0,), (SMALL_LOSS,), 0.05)),
    _f("loss-fair-0.5", "loss-fairness", "Fig. 10(c)",
       "small packet losses have very limited impact on the fairness index",
       "the paper, quoted in PAPER.md item 5", "jfi",
       "the 95 % CI of the change from no loss to 0.5 % lies within ±0.05",
       lambda v, a: flat(v, "jfi", (0,), (0.005,), 0.05)),
    _f("dup-cap", "dup-loss", "Fig. 11(a)",
       "Duplication caps the DC connection at one leg's capacity (about 20 Mbit/s instead of "
       "40)", "PAPER.md item 6", "goodput", "every CI at or below 22 Mbit/s (one leg + 10 %)",
       lambda v, a: at_most(v, "goodput", (0,), 22.0, "one leg is 20 Mbit/s")),
    _f("dup-stable", "dup-loss", "Fig. 11(a), 9(c)",
       "the throughput is much more stable as the packet losses increase",
       "the paper, quoted in PAPER.md item 6", "goodput",
       "the share of the loss-free goodput kept at the duplication study's largest loss rate is "
       "significantly higher with duplication than with the split (loss study)",
       lambda v, a: more_stable(v, a.get("loss", {}))),
    _f("dup-fair", "dup-loss-fairness", "Fig. 11(b)",
       "fairness suffers badly (Jain 0.39-0.48 over 0-5 % loss)", "PAPER.md item 6", "jfi",
       "the upper end of every CI at or below the paper's 0.48",
       lambda v, a: at_most(v, "jfi", (0, 0.01, 0.02, 0.05), 0.48, "paper: 0.39-0.48")),
    _f("trace", "trace", "Figs. 20-22",
       "The trace-driven runs show the same trends as the fixed-rate ones", "PAPER.md item 9",
       "goodput", DIFF + " (large batches cost: batch 100 against 500)",
       lambda v, a: direction(v, "goodput", (100,), (500,), -1)),
]  # fmt: skip
