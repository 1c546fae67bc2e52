"""Scenario files: loading, validation, profiles (quick, paper), and expansion into runs.

A scenario is declarative YAML with units in the key names (QUICbench/pantheon habit):

    name: batch-size
    links:  {a: {rate_mbit: 20, delay_ms: 10, delay_cv: 0.1}, b: {...}}
    dc:     {batch: 100, ratio: "1:1", dup: false}
    t_reordering_ms: 200
    flows:  [{kind: ngtcp2, cc: cubic, size_mb: 100, client: dc}]
    variants: [{kind: ngtcp2, cc: cubic}, {kind: tcp, cc: cubic}]   # applied to every flow
    repetitions: 10
    sweep:  {param: dc.batch, values: [1, 10, 100, 1000]}
    quick:  {repetitions: 1, flows.size_mb: 5, sweep.values: [1, 100]}
    paper:  {repetitions: 5, sweep.values: [1, 10, 100]}   # the paper's sizes and points

`quick:` and `paper:` are profiles: dotted-path overrides applied with --quick or --paper.

Every key is checked; a wrong one gets a message naming the keys allowed at that place.
"""

from __future__ import annotations

import copy
import functools
import itertools
import json
import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import yaml

from controlplane.limits import MAX_BATCH  # the P4 program's batch_size_t
from controlplane.policies import KNOB_NAMES, POLICY_KNOBS, knob_readers
from dccommon.cliargs import (
    InputFileError,
    check_name,
    did_you_mean,
    load_yaml,
    printable,
    shown,
    type_in_words,
)
from experiments.run.linkspec import LOSS_POINTS, LinkSpec, LinkSpecError, change_spec
from experiments.run.scale import ScaleError, scale_doc


class ScenarioError(ValueError):
    """A scenario file is malformed; the message names the key and what is allowed."""


LINK_KEYS = {
    "rate_mbit": "link rate in Mbit/s (0 or absent: unlimited)",
    "delay_ms": "one-way delay mean in ms",
    "delay_cv": "coefficient of variation of the delay (normal distribution)",
    "jitter_ms": "delay standard deviation in ms (alternative to delay_cv)",
    "dist": "delay distribution: const|normal|uniform|pareto|paretonormal",
    "loss": "Bernoulli loss probability 0..1",
    "loss_at": "where a lost frame is dropped: departure (after its serialization, using link "
    "time; the default) or enqueue (on arrival, as netem)",
    "ge": "Gilbert-Elliott loss [p, r, 1-h, 1-k] (netem order)",
    "queue_pkts": "drop-tail queue size in packets",
    "queue_bytes": "drop-tail queue size in bytes",
    "queue_bdp": "drop-tail queue size in multiples of the bandwidth-delay product",
    "trace": "Mahimahi trace file (relative paths: experiments/traces/ or the scenario's dir)",
    "reorder": "let frames overtake each other when their delays cross (default false)",
    "burst_bytes": "token bucket depth in bytes",
}
LEG_NAMES = ("a", "b", "a_uplink", "b_uplink")
DC_KEYS = {"batch": 100, "ratio": "1:1", "dup": False, "sn_bits": 18, "credit": False, "mode": "dc"}
# dc.mode sc: the switch forwards the DC client unnumbered on leg A, no agent (the baseline
# of the overhead study)
DC_MODES = ("dc", "sc")
# ping: an RTT probe (ICMP echo from the client, iputils ping), not a transport flow:
# variants leave it alone and it has no goodput
FLOW_KINDS = ("ngtcp2", "aioquic", "quicgo", "tcp", "mptcp", "mpquic", "ping")
FLOW_CLIENTS = ("dc", "sc-a", "sc-b")
CCS = ("newreno", "cubic", "bbr")
QUICGO_CC = "newreno"  # quic-go's only controller (experiments.flows.quicgo.CC)
FLOW_DEFAULTS = {
    "kind": "ngtcp2",
    "cc": "cubic",
    "size_mb": None,
    "duration_s": None,
    "start_s": 0.0,
    "client": "dc",
    "udp_rcvbuf": "default",
    "count": 1,
    "mptcp_leg_b": "active",
    "scheduler": None,  # mpquic: minrtt; mptcp: the kernel's net.mptcp.scheduler (default)
    "paths": None,  # mpquic: 2 (1: single-path QUIC, the reference)
    "cubic_n": None,
    "hystart": None,
    "qlog": False,
    "loop": None,  # aioquic: its endpoints' event loop (None: asyncio)
}
# Flow kinds whose client takes `udp_rcvbuf: large` (quic-go enlarges its own buffer).
LARGE_RCVBUF_KINDS = ("aioquic", "ngtcp2")
MPTCP_LEG_B = ("active", "backup")  # the leg-B subflow's MP_PRIO (RFC 8684 section 3.3.8)
TOP_KEYS = {
    "name": None,
    "description": "",
    "figure": None,
    "links": None,
    "dc": None,
    "t_reordering_ms": 200,  # the paper's t-Reordering
    "flows": None,
    "variants": None,
    "repetitions": 1,
    "sweep": None,
    "quick": None,
    "paper": None,
    "timeout_s": None,
    "seed": 1,
    "events": None,
    "feedback": None,
    "control": None,
    "switch": None,
}
# The splitter program the switch runs (p4sim or BMv2 started by the run): v1model's
# dc_splitter.p4, or the TNA one (dc_splitter_tna.p4, p4sim only, no adaptive profile).
SWITCH_KEYS = {"program": "v1model"}
SWITCH_PROGRAMS = ("v1model", "tna")
EVENT_KEYS = ("at_s", "link", "direction", "set", "dc", "feedback")
# Leg feedback (linkem --feedback on both legs, the switch on the -D DC_ADAPTIVE profile)
# and the controller's loop (`dcctl control`); keys and defaults as linkem's and dcctl's.
FEEDBACK_KEYS = {"period_ms": 10, "target_ms": 20}
CONTROL_POLICIES = ("none", "static", "capacity", "delay", "failover")
CONTROL_KEYS = {
    "policy": "none",
    "alpha": None,
    "hysteresis": None,
    "min_interval_ms": None,
    "min_share": None,
    "gain": None,
    "silence_ms": None,
    "down_reports": None,
    "up_reports": None,
    "dup": False,
}
EVENT_DIRECTIONS = {"down": "ab", "up": "ba", "both": "both"}
FIGURES = ("throughput", "fairness", "utilization", "duplication")
# Limits of values that have no natural one, so that a typo cannot start a study that fills
# the disk or never ends (dcexp run also checks the payload against the free disk space).
MAX_SIZE_MB = 100_000  # one download: 100 GB
MAX_DURATION_S = 86_400  # one flow, one run's timeout: a day
MAX_REPETITIONS = 1000
MAX_SEED = 2**32 - 1  # seed * 10000 + rep * 10 + leg stays within linkem's 64-bit --seed
MAX_T_REORDERING_MS = 3000


