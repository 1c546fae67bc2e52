"""The P4Info index: names to IDs, and the encoding of match fields and action parameters.

Names are accepted fully qualified (`DcIngress.ue_sessions.ue_sessions_v4`) or by their P4Info
alias (the shortest unique suffix, `ue_sessions_v4`). Values are encoded as P4Runtime
canonical bytestrings (P4Runtime spec section 8.4: the shortest big-endian string that holds
the value, one zero byte for zero), after checking that they fit the declared bitwidth.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path

from google.protobuf import text_format
from google.protobuf.message import DecodeError
from p4.config.v1 import p4info_pb2

from dccommon.cliargs import InputFileError, read_bounded


class P4InfoError(ValueError):
    """An unknown name, or a value that does not fit its field."""


# ---------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------


def parse_value(value: int | str | bytes, bitwidth: int, what: str = "value") -> int:
    """An int from an int, a decimal/hex string, an IPv4/IPv6 address or a MAC address."""
    if isinstance(value, bool):
        raise P4InfoError(f"{what}: expected a number or an address, got {value!r}")
    if isinstance(value, int):
        number = value
    elif isinstance(value, bytes):
        number = int.from_bytes(value, "big")
    elif isinstance(value, str):
        number = _parse_text(value.strip(), what)
    else:
        raise P4InfoError(f"{what}: expected a number or an address, got {value!r}")
    if number < 0 or number >= (1 << bitwidth):
        raise P4InfoError(
            f"{what}: {value!r} does not fit in {bitwidth} bits "
            f"(allowed 0..{(1 << bitwidth) - 1})"
        )
    return number


def _parse_text(text: str, what: str) -> int:
    if text.count(":") == 5 and all(len(p) in (1, 2) for p in text.split(":")):
        try:
            return int(text.replace(":", ""), 16)
        except ValueError:
            pass
    try:
        return int(ipaddress.ip_address(text))
    except ValueError:
        pass
    try:
        return int(text, 0)
    except ValueError:
        raise P4InfoError(
            f"{what}: {text!r} is neither a number, an IPv4/IPv6 address " f"nor a MAC address"
        ) from None


def encode(value: int | str | bytes, bitwidth: int, what: str = "value") -> bytes:
    """The canonical bytestring of `value` for a field of `bitwidth` bits."""
    number = parse_value(value, bitwidth, what)
    return number.to_bytes(max(1, (number.bit_length() + 7) // 8), "big")


def decode(data: bytes) -> int:
    """Canonical or padded bytestrings alike (targets may return either)."""
    return int.from_bytes(data, "big")


def format_mac(number: int) -> str:
    return ":".join(f"{b:02x}" for b in number.to_bytes(6, "big"))


# ---------------------------------------------------------------------------
# The index
# ---------------------------------------------------------------------------


MAX_P4INFO_BYTES = 64 * 2**20  # p4c's P4Info of a large program is a few MB


def load_p4info(path: str | Path) -> p4info_pb2.P4Info:
    """Text (`.txt`, `.txtpb`, `.pb.txt`) or binary P4Info, decided by content."""
    try:
        data = read_bounded(path, MAX_P4INFO_BYTES, "a P4Info")
    except InputFileError as exc:
        raise P4InfoError(str(exc)) from None
    info = p4info_pb2.P4Info()
    try:
        text_format.Parse(data.decode("utf-8"), info)
    except (UnicodeDecodeError, text_format.ParseError):
        try:
            info.ParseFromString(data)
        except DecodeError as exc:
            raise P4InfoError(f"{path}: neither a text nor a binary P4Info ({exc})") from None
    if not info.tables and not info.actions:
        raise P4InfoError(
            f"{path}: a P4Info without tables or actions (expected the P4Info of the program, "
            "as `p4c --p4runtime-files` or `p4sim compile --p4runtime-files` write it)"
        )
    return info


# Architectures whose P4Info names may start with the Pipeline instance (p4c-barefoot writes
# `pipe.DcIngress...` when a program has several pipes; with one, the v1model-like name).
PIPELINE_ARCHS = ("tna", "t2na")


class P4InfoIndex:
    """Lookups by name (fully qualified or alias) over one P4Info message. On TNA and T2NA
    a name also resolves without its pipeline prefix, so one controller drives the v1model
    and the Tofino build of a program (p4src/README.md, "Tofino")."""

    KINDS = ("tables", "actions", "counters", "direct_counters", "registers", "meters")

    def __init__(self, p4info: p4info_pb2.P4Info):
        self.p4info = p4info
        self._by_name: dict[str, dict[str, object]] = {}
        self._by_id: dict[int, object] = {}
        self.pipeline_prefix = self._pipeline_prefix()
        for kind in self.KINDS:
            names: dict[str, object] = {}
            for obj in getattr(p4info, kind):
                names[obj.preamble.name] = obj
                if obj.preamble.alias:
                    names.setdefault(obj.preamble.alias, obj)
                self._by_id[obj.preamble.id] = obj
            if self.pipeline_prefix:
                for name, obj in list(names.items()):
                    names.setdefault(name.removeprefix(self.pipeline_prefix), obj)
            self._by_name[kind] = names

    def _pipeline_prefix(self) -> str:
        """`pipe.` when every entity of a TNA/T2NA P4Info is under one Pipeline instance (a
        multi-pipe compile), else "" (v1model, or a single pipe: the names have no prefix)."""
        if self.arch not in PIPELINE_ARCHS:
            return ""
        names = [
            obj.preamble.name
            for kind in ("tables", "counters", "registers")
            for obj in getattr(self.p4info, kind)
        ]
        firsts = {name.split(".", 1)[0] for name in names}
        if len(firsts) == 1 and all(name.count(".") >= 2 for name in names):
            return firsts.pop() + "."
        return ""

    @property
    def arch(self) -> str:
        """The architecture the compiler recorded (P4Info pkg_info.arch): v1model, tna, ..."""
        return self.p4info.pkg_info.arch

    @classmethod
    def from_file(cls, path: str | Path) -> P4InfoIndex:
        return cls(load_p4info(path))

    def _get(self, kind: str, name: str):
        try:
            return self._by_name[kind][name]
        except KeyError:
            known = sorted(o.preamble.name for o in getattr(self.p4info, kind))
            raise P4InfoError(
                f"no {kind[:-1].replace('_', ' ')} named {name!r} in the P4Info "
                f"(known: {', '.join(known) or 'none'})"
            ) from None

    def table(self, name: str) -> p4info_pb2.Table:
        return self._get("tables", name)

    def action(self, name: str) -> p4info_pb2.Action:
        return self._get("actions", name)

    def counter(self, name: str) -> p4info_pb2.Counter:
        return self._get("counters", name)

    def register(self, name: str) -> p4info_pb2.Register:
        return self._get("registers", name)

    def name_of(self, obj_id: int) -> str:
        """The entity's name as the program declares it (without a TNA pipeline prefix)."""
        obj = self._by_id.get(obj_id)
        if obj is None:
            return f"<id {obj_id}>"
        return obj.preamble.name.removeprefix(self.pipeline_prefix)

    def by_id(self, obj_id: int):
        return self._by_id[obj_id]

    @staticmethod
    def match_field(table: p4info_pb2.Table, name: str) -> p4info_pb2.MatchField:
        for field in table.match_fields:
            if field.name == name:
                return field
        known = ", ".join(f.name for f in table.match_fields)
        raise P4InfoError(
            f"table {table.preamble.name} has no match field {name!r} " f"(fields: {known})"
        )

    @staticmethod
    def param(action: p4info_pb2.Action, name: str) -> p4info_pb2.Action.Param:
        for param in action.params:
            if param.name == name:
                return param
        known = ", ".join(p.name for p in action.params) or "none"
        raise P4InfoError(
            f"action {action.preamble.name} has no parameter {name!r} " f"(parameters: {known})"
        )
