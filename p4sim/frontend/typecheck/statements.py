"""Statements, and the rules for conditions and assignable expressions."""

from __future__ import annotations

from p4sim.errors import P4Error, unsupported
from p4sim.frontend import ir
from p4sim.frontend.typecheck.expressions import constant_initializer
from p4sim.frontend.typecheck.symbols import Scope, Var
from p4sim.frontend.types import (
    ActionEnumT,
    Bits,
    BlockT,
    BoolT,
    EnumT,
    ErrorT,
    ExternT,
    InfInt,
    StackT,
    VoidT,
    is_newtype,
)
from p4sim.limits import MAX_EXTERN_SIZE


class StatementRules:
    """The checker's rules for statements (a part of `Checker`, which holds the state)."""

    def stmt(self, s: ir.Stmt, scope: Scope) -> None:
        rule = STATEMENT_RULES.get(type(s))
        if rule is None:
            raise unsupported(s.pos, type(s).__name__)
        rule(self, s, scope)

    def block_stmt(self, s: ir.Block, scope: Scope) -> None:
        inner = Scope(scope)
        for st in s.stmts:
            self.stmt(st, inner)

    def assign(self, s: ir.Assign, scope: Scope) -> None:
        lt = self.expr(s.lhs, scope)
        self.check_lvalue(s.lhs)
        self.expr(s.rhs, scope, lt)
        self.coerce(s.rhs, lt)

    def call_stmt(self, s: ir.CallStmt, scope: Scope) -> None:
        self.expr(s.call, scope)

    def if_stmt(self, s: ir.If, scope: Scope) -> None:
        self.condition(s.cond, scope)
        self.stmt(s.then, Scope(scope))
        if s.other is not None:
            self.stmt(s.other, Scope(scope))

    def var_decl(self, s: ir.VarDecl, scope: Scope) -> None:
        t = self.resolve_type(s.typeref, scope)
        if isinstance(t, (ExternT, BlockT, VoidT)) or (
            isinstance(t, InfInt) and not s.is_const  # `const int c = 1;` is fine
        ):
            raise P4Error.at(s.pos, f"cannot declare a variable of type {t}")
        s.var_type = t
        if s.init is not None:
            self.expr(s.init, scope, t)
            self.coerce(s.init, t)
        if s.is_const:
            composite = None
            if s.init is not None and s.init.const is None:
                composite = constant_initializer(s.init)
            if s.init is None or (s.init.const is None and composite is None):
                raise P4Error.at(s.pos, f"constant '{s.name}' needs a compile-time constant value")
            var = Var(s.name, t, "const", None, s.init.const, s.pos, composite=composite)
        else:
            var = Var(s.name, t, "local", self.frame.alloc(), None, s.pos)
            var.init = s.init.const if s.init is not None else None
        s.var = var
        self.declare(scope, s.name, var, s.pos)

    def switch(self, s: ir.Switch, scope: Scope) -> None:
        t = self.expr(s.expr, scope)
        if self.action is not None:
            self.target_checks.append((self.switch_in_action, (self.action, s), self.block))
        if not isinstance(t, ActionEnumT) and s.cases:  # p4c drops a switch without cases
            self.target_checks.append((self.switch_needs_exact, s, self.block))
        seen: dict = {}  # label (action or constant value) -> its first position
        default_seen = False
        for c in s.cases:
            for label in c.labels:
                # P4_16 spec, "Switch statement": labels are unique and `default`
                # comes once, last.
                if default_seen:
                    raise P4Error.at(
                        (label or c).pos, "no switch label may follow the 'default' label"
                    )
                if label is None:
                    default_seen = True
                    continue
                if isinstance(t, ActionEnumT):
                    names = {r.decl.name: r.decl for r in t.table.action_refs}
                    if not isinstance(label, ir.Name) or label.name not in names:
                        raise P4Error.at(
                            label.pos,
                            f"switch label must be an action of table {t.table.name} ({', '.join(names)})",
                        )
                    label.decl = names[label.name]
                    key = label.name
                else:
                    if not isinstance(t, (Bits, EnumT, ErrorT)):
                        raise P4Error.at(s.expr.pos, f"cannot switch on a value of type {t}")
                    self.expr(label, scope, t)
                    self.coerce(label, t)
                    if label.const is None:
                        raise P4Error.at(label.pos, "switch labels must be compile-time constants")
                    key = label.const
                if key in seen:
                    raise P4Error.at(label.pos, "duplicate switch label")
                seen[key] = label.pos
            if c.body is not None:
                self.stmt(c.body, scope)
        if s.cases and s.cases[-1].body is None:
            raise P4Error.at(s.cases[-1].pos, "the last switch case needs a block")

    def return_stmt(self, s: ir.Return, scope: Scope) -> None:
        if self.in_parser and not self.in_action and self.return_type is None:
            raise P4Error.at(s.pos, "return is not allowed in a parser state (p4c's grammar)")
        if s.value is not None:
            if self.return_type is None or isinstance(self.return_type, VoidT):
                raise P4Error.at(s.pos, "return with a value outside a function returning a value")
            self.expr(s.value, scope, self.return_type)
            self.coerce(s.value, self.return_type)
        elif self.return_type is not None and not isinstance(self.return_type, VoidT):
            raise P4Error.at(s.pos, f"this function must return a value of type {self.return_type}")

    def for_loop(self, s: ir.For, scope: Scope) -> None:
        inner = Scope(scope)
        for st in s.init:
            self.stmt(st, inner)
        if s.cond is not None:
            self.condition(s.cond, inner)
        self.loop_depth += 1
        try:
            self.stmt(s.body, Scope(inner))
        finally:
            self.loop_depth -= 1
        for st in s.update:
            self.stmt(st, inner)

    def loop_jump(self, s: ir.Break | ir.Continue, scope: Scope) -> None:
        if not self.loop_depth:
            kw = "break" if isinstance(s, ir.Break) else "continue"
            raise P4Error.at(s.pos, f"'{kw}' outside a for loop")

    def no_check(self, s: ir.Exit | ir.Empty, scope: Scope) -> None:
        pass

    def condition(self, e: ir.Expr, scope: Scope) -> None:
        t = self.expr(e, scope, BoolT())
        if not isinstance(t, BoolT) or is_newtype(t):
            raise P4Error.at(e.pos, f"condition must be bool, not {t}")

    def check_lvalue(self, e: ir.Expr) -> None:
        base = e
        while isinstance(base, (ir.Member, ir.Index, ir.Slice)):
            if (
                isinstance(base, ir.Member)
                and isinstance(base.expr.type, StackT)
                and base.name in ("lastIndex", "size")
            ):
                break
            base = base.expr
        if (
            isinstance(base, ir.Name)
            and isinstance(base.decl, Var)
            and base.decl.direction not in ("const", "in")
        ):
            if isinstance(base.decl.type, (ExternT,)):
                raise P4Error.at(e.pos, "cannot assign to an extern object")
            base.decl.assigned = True
            return
        if isinstance(base, ir.Name) and isinstance(base.decl, Var) and base.decl.direction == "in":
            raise P4Error.at(e.pos, f"cannot assign to '{base.name}': it is an 'in' parameter")
        raise P4Error.at(
            e.pos,
            "expression is not assignable (expected a variable, field, stack element or slice)",
        )

    @staticmethod
    def check_extern_size(kind: str, size: ir.Expr) -> None:
        """Before the value is converted to the parameter's bit<32> (which would wrap it) and
        before any storage exists (allocated on first use anyway)."""
        if isinstance(size.const, int) and not 0 < size.const <= MAX_EXTERN_SIZE:
            raise P4Error.at(
                size.pos,
                f"{kind} size {size.const} must be between 1 and {MAX_EXTERN_SIZE:,} "
                "(p4sim's limit)",
            )


# The rule for each kind of statement, by IR class (the classes are leaves: the exact type
# finds the rule).
STATEMENT_RULES = {
    ir.Block: StatementRules.block_stmt,
    ir.Assign: StatementRules.assign,
    ir.CallStmt: StatementRules.call_stmt,
    ir.If: StatementRules.if_stmt,
    ir.VarDecl: StatementRules.var_decl,
    ir.Switch: StatementRules.switch,
    ir.Return: StatementRules.return_stmt,
    ir.Exit: StatementRules.no_check,
    ir.Empty: StatementRules.no_check,
    ir.For: StatementRules.for_loop,
    ir.Break: StatementRules.loop_jump,
    ir.Continue: StatementRules.loop_jump,
}
