"""Packets for a program nobody wrote a packet test for (`p4sim.conformance.pktdiff`).

Four kinds, all from one seeded `random.Random`:
- protocol stacks: Ethernet, VLAN, MPLS, IPv4 (with options), IPv6, TCP, UDP, ICMP, with
  random fields and payload;
- truncated frames (a stack cut short) and random bytes;
- packets crafted from the program's own parser: each `select` case's constant is written
  where the state's key was read, so that each branch is taken (`ParserExplorer`).

The parser-guided search runs the packets on p4sim's interpreter with its trace on: the
trace names the parser states a packet went through and the bytes each `extract` took,
which says where the key of a state's `select` lies without analysing the key expression.
"""

from __future__ import annotations

import logging
import random
import struct
import time
from dataclasses import dataclass

from p4sim.frontend import ir
from p4sim.frontend.types import Bits, BoolT

ETH_VLAN, ETH_IPV4, ETH_IPV6, ETH_MPLS, ETH_ARP = 0x8100, 0x0800, 0x86DD, 0x8847, 0x0806
PROTO_ICMP, PROTO_TCP, PROTO_UDP = 1, 6, 17
MAX_FRAME = 600  # bytes: frames stay small so that a FIFO to BMv2 never fills (pktdiff)


# -- protocol stacks ---------------------------------------------------------------------


def _csum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def _ipv4(rng: random.Random, proto: int, payload: bytes) -> bytes:
    options = rng.randbytes(4 * rng.choice((0, 0, 0, 1, 2)))
    ihl = 5 + len(options) // 4
    flags_frag = rng.choice((0, 0x4000, rng.getrandbits(16)))
    header = (
        struct.pack(
            "!BBHHHBBH4s4s",
            0x40 | ihl,
            rng.getrandbits(8),
            20 + len(options) + len(payload),
            rng.getrandbits(16),
            flags_frag,
            rng.choice((0, 1, 64, 255)),
            proto,
            0,
            rng.randbytes(4),
            rng.randbytes(4),
        )
        + options
    )
    checksum = _csum(header) if rng.random() < 0.8 else rng.getrandbits(16)
    return header[:10] + struct.pack("!H", checksum) + header[12:] + payload


def _ipv6(rng: random.Random, next_header: int, payload: bytes) -> bytes:
    first = (6 << 28) | rng.getrandbits(28)
    head = struct.pack("!IHBB", first, len(payload), next_header, rng.choice((0, 1, 64, 255)))
    return head + rng.randbytes(32) + payload


def _l4(rng: random.Random) -> tuple[int, bytes]:
    payload = rng.randbytes(rng.choice((0, 4, 16, 46)))
    proto = rng.choice((PROTO_TCP, PROTO_UDP, PROTO_ICMP, rng.getrandbits(8)))
    ports = struct.pack(
        "!HH", rng.choice((53, 80, 443, 4789, rng.getrandbits(16))), rng.getrandbits(16)
    )
    if proto == PROTO_TCP:
        offset_flags = (5 << 12) | rng.getrandbits(9)
        rest = struct.pack(
            "!IIHHHH",
            rng.getrandbits(32),
            rng.getrandbits(32),
            offset_flags,
            rng.getrandbits(16),
            rng.getrandbits(16),
            0,
        )
        return proto, ports + rest + payload
    if proto == PROTO_UDP:
        return proto, ports + struct.pack("!HH", 8 + len(payload), rng.getrandbits(16)) + payload
    if proto == PROTO_ICMP:
        return (
            proto,
            struct.pack("!BBHI", rng.choice((0, 8, 3)), 0, rng.getrandbits(16), rng.getrandbits(32))
            + payload,
        )
    return proto, payload


def _network(rng: random.Random) -> tuple[int, bytes]:
    """(EtherType, bytes) of what follows the Ethernet and VLAN headers."""
    kind = rng.choice(("ipv4", "ipv4", "ipv6", "mpls", "arp", "other"))
    if kind == "ipv4":
        proto, l4 = _l4(rng)
        return ETH_IPV4, _ipv4(rng, proto, l4)
    if kind == "ipv6":
        proto, l4 = _l4(rng)
        return ETH_IPV6, _ipv6(rng, proto, l4)
    if kind == "mpls":
        labels = rng.randint(1, 3)
        body = b"".join(
            struct.pack(
                "!I",
                (rng.getrandbits(20) << 12)
                | (rng.getrandbits(3) << 9)
                | ((i == labels - 1) << 8)
                | rng.getrandbits(8),
            )
            for i in range(labels)
        )
        proto, l4 = _l4(rng)
        return ETH_MPLS, body + _ipv4(rng, proto, l4)
    if kind == "arp":
        return ETH_ARP, struct.pack(
            "!HHBBH", 1, ETH_IPV4, 6, 4, rng.choice((1, 2))
        ) + rng.randbytes(20)
    return rng.getrandbits(16), rng.randbytes(rng.randint(0, 40))