def _allowed(keys) -> str:
    return ", ".join(sorted(keys))


def _check_keys(where: str, d: Any, allowed) -> dict:
    if not isinstance(d, dict):
        raise ScenarioError(
            f"{where}: expected a mapping with keys {_allowed(allowed)}, got {type_in_words(d)}"
        )
    for key in d:
        if key not in allowed:
            raise ScenarioError(
                f"{where}: unknown key {key!r}{did_you_mean(key, allowed)}; "
                f"allowed keys: {_allowed(allowed)}"
            )
    return d


def _number(
    where: str, value: Any, lo: float | None = None, hi: float | None = None, integer: bool = False
) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        hint = ""
        if isinstance(value, str) and _is_float_text(value):
            hint = (
                " (YAML reads an exponent as a number only with a dot and a sign: 1.0e+6)"
                if "e" in value.lower()
                else " (a number in quotes is text: write it without quotes)"
            )
        raise ScenarioError(f"{where}: expected a number, got {shown(value)}{hint}")
    if not math.isfinite(value):
        raise ScenarioError(f"{where}: {value!r} is not a finite number (allowed {_range(lo, hi)})")
    if integer and int(value) != value:
        raise ScenarioError(f"{where}: expected an integer, got {value!r}")
    if lo is not None and value < lo or hi is not None and value > hi:
        rng = _range(lo, hi)
        raise ScenarioError(
            f"{where}: {value!r} is out of range "
            + (rng if lo is not None and hi is not None else f"(allowed {rng})")
        )
    return int(value) if integer else float(value)


def _range(lo: float | None, hi: float | None) -> str:
    """'1..65535', or the one bound there is: '>= 0'."""
    if lo is not None and hi is not None:
        return f"{lo}..{hi}"
    return f">= {lo}" if lo is not None else f"<= {hi}"


