"""Confidence intervals and a two-sample test for the reproduction's verdicts, without scipy.

Every mean the analyses report comes with a 95 % confidence interval from Student's t
distribution and its n; a difference between two settings counts as shown when Welch's
t-test (unequal variances) rejects "no difference" at 95 %, two-sided. A quantity that
cannot leave a range (a recovery time is not below 0 s, Jain's index of three flows not
below 1/3) has its interval clipped there, and its text says so: with n = 3 the t interval
of a small, spread time reaches below 0 ("-0.4 s"), which no run could measure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# Two-sided 95 % quantiles of Student's t (t_{0.975, df}), df = 1..30, then 40, 60, 120, inf.
_T975 = {
    1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
    9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120,
    17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086, 21: 2.080, 22: 2.074, 23: 2.069, 24: 2.064,
    25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048, 29: 2.045, 30: 2.042, 40: 2.021, 60: 2.000,
    120: 1.980,
}  # fmt: skip
_Z975 = 1.960

# The ranges of the quantities the analyses estimate: (lowest, highest) a value can take.
UNBOUNDED = (-math.inf, math.inf)  # differences, slopes
NON_NEGATIVE = (0.0, math.inf)  # goodput, times, bytes
JAIN_OF_3 = (1 / 3, 1.0)  # Jain's index of three flows: 1/3 when one takes everything
BOUNDS = {"goodput": NON_NEGATIVE, "jfi": JAIN_OF_3}  # by the findings' quantity names


def t975(df: float) -> float:
    """t_{0.975} for `df` degrees of freedom (fractional for Welch), linear in 1/df between
    the tabulated ones, which is accurate to 0.005 here."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be at least 1, got {df}")
    keys = sorted(_T975)
    if df >= keys[-1]:
        lo, hi = (keys[-1], _T975[keys[-1]]), (math.inf, _Z975)
    else:
        upper = next(k for k in keys if k >= df)
        if upper == df:
            return _T975[upper]
        lower = max(k for k in keys if k < df)
        lo, hi = (lower, _T975[lower]), (upper, _T975[upper])
    x, x0, x1 = 1 / df, 1 / lo[0], 1 / hi[0]
    return lo[1] + (hi[1] - lo[1]) * (x - x0) / (x1 - x0)


@dataclass(frozen=True)
class Estimate:
    """A mean over n runs with the half-width of its 95 % CI (nan when n < 2) and the sd;
    `low` and `high` are the CI's ends clipped to the quantity's `bounds`."""

    mean: float
    half: float
    n: int
    sd: float
    bounds: tuple[float, float] = UNBOUNDED

    @property
    def low(self) -> float:
        return max(self.mean - self.half, self.bounds[0])

    @property
    def high(self) -> float:
        return min(self.mean + self.half, self.bounds[1])

    @property
    def clipped_at(self) -> list[float]:
        """The bounds the t interval crossed (and was clipped at)."""
        lo, hi = self.bounds
        crossed = ((lo, self.mean - self.half < lo), (hi, self.mean + self.half > hi))
        return [bound for bound, out in crossed if out]

    def text(self, digits: int = 3) -> str:
        """'0.812 [0.78, 0.84] (n=5)', '0.9 [0, 2.1] (n=3, CI clipped at 0)'; without an
        interval for a single run."""
        if self.n == 0:
            return "-"
        if math.isnan(self.half):
            return f"{self.mean:.{digits}g} (n={self.n})"
        clipped = " and ".join(f"{b:.{digits}g}" for b in self.clipped_at)
        note = f", CI clipped at {clipped}" if clipped else ""
        ci = f"[{self.low:.{digits}g}, {self.high:.{digits}g}]"
        return f"{self.mean:.{digits}g} {ci} (n={self.n}{note})"


def estimate(values, bounds: tuple[float, float] = UNBOUNDED) -> Estimate:
    """The mean of `values` (None and nan left out) with its Student t 95 % CI, clipped to
    `bounds`, the range the quantity can take (NON_NEGATIVE, JAIN_OF_3)."""
    x = np.asarray([v for v in values if v is not None and not math.isnan(v)], dtype=float)
    if x.size == 0:
        return Estimate(math.nan, math.nan, 0, math.nan, bounds)
    if x.size == 1:
        return Estimate(float(x[0]), math.nan, 1, math.nan, bounds)
    sd = float(x.std(ddof=1))
    half = t975(x.size - 1) * sd / math.sqrt(x.size)
    return Estimate(float(x.mean()), half, int(x.size), sd, bounds)


@dataclass(frozen=True)
class Difference:
    """b - a with the half-width of its 95 % CI (Welch); significant when it excludes 0."""

    diff: float
    half: float

    @property
    def significant(self) -> bool:
        return not math.isnan(self.half) and abs(self.diff) > self.half

    def text(self, digits: int = 3) -> str:
        if math.isnan(self.half):
            return f"{self.diff:+.{digits}g} (no CI: fewer than 2 runs on a side)"
        return f"{self.diff:+.{digits}g} ± {self.half:.{digits}g}"


def welch(a, b) -> Difference:
    """The difference of the means of b and a, with its Welch 95 % CI."""
    x = np.asarray(list(a), dtype=float)
    y = np.asarray(list(b), dtype=float)
    diff = float(y.mean() - x.mean()) if x.size and y.size else math.nan
    if x.size < 2 or y.size < 2:
        return Difference(diff, math.nan)
    va, vb = x.var(ddof=1) / x.size, y.var(ddof=1) / y.size
    se = math.sqrt(va + vb)
    if se == 0:
        return Difference(diff, 0.0)
    df = (va + vb) ** 2 / (va**2 / (x.size - 1) + vb**2 / (y.size - 1))
    return Difference(diff, t975(max(df, 1.0)) * se)
