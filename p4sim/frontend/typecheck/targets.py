"""Rules of the back end p4sim stands in for (p4c-bm2-ss): checks of what p4c keeps after its
optimisations (inlining, copy propagation, removal of unused code), queued while checking
and run once the whole program is known, on code in the blocks that main uses.
"""

from __future__ import annotations

from p4sim.errors import P4Error
from p4sim.frontend import ir
from p4sim.frontend.liveness import kept_calls
from p4sim.frontend.typecheck.symbols import Var
from p4sim.frontend.types import (
    BlockT,
    HeaderT,
    StackT,
    TupleT,
)

# v1model externs p4c-bm2-ss takes in one of ingress and egress only (v1model_pipeline_call)
PIPELINE_EXTERNS = {
    "resubmit_preserving_field_list",
    "recirculate_preserving_field_list",
    "clone",
    "clone_preserving_field_list",
}

# What this p4c's BMv2 back end refuses although its v1model.p4 still declares it
# (@deprecated; p4c-bm2-ss: "unknown extern function", "Expected 1 argument for
# mark_to_drop()", "Checksum16.get: not supported"), with what v1model offers instead.
REFUSED_V1MODEL_CALLS = {
    "resubmit": "resubmit_preserving_field_list(index), with @field_list(index) on the "
    "user metadata fields to keep",
    "recirculate": "recirculate_preserving_field_list(index), with @field_list(index) on "
    "the user metadata fields to keep",
    "clone3": "clone_preserving_field_list(type, session, index), with @field_list(index) "
    "on the user metadata fields to keep",
    "mark_to_drop": "mark_to_drop(standard_metadata)",
    "Checksum16.get": "verify_checksum or update_checksum with HashAlgorithm.csum16",
}


