"""The declarative state file (`dcctl apply config.yaml`, `Splitter.apply(dict)`): a YAML
document of ports and users, parsed and checked into the model's records."""

from __future__ import annotations

from controlplane.model import PortConfig, SplitterError, UserConfig, validate_ports, validate_user
from dccommon.cliargs import did_you_mean, type_in_words

# ---------------------------------------------------------------------------
# Declarative state (`dcctl apply config.yaml`, `Splitter.apply(dict)`)
# ---------------------------------------------------------------------------

USER_KEYS = {"addr", "mode", "batch", "ratio", "leg_a", "leg_b", "port"}
PORT_KEYS = {"server", "leg_a", "leg_b", "macs", "flood_unknown"}


def parse_state(state: dict) -> tuple[PortConfig, list[UserConfig]]:
    """The desired state (schema in controlplane/docs/reference.md) as validated records."""
    if not isinstance(state, dict) or not state:
        got = "an empty mapping" if isinstance(state, dict) else type_in_words(state)
        raise SplitterError(
            f"the desired state must be a mapping with keys ports and/or users, not {got}"
        )
    unknown = set(state) - {"ports", "users"}
    if unknown:
        unknown = sorted(unknown, key=str)
        raise SplitterError(
            f"unknown top-level key(s) {unknown}"
            f"{did_you_mean(unknown[0], ('ports', 'users'))}: allowed ports, users"
        )
    pdict = state.get("ports") or {}
    if not isinstance(pdict, dict):
        raise SplitterError(
            f"ports: expected a mapping with keys {', '.join(sorted(PORT_KEYS))}, got {pdict!r}"
        )
    if set(pdict) - PORT_KEYS:
        unknown = sorted(set(pdict) - PORT_KEYS, key=str)
        raise SplitterError(
            f"ports: unknown key(s) {unknown}{did_you_mean(unknown[0], PORT_KEYS)}: allowed "
            f"{', '.join(sorted(PORT_KEYS))}"
        )
    ports = validate_ports(PortConfig(**pdict))
    udict = state.get("users") or {}
    if not isinstance(udict, dict):
        raise SplitterError("users must be a mapping from user name to its settings")
    users, seen = [], {}
    for name, settings in udict.items():
        if not isinstance(settings, dict) or "addr" not in settings:
            raise SplitterError(f"user {name!r}: expected a mapping with at least addr")
        bad = set(settings) - USER_KEYS
        if bad:
            bad = sorted(bad, key=str)
            raise SplitterError(
                f"user {name!r}: unknown key(s) {bad}{did_you_mean(bad[0], USER_KEYS)}: allowed "
                f"{', '.join(sorted(USER_KEYS))}"
            )
        try:
            cfg = validate_user(UserConfig(name=str(name), **settings), ports)
        except SplitterError as exc:
            raise SplitterError(f"user {name!r}: {exc}") from None
        if cfg.addr in seen:
            raise SplitterError(
                f"users {seen[cfg.addr]!r} and {name!r} have the same address " f"{cfg.addr}"
            )
        seen[cfg.addr] = name
        users.append(cfg)
    return ports, users
