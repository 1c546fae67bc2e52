"""The Tofino Native Architecture (TNA, Tofino 1) as p4sim runs it: one Pipeline of six blocks.

    ingress parser -> ingress -> ingress deparser -> traffic manager
                   -> egress parser -> egress -> egress deparser -> port

- The ingress parser reads ig_intr_md (the port and a MAC timestamp), then the port metadata
  prefix (PORT_METADATA_SIZE bits, zeros: p4sim has no port-metadata table), then the frame.
- A parser error does not drop: the block stops, ig_prsr_md.parser_err (eg_prsr_md in egress)
  gets the PARSER_ERROR_* bit and the packet goes on; the rest of the frame is payload.
- Traffic manager: drop_ctl bit 0 drops. Otherwise one copy to ucast_egress_port when ingress
  wrote it, and one copy per replica of mcast_grp_a and of mcast_grp_b (egress_rid = the
  replica's instance); a packet with neither is dropped (no egress_spec default as v1model).
  bypass_egress sends the ingress deparser's output straight to the port.
- The egress parser reads eg_intr_md (egress_port, egress_rid, pkt_length), then the frame
  the ingress deparser wrote. drop_ctl bit 0 of eg_dprsr_md drops at the egress deparser.
- A frame sent to a recirculation port (68 + 128 * pipe) comes back to ingress on that port.

Blocks take the intrinsic metadata by type, whatever their parameters are named, and may
leave out the optional ones (tna.p4 marks them @optional).
"""

from __future__ import annotations

import logging
import random
import time

from p4sim.engine.control import ExitSignal
from p4sim.engine.deparser import PacketOut
from p4sim.engine.expressions import RuntimeAbort
from p4sim.engine.layout import layout_of
from p4sim.engine.parser import PacketIn
from p4sim.engine.runtime import Runtime
from p4sim.engine.values import factory
from p4sim.frontend import ir
from p4sim.tna.externs import TnaExterns

log = logging.getLogger("p4sim")
trace = logging.getLogger("p4sim.trace")

RECIRCULATION_PORTS = (68, 196, 324, 452)  # Tofino 1: port 68 of each of the four pipes
MAX_RECIRCULATIONS = 16
GRESS = {"ig": "ingress", "eg": "egress"}

# ig_prsr_md.parser_err bits (tofino1_base.p4 PARSER_ERROR_*) for the engine's parser errors.
PARSER_ERROR_BITS = {
    "NoMatch": 0x0001,
    "PacketTooShort": 0x0002,
    "HeaderTooShort": 0x0002,
    "StackOutOfBounds": 0x0002,
    "CounterRange": 0x0004,
    "ParserTimeout": 0x0010,
}
PARSER_ERROR_OTHER = 0x0001  # a verify() failure: the parser found no way on (NO_MATCH)

INGRESS_TYPES = {
    "ingress_intrinsic_metadata_t": "ig_intr_md",
    "ingress_intrinsic_metadata_from_parser_t": "ig_prsr_md",
    "ingress_intrinsic_metadata_for_deparser_t": "ig_dprsr_md",
    "ingress_intrinsic_metadata_for_tm_t": "ig_tm_md",
}
EGRESS_TYPES = {
    "egress_intrinsic_metadata_t": "eg_intr_md",
    "egress_intrinsic_metadata_from_parser_t": "eg_prsr_md",
    "egress_intrinsic_metadata_for_deparser_t": "eg_dprsr_md",
    "egress_intrinsic_metadata_for_output_port_t": "eg_oport_md",
}


class Unset(int):
    """The value of ig_tm_md.ucast_egress_port before ingress writes it: reads as 0, but the
    traffic manager tells it from a written 0 (on Tofino the field's container is invalid)."""


UNSET = Unset(0)


class PacketState:
    """One packet in one half of the pipeline: its length, the bytes behind the parsed
    headers, the blocks' objects by role, and the externs' per-packet state."""

    __slots__ = ("checksums", "direct_colors", "length", "objs", "payload")

    def __init__(self, objs: dict, length: int):
        self.objs = objs
        self.length = length
        self.payload = b""
        self.checksums: dict = {}
        self.direct_colors: dict = {}


class Block:
    """One of the six blocks: its runner and, per parameter, the role of the object it gets
    (`pkt`, `hdr`, `meta` or an intrinsic metadata name)."""

    def __init__(self, device, node, intrinsic: dict[str, str]):
        self.run = device.compile_block(node)
        self.size = node.decl.frame_size
        self.roles = []
        plain = iter(("hdr", "meta"))
        for p in node.decl.params:
            tname = p.type.name()
            if tname in ("packet_in", "packet_out"):
                self.roles.append("pkt")
            elif tname in intrinsic:
                self.roles.append(intrinsic[tname])
            else:
                self.roles.append(next(plain, "meta"))

    def frame(self, objs: dict) -> list:
        f = [None] * self.size
        for i, role in enumerate(self.roles):
            f[i] = objs[role]
        return f