class TargetRules:
    """The checks of p4c-bm2-ss's limits that need the whole program (a part of
    `Checker`, which queues them in `target_checks`)."""

    def live_blocks(self) -> set:
        """The parsers and controls main runs: its arguments and what they instantiate."""
        return self.blocks_under([a.type.decl for a in self.main.ctor_args])

    def blocks_under(self, todo: list) -> set:
        """The parser and control declarations in `todo` and what they instantiate."""
        live = set()
        while todo:
            d = todo.pop()
            if d in live:
                continue
            live.add(d)
            for loc in getattr(d, "locals", ()):  # a package argument has none
                inst = getattr(loc, "instance", None)
                if inst is not None and isinstance(inst.type, BlockT):
                    todo.append(inst.type.decl)
            todo += [inst.type.decl for inst in getattr(d, "bound_instances", ())]
        return live

    def kept(self, e: ir.Call) -> bool:
        """Whether p4c keeps the call `e` (liveness.kept_calls over the blocks main runs)."""
        if getattr(self, "kept_call_ids", None) is None:
            self.kept_call_ids = kept_calls(self.live_blocks())
        return id(e) in self.kept_call_ids

    def v1model_refused_call(self, e: ir.Call) -> None:
        """A call of a v1model extern that p4c-bm2-ss refuses (REFUSED_V1MODEL_CALLS), where
        p4c keeps it: dead code is dropped before the back end looks."""
        if not self.kept(e) or not self.main_is_v1switch():
            return
        if e.kind == "extern_func":
            name, shown = e.target.name, f"{e.target.name}()"
        else:
            name, shown = "Checksum16.get", "Checksum16.get()"
        raise P4Error.at(
            e.func.pos,
            f"{shown} is not in the v1model that BMv2's compiler (p4c-bm2-ss) takes: it "
            f"rejects the deprecated form; use {REFUSED_V1MODEL_CALLS[name]}",
        )

    def main_is_v1switch(self) -> bool:
        return getattr(getattr(self.main.type, "decl", None), "name", None) == "V1Switch"

    def known_value(self, e: ir.Expr):
        """The value of `e` as p4c's optimisations see it: a constant, or a local never
        written after its constant initializer (copy propagation); else None."""
        if e.const is not None:
            return e.const
        var = e.decl if isinstance(e, ir.Name) else None
        if isinstance(var, Var) and var.init is not None and not var.assigned:
            return var.init
        return None

    def run_time_value(self, e: ir.Expr) -> bool:
        """Whether `e` is read from the apply parameters of a block (the packet and its
        metadata), which no optimisation of p4c makes constant."""
        while isinstance(e, (ir.Member, ir.Index, ir.Slice)):
            e = e.expr
        return isinstance(e, ir.Name) and getattr(e.decl, "block", None) is not None

    def switch_in_action(self, node) -> None:
        action, s = node
        if getattr(action, "used", False):  # p4c drops unused actions first
            raise P4Error.at(
                s.pos,
                f"BMv2 (p4c-bm2-ss) does not support switch statements in actions "
                f"({action.name}); use if/else, or switch in the control's apply block",
            )

    def v1model_pipeline_call(self, node) -> None:
        """p4c-bm2-ss's simple_switch back end takes resubmit in ingress only, recirculate in
        egress only, and a clone of type I2E in ingress, E2E in egress (a call in an action
        counts only where p4c keeps it: p4c drops dead code and unused actions first)."""
        e, block = node
        if not self.kept(e) or not self.main_is_v1switch():
            return
        args = self.main.ctor_args
        name = e.target.name
        if name.startswith("clone"):
            kind = e.args[0].value if e.args else None
            if not (isinstance(kind, ir.Member) and kind.name in ("I2E", "E2E")):
                return
            where, what = ("ingress", "I2E") if kind.name == "I2E" else ("egress", "E2E")
            what = f"{name}(CloneType.{what}, ...)"
        else:
            where = "ingress" if name.startswith("resubmit") else "egress"
            what = name
        other = args[3] if where == "ingress" else args[2]  # V1Switch(p, vr, ig, eg, ck, dep)
        if block in self.blocks_under([other.type.decl]):
            raise P4Error.at(
                e.pos,
                f"BMv2 (p4c-bm2-ss) takes {what} in {where} only, not in "
                f"{'egress' if where == 'ingress' else 'ingress'} ({block.name})",
            )

    def switch_needs_exact(self, s: ir.Switch) -> None:
        if "exact" not in self.match_kinds.members:  # p4c makes it a table with an exact key
            raise P4Error.at(
                s.pos, "a switch on a value needs match_kind 'exact': #include <core.p4>"
            )

    def union_stack_index(self, e: ir.Index) -> None:
        if self.known_value(e.index) is None and self.run_time_value(e.index):
            raise P4Error.at(
                e.index.pos,
                f"BMv2 (p4c-bm2-ss) does not support a run-time index into a stack of "
                f"header unions ({e.expr.type}): use a constant index",
            )

    def run_time_division(self, e: ir.Binary) -> None:
        """p4c (every back end, BMv2's too) keeps `/` and `%` of a run-time value only when
        its optimisations turn the divisor into a power-of-two constant (a shift or a mask);
        it rejects the rest. The divisor is judged where p4c could not make it anything
        else: a constant, a local never written after its constant initializer, or read
        from the apply parameters of a block of main (the packet and its metadata)."""
        value = self.known_value(e.right)
        if value is None and not self.run_time_value(e.right):
            return  # p4c may still fold it (inlining, copy propagation): not ours to judge
        if value is None or value & (value - 1):
            raise P4Error.at(
                e.pos,
                f"'{e.op}' of a run-time value needs a constant power-of-two divisor: p4c "
                f"(p4c-bm2-ss too) computes / and % only at compile time, or as a shift or a mask",
            )


def nested_struct_out(e: ir.Call) -> None:
    """BMv2's back end (p4c-bm2-ss, its RemoveNestedStructs pass) cannot pass a struct that
    holds structs, headers, stacks or tuples to an extern's out or inout parameter."""
    what = e.target.name if e.kind == "extern_func" else f"{e.func.expr.type}.{e.method.name}"
    for p, a in zip(e.params, e.args):
        t = a.value.type if a.value is not None else None
        nested = (
            isinstance(t, HeaderT)
            and t.kind == "struct"
            and any(isinstance(ft, (HeaderT, StackT, TupleT)) for _, ft in t.fields)
        )
        if nested and p.direction in ("out", "inout"):
            raise P4Error.at(
                a.value.pos,
                f"BMv2 (p4c-bm2-ss) does not support passing a struct of structs or "
                f"headers ({t}) to the {p.direction} parameter '{p.name}' of extern {what}",
            )
