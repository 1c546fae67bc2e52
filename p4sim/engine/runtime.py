"""The state of one running program, independent of the architecture.

`Runtime` owns the control-plane-visible objects (tables, registers, counters, meters), the
lock shared with the P4Runtime server, and the compiled blocks. An architecture
(`p4sim.v1model`) subclasses it, provides the extern functions of its include file through
`arch`, and drives the blocks per packet.
"""

from __future__ import annotations

import logging
import threading

from p4sim.engine.action_profiles import ActionProfile
from p4sim.engine.control import BlockCompiler, ReturnSignal
from p4sim.engine.externs import Counter, Meter, Register, ValueSet
from p4sim.engine.parser import ParserCompiler
from p4sim.engine.tables import Table
from p4sim.errors import unsupported
from p4sim.frontend import ir
from p4sim.model import ReplicationEngine

trace = logging.getLogger("p4sim.trace")
_STATEFUL = ("register", "counter", "meter", "direct_counter", "direct_meter")


class Runtime:
    def __init__(self, program, arch, cpu_port: int | None = None):
        self.program = program
        self.model = program.model
        self.arch = arch
        self.cpu_port = cpu_port
        self.lock = threading.RLock()
        self.pre = ReplicationEngine()
        self.tracing = False
        self.hit = None  # the record of the entry the last table apply hit (None: a miss)
        self.error_codes: dict[str, int] = program.checker.error_type.members
        self.tables: dict[str, Table] = {}
        actions = program.all_actions
        for td in program.model.tables + program.hidden_tables:
            t = Table(td, [k.bitwidth for k in td.keys], actions)
            t.load_const_entries()
            t.load_initial_entries()
            t.reset_default()
            self.tables[td.name] = t
        self.action_profiles: dict[str, ActionProfile] = {}
        for d in program.model.action_profiles:
            tables = [self.tables[name] for name in d.tables]
            self.action_profiles[d.name] = ActionProfile(d, tables)
            for t in tables:
                t.profile = self.action_profiles[d.name]
        self.registers: dict[str, Register] = {d.name: Register(d) for d in program.model.registers}
        self.counters: dict[str, Counter] = {
            d.name: Counter(d) for d in program.model.counters if d.direct_table is None
        }
        self.direct_counters = {
            d.name: d for d in program.model.counters if d.direct_table is not None
        }
        self.meters: dict[str, Meter] = {d.name: Meter(d) for d in program.model.meters}
        self.value_sets = {d.name: ValueSet(d) for d in program.model.value_sets}
        self._compiled: dict = {}
        self.function_bodies: dict = {}  # id(FunctionDecl) -> its body, compiled for this device

    # -- compilation ------------------------------------------------------------------
    def compile_block(self, node):
        """The runner fn(frame) of a parser or control instance (compiled once)."""
        run = self._compiled.get(id(node))
        if run is not None:
            return run
        if isinstance(node.decl, ir.ParserDecl):
            run = ParserCompiler(self, node).compile()
        else:
            c = BlockCompiler(self, node)
            init = c.block([loc for loc in node.decl.locals if isinstance(loc, ir.VarDecl)])
            body = c.block(node.decl.body.stmts)

            def run(f):
                init(f)
                try:
                    body(f)
                except ReturnSignal:
                    pass

        self._compiled[id(node)] = run
        return run

    def extern_object(self, node, inst):
        name = node.externs.get(inst)
        if name is None and inst.type.decl.name in _STATEFUL:
            raise unsupported(  # the model knows the instances of parsers and controls only
                inst.node.pos if inst.node else None,
                f"a {inst.type.decl.name} instantiated outside a parser or control",
            )
        for store in (self.registers, self.counters, self.meters, self.direct_counters):
            if name in store:
                return store[name]
        return None  # stateless externs (Checksum16)

    # -- per packet -------------------------------------------------------------------
    def packet_length(self) -> int:
        return 0

    def direct_meter_color(self, meter: str, color: int) -> None:
        pass

    def adjust_packet_length(self, delta: int) -> None:
        """setValid() or setInvalid() turned a header of `delta` (negative: -) bytes valid or
        invalid; an architecture that counts that into a packet length overrides this."""

    def trace_state(self, name: str) -> None:
        trace.debug("Parser state %s", name)

    def trace_extract(self, header: str, nbytes: int) -> None:
        trace.debug("Extracted %s (%d bytes)", header, nbytes)

    def trace_skip(self, what: str, nbytes: int) -> None:
        """advance() and extract<H>(_): bytes the parser passes over without a header."""
        trace.debug("Skipped %d bytes (%s)", nbytes, what)
