"""The splitter's model: modes, split ratios and their maths, and the configuration records
of ports and users with their validation. No P4Runtime here: the domain API
(controlplane/splitter.py), the state file (controlplane/statefile.py) and the CLI build on it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace

from controlplane.limits import MAX_BATCH, MAX_PORT
from dccommon.cliargs import check_name, check_unicast, parse_float, parse_int

MODES = ("dc-split", "dc-credit", "dc-dup", "sc")
ADAPTIVE_MODES = ("dc-credit",)  # need the -D DC_ADAPTIVE profile
DEFAULT_PORTS = (0, 1, 2)  # DESIGN.md section 4: server, leg A, leg B


class SplitterError(ValueError):
    """Invalid input or state, with a message that names what is allowed."""


# ---------------------------------------------------------------------------
# Ratios: "a:b" (a packets on leg A per a+b), "p%" or (a, b)
# ---------------------------------------------------------------------------


def parse_ratio(value) -> tuple[int, int] | float:
    """(a, b) for 'a:b' / [a, b]; a float percentage for 'p%'."""
    if isinstance(value, int) and not isinstance(value, bool):
        raise SplitterError(
            f"ratio {value}: expected 'a:b' or 'p%'; in YAML write it quoted, e.g. "
            f'ratio: "9:1" (unquoted, YAML 1.1 reads 9:1 as the base-60 number 541)'
        )
    if isinstance(value, (tuple, list)) and len(value) == 2:
        a, b = value
    elif isinstance(value, str) and value.strip().endswith("%"):
        try:
            pct = parse_float(value.strip()[:-1])
        except ValueError:
            raise SplitterError(
                f"ratio {value!r}: a percentage must be a number from 0 to "
                f"100 followed by '%', e.g. 70%"
            ) from None
        if not 0 <= pct <= 100:
            raise SplitterError(f"ratio {value!r}: the percentage must be from 0% to 100%")
        return pct
    elif isinstance(value, str) and value.count(":") == 1:
        a, b = value.split(":")
    else:
        raise SplitterError(
            f"ratio {value!r}: expected 'a:b' (packets on leg A : leg B, "
            f"e.g. 9:1) or a percentage on leg A (e.g. 70%)"
        )
    try:
        a, b = (parse_int(v.strip()) if isinstance(v, str) else _whole(v) for v in (a, b))
    except (TypeError, ValueError):
        raise SplitterError(f"ratio {value!r}: a and b in 'a:b' must be whole numbers") from None
    if a < 0 or b < 0 or a + b == 0:
        raise SplitterError(f"ratio {value!r}: a and b must be >= 0 and not both 0")
    return a, b


def _whole(value) -> int:
    """An int from YAML or the API, as is: int() would make 1.5 a 1 and true a 1."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"not a whole number: {value!r}")
    return value