def _is_float_text(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def parse_ratio(where: str, value: Any) -> tuple[int, int]:
    """'3:1', [3, 1] or '75%' (share of leg A) -> (3, 1)."""
    if isinstance(value, (list, tuple)) and len(value) == 2:
        a, b = value
    elif isinstance(value, str) and re.fullmatch(r"\s*[0-9]+\s*:\s*[0-9]+\s*", value):
        a, b = (int(x) for x in value.split(":"))
    elif isinstance(value, str) and re.fullmatch(r"\s*[0-9]+(\.[0-9]+)?\s*%\s*", value):
        share = Fraction(value.strip().rstrip("%").strip()) / 100
        if not 0 <= share <= 1:
            raise ScenarioError(f"{where}: percentage {value!r} must be within 0%..100%")
        # In lowest terms, as the controller reads a percentage: 70% is 7:3, so it fits any
        # batch whose 70% is a whole number of packets (controlplane/docs/reference.md).
        a, b = share.numerator, share.denominator - share.numerator
    else:
        raise ScenarioError(
            f"{where}: ratio must be 'A:B' (packets on leg A : leg B), [A, B] "
            f"or 'P%' (share of leg A), got {value!r}"
        )
    if not all(isinstance(x, int) and x >= 0 for x in (a, b)) or a + b == 0:
        raise ScenarioError(
            f"{where}: ratio parts must be non-negative integers, not both 0, " f"got {value!r}"
        )
    return a, b


def validate_link(where: str, d: Any) -> dict:
    _check_keys(where, d, LINK_KEYS)
    queues = [k for k in ("queue_pkts", "queue_bytes", "queue_bdp") if d.get(k) is not None]
    if len(queues) > 1:
        raise ScenarioError(
            f"{where}: give one of queue_pkts, queue_bytes, queue_bdp, " f"not {', '.join(queues)}"
        )
    for key in ("rate_mbit", "delay_ms", "delay_cv", "jitter_ms", "queue_bdp"):
        if d.get(key) is not None:
            _number(f"{where}.{key}", d[key], lo=0)
    for key in ("queue_pkts", "queue_bytes", "burst_bytes"):
        if d.get(key) is not None:
            _number(f"{where}.{key}", d[key], lo=1, integer=True)
    if d.get("loss") is not None:
        _number(f"{where}.loss", d["loss"], lo=0, hi=1)
    if d.get("loss_at") is not None and d["loss_at"] not in LOSS_POINTS:
        raise ScenarioError(
            f"{where}.loss_at: {d['loss_at']!r} is not one of {', '.join(LOSS_POINTS)}"
        )
    if d.get("delay_cv") is not None and d.get("jitter_ms") is not None:
        raise ScenarioError(f"{where}: give delay_cv or jitter_ms, not both")
    return d


def _validate_multipath_knobs(where: str, flow: dict) -> None:
    """scheduler (mpquic: tquic's; mptcp: what this kernel offers), paths and cc (mpquic)."""
    from experiments.flows import mpquic
    from experiments.flows.mptcp import kernel_schedulers

    kind = flow["kind"]
    if kind not in ("mpquic", "mptcp"):
        for key in ("scheduler", "paths"):
            if flow[key] is not None:
                raise ScenarioError(f"{where}.{key}: applies to kinds mpquic and mptcp only")
        return
    if kind == "mptcp":
        flow["scheduler"] = "default" if flow["scheduler"] is None else flow["scheduler"]
        offered = kernel_schedulers()
        if flow["scheduler"] not in offered:
            raise ScenarioError(
                f"{where}.scheduler: {flow['scheduler']!r} is not offered by this kernel "
                f"(net.mptcp.available_schedulers: {', '.join(offered)})"
            )
        if flow["paths"] is not None:
            raise ScenarioError(f"{where}.paths: applies to kind mpquic only")
        return
    flow["scheduler"] = "minrtt" if flow["scheduler"] is None else flow["scheduler"]
    flow["paths"] = 2 if flow["paths"] is None else flow["paths"]
    if isinstance(flow["paths"], bool) or not isinstance(flow["paths"], int):  # 2.0, true
        raise ScenarioError(
            f"{where}.paths: {shown(flow['paths'])} is not one of "
            f"{', '.join(map(str, mpquic.PATHS))} (a whole number of paths)"
        )
    checks = (
        ("scheduler", flow["scheduler"], tuple(mpquic.SCHEDULERS)),
        ("paths", flow["paths"], mpquic.PATHS),
        ("cc", flow["cc"], tuple(mpquic.CCS)),
    )
    for key, value, allowed in checks:
        if value not in allowed:
            raise ScenarioError(
                f"{where}.{key}: {value!r} is not one of {', '.join(map(str, allowed))} "
                "(tquic's, kind mpquic)"
            )
    if flow["paths"] == 2 and flow["client"] != "dc":
        raise ScenarioError(
            f"{where}.client: kind mpquic with paths 2 runs on the dual-connected device "
            f"(client dc, one address per leg), not {flow['client']!r}; single-path QUIC "
            "(paths 1) runs on any client"
        )


def validate_flow(where: str, d: Any) -> dict:
    _check_keys(where, d, FLOW_DEFAULTS)
    flow = {**FLOW_DEFAULTS, **({"cc": QUICGO_CC} if d.get("kind") == "quicgo" else {}), **d}
    if flow["kind"] not in FLOW_KINDS:
        raise ScenarioError(f"{where}.kind: {flow['kind']!r} is not one of {', '.join(FLOW_KINDS)}")
    if flow["kind"] != "mpquic" and flow["cc"] not in CCS:  # tquic's list: its own check
        raise ScenarioError(f"{where}.cc: {flow['cc']!r} is not one of {', '.join(CCS)}")
    if flow["kind"] == "ping" and flow["duration_s"] is None:
        raise ScenarioError(f"{where}: a ping probe needs duration_s, not size_mb")
    if flow["kind"] == "aioquic" and flow["cc"] == "bbr":
        raise ScenarioError(f"{where}.cc: aioquic supports newreno and cubic, not bbr")
    if flow["kind"] == "quicgo" and flow["cc"] != QUICGO_CC:
        raise ScenarioError(
            f"{where}.cc: quic-go has one congestion controller, not selectable: cc must be "
            f"{QUICGO_CC} (its NewReno with HyStart), not {flow['cc']!r}"
        )
    if not isinstance(flow["qlog"], bool):
        raise ScenarioError(f"{where}.qlog: expected true or false, got {flow['qlog']!r}")
    if flow["qlog"] and flow["kind"] != "aioquic":
        raise ScenarioError(
            f"{where}.qlog: applies to kind aioquic only (ngtcp2's and quicgo's servers always "
            "write their qlog)"
        )
    _validate_loop(where, flow)
    if flow["client"] not in FLOW_CLIENTS:
        raise ScenarioError(
            f"{where}.client: {flow['client']!r} is not one of " f"{', '.join(FLOW_CLIENTS)}"
        )
    if flow["kind"] == "mptcp" and flow["client"] != "dc":
        raise ScenarioError(
            f"{where}.client: kind mptcp runs on the dual-connected device (client dc, one "
            f"address per leg), not {flow['client']!r}"
        )
    if flow["mptcp_leg_b"] not in MPTCP_LEG_B:
        raise ScenarioError(
            f"{where}.mptcp_leg_b: {flow['mptcp_leg_b']!r} is not one of {', '.join(MPTCP_LEG_B)}"
        )
    if flow["mptcp_leg_b"] == "backup" and flow["kind"] != "mptcp":
        raise ScenarioError(f"{where}.mptcp_leg_b: applies to kind mptcp only")
    _validate_multipath_knobs(where, flow)
    _validate_corbel_knobs(where, flow)
    if flow["udp_rcvbuf"] not in ("default", "large"):
        raise ScenarioError(
            f"{where}.udp_rcvbuf: {flow['udp_rcvbuf']!r} is not one of default, large"
        )
    if flow["udp_rcvbuf"] == "large" and flow["kind"] not in LARGE_RCVBUF_KINDS:
        raise ScenarioError(
            f"{where}.udp_rcvbuf: 'large' applies to kind {' and '.join(LARGE_RCVBUF_KINDS)} "
            f"only, not {flow['kind']!r}"
        )
    if (flow["size_mb"] is None) == (flow["duration_s"] is None):
        raise ScenarioError(
            f"{where}: give exactly one of size_mb (download size) or "
            "duration_s (download for that long)"
        )
    if flow["size_mb"] is not None:
        _number(f"{where}.size_mb", flow["size_mb"], lo=0.001, hi=MAX_SIZE_MB)
    if flow["duration_s"] is not None:
        _number(f"{where}.duration_s", flow["duration_s"], lo=0.1, hi=MAX_DURATION_S)
    _number(f"{where}.start_s", flow["start_s"], lo=0, hi=MAX_DURATION_S)
    _number(f"{where}.count", flow["count"], lo=1, hi=16, integer=True)
    return flow


def _validate_loop(where: str, flow: dict) -> None:
    """loop: the event loop of our aioquic endpoints (None: asyncio, as before the key)."""
    from experiments.flows.aioquic_flow import LOOPS

    if flow["loop"] is None:
        return
    if flow["loop"] not in LOOPS:
        raise ScenarioError(f"{where}.loop: {flow['loop']!r} is not one of {', '.join(LOOPS)}")
    if flow["kind"] != "aioquic":
        raise ScenarioError(
            f"{where}.loop: applies to kind aioquic only (our quic_endpoint's event loop), "
            f"not {flow['kind']}"
        )


def _validate_corbel_knobs(where: str, flow: dict) -> None:
    """cubic_n / hystart select our CUBIC of experiments.flows.corbel_cc (aioquic only)."""
    from experiments.flows.corbel_cc import CONNECTIONS

    if flow["cubic_n"] is None and flow["hystart"] is None:
        return
    if flow["kind"] != "aioquic" or flow["cc"] != "cubic":
        raise ScenarioError(
            f"{where}: cubic_n and hystart are knobs of our aioquic CUBIC: they need "
            f"kind aioquic and cc cubic, not {flow['kind']} {flow['cc']}"
        )
    if flow["cubic_n"] is not None and flow["cubic_n"] not in CONNECTIONS:
        raise ScenarioError(
            f"{where}.cubic_n: {flow['cubic_n']!r} is not one of "
            f"{', '.join(map(str, CONNECTIONS))}"
        )
    if flow["hystart"] is not None and not isinstance(flow["hystart"], bool):
        raise ScenarioError(f"{where}.hystart: expected true or false, got {flow['hystart']!r}")


# A stack's own knobs in a variant reach only the flows of that stack, so that a study can
# vary QUIC's knobs while a competing TCP flow stays as it is (Corbel et al.'s tests).
STACK_KNOBS = {
    "cubic_n": ("aioquic",),
    "hystart": ("aioquic",),
    "qlog": ("aioquic",),
    "loop": ("aioquic",),
    "mptcp_leg_b": ("mptcp",),
    "scheduler": ("mptcp", "mpquic"),
    "paths": ("mpquic",),
}


# A flow's index in ASCII digits without leading zeros: 'flows.０' or 'flows.00' would name
# flow 0 too (int() reads both), so two spellings could set one flow's key twice.
FLOW_INDEX = r"(0|[1-9][0-9]*)"
VARIANT_FLOW_KEY = re.compile(rf"^flows\.{FLOW_INDEX}\.(\w+)$")


def variant_flow_keys(var: dict, index: int) -> dict:
    """A variant's `flows.<index>.<key>` entries for flow `index`: {key: value}."""
    out = {}
    for path, value in var.items():
        match = VARIANT_FLOW_KEY.match(path)
        if match and int(match.group(1)) == index:
            out[match.group(2)] = value
    return out


def apply_variant(flow: dict, var: dict, index: int) -> dict:
    """Flow `index` with a variant's overrides. Precedence, lowest first: the flow's own
    keys (and a sweep's `flows.*`), the variant's plain keys (kind, cc, ... on every flow; a
    stack's knobs of STACK_KNOBS only on the flows of that stack), the variant's
    `flows.<index>.<key>` (this flow only: mixed stacks, e.g. MPQUIC beside single-path
    QUIC flows). Ping probes are left alone."""
    if flow.get("kind") == "ping":
        return dict(flow)
    plain = {k: v for k, v in var.items() if k != "label" and not VARIANT_FLOW_KEY.match(k)}
    own = variant_flow_keys(var, index)
    out = {**flow, **{k: v for k, v in plain.items() if k not in STACK_KNOBS}, **own}
    for key, kinds in STACK_KNOBS.items():
        if key in plain and key not in own and out.get("kind", FLOW_DEFAULTS["kind"]) in kinds:
            out[key] = plain[key]
    return out


def _check_variant(where: str, var: Any, nflows: int) -> None:
    """A variant's keys: flow keys (every flow), `label`, `flows.<index>.<key>` (one flow)."""
    if not isinstance(var, dict):
        _check_keys(where, var, FLOW_DEFAULTS)
    for key in var:
        match = VARIANT_FLOW_KEY.match(str(key))
        if match is None:
            if key not in FLOW_DEFAULTS and key != "label":
                allowed = set(FLOW_DEFAULTS) | {"label"}
                raise ScenarioError(
                    f"{where}: unknown key {key!r}{did_you_mean(key, allowed)}; allowed keys: "
                    f"{_allowed(allowed)}, flows.<index>.<key>"
                )
        elif match.group(2) not in FLOW_DEFAULTS:
            raise ScenarioError(
                f"{where}.{key}: unknown flow key {match.group(2)!r}; allowed keys: "
                f"{_allowed(FLOW_DEFAULTS)}"
            )
        elif int(match.group(1)) >= nflows:
            raise ScenarioError(
                f"{where}.{key}: there is no flow {match.group(1)} (flows has {nflows})"
            )
    if "label" in var:  # it names the variant in tables and its runs' directories
        if not isinstance(var["label"], str):
            raise ScenarioError(
                f"{where}.label: expected text, got {type_in_words(var['label'])} "
                f"{shown(var['label'])}"
            )
        try:
            check_name(var["label"], f"{where}.label")
        except ValueError as exc:
            raise ScenarioError(str(exc)) from None
    kind = var.get("kind")
    for key, kinds in STACK_KNOBS.items():
        if key in var and kind is not None and kind not in kinds:
            raise ScenarioError(
                f"{where}.{key}: applies to kind {' and '.join(kinds)} only, and this variant "
                f"is kind {kind}"
            )


def _set_path(doc: dict, path: str, value: Any) -> None:
    """Set a dotted path; 'flows.X' sets X on every transport flow (not on ping probes),
    'flows.I.X' on flow I only (pairwise studies: a different stack per flow)."""
    parts = path.split(".")
    if parts[0] == "flows" and len(parts) == 2:
        for flow in doc.get("flows") or []:
            if flow.get("kind") != "ping":
                flow[parts[1]] = value
        return
    if parts[0] == "flows" and len(parts) == 3:
        doc["flows"][int(parts[1])][parts[2]] = value
        return
    node = doc
    for part in parts[:-1]:
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    node[parts[-1]] = value


def _get_path(doc: dict, path: str) -> Any:
    node: Any = doc
    for part in path.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


SWEEPABLE = re.compile(
    r"^(links\.(a|b|a_uplink|b_uplink|both)\.\w+|dc\.(batch|ratio|dup|credit|mode)|"
    rf"t_reordering_ms|flows\.({FLOW_INDEX}\.)?\w+|control\.\w+|feedback\.\w+|events)$"
)


@dataclass
class Run:
    """One experiment run: a fully resolved configuration plus its place in the study."""

    run_id: str
    point: Any  # the swept value (x axis), or None
    variant: str  # label of the protocol variant
    rep: int
    seed: int
    config: dict  # links, dc, t_reordering_ms, flows (resolved)
    scale: float = 1.0  # rates / scale, delays and RTT-defined times x scale (run/scale.py)


@dataclass
class Scenario:
    name: str
    doc: dict  # validated, defaults filled
    path: Path | None = None
    runs: list[Run] = field(default_factory=list)

    @property
    def sweep_param(self) -> str | None:
        return (self.doc.get("sweep") or {}).get("param")


def resolve_links(links: dict) -> dict:
    """Expand `both` into a and b; uplinks default to the leg's delay only (ACK path). A
    resolved set comes back unchanged (limits reads a saved run's config through it)."""
    both = links.get("both") or {}
    out = {}
    for leg in ("a", "b"):
        out[leg] = {**both, **(links.get(leg) or {})}
        uplink = {
            k: out[leg][k] for k in ("delay_ms", "delay_cv", "jitter_ms", "dist") if k in out[leg]
        }
        out[f"{leg}_uplink"] = {**uplink, **(links.get(f"{leg}_uplink") or {})}
    return out


def switch_program(cfg: dict) -> str:
    """The splitter program of a run's config (key switch.program; default v1model)."""
    return (cfg.get("switch") or SWITCH_KEYS)["program"]


def _validate_switch(where: str, switch: Any) -> dict | None:
    if switch is None:
        return None
    switch = {**SWITCH_KEYS, **_check_keys(where, switch, SWITCH_KEYS)}
    if switch["program"] not in SWITCH_PROGRAMS:
        raise ScenarioError(
            f"{where}.program: {switch['program']!r} is not one of {', '.join(SWITCH_PROGRAMS)}"
        )
    return switch


def _validate_doc(doc: dict, where: str) -> dict:
    _check_keys(where, doc, TOP_KEYS)
    for key in ("name", "links", "flows"):
        if doc.get(key) is None:
            raise ScenarioError(f"{where}: missing required key {key!r}")
    try:
        check_name(doc["name"], f"{where}.name")
    except ValueError as exc:
        raise ScenarioError(str(exc)) from None
    if not re.fullmatch(r"[\w.-]+", str(doc["name"])):
        raise ScenarioError(f"{where}.name: use letters, digits, '-', '_', '.' only")
    if not isinstance(doc["description"], str):
        raise ScenarioError(
            f"{where}.description: expected text, got {type_in_words(doc['description'])}"
        )
    if doc.get("figure") is not None and doc["figure"] not in FIGURES:
        raise ScenarioError(
            f"{where}.figure: {shown(doc['figure'])} is not one of {', '.join(FIGURES)}"
        )
    _check_keys(f"{where}.links", doc["links"], LEG_NAMES + ("both",))
    for leg, spec in doc["links"].items():
        validate_link(f"{where}.links.{leg}", spec)
    dc = {**DC_KEYS, **_check_keys(f"{where}.dc", doc.get("dc") or {}, DC_KEYS)}
    _validate_dc(f"{where}.dc", dc)
    if dc["sn_bits"] not in (12, 18):
        raise ScenarioError(f"{where}.dc.sn_bits: {dc['sn_bits']!r} is not one of 12, 18")
    if not isinstance(dc["credit"], bool):
        raise ScenarioError(f"{where}.dc.credit: expected true or false, got {dc['credit']!r}")
    doc["dc"] = dc
    doc["feedback"], doc["control"] = _validate_loops(where, doc)
    doc["switch"] = _validate_switch(f"{where}.switch", doc.get("switch"))
    _validate_t_reordering(f"{where}.t_reordering_ms", doc["t_reordering_ms"])
    _number(f"{where}.repetitions", doc["repetitions"], lo=1, hi=MAX_REPETITIONS, integer=True)
    _number(f"{where}.seed", doc["seed"], lo=0, hi=MAX_SEED, integer=True)
    if doc.get("timeout_s") is not None:
        _number(f"{where}.timeout_s", doc["timeout_s"], lo=1, hi=MAX_DURATION_S)
    if not isinstance(doc["flows"], list) or not doc["flows"]:
        raise ScenarioError(f"{where}.flows: expected a non-empty list of flows")
    doc["flows"] = [validate_flow(f"{where}.flows[{i}]", f) for i, f in enumerate(doc["flows"])]
    variants = doc.get("variants")
    if variants is not None:
        if not isinstance(variants, list) or not variants:
            raise ScenarioError(f"{where}.variants: expected a non-empty list of flow overrides")
        for i, var in enumerate(variants):
            _check_variant(f"{where}.variants[{i}]", var, len(doc["flows"]))
            for j, flow in enumerate(doc["flows"]):
                if flow["kind"] == "ping":
                    continue
                validate_flow(
                    f"{where}.variants[{i}] applied to flows[{j}]", apply_variant(flow, var, j)
                )
    doc["events"] = _validate_events(f"{where}.events", doc.get("events"))
    sweep = doc.get("sweep")
    if sweep is not None:
        _check_keys(f"{where}.sweep", sweep, ("param", "values", "set"))
        if (
            not sweep.get("param")
            or not isinstance(sweep.get("values"), list)
            or not sweep["values"]
        ):
            raise ScenarioError(f"{where}.sweep: needs 'param' and a non-empty 'values' list")
        # the values name the points (and the runs' directories): each names one
        seen = [json.dumps(v, sort_keys=True, default=str) for v in sweep["values"]]
        twice = next((v for i, v in enumerate(sweep["values"]) if seen[i] in seen[:i]), None)
        if twice is not None:
            raise ScenarioError(
                f"{where}.sweep.values: {shown(twice)} is given twice (a point runs once; for "
                "more runs of it raise repetitions)"
            )
        sets = sweep.get("set") or {sweep["param"]: sweep["values"]}
        for path, values in sets.items():
            if not SWEEPABLE.match(path):
                raise ScenarioError(
                    f"{where}.sweep.set: {path!r} is not sweepable; use "
                    "links.<a|b|both|a_uplink|b_uplink>.<key>, dc.batch, "
                    "dc.ratio, dc.dup, dc.credit, dc.mode, t_reordering_ms, flows.<key>, "
                    "flows.<index>.<key>, control.<key>, feedback.<key> or events (a whole "
                    "list per value)"
                )
            index = path.split(".")[1] if path.startswith("flows.") else ""
            if index.isdigit() and int(index) >= len(doc["flows"]):
                raise ScenarioError(
                    f"{where}.sweep.set.{path}: there is no flow {index} (flows has "
                    f"{len(doc['flows'])})"
                )
            if not isinstance(values, list) or len(values) != len(sweep["values"]):
                raise ScenarioError(
                    f"{where}.sweep.set.{path}: needs one value per sweep "
                    f"value ({len(sweep['values'])})"
                )
    return doc


def _validate_dc(where: str, dc: dict, at: str = "") -> None:
    """The DC user's settings, in the ranges the P4 program and the controller accept."""
    _number(f"{where}.batch{at}", dc["batch"], lo=1, hi=MAX_BATCH, integer=True)
    parse_ratio(f"{where}.ratio{at}", dc["ratio"])
    if not isinstance(dc["dup"], bool):
        raise ScenarioError(f"{where}.dup{at}: expected true or false, got {dc['dup']!r}")
    if dc.get("mode", "dc") not in DC_MODES:
        raise ScenarioError(f"{where}.mode{at}: {dc['mode']!r} is not one of {', '.join(DC_MODES)}")


def _validate_t_reordering(where: str, value: Any) -> None:
    _number(where, value, lo=0, hi=MAX_T_REORDERING_MS)


ZERO_KNOB = {
    "alpha": "would never let a report move the estimates",
    "gain": "would never move the split",
    "silence_ms": "would call a leg down whenever the other one reported last",
}


def _check_knobs_read(runs: list[Run]) -> None:
    """A control knob that no run's policy reads changes nothing: a typo or a wrong policy
    (a sweep may share knobs between a baseline without a loop and the loops: fine)."""
    given: set[str] = set()
    policies: list[str] = []
    for run in runs:
        control = run.config["control"]
        given |= {k for k in KNOB_NAMES if control.get(k) not in (None, False)}
        policies += [control["policy"]] if control["policy"] not in policies else []
    for knob in sorted(given):
        if not any(KNOB_NAMES[knob] in POLICY_KNOBS.get(p, ()) for p in policies):
            raise ScenarioError(
                f"control.{knob}: applies to {knob_readers(knob)} only, and no run of this "
                f"study has one (policies: {', '.join(policies)})"
            )


def validate_control(where: str, control: dict) -> dict:
    """The controller loop's keys (a sweep may set them per point: checked per run too)."""
    control = {**CONTROL_KEYS, **_check_keys(where, control, CONTROL_KEYS)}
    if control["policy"] not in CONTROL_POLICIES:
        raise ScenarioError(
            f"{where}.policy: {control['policy']!r} is not one of {', '.join(CONTROL_POLICIES)}"
        )
    for key, hi in (("alpha", 1), ("hysteresis", 1), ("min_share", 0.5)):
        if control[key] is not None:
            _number(f"{where}.{key}", control[key], lo=0, hi=hi)
    for key in ("min_interval_ms", "gain", "silence_ms"):
        if control[key] is not None:
            _number(f"{where}.{key}", control[key], lo=0)
    for key in ("alpha", "gain", "silence_ms"):  # 0 would freeze or flap the loop
        if control[key] == 0:
            raise ScenarioError(f"{where}.{key}: must be above 0 (0 {ZERO_KNOB[key]})")
    for key in ("down_reports", "up_reports"):
        if control[key] is not None:
            _number(f"{where}.{key}", control[key], lo=1, integer=True)
    if not isinstance(control["dup"], bool):
        raise ScenarioError(f"{where}.dup: expected true or false")
    return control


def _validate_loops(where: str, doc: dict) -> tuple[dict | None, dict]:
    """feedback: {period_ms, target_ms} turns the legs' reports on; control: {policy, ...}
    starts the controller's loop; dc.credit: true is the data-plane loop. Either loop turns
    the reports on with their defaults."""
    control = validate_control(f"{where}.control", doc.get("control") or {})
    feedback = doc.get("feedback")
    if feedback is not None:
        feedback = {**FEEDBACK_KEYS, **_check_keys(f"{where}.feedback", feedback, FEEDBACK_KEYS)}
        _number(f"{where}.feedback.period_ms", feedback["period_ms"], lo=1, hi=10000, integer=True)
        _number(f"{where}.feedback.target_ms", feedback["target_ms"], lo=0, hi=10000, integer=True)
    return feedback, control


def loops_need_feedback(cfg: dict) -> bool:
    """A closed loop moves the split: the controller's policy or the data plane's credit."""
    control = (cfg.get("control") or {}).get("policy", "none")
    return bool(cfg["dc"].get("credit")) or control != "none"


def split_is_static(cfg: dict) -> bool:
    """No closed loop and no live change of dc moves the split during the run."""
    return not loops_need_feedback(cfg) and not any("dc" in e for e in cfg.get("events") or [])


def _validate_events(where: str, events: Any) -> list[dict]:
    """Live changes during a run, applied at `at_s` after the first client could start:
    {at_s, link: a|b|both, direction: down|up|both (default down), set: {link keys}} changes
    the leg emulation (e.g. loss: 1 = leg down); {at_s, dc: {batch, ratio, dup}} changes the
    DC user on the switch (SN continuous)."""
    if events is None:
        return []
    if not isinstance(events, list):
        raise ScenarioError(f"{where}: expected a list of events")
    out = []
    for i, ev in enumerate(events):
        w = f"{where}[{i}]"
        _check_keys(w, ev, EVENT_KEYS)
        _number(f"{w}.at_s", ev.get("at_s"), lo=0)
        if ("link" in ev) == ("dc" in ev):
            raise ScenarioError(f"{w}: give either link (with set) or dc")
        if "feedback" in ev:
            if "link" not in ev or "set" in ev or ev["feedback"] not in ("on", "off"):
                raise ScenarioError(
                    f"{w}: a feedback event is {{at_s, link: a|b|both, feedback: on|off}}"
                )
            if ev["link"] not in ("a", "b", "both"):
                raise ScenarioError(f"{w}.link: {ev['link']!r} is not one of a, b, both")
            out.append({"at_s": float(ev["at_s"]), "link": ev["link"], "feedback": ev["feedback"]})
        elif "link" in ev:
            if ev["link"] not in ("a", "b", "both"):
                raise ScenarioError(f"{w}.link: {ev['link']!r} is not one of a, b, both")
            direction = ev.get("direction", "down")
            if direction not in EVENT_DIRECTIONS:
                raise ScenarioError(
                    f"{w}.direction: {direction!r} is not one of " f"{', '.join(EVENT_DIRECTIONS)}"
                )
            changes = validate_link(f"{w}.set", ev.get("set") or {})
            if not changes:
                raise ScenarioError(f"{w}.set: give the link keys to change")
            out.append(
                {
                    "at_s": float(ev["at_s"]),
                    "link": ev["link"],
                    "direction": direction,
                    "set": dict(changes),
                }
            )
        else:
            dc = _check_keys(f"{w}.dc", ev["dc"], ("batch", "ratio", "dup"))
            if not dc:
                raise ScenarioError(f"{w}.dc: give batch, ratio or dup")
            if "batch" in dc:
                _number(f"{w}.dc.batch", dc["batch"], lo=1, hi=MAX_BATCH, integer=True)
            if "ratio" in dc:
                dc = {**dc, "ratio": list(parse_ratio(f"{w}.dc.ratio", dc["ratio"]))}
            if "dup" in dc and not isinstance(dc["dup"], bool):
                raise ScenarioError(f"{w}.dc.dup: expected true or false")
            out.append({"at_s": float(ev["at_s"]), "dc": dict(dc)})
    return sorted(out, key=lambda e: e["at_s"])


def _label(value: Any) -> str:
    if isinstance(value, (str, int, float, bool)):
        text = str(value)
    else:
        text = yaml.safe_dump(value, default_flow_style=True).replace("\n...\n", "")
    return re.sub(r"[^\w.%-]+", "_", str(text).strip()).strip("_") or "x"


def variant_label(var: dict) -> str:
    if var.get("label"):
        return str(var["label"])
    parts = [str(var[k]) for k in ("kind", "cc") if k in var]
    parts += [f"rcvbuf-{var['udp_rcvbuf']}"] if var.get("udp_rcvbuf") == "large" else []
    parts += ["uvloop"] if var.get("loop") == "uvloop" else []  # asyncio: the default, unnamed
    parts += ["backup"] if var.get("mptcp_leg_b") == "backup" else []
    parts += [str(var["scheduler"])] if var.get("scheduler") else []
    parts += [f"{var['paths']}path"] if var.get("paths") else []
    parts += [f"{k}-{v}" for k, v in var.items() if VARIANT_FLOW_KEY.match(str(k))]
    parts += [f"n{var['cubic_n']}"] if var.get("cubic_n") is not None else []
    parts += (
        [f"hystart-{'on' if var['hystart'] else 'off'}"] if var.get("hystart") is not None else []
    )
    return "-".join(parts) or "default"


def expand(doc: dict) -> list[Run]:
    """Sweep values x variants x repetitions -> runs, each with a fully resolved config."""
    sweep = doc.get("sweep")
    points = sweep["values"] if sweep else [None]
    sets = (sweep.get("set") or {sweep["param"]: sweep["values"]}) if sweep else {}
    variants = doc.get("variants") or [{}]
    runs = []
    named: dict[str, tuple] = {}  # run id -> (point index, point, variant index, label)
    for (i, point), (v, var), rep in itertools.product(
        enumerate(points), enumerate(variants), range(doc["repetitions"])
    ):
        cfg = {
            "links": copy.deepcopy(doc["links"]),
            "dc": dict(doc["dc"]),
            "t_reordering_ms": doc["t_reordering_ms"],
            "flows": [dict(f) for f in doc["flows"]],
            "events": copy.deepcopy(doc["events"]),
            "feedback": copy.deepcopy(doc["feedback"]),
            "control": dict(doc["control"]),
        }
        if doc.get("switch") is not None:  # absent: v1model (earlier runs' configs unchanged)
            cfg["switch"] = dict(doc["switch"])
        for path, values in sets.items():
            _set_path(cfg, path, values[i])
        cfg["flows"] = [apply_variant(f, var, j) for j, f in enumerate(cfg["flows"])]
        # Every value of every sweep point is checked here, before the first run starts.
        at = f" at sweep value {point!r}" if sweep else ""
        cfg["events"] = _validate_events(f"events{at}", cfg["events"])
        for j, ev in enumerate(cfg["events"]):
            if "set" in ev:
                _check_with_link_driver(f"events[{j}].set{at}", ev["set"], change=True)
        cfg["links"] = resolve_links(cfg["links"])
        for leg, spec in cfg["links"].items():
            validate_link(f"links.{leg}{at}", spec)
            _check_with_link_driver(f"links.{leg}{at}", spec)
        cfg["flows"] = [validate_flow(f"flows[{j}]{at}", f) for j, f in enumerate(cfg["flows"])]
        _validate_dc("dc", cfg["dc"], at)
        _validate_t_reordering(f"t_reordering_ms{at}", cfg["t_reordering_ms"])
        cfg["control"] = validate_control(f"control{at}", cfg["control"])
        if cfg["feedback"] is None and loops_need_feedback(cfg):
            cfg["feedback"] = dict(FEEDBACK_KEYS)
        if cfg["control"]["policy"] != "none" and any("dc" in e for e in cfg["events"]):
            raise ScenarioError(
                f"control.policy {cfg['control']['policy']}{at}: dc events would fight the "
                "controller's loop (it is the primary controller); drop one of them"
            )
        if cfg["feedback"] is None and any("feedback" in e for e in cfg["events"]):
            raise ScenarioError("feedback events need the legs' feedback on (key feedback)")
        if cfg["feedback"] is not None and switch_program(cfg) != "v1model":
            raise ScenarioError(
                f"switch.program {switch_program(cfg)}{at}: leg feedback and the control "
                "loops need the adaptive profile, which only the v1model splitter has"
            )
        _check_events_inside_run(cfg, doc.get("timeout_s"), at)
        cfg["dc"]["ratio"] = list(parse_ratio("run dc.ratio", cfg["dc"]["ratio"]))
        a, b = cfg["dc"]["ratio"]
        if not cfg["dc"]["dup"] and cfg["dc"]["batch"] % (a + b) != 0:
            # The splitter sends k = batch * a / (a+b) packets of each batch on leg A.
            raise ScenarioError(
                f"dc.ratio {a}:{b} does not fit dc.batch {cfg['dc']['batch']}"
                f"{' at sweep value ' + repr(point) if sweep else ''}: a+b "
                "must equal the batch size or divide it"
            )
        label = variant_label(var)
        point_part = f"{_label(sweep['param'])}={_label(point)}__" if sweep else ""
        run_id = f"{point_part}{_label(label)}__rep{rep}"
        _check_run_id_unique(named, run_id, i, point, v, label)
        runs.append(
            Run(
                run_id=run_id,
                point=point,
                variant=label,
                rep=rep,
                seed=doc["seed"] * 1000 + rep,
                config=cfg,
                scale=doc.get("scale", 1.0),
            )
        )
    _check_knobs_read(runs)
    return runs


def _check_run_id_unique(named: dict, run_id: str, i: int, point, v: int, label: str) -> None:
    """A run's directory is named by its point and variant: two runs of one name would be
    one run (the second skipped as done, or written over the first)."""
    first = named.setdefault(run_id, (i, point, v, label))
    if first == (i, point, v, label):
        return
    if first[2] != v:
        raise ScenarioError(
            f"variants[{first[2]}] and variants[{v}] are both named {label!r} (a variant's "
            "runs are named by its label, or by its kind, cc and knobs); give each a distinct "
            "label: key"
        )
    raise ScenarioError(
        f"sweep.values: {shown(first[1])} and {shown(point)} name the same run directory "
        f"({run_id.rsplit('__', 2)[0]}); give values that differ in letters or digits"
    )


def _check_events_inside_run(cfg: dict, timeout_s: float | None, at: str) -> None:
    """An event at or after the end of the run could never take effect. The run ends when
    its last flow does: known in advance when every flow has a duration_s, and never later
    than timeout_s."""
    ends = []
    if all(f["duration_s"] is not None for f in cfg["flows"]):
        ends.append(max(f["start_s"] + f["duration_s"] for f in cfg["flows"]))
    if timeout_s is not None:
        ends.append(float(timeout_s))
    if not ends:
        return
    end = min(ends)
    for i, ev in enumerate(cfg["events"]):
        if ev["at_s"] >= end:
            raise ScenarioError(
                f"events[{i}].at_s{at}: {ev['at_s']:g} is at or after the end of the run "
                f"({end:g} s); allowed 0 <= at_s < {end:g}"
            )


def _check_with_link_driver(where: str, spec: dict, change: bool = False) -> None:
    """The link driver's own rules (rate_mbit or trace, ranges, trace file content), at load
    time rather than in the middle of a study: a leg's spec, or a live change's keys."""
    problem = _link_driver_problem(json.dumps(spec, sort_keys=True), change)
    if problem:
        raise ScenarioError(f"{where}: {problem}")


@functools.lru_cache(maxsize=256)
def _link_driver_problem(spec_json: str, change: bool) -> str | None:
    """Once per distinct spec: a study repeats each spec in every run, and reading a trace
    file 90 times costs seconds."""
    try:
        if change:
            change_spec(json.loads(spec_json))
        else:
            LinkSpec.from_dict(json.loads(spec_json)).to_spec()
    except LinkSpecError as exc:
        return str(exc)
    return None


PROFILES = ("quick", "paper")


def _profile_overrides(doc: dict, where: str, profile: str) -> dict:
    """A profile's {dotted path: value}, each path starting with a top-level key (checked
    whether or not the profile is applied: a typo in `quick:` shows in `dcexp validate`)."""
    overrides = doc.get(profile) or {}
    if not isinstance(overrides, dict):
        raise ScenarioError(f"{where}.{profile}: expected a mapping of dotted paths to values")
    allowed = [k for k in TOP_KEYS if k not in PROFILES]
    for path in overrides:
        top = str(path).split(".")[0]
        if top not in allowed:
            raise ScenarioError(
                f"{where}.{profile}: {path!r} does not start with a top-level key"
                f"{did_you_mean(top, allowed)} ({_allowed(allowed)})"
            )
    return overrides


def apply_profile(doc: dict, where: str, profile: str) -> dict:
    """The scenario's overrides (dotted paths) of a profile: `quick:` for a short run of the
    same study, `paper:` for the paper's sizes, stacks and sweep points."""
    if profile not in PROFILES:
        raise ScenarioError(
            f"{where}: unknown profile {profile!r} (allowed: {', '.join(PROFILES)})"
        )
    overrides = _profile_overrides(doc, where, profile)
    doc = copy.deepcopy(doc)
    for path, value in overrides.items():
        _set_path(doc, path, value)
    for name in PROFILES:
        doc.pop(name, None)
    return doc


def load(
    path: str | Path,
    quick: bool = False,
    reps: int | None = None,
    paper: bool = False,
    scale: float = 1.0,
) -> Scenario:
    path = Path(path)
    try:
        raw = load_yaml(path)
    except InputFileError as exc:
        if exc.reason == "no such file":
            raise ScenarioError(f"cannot read scenario {printable(path)}: no such file") from None
        raise ScenarioError(str(exc)) from None
    return from_dict(
        raw, where=path.name, quick=quick, reps=reps, path=path, paper=paper, scale=scale
    )


def from_dict(
    raw: Any,
    where: str = "scenario",
    quick: bool = False,
    reps: int | None = None,
    path: Path | None = None,
    paper: bool = False,
    scale: float = 1.0,
) -> Scenario:
    """A validated scenario and its runs: the profile's overrides (quick or paper), then
    --reps, then the rates scaled by 1/scale (experiments/run/scale.py)."""
    _check_keys(where, raw, TOP_KEYS)
    doc = {k: copy.deepcopy(v) for k, v in TOP_KEYS.items()}
    doc.update(copy.deepcopy(raw))
    if quick and paper:
        raise ScenarioError(f"{where}: choose one profile, quick or paper, not both")
    for profile in PROFILES:
        _profile_overrides(doc, where, profile)
    if quick or paper:
        doc = apply_profile(doc, where, "quick" if quick else "paper")
    if reps is not None:
        doc["repetitions"] = reps
    doc = _validate_doc(doc, where)
    try:
        doc = scale_doc(doc, scale)
    except ScaleError as exc:
        raise ScenarioError(f"{where}: {exc}") from None
    if doc.get("figure") is None:
        doc["figure"] = "fairness" if len(doc["flows"]) > 1 else "throughput"
    if path is not None:
        _resolve_traces(doc, path.parent)
    scenario = Scenario(name=doc["name"], doc=doc, path=path)
    try:
        scenario.runs = expand(doc)
    except ScenarioError as exc:
        if scale == 1:
            raise
        raise ScenarioError(f"{exc} (after --scale {scale:g})") from None
    return scenario


TRACE_DIR = Path(__file__).resolve().parents[1] / "traces"


def _resolve_traces(doc: dict, base: Path) -> None:
    """Trace paths are relative to the scenario file, else to experiments/traces/."""

    def resolve(spec: dict, where: str) -> None:
        trace = spec.get("trace")
        if trace is None:
            return
        for candidate in (Path(trace), base / trace, TRACE_DIR / trace):
            if candidate.is_file():
                spec["trace"] = str(candidate.resolve())
                return
            if candidate.exists():
                raise ScenarioError(
                    f"{where}.trace: {shown(trace)} is a directory or a special file "
                    "(expected a Mahimahi trace file)"
                )
        raise ScenarioError(
            f"{where}.trace: {trace!r} not found (looked next to the scenario "
            f"and in {TRACE_DIR})"
        )

    for leg, spec in doc["links"].items():
        resolve(spec, f"links.{leg}")
    for i, ev in enumerate(doc["events"]):  # a live change to a trace: the same search
        if "set" in ev:
            resolve(ev["set"], f"events[{i}].set")
    sweep = doc.get("sweep") or {}
    for path, values in (sweep.get("set") or {}).items():
        if path.endswith(".trace"):
            for i, v in enumerate(values):
                tmp = {"trace": v}
                resolve(tmp, f"sweep.set.{path}[{i}]")
                values[i] = tmp["trace"]