def protocol_stack(rng: random.Random) -> bytes:
    ethertype, body = _network(rng)
    tags = b""
    for _ in range(rng.choice((0, 0, 0, 1, 2))):
        tags += struct.pack("!H", ETH_VLAN) + struct.pack("!H", rng.getrandbits(16))
    dst = rng.choice((b"\xff" * 6, rng.randbytes(6)))
    return (dst + rng.randbytes(6) + tags + struct.pack("!H", ethertype) + body)[:MAX_FRAME]


def truncated(rng: random.Random) -> bytes:
    frame = protocol_stack(rng)
    return frame[: rng.randint(0, len(frame))]


def random_bytes(rng: random.Random) -> bytes:
    return rng.randbytes(rng.choice((0, 1, rng.randint(2, 80))))


# -- the parser's own branches -----------------------------------------------------------


@dataclass
class Case:
    """One label of a `select`: the constants (value, mask) of its key, in key order."""

    state: str
    target: str
    keys: list[tuple[int, int, int]]  # (value, mask, width); mask 0 for a `_`/default key


def select_cases(program) -> list[Case]:
    """Every non-default label of every `select` of the program's parsers."""
    cases = []
    for decl in program.ir.decls:
        if not isinstance(decl, ir.ParserDecl) or not decl.states:
            continue
        for state in decl.states:
            tr = state.transition
            if tr is None or tr.select is None:
                continue
            widths = [_width(e.type) for e in tr.select]
            if None in widths:
                continue
            for c in tr.cases:
                keys = _case_keys(c, widths)
                if keys is not None:
                    cases.append(Case(state.name, c.state, keys))
    return cases


def _width(t) -> int | None:
    if isinstance(t, BoolT):
        return 1
    return t.width if isinstance(t, Bits) else None


def _case_keys(case: ir.SelectCase, widths: list[int]):
    if getattr(case, "value_set", None) is not None or len(case.keyset) != len(widths):
        return None  # a value set, or one `default` for a tuple key
    keys = []
    for k, w in zip(case.keyset, widths):
        full = (1 << w) - 1
        if isinstance(k, ir.Default):
            keys.append((0, 0, w))
        elif isinstance(k, ir.Mask):
            keys.append((int(k.value.const) & full, int(k.mask.const) & full, w))
        elif isinstance(k, ir.Range):
            keys.append((int(k.low.const) & full, full, w))
        else:
            const = getattr(k, "const", None)
            if const is None:
                return None
            keys.append((int(const) & full, full, w))
    if all(mask == 0 for _, mask, _ in keys):
        return None
    return keys