def leg_a_count(ratio, batch: int) -> int:
    """k, the packets per batch on leg A. The rule: a:b with a+b == B gives k = a; a:b with
    a+b dividing B is scaled (9:1 with B=100 gives k=90); p% must give a whole number of
    packets (70% of B=10 gives k=7). Anything else is refused."""
    parsed = parse_ratio(ratio)
    if isinstance(parsed, float):
        k = parsed * batch / 100
        if abs(k - round(k)) > 1e-9:
            raise SplitterError(
                f"ratio {ratio}: {parsed:g}% of batch {batch} is {k:g} packets;"
                f" choose a percentage that gives a whole number of packets "
                f"(multiples of {100 / math.gcd(batch, 100):g}%) or use a:b"
            )
        return round(k)
    a, b = parsed
    if batch % (a + b):
        raise SplitterError(
            f"ratio {a}:{b} does not fit batch {batch}: a+b ({a + b}) must "
            f"equal the batch size or divide it"
        )
    return a * (batch // (a + b))


def reduced_ratio(k: int, batch: int) -> tuple[int, int]:
    g = math.gcd(k, batch - k) or 1
    return k // g, (batch - k) // g


# ---------------------------------------------------------------------------
# Configuration records
# ---------------------------------------------------------------------------


@dataclass
class UserConfig:
    """One user. mode: "dc-split" (batch, ratio, leg_a, leg_b), "dc-credit" (as dc-split, the
    leg chosen by the legs' feedback credit; the batch split is the fallback; -D DC_ADAPTIVE
    profile only), "dc-dup" (leg_a, leg_b; batch and ratio are kept for when duplication is
    turned off) or "sc" (port)."""

    addr: str
    mode: str = "dc-split"
    batch: int = 100
    ratio: tuple[int, int] | str = (1, 1)
    leg_a: int = 1
    leg_b: int = 2
    port: int | None = None
    name: str | None = None

    @property
    def k(self) -> int:
        return leg_a_count(self.ratio, self.batch)

    def key(self) -> tuple:
        """What the switch stores; two configs with equal keys need no write."""
        if self.mode == "sc":
            return (self.addr, self.mode, self.port, self.name)
        return (self.addr, self.mode, self.batch, self.k, self.leg_a, self.leg_b, self.name)


@dataclass
class PortConfig:
    server: int = DEFAULT_PORTS[0]
    leg_a: int = DEFAULT_PORTS[1]
    leg_b: int = DEFAULT_PORTS[2]
    macs: dict[int, tuple[str, str | None]] = field(default_factory=dict)
    flood_unknown: bool = False

    @property
    def roles(self) -> dict[str, int]:
        return {"server": self.server, "leg_a": self.leg_a, "leg_b": self.leg_b}


def _check_port(value, what: str) -> int:
    """A port number: an int (not a bool, not 1.5), or its decimal text from a command line
    (ASCII digits, nothing around them: ' 1' or '1\u00a0' from a quoted YAML value is refused,
    as every number of the project is)."""
    if isinstance(value, str) and re.fullmatch(r"-?[0-9]+", value):
        value = parse_int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise SplitterError(f"{what}: {value!r} is not a port number (allowed 0..{MAX_PORT})")
    if not 0 <= value <= MAX_PORT:
        raise SplitterError(f"{what}: port {value} is out of range (allowed 0..{MAX_PORT})")
    return value


def _check_mac(value, what: str, source: bool = False) -> str:
    """A MAC address written aa:bb:cc:dd:ee:ff; a source MAC must be one station's (unicast,
    not 00:00:00:00:00:00): a frame from a group address is invalid (IEEE 802.3 3.2.3)."""
    if isinstance(value, int) and not isinstance(value, bool):
        raise SplitterError(
            f"{what}: {value} is a number; in YAML write a MAC quoted, e.g. "
            f'src: "10:20:30:40:50:51" (unquoted, YAML 1.1 reads it as a base-60 number)'
        )
    if not isinstance(value, str) or not re.fullmatch(r"[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}", value):
        raise SplitterError(f"{what}: {value!r} is not a MAC address (e.g. 02:00:00:00:00:01)")
    mac = value.lower()
    if source and (int(mac[:2], 16) & 1 or mac == "00:00:00:00:00:00"):
        kind = "the all-zero address" if mac.startswith("00:00") else "a group (multicast) address"
        raise SplitterError(
            f"{what}: {mac} is {kind}; a source MAC must be unicast (first octet even, "
            "e.g. 02:00:00:00:00:01)"
        )
    return mac


def validate_ports(ports: PortConfig) -> PortConfig:
    """A copy of `ports` with every port an int, or SplitterError naming what is wrong."""
    roles = {role: _check_port(port, role) for role, port in ports.roles.items()}
    ports = replace(ports, **roles)  # "1" from a quoted YAML value compared with 1 later
    if len(set(ports.roles.values())) != 3:
        raise SplitterError(
            f"server, leg_a and leg_b must be three different ports, got " f"{ports.roles}"
        )
    if not isinstance(ports.flood_unknown, bool):
        raise SplitterError(f"flood_unknown: expected true or false, got {ports.flood_unknown!r}")
    if not isinstance(ports.macs, dict):
        raise SplitterError(
            f"macs: expected a mapping from port to {{src: MAC, dst: MAC}}, got {ports.macs!r}"
        )
    macs = {}
    for port, pair in ports.macs.items():
        port = _check_port(port, "macs")
        if isinstance(pair, dict):
            unknown = set(pair) - {"src", "dst"}
            if unknown or "src" not in pair:
                raise SplitterError(
                    f"macs for port {port}: expected keys src and optionally "
                    f"dst, got {sorted(pair)}"
                )
            pair = (pair["src"], pair.get("dst"))
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise SplitterError(
                f"macs for port {port}: expected {{src: MAC, dst: MAC}} (dst optional), "
                f"got {pair!r}"
            )
        src, dst = pair
        macs[port] = (
            _check_mac(src, f"port {port} src mac", source=True),
            None if dst is None else _check_mac(dst, f"port {port} dst mac"),
        )
    return replace(ports, macs=macs)


def validate_user(cfg: UserConfig, ports: PortConfig) -> UserConfig:
    """A normalised copy of cfg, or SplitterError naming what is wrong and what is allowed."""
    try:
        addr = check_unicast(cfg.addr, "user address")
        if cfg.name is not None:
            check_name(cfg.name, "user name")
    except ValueError as exc:
        raise SplitterError(str(exc)) from None
    if cfg.mode not in MODES:
        raise SplitterError(f"mode {cfg.mode!r} is not one of {', '.join(MODES)}")
    user_ports = sorted(p for p in (ports.leg_a, ports.leg_b))
    allowed = f"{ports.leg_a} (leg A) or {ports.leg_b} (leg B)"
    if cfg.mode != "sc" and cfg.port is not None:
        raise SplitterError(
            f"port applies to sc users only; a {cfg.mode} user uses leg_a and leg_b"
        )
    if (  # an sc user's batch is unused, but a bad one is still a typo to report
        isinstance(cfg.batch, bool)
        or not isinstance(cfg.batch, int)
        or not 1 <= cfg.batch <= MAX_BATCH
    ):
        raise SplitterError(f"batch {cfg.batch!r} must be a whole number from 1 to {MAX_BATCH}")
    if cfg.mode == "sc":
        if cfg.port is None:
            raise SplitterError(f"an sc user needs a port: {allowed}")
        port = _check_port(cfg.port, "port")
        if port not in user_ports:
            raise SplitterError(f"port {port} is not a leg port: allowed {allowed}")
        return replace(
            cfg,
            addr=addr,
            port=port,
            name=None if cfg.name is None else str(cfg.name),
        )
    for what in ("leg_a", "leg_b"):
        port = _check_port(getattr(cfg, what), what)
        if port not in user_ports:
            raise SplitterError(f"{what} port {port} is not a leg port: allowed {allowed}")
        cfg = replace(cfg, **{what: port})
    if cfg.leg_a == cfg.leg_b:
        raise SplitterError(f"leg_a and leg_b must differ (both are {cfg.leg_a})")
    k = leg_a_count(cfg.ratio, cfg.batch)
    return replace(
        cfg,
        addr=addr,
        ratio=reduced_ratio(k, cfg.batch),
        port=None,
        name=None if cfg.name is None else str(cfg.name),
    )