class TnaDevice(Runtime):
    """A TNA program instance; implements `p4sim.model.Device`."""

    def __init__(self, program, cpu_port: int | None = None, seed: int | None = None):
        super().__init__(program, None, cpu_port)
        self.arch = TnaExterns(self)
        self.rng = random.Random(seed)
        self.digests: list = []  # TNA digests are not supported: always empty
        self.start = time.monotonic()
        self.cur: PacketState | None = None
        roots = program.roots
        if len(roots) != 6 or not isinstance(roots[0].decl, ir.ParserDecl):
            raise ValueError("a TNA Pipeline has six blocks, the first a parser")
        ig_parser, eg_parser = roots[0], roots[3]
        self.ingress_blocks = [Block(self, n, INGRESS_TYPES) for n in roots[:3]]
        self.egress_blocks = [Block(self, n, EGRESS_TYPES) for n in roots[3:]]
        params = ig_parser.decl.params
        self.new_ig_hdr = factory(params[1].type)
        self.new_ig_meta = factory(params[2].type)
        params = eg_parser.decl.params
        self.new_eg_hdr = factory(params[1].type)
        self.new_eg_meta = factory(params[2].type)
        self.new = {}
        for role, tname in [(v, k) for k, v in (INGRESS_TYPES | EGRESS_TYPES).items()]:
            self.new[role] = factory(self._type(tname))
        self.ig_intr_layout = layout_of(self._type("ingress_intrinsic_metadata_t"))
        self.eg_intr_layout = layout_of(self._type("egress_intrinsic_metadata_t"))
        # the include file's PORT_METADATA_SIZE: 64 bits on Tofino 1, 192 on Tofino 2
        self.port_metadata = bytes(program.checker.scope.lookup("PORT_METADATA_SIZE").const // 8)
        self.parser_bits = {
            code: PARSER_ERROR_BITS.get(name, PARSER_ERROR_OTHER)
            for name, code in self.error_codes.items()
        }

    def _type(self, name: str):
        return self.program.checker.scope.lookup(name).type

    # -- Device -----------------------------------------------------------------------
    def packet_length(self) -> int:
        return self.cur.length if self.cur is not None else 0

    def direct_meter_color(self, meter: str, color: int) -> None:
        self.cur.direct_colors[meter] = color

    def now_ns(self) -> int:
        return int((time.monotonic() - self.start) * 1e9) & ((1 << 48) - 1)

    def process(self, ingress_port: int, frame: bytes) -> list[tuple[int, bytes]]:
        """Run one frame through the pipeline; every frame that leaves, in order."""
        with self.lock:
            self.tracing = trace.isEnabledFor(logging.DEBUG)
            out: list[tuple[int, bytes]] = []
            try:
                self._ingress(ingress_port & 0x1FF, bytes(frame), out, 0)
            except Exception:  # a bug in p4sim must not take the switch down
                log.exception("internal error while processing a frame on port %d", ingress_port)
            finally:
                self.cur = None
            return out

    # -- pipeline ---------------------------------------------------------------------
    def _ingress(self, port: int, frame: bytes, out: list, depth: int) -> None:
        if depth > MAX_RECIRCULATIONS:
            log.warning("dropping a frame recirculated more than %d times", MAX_RECIRCULATIONS)
            return
        new = self.new
        ig_intr_md = new["ig_intr_md"]()
        lay = self.ig_intr_layout
        ig_intr_md.v[lay.t.index["ingress_port"]] = port
        ig_intr_md.v[lay.t.index["ingress_mac_tstamp"]] = self.now_ns()
        ig_intr_md.valid = True
        prefix = lay.pack(ig_intr_md.v).to_bytes(lay.nbytes, "big") + self.port_metadata
        ig_tm_md = new["ig_tm_md"]()
        ig_tm_md.v[ig_tm_md.t.index["ucast_egress_port"]] = UNSET
        objs = {
            "hdr": self.new_ig_hdr(),
            "meta": self.new_ig_meta(),
            "ig_intr_md": ig_intr_md,
            "ig_prsr_md": new["ig_prsr_md"](),
            "ig_dprsr_md": new["ig_dprsr_md"](),
            "ig_tm_md": ig_tm_md,
        }
        if self.tracing:
            trace.debug("Ingress port %d: %d bytes", port, len(frame))
        packet = self._gress("ig", self.ingress_blocks, prefix, frame, objs)
        if packet is None:
            return
        tm = ig_tm_md.v
        idx = ig_tm_md.t.index
        copies = []  # (egress port, replication id)
        ucast = tm[idx["ucast_egress_port"]]
        if ucast is not UNSET:
            copies.append((ucast, 0))
        for grp in (tm[idx["mcast_grp_a"]], tm[idx["mcast_grp_b"]]):
            if grp:
                replicas = self.pre.multicast_groups.get(grp) or ()
                if self.tracing:
                    trace.debug("Multicast group %d: %d replica(s)", grp, len(replicas))
                copies += [(r.egress_port, r.instance) for r in replicas]
        if not copies and self.tracing:
            trace.debug("Dropped: ingress set no egress port and no multicast group")
        for eport, rid in copies:
            if tm[idx["bypass_egress"]]:
                self._transmit(eport, packet, out, depth)
            else:
                self._egress(eport, rid, packet, out, depth)

    def _egress(self, port: int, rid: int, packet: bytes, out: list, depth: int) -> None:
        new = self.new
        eg_intr_md = new["eg_intr_md"]()
        lay = self.eg_intr_layout
        index = lay.t.index
        eg_intr_md.v[index["egress_port"]] = port
        eg_intr_md.v[index["egress_rid"]] = rid
        eg_intr_md.v[index["pkt_length"]] = len(packet)
        eg_intr_md.valid = True
        objs = {
            "hdr": self.new_eg_hdr(),
            "meta": self.new_eg_meta(),
            "eg_intr_md": eg_intr_md,
            "eg_prsr_md": new["eg_prsr_md"](),
            "eg_dprsr_md": new["eg_dprsr_md"](),
            "eg_oport_md": new["eg_oport_md"](),
        }
        if self.tracing:
            trace.debug("Egress port %d (rid %d)", port, rid)
        prefix = lay.pack(eg_intr_md.v).to_bytes(lay.nbytes, "big")
        frame = self._gress("eg", self.egress_blocks, prefix, packet, objs)
        if frame is not None:
            self._transmit(port, frame, out, depth)

    def _gress(self, g: str, blocks, prefix: bytes, frame: bytes, objs: dict) -> bytes | None:
        """One half of the pipeline ("ig" or "eg"): the parser on prefix + frame, the
        control, drop_ctl, the deparser. What the deparser wrote and the payload behind the
        parsed headers, or None when the packet is dropped."""
        parser, control, deparser = blocks
        cur = self.cur = PacketState(objs, len(frame))
        prsr = objs[f"{g}_prsr_md"]
        prsr.v[prsr.t.index["global_tstamp"]] = self.now_ns()
        pk = PacketIn(prefix + frame)
        prsr.v[prsr.t.index["parser_err"]] = self._parse(parser, pk, objs)
        cur.payload = pk.data[max(pk.pos, len(prefix)) :]
        try:
            self._control(control, objs)
        except RuntimeAbort as e:
            log.error("dropping packet: %s in %s", type(e).__name__, GRESS[g])
            return None
        dprsr = objs[f"{g}_dprsr_md"]
        if dprsr.v[dprsr.t.index["drop_ctl"]] & 1:
            if self.tracing:
                trace.debug("Dropped by %s_dprsr_md.drop_ctl", g)
            return None
        po = PacketOut()
        objs["pkt"] = po
        self._control(deparser, objs)
        return b"".join(po.parts) + cur.payload

    def _parse(self, block: Block, pk: PacketIn, objs: dict) -> int:
        """Run a parser; the PARSER_ERROR_* bit of its error (0 when it accepted)."""
        objs["pkt"] = pk
        code = block.run(block.frame(objs))
        if code <= 0:
            return 0  # accepted, or an explicit `transition reject` without an error
        if self.tracing:
            trace.debug("Parser error %s", code)
        return self.parser_bits.get(code, PARSER_ERROR_OTHER)

    def _control(self, block: Block, objs: dict) -> None:
        try:
            block.run(block.frame(objs))
        except ExitSignal:
            pass

    def _transmit(self, port: int, frame: bytes, out: list, depth: int) -> None:
        if port in RECIRCULATION_PORTS:
            if self.tracing:
                trace.debug("Recirculating %d bytes on port %d", len(frame), port)
            self._ingress(port, frame, out, depth + 1)
            return
        if self.tracing:
            trace.debug("Transmit on port %d: %d bytes", port, len(frame))
        out.append((port, frame))