class _TraceLog(logging.Handler):
    """p4sim's trace records of the packet being run."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records: list[tuple[str, tuple]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append((record.msg, record.args))


@dataclass
class Walk:
    """What p4sim's parser did with a packet: the states in order, and for each the byte
    range its extracts took; the table keys the pipeline looked up."""

    states: list[str]
    spans: list[tuple[int, int]]  # per state: (first byte, end) extracted in it
    keys: dict[str, list[list[int]]]
    error: str = ""  # the parser error's name, "" without one

    def edges(self) -> set[tuple[str, str]]:
        end = "reject" if self.error else "accept"
        return set(zip(self.states, self.states[1:] + [end]))


class Tracer:
    """Runs packets through a p4sim device with the trace on and reads what it did."""

    def __init__(self, program):
        self.device = program.new_device(seed=1)
        self.logger = logging.getLogger("p4sim.trace")

    def walk(self, port: int, frame: bytes) -> Walk:
        handler = _TraceLog()
        level, propagate = self.logger.level, self.logger.propagate
        self.logger.addHandler(handler)
        self.logger.setLevel(logging.DEBUG)
        self.logger.propagate = False
        try:
            self.device.process(port, frame)
        finally:
            self.logger.removeHandler(handler)
            self.logger.setLevel(level)
            self.logger.propagate = propagate
        return _read_walk(handler.records)


def _read_walk(records) -> Walk:
    states, spans, keys = [], [], {}
    cursor, error = 0, ""
    for msg, args in records:
        if msg.startswith("Parser state"):
            states.append(args[0])
            spans.append((cursor, cursor))
        elif msg.startswith("Extracted") and spans:
            cursor += args[1]
            spans[-1] = (spans[-1][0], cursor)
        elif msg.startswith("Skipped") and spans:  # advance(), extract<H>(_)
            cursor += args[0]
            start, end = spans[-1]
            spans[-1] = (cursor, cursor) if start == end else (start, end)
        elif msg.startswith("Parser error"):
            error = error or str(args[0])
        elif msg.startswith("Table") and msg.endswith("key %s"):
            keys.setdefault(args[0], []).append(list(args[1]))
        elif msg.startswith(("Resubmitting", "Recirculating")):
            break  # the first pass is the one the frame's bytes describe
    return Walk(states, spans, keys, error)


def _plant(frame: bytes, bit: int, value: int, width: int, mask: int, rng) -> bytes:
    """The frame with `width` bits at bit offset `bit` set to `value` where `mask` is 1."""
    need = (bit + width + 7) // 8
    if len(frame) < need:
        frame += rng.randbytes(need - len(frame))
    n = int.from_bytes(frame, "big")
    total = len(frame) * 8
    shift = total - bit - width
    old = (n >> shift) & ((1 << width) - 1)
    new = (old & ~mask) | (value & mask)
    n = (n & ~(((1 << width) - 1) << shift)) | (new << shift)
    return n.to_bytes(len(frame), "big")


class ParserExplorer:
    """Packets that take each branch of the program's parser that a packet can take.

    For a label not yet taken (state S, case to T), a packet that reaches S is copied with
    the label's key written at every bit offset (every byte offset for whole-byte keys) of
    the bytes S extracted (or, when S extracts nothing, of the last state's extract before
    it); the first copy that goes from S to T joins the pool. Bounded by `budget_s`."""

    MAX_TRIES_PER_CASE = 600

    def __init__(self, program, rng: random.Random, port: int = 0):
        self.tracer = Tracer(program)
        self.cases = select_cases(program)
        self.rng = rng
        self.port = port
        self.covered: set[tuple[str, str]] = set()
        self.pool: list[tuple[bytes, Walk]] = []
        self.keys: dict[str, list[list[int]]] = {}

    def add(self, frame: bytes) -> bool:
        """Run a frame; keep it when it takes a branch no kept frame took."""
        walk = self.tracer.walk(self.port, frame)
        for table, values in walk.keys.items():
            seen = self.keys.setdefault(table, [])
            seen.extend(v for v in values if v not in seen and len(seen) < 8)
        new = walk.edges() - self.covered
        if not new:
            return False
        self.covered |= new
        self.pool.append((frame, walk))
        return True

    def explore(self, budget_s: float, most: int) -> list[bytes]:
        """New frames, each taking a branch no frame before it took (at most `most`)."""
        first = len(self.pool)
        deadline = time.monotonic() + budget_s
        progress = True
        while progress and len(self.pool) - first < most and time.monotonic() < deadline:
            progress = False
            for case in self.cases:
                if (case.state, case.target) not in self.covered:
                    progress |= self._take(case, deadline)
                if len(self.pool) - first >= most or time.monotonic() > deadline:
                    break
        return [frame for frame, _ in self.pool[first : first + most]]

    def _take(self, case: Case, deadline: float) -> bool:
        """Whether a copy of a pool frame with the case's key planted took the branch."""
        width = sum(w for _, _, w in case.keys)
        value = mask = 0
        for v, m, w in case.keys:
            value, mask = (value << w) | v, (mask << w) | m
        tries = 0
        for frame, walk in list(self.pool):
            if case.state not in walk.states:
                continue
            for start, end in self._regions(walk, case.state):
                step = 8 if width % 8 == 0 else 1
                for bit in range(start * 8, max(start * 8, end * 8 - width) + 1, step):
                    tries += 1
                    if tries > self.MAX_TRIES_PER_CASE or time.monotonic() > deadline:
                        return False
                    tail = self.rng.randbytes(self.rng.choice((0, 20, 60)))
                    candidate = _plant(frame + tail, bit, value, width, mask, self.rng)
                    if (
                        self.add(candidate[:MAX_FRAME])
                        and (case.state, case.target) in self.covered
                    ):
                        return True
        return False

    @staticmethod
    def _regions(walk: Walk, state: str) -> list[tuple[int, int]]:
        """Where the key of `state`'s select may lie: what it extracted, else what the
        nearest state before it extracted, else everything extracted before it."""
        i = walk.states.index(state)
        start, end = walk.spans[i]
        if end > start:
            return [(start, end)]
        for j in range(i - 1, -1, -1):
            if walk.spans[j][1] > walk.spans[j][0]:
                return [walk.spans[j], (0, walk.spans[j][1])]
        return [(0, max(end, 8))]
