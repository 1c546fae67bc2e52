"""The v1model architecture as BMv2's simple_switch runs it.

    parser -> VerifyChecksum -> Ingress -> traffic manager -> Egress -> ComputeChecksum -> Deparser

Traffic manager, in BMv2's order at the end of ingress: I2E clone (to every replica of the
clone session), then resubmit (the original frame goes back to ingress; nothing else happens),
then multicast (mcast_grp != 0: one copy per replica of the group, egress_rid = instance),
else egress_spec 511 drops, else unicast to egress_spec. At the end of egress: E2E clone, then
egress_spec 511 drops (mark_to_drop in egress), then deparse, then recirculate (the deparsed
frame goes back to ingress) or transmit. instance_type values are BMv2's (0 normal, 1 ingress
clone, 2 egress clone, 4 recirculated, 5 replicated, 6 resubmitted); 4 and 6 are seen in
ingress only: a unicast packet enters egress as 0 (normal), so egress cannot tell a
recirculated packet by its instance_type.
"""

from __future__ import annotations

import logging
import random
import time
from collections import deque

from p4sim.engine.control import ExitSignal
from p4sim.engine.deparser import PacketOut
from p4sim.engine.expressions import RuntimeAbort
from p4sim.engine.parser import PacketIn
from p4sim.engine.runtime import Runtime
from p4sim.engine.values import Struct, copy_value, factory
from p4sim.frontend import ir
from p4sim.v1model.externs import DROP_PORT, AssertionFailed, V1ModelExterns

log = logging.getLogger("p4sim")
trace = logging.getLogger("p4sim.trace")

NORMAL, INGRESS_CLONE, EGRESS_CLONE, RECIRC, REPLICATION, RESUBMIT = 0, 1, 2, 4, 5, 6
MAX_DIGESTS = 4096
MAX_RECIRCULATIONS = 16  # resubmit/recirculate loops end here (BMv2 has no limit)


class PacketState:
    """One packet in flight, with the traffic-manager requests made by externs."""

    __slots__ = (
        "clone_fields",
        "clone_session",
        "clone_type",
        "depth",
        "direct_colors",
        "egress_length",
        "frame",
        "hdr",
        "length",
        "meta",
        "payload",
        "recirculate_fields",
        "resubmit_fields",
        "sm",
        "truncate",
    )  # fmt: skip

    def __init__(self, hdr, meta, sm, payload: bytes, length: int, frame: bytes, depth: int):
        self.hdr, self.meta, self.sm = hdr, meta, sm
        self.payload = payload
        self.length = length  # as received: what counters and meters count
        # BMv2's packet-length register, the packet_length egress reads: the received length
        # plus or minus the bytes of headers setValid()/setInvalid() (add_header and
        # remove_header) turned valid or invalid since; not header assignments, stack shifts
        # or the members a union's setValid() invalidates.
        self.egress_length = length
        self.frame = frame
        self.depth = depth
        self.clear_requests()

    def clear_requests(self) -> None:
        self.clone_session = None
        self.clone_type = None
        self.clone_fields = None
        self.resubmit_fields = None
        self.recirculate_fields = None
        self.truncate = 0
        self.direct_colors = {}


