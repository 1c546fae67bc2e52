"""QUICbench's performance envelope, conformance and deviation.

After QUICbench (A. Mishra, B. Leong, "Containing the Cambrian Explosion in QUIC Congestion
Control", ACM IMC 2023): a flow's behaviour is the cloud of its (throughput, delay) samples, one per
10 RTTs; its performance envelope is the convex hull of the 95 % of those points closest to
the cloud's mean (the outer 5 % are start-up and outliers). For an implementation A and a
reference B (TCP here):

    conformance(A, B) = share of A's envelope points (the kept 95 %) inside B's envelope
    deviation(A, B)   = distance between the two clouds' means

Throughput (Mbit/s) and delay (ms) have different units, so distances (which points are
closest to the mean, and the deviation) are taken with each axis divided by the reference
cloud's mean on that axis: a deviation of 0.1 is 10 % of the reference's throughput or delay.
The hull test itself needs no scale. Reads only what the runner wrote.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd

RTTS_PER_POINT = 10
KEEP = 0.95
MIN_WINDOW_S = 0.1  # the samplers' interval: a window cannot be shorter


# ---------------------------------------------------------------- geometry
def convex_hull(points: np.ndarray) -> np.ndarray:
    """Counter-clockwise hull vertices of 2-D points (Andrew's monotone chain), no repeats.
    Fewer than 3 distinct non-collinear points give the 1 or 2 extreme points."""
    pts = np.unique(np.asarray(points, dtype=float), axis=0)
    if len(pts) <= 2:
        return pts

    def cross(o, a, b) -> float:
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    def chain(seq) -> list:
        out: list = []
        for p in seq:
            while len(out) >= 2 and cross(out[-2], out[-1], p) <= 0:
                out.pop()
            out.append(p)
        return out

    lower, upper = chain(pts), chain(pts[::-1])
    return np.array(lower[:-1] + upper[:-1])


def inside_hull(hull: np.ndarray, points: np.ndarray, rel_tol: float = 1e-9) -> np.ndarray:
    """For each point: inside or on the convex polygon `hull` (counter-clockwise)."""
    points = np.atleast_2d(np.asarray(points, dtype=float))
    if len(hull) == 0:
        return np.zeros(len(points), dtype=bool)
    scale = max(float(np.abs(hull).max()), 1.0)
    tol = rel_tol * scale * scale
    if len(hull) == 1:
        return np.all(np.isclose(points, hull[0], atol=rel_tol * scale), axis=1)
    if len(hull) == 2:  # a segment: collinear and between its ends
        a, b = hull
        d = b - a
        rel = points - a
        cross = d[0] * rel[:, 1] - d[1] * rel[:, 0]
        t = rel @ d / (d @ d)
        return (np.abs(cross) <= tol) & (t >= -rel_tol) & (t <= 1 + rel_tol)
    edges = np.roll(hull, -1, axis=0) - hull
    rel = points[:, None, :] - hull[None, :, :]
    cross = edges[None, :, 0] * rel[:, :, 1] - edges[None, :, 1] * rel[:, :, 0]
    return np.all(cross >= -tol, axis=1)


# ---------------------------------------------------------------- envelopes
def _scale(reference: np.ndarray) -> np.ndarray:
    mean = np.abs(reference.mean(axis=0))
    return np.where(mean > 0, mean, 1.0)


def kept_points(points: np.ndarray, keep: float = KEEP, scale: np.ndarray | None = None):
    """The `keep` share of the points closest to their mean (axes divided by `scale`)."""
    points = np.asarray(points, dtype=float)
    if len(points) == 0:
        return points
    scale = _scale(points) if scale is None else scale
    dist = np.linalg.norm((points - points.mean(axis=0)) / scale, axis=1)
    n = max(1, int(np.ceil(keep * len(points))))
    return points[np.argsort(dist, kind="stable")[:n]]


def envelope(points: np.ndarray, keep: float = KEEP) -> np.ndarray:
    """The performance envelope: hull of the kept points."""
    return convex_hull(kept_points(points, keep))


def compare(a: np.ndarray, b: np.ndarray, keep: float = KEEP) -> dict:
    """Conformance and deviation of cloud `a` against reference cloud `b`."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(a) == 0 or len(b) == 0:
        return {"points": len(a), "conformance": np.nan, "deviation": np.nan}
    scale = _scale(b)
    kept_a = kept_points(a, keep)
    hull_b = envelope(b, keep)
    diff = a.mean(axis=0) - b.mean(axis=0)
    return {
        "points": len(a),
        "conformance": float(inside_hull(hull_b, kept_a).mean()),
        "deviation": float(np.linalg.norm(diff / scale)),
        "d_throughput_mbit": float(diff[0]),
        "d_delay_ms": float(diff[1]),
    }


# ---------------------------------------------------------------- from saved runs
def flow_points(samples: pd.DataFrame, rtts: int = RTTS_PER_POINT) -> dict[str, np.ndarray]:
    """Per flow: (throughput Mbit/s, delay ms) per window of `rtts` RTTs (the flow's minimum
    smoothed RTT), from the cumulative bytes and the RTT samples the flow plugins logged."""
    f = samples[samples.source == "flow"]
    out = {}
    for fid, g in f.groupby("id"):
        b = g[g.metric == "bytes"].sort_values("t_s")
        r = g[g.metric == "rtt_ms"].sort_values("t_s")
        if len(b) < 2 or r.empty:
            continue
        window = max(rtts * r.value.min() / 1000, MIN_WINDOW_S)
        t_b, v_b = b.t_s.to_numpy(), b.value.to_numpy()
        edges = np.arange(t_b[0], t_b[-1], window)
        points = []
        for lo, hi in itertools.pairwise(edges):
            delay = r.value[(r.t_s >= lo) & (r.t_s < hi)]
            if delay.empty:
                continue
            got = np.interp(hi, t_b, v_b) - np.interp(lo, t_b, v_b)
            points.append((got * 8 / window / 1e6, float(delay.mean())))
        if points:
            out[fid] = np.array(points)
    return out


def variant_clouds(out: Path, point=None) -> dict[str, np.ndarray]:
    """Every saved ok run at swept `point` (None: the only one): variant -> pooled points of
    all its flows and repetitions."""
    from experiments.analysis import metrics

    clouds: dict[str, list] = {}
    for m in metrics.load_manifests(out):
        if m["status"] != "ok" or (point is not None and str(m.get("point")) != str(point)):
            continue
        samples = metrics.load_samples(Path(out, "runs", m["run_id"]))
        for pts in flow_points(samples).values():
            clouds.setdefault(m["variant"], []).append(pts)
    return {v: np.vstack(p) for v, p in clouds.items()}


def reference_variant(variants: list[str]) -> str | None:
    """TCP is the yardstick: the first variant whose label starts with 'tcp'."""
    return next((v for v in variants if v.startswith("tcp")), None)


def envelope_table(clouds: dict[str, np.ndarray], reference: str) -> pd.DataFrame:
    rows = []
    for variant, cloud in clouds.items():
        row = compare(cloud, clouds[reference])
        back = compare(clouds[reference], cloud)["conformance"]
        rows.append({"variant": variant, **row, f"{reference}_in_variant": back})
    return pd.DataFrame(rows)