class V1ModelDevice(Runtime):
    """A v1model program instance; implements `p4sim.model.Device`."""

    def __init__(self, program, cpu_port: int | None = None, seed: int | None = None):
        super().__init__(program, None, cpu_port)
        self.arch = V1ModelExterns(self)
        self.rng = random.Random(seed)
        # The most recent digest() messages (not sent over P4Runtime): bounded so that a
        # long-running switch does not grow without limit.
        self.digests: deque = deque(maxlen=MAX_DIGESTS)
        roots = program.roots
        parser, verify, ingress, egress, compute, deparser = roots
        pdecl = parser.decl
        if not isinstance(pdecl, ir.ParserDecl) or len(pdecl.params) != 4:
            raise ValueError("the first V1Switch argument must be a parser with 4 parameters")
        self.hdr_type = pdecl.params[1].type
        self.meta_type = pdecl.params[2].type
        self.sm_type = pdecl.params[3].type
        self.sm_index = self.sm_type.index
        self.new_hdr = factory(self.hdr_type)
        self.new_meta = factory(self.meta_type)
        self.new_sm_struct = factory(self.sm_type)
        self.cur: PacketState | None = None
        self.start = time.monotonic()
        self._field_lists = self._collect_field_lists()
        self.run_parser = self.compile_block(parser)
        self.run_verify = self.compile_block(verify)
        self.run_ingress = self.compile_block(ingress)
        self.run_egress = self.compile_block(egress)
        self.run_compute = self.compile_block(compute)
        self.run_deparser = self.compile_block(deparser)
        self.frame_sizes = [n.decl.frame_size for n in roots]

    # -- field lists (clone/resubmit/recirculate preserving_field_list) ----------------
    def _collect_field_lists(self) -> dict[int, list[int]]:
        lists: dict[int, list[int]] = {}
        annots = getattr(self.meta_type, "field_annotations", [])
        for i, fa in enumerate(annots):
            for a in fa:
                if a.name == "field_list":
                    for idx in a.args:
                        if isinstance(idx, int):
                            lists.setdefault(idx, []).append(i)
        return lists

    def field_list(self, index: int | None) -> list[int]:
        if index is None:
            return []
        return self._field_lists.get(index, [])

    # -- Device -----------------------------------------------------------------------
    def packet_length(self) -> int:
        return self.cur.length if self.cur is not None else 0

    def direct_meter_color(self, meter: str, color: int) -> None:
        self.cur.direct_colors[meter] = color

    def adjust_packet_length(self, delta: int) -> None:
        self.cur.egress_length += delta

    def now_us(self) -> int:
        return int((time.monotonic() - self.start) * 1e6) & ((1 << 48) - 1)

    def process(self, ingress_port: int, frame: bytes) -> list[tuple[int, bytes]]:
        """Run one frame through the pipeline; every frame that leaves, in order."""
        with self.lock:
            self.tracing = trace.isEnabledFor(logging.DEBUG)
            out: list[tuple[int, bytes]] = []
            try:
                self._ingress(ingress_port & 0x1FF, bytes(frame), NORMAL, None, None, out, 0)
            except Exception:  # a bug in p4sim must not take the switch down
                log.exception("internal error while processing a frame on port %d", ingress_port)
            finally:
                self.cur = None
            return out

    # -- pipeline ---------------------------------------------------------------------
    def _new_sm(self, port: int, length: int, instance_type: int) -> Struct:
        sm = self.new_sm_struct()
        idx = self.sm_index
        sm.v[idx["ingress_port"]] = port
        sm.v[idx["packet_length"]] = length
        sm.v[idx["instance_type"]] = instance_type
        sm.v[idx["ingress_global_timestamp"]] = self.now_us()
        return sm

    def _ingress(self, port, frame, instance_type, preserved_from, fields, out, depth) -> None:
        if depth > MAX_RECIRCULATIONS:
            log.warning(
                "dropping a frame resubmitted/recirculated more than %d times", MAX_RECIRCULATIONS
            )
            return
        sm = self._new_sm(port, len(frame), instance_type)
        hdr = self.new_hdr()
        meta = self.new_meta()
        if preserved_from is not None:
            for i in fields:
                meta.v[i] = copy_value(preserved_from.v[i])
        pk = PacketIn(frame)
        cur = PacketState(hdr, meta, sm, b"", len(frame), frame, depth)
        self.cur = cur
        if self.tracing:
            trace.debug(
                "Ingress port %d: %d bytes, instance_type %d", port, len(frame), instance_type
            )
        err = self._parse(pk, hdr, meta, sm)
        sm.v[self.sm_index["parser_error"]] = err
        cur.payload = frame[pk.pos :]
        if self.tracing and err:
            trace.debug("Parser error %s", self._error_name(err))
        try:
            self._control(self.run_verify, 1, [hdr, meta])
            self._control(self.run_ingress, 2, [hdr, meta, sm])
        except (RuntimeAbort, AssertionFailed) as e:
            log.error(
                "dropping packet: %s in ingress",
                type(e).__name__ if isinstance(e, RuntimeAbort) else e,
            )
            return
        idx = self.sm_index
        # I2E clone: the frame as received, headers unparsed, metadata reset except the
        # preserved fields (BMv2 copies the packet before ingress changed it).
        if cur.clone_session is not None and cur.clone_type == 0:
            self._clone(cur, INGRESS_CLONE, out, original=True)
        if cur.resubmit_fields is not None:
            if self.tracing:
                trace.debug("Resubmitting")
            self._ingress(port, frame, RESUBMIT, meta, cur.resubmit_fields, out, depth + 1)
            return
        grp = sm.v[idx["mcast_grp"]]
        if grp:
            replicas = self.pre.multicast_groups.get(grp)
            if self.tracing:
                trace.debug("Multicast group %d: %d replica(s)", grp, len(replicas or ()))
            for r in replicas or ():
                self._egress(self._copy_state(cur), r.egress_port, r.instance, REPLICATION, out)
            return
        spec = sm.v[idx["egress_spec"]]
        if spec == DROP_PORT:
            if self.tracing:
                trace.debug("Dropped at the end of ingress (egress_spec 511)")
            return
        # Unicast enters egress as a normal packet, also after a resubmit or recirculation
        # (BMv2's ingress_thread sets instance_type to NORMAL before it enqueues).
        self._egress(cur, spec, 0, NORMAL, out)

    def _parse(self, pk, hdr, meta, sm) -> int:
        err = self.run_parser([pk, hdr, meta, sm] + [None] * (self.frame_sizes[0] - 4))
        # An explicit `transition reject` records no error: v1model goes on to ingress.
        return max(err, 0)

    def _copy_state(self, cur: PacketState) -> PacketState:
        c = PacketState(
            copy_value(cur.hdr),
            copy_value(cur.meta),
            copy_value(cur.sm),
            cur.payload,
            cur.length,
            cur.frame,
            cur.depth,
        )
        c.truncate = cur.truncate  # truncate() in ingress applies to every copy
        c.egress_length = cur.egress_length
        return c

    def _control(self, run, root: int, args: list) -> None:
        f = args + [None] * (self.frame_sizes[root] - len(args))
        try:
            run(f)
        except ExitSignal:
            pass

    def _clone(self, cur: PacketState, instance_type: int, out, original: bool) -> None:
        session = self.pre.clone_sessions.get(cur.clone_session)
        if session is None:
            if self.tracing:
                trace.debug("Clone session %s is not configured: no clone", cur.clone_session)
            return
        idx = self.sm_index
        port = cur.sm.v[idx["ingress_port"]]
        if self.tracing:
            trace.debug(
                "%s clone to session %d: port(s) %s",
                "I2E" if original else "E2E",
                cur.clone_session,
                ", ".join(str(r.egress_port) for r in session.replicas),
            )
        if original:
            # I2E (BMv2): the frame as received is parsed again; metadata starts from zero
            # except the preserved fields, which carry their values from the end of ingress.
            hdr = self.new_hdr()
            meta = self.new_meta()
            sm = self._new_sm(port, cur.length, instance_type)
            pk = PacketIn(cur.frame)
            self.cur = PacketState(hdr, meta, sm, b"", cur.length, cur.frame, cur.depth)
            sm.v[idx["parser_error"]] = self._parse(pk, hdr, meta, sm)
            payload = cur.frame[pk.pos :]
            # BMv2 resets the length register to the received length before parsing again
            egress_length = self.cur.egress_length
        else:
            # E2E (BMv2): headers as egress left them, metadata reset, preserved fields kept.
            hdr = cur.hdr
            meta = self.new_meta()
            sm = self._new_sm(port, cur.length, instance_type)
            payload = cur.payload
            egress_length = cur.egress_length  # with egress's setValid/setInvalid
        for i in cur.clone_fields or ():
            meta.v[i] = copy_value(cur.meta.v[i])
        for r in session.replicas:
            c = PacketState(
                copy_value(hdr),
                copy_value(meta),
                copy_value(sm),
                payload,
                cur.length,
                cur.frame,
                cur.depth,
            )
            c.truncate = session.packet_length_bytes
            c.egress_length = egress_length
            self._egress(c, r.egress_port, r.instance, instance_type, out)

    def _egress(self, cur: PacketState, port: int, rid: int, instance_type: int, out) -> None:
        # Requests made in ingress do not carry over, except truncate (BMv2 keeps the
        # truncation length with the packet; clones get their session's).
        truncate = cur.truncate
        cur.clear_requests()
        cur.truncate = truncate
        self.cur = cur
        sm = cur.sm
        idx = self.sm_index
        sm.v[idx["egress_port"]] = port
        sm.v[idx["egress_spec"]] = 0  # BMv2 clears egress_spec when egress starts
        sm.v[idx["packet_length"]] = cur.egress_length & 0xFFFFFFFF
        sm.v[idx["egress_rid"]] = rid
        sm.v[idx["instance_type"]] = instance_type
        sm.v[idx["egress_global_timestamp"]] = self.now_us()
        if self.tracing:
            trace.debug("Egress port %d (rid %d, instance_type %d)", port, rid, instance_type)
        try:
            self._control(self.run_egress, 3, [cur.hdr, cur.meta, sm])
        except (RuntimeAbort, AssertionFailed) as e:
            log.error(
                "dropping packet: %s in egress",
                type(e).__name__ if isinstance(e, RuntimeAbort) else e,
            )
            return
        if cur.clone_session is not None and cur.clone_type == 1:
            self._clone(cur, EGRESS_CLONE, out, original=False)
            self.cur = cur
        if sm.v[idx["egress_spec"]] == DROP_PORT:
            if self.tracing:
                trace.debug("Dropped at the end of egress (mark_to_drop)")
            return
        self._control(self.run_compute, 4, [cur.hdr, cur.meta])
        po = PacketOut()
        self._control(self.run_deparser, 5, [po, cur.hdr])
        frame = b"".join(po.parts) + cur.payload
        if cur.truncate:
            frame = frame[: cur.truncate]
        if cur.recirculate_fields is not None:
            if self.tracing:
                trace.debug("Recirculating %d bytes", len(frame))
            self._ingress(
                sm.v[idx["ingress_port"]],
                frame,
                RECIRC,
                cur.meta,
                cur.recirculate_fields,
                out,
                cur.depth + 1,
            )
            return
        if self.tracing:
            trace.debug("Transmit on port %d: %d bytes", port, len(frame))
        out.append((port, frame))

    def _error_name(self, code: int) -> str:
        for n, v in self.error_codes.items():
            if v == code:
                return n
        return str(code)
