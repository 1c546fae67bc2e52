"""Expressions: their types, implicit conversions and constant folding."""

from __future__ import annotations

from p4sim.errors import P4Error, unsupported
from p4sim.frontend import ir
from p4sim.frontend.typecheck.calls import CallRules
from p4sim.frontend.typecheck.symbols import Instance, Overloads, Scope, TypeEntry, Var
from p4sim.frontend.typecheck.typerules import SIZE_METHODS, same_stack, same_type
from p4sim.frontend.types import (
    ActionEnumT,
    ApplyResultT,
    Bits,
    BlockT,
    BoolT,
    DontCareT,
    EnumT,
    ErrorT,
    ExternT,
    HeaderT,
    InfInt,
    MatchKindT,
    StackT,
    StringT,
    TableT,
    TupleT,
    Type,
    TypeParam,
    TypeVar,
    Varbit,
    VoidT,
    base_type,
    is_newtype,
)

ARITH = {"+", "-", "*", "/", "%", "|+|", "|-|", "&", "|", "^"}

MAX_CONST_SHIFT = 2048  # p4c's maximumWidthSupported: the largest constant shift it folds

COMPARE = {"==", "!=", "<", ">", "<=", ">="}


def fold(op: str, a: int, b: int, t: Type, pos) -> int:
    """Evaluate a binary operator on ints (used by the checker and, via the same rules, the
    engine). `t` is the operand type: Bits results wrap, InfInt results do not."""
    if op in ("/", "%") and b == 0:
        raise P4Error.at(pos, "division by zero")
    if op == "+":
        r = a + b
    elif op == "-":
        r = a - b
    elif op == "*":
        r = a * b
    elif op == "/":
        r = a // b
    elif op == "%":
        r = a % b
    elif op == "&":
        r = a & b
    elif op == "|":
        r = a | b
    elif op == "^":
        r = a ^ b
    elif op == "<<":
        r = a << b
    elif op == ">>":
        r = a >> b
    elif op in ("|+|", "|-|"):
        r = a + b if op == "|+|" else a - b
        if isinstance(t, Bits):
            lo = -(1 << (t.width - 1)) if t.signed else 0
            hi = (1 << (t.width - 1)) - 1 if t.signed else (1 << t.width) - 1
            return max(lo, min(hi, r))
        return r
    else:
        raise P4Error.at(pos, f"operator {op} cannot be folded")
    return t.wrap(r) if isinstance(t, Bits) else r


def constant_initializer(e: ir.Expr) -> ir.Expr | None:
    """The initializer that e, a composite constant (`C`, `C.inner`, `{1, C}`), stands for;
    None if e is not one. Its leaves are all compile-time constants."""
    if isinstance(e, ir.Name):
        return e.decl.composite if isinstance(e.decl, Var) else None
    if isinstance(e, ir.Member) and isinstance(e.expr.type, HeaderT):
        field = constant_field(e.expr, e.expr.type, e.name)
        return None if field is None else constant_initializer(field)
    if isinstance(e, ir.ListExpr):
        items = e.items
    elif isinstance(e, ir.StructInit):
        items = [x for _, x in e.fields]
    else:
        return None
    if not isinstance(e.type, (HeaderT, TupleT)):
        return None
    ok = all(x.const is not None or constant_initializer(x) is not None for x in items)
    return e if ok else None


def constant_field(base: ir.Expr, t: HeaderT, name: str) -> ir.Expr | None:
    """Field `name` of base's initializer, if base is a composite constant of type t."""
    init = constant_initializer(base)
    if init is None:
        return None
    if isinstance(init, ir.ListExpr):
        return init.items[[n for n, _ in t.fields].index(name)]
    return dict(init.fields)[name]


class ExpressionRules:
    """The checker's rules for expressions (a part of `Checker`, which holds the state)."""

    def coerce(self, e: ir.Expr, target: Type) -> None:
        """Implicit conversions: untyped integer literals to bit<W>/int<W>; lists to
        headers/structs/tuples. Anything else must already have the target type."""
        t = e.type
        if isinstance(target, TypeParam) and not (isinstance(t, TypeParam) and t.var == target.var):
            raise P4Error.at(e.pos, f"expected a value of type {target}, got {t}")
        if isinstance(target, (TypeVar, DontCareT)) or same_stack(t, target):
            return
        if isinstance(t, InfInt) and isinstance(target, Bits):
            e.type = target
            e.const = target.wrap(e.const) if e.const is not None else None
            return
        if isinstance(t, InfInt) and isinstance(target, EnumT) and target.underlying is not None:
            raise P4Error.at(e.pos, f"an integer needs an explicit cast to {target}")
        if isinstance(t, EnumT) and t.underlying is not None and t.underlying == target:
            e.type = target  # spec 8.12.2: implicit cast to the underlying type
            return
        if isinstance(target, (HeaderT, TupleT)) and isinstance(e, (ir.ListExpr, ir.StructInit)):
            self.list_to(e, target)
            return
        if isinstance(t, TupleT) and same_type(t, target):  # each `tuple<...>` is its own object
            return
        if isinstance(t, (ErrorT, MatchKindT)) and type(t) is type(target):
            return
        if isinstance(t, ExternT) and isinstance(target, ExternT) and t.decl is target.decl:
            given = [a for a in target.args if not isinstance(a, (TypeVar, DontCareT))]
            if given and not all(same_type(a, b) for a, b in zip(t.args, target.args)):
                raise P4Error.at(
                    e.pos,
                    f"expected a {t.decl.name}<{', '.join(map(str, target.args))}>, got a "
                    f"{t.decl.name}<{', '.join(map(str, t.args))}>",
                )
            return
        if t == target and isinstance(t, (Bits, BoolT, StringT, InfInt, Varbit)):
            return
        if isinstance(t, Bits) and isinstance(target, Bits):
            raise P4Error.at(
                e.pos, f"expected a value of type {target}, got {t} (cast it: ({target})(...))"
            )
        raise P4Error.at(e.pos, f"expected a value of type {target}, got {t}")

    def list_to(self, e: ir.Expr, target: Type) -> None:
        if isinstance(target, TupleT):
            if not isinstance(e, ir.ListExpr) or len(e.items) != len(target.items):
                raise P4Error.at(e.pos, f"expected {len(target.items)} items for {target}")
            for item, it in zip(e.items, target.items):
                self.coerce(item, it)
            e.type = target
            return
        if isinstance(e, ir.ListExpr):
            if len(e.items) != len(target.fields):
                raise P4Error.at(
                    e.pos,
                    f"{target} has {len(target.fields)} fields, the list has {len(e.items)} items",
                )
            for item, (_, ft) in zip(e.items, target.fields):
                self.coerce(item, ft)
            e.order = list(range(len(e.items)))
        else:
            names = [n for n, _ in e.fields]
            if sorted(names) != sorted(n for n, _ in target.fields):
                raise P4Error.at(
                    e.pos,
                    f"initializer for {target} must set exactly its fields: {', '.join(n for n, _ in target.fields)}",
                )
            for n, item in e.fields:
                self.coerce(item, target.field_type(n))
        e.type = target
        e.const = None

    def expr(self, e: ir.Expr, scope: Scope, expected: Type | None = None) -> Type:
        t = self._expr(e, scope, expected)
        e.type = t
        return t

    def _expr(self, e: ir.Expr, scope: Scope, expected: Type | None) -> Type:
        rule = CONTEXT_FREE_EXPRESSIONS.get(type(e))
        if rule is not None:
            return rule(self, e, scope)
        rule = EXPRESSIONS_TYPED_BY_CONTEXT.get(type(e))
        if rule is not None:
            return rule(self, e, scope, expected)
        raise unsupported(e.pos, type(e).__name__)

    def int_lit(self, e: ir.IntLit, scope: Scope) -> Type:
        if e.width is None:
            e.const = e.value
            return InfInt()
        if e.width == 0 and e.signed:
            raise P4Error.at(e.pos, "a signed literal needs a width of at least 1 (int<0>)")
        t = Bits(e.width, e.signed)
        e.const = t.wrap(e.value)
        return t

    def bool_lit(self, e: ir.BoolLit, scope: Scope) -> Type:
        e.const = e.value
        return BoolT()

    def str_lit(self, e: ir.StrLit, scope: Scope) -> Type:
        e.const = e.value
        return StringT()

    def index(self, e: ir.Index, scope: Scope) -> Type:
        bt = self.expr(e.expr, scope)
        it = self.expr(e.index, scope)
        if isinstance(bt, TupleT):  # spec 8.11: a compile-time constant index
            if e.index.const is None or not 0 <= e.index.const < len(bt.items):
                raise P4Error.at(
                    e.index.pos,
                    f"a tuple index must be a constant in 0..{len(bt.items) - 1}",
                )
            init = constant_initializer(e.expr)
            if init is not None:  # `T[i]` of a tuple constant T is a constant
                e.const = init.items[e.index.const].const
            return bt.items[e.index.const]
        if not isinstance(bt, StackT):
            raise P4Error.at(e.pos, f"cannot index a value of type {bt}")
        serializable = isinstance(it, EnumT) and it.underlying is not None  # p4c: its bits
        if not (isinstance(it, (Bits, InfInt)) or serializable):
            raise P4Error.at(e.index.pos, "stack index must be an integer")
        if e.index.const is not None and not 0 <= e.index.const < bt.size:
            raise P4Error.at(e.index.pos, f"index {e.index.const} out of range for {bt}")
        if (
            bt.elem.kind == "header_union"
            and e.index.const is None
            and not (self.loop_depth or self.return_type)  # p4c may unroll or inline
        ):
            self.target_checks.append((self.union_stack_index, e, self.block))
        return bt.elem

    def slice_expr(self, e: ir.Slice, scope: Scope) -> Type:
        bt = self.expr(e.expr, scope)
        if isinstance(bt, InfInt) and e.expr.const is not None:
            bt = Bits(max(e.expr.const.bit_length(), 1) + 1)
        if not isinstance(bt, Bits) or is_newtype(bt):
            raise P4Error.at(e.pos, f"cannot slice a value of type {bt}")
        hi, lo = self.const_int(e.hi, scope), self.const_int(e.lo, scope)
        if not (0 <= lo <= hi < bt.width):
            raise P4Error.at(e.pos, f"slice [{hi}:{lo}] out of range for {bt}")
        t = Bits(hi - lo + 1)
        if e.expr.const is not None:
            e.const = (e.expr.const >> lo) & ((1 << (hi - lo + 1)) - 1)
        return t

    def ternary(self, e: ir.Ternary, scope: Scope, expected: Type | None) -> Type:
        self.condition(e.cond, scope)
        self.expr(e.then, scope, expected)
        self.expr(e.other, scope, expected)
        t = self.unify(e.then, e.other, e.pos, "?:")
        if isinstance(t, InfInt) and expected is not None and isinstance(expected, Bits):
            self.coerce(e.then, expected)
            self.coerce(e.other, expected)
            t = expected
        if e.cond.const is not None and e.then.const is not None and e.other.const is not None:
            e.const = e.then.const if e.cond.const else e.other.const
        return t

    def list_expr(self, e: ir.ListExpr, scope: Scope, expected: Type | None) -> Type:
        hint = expected if isinstance(expected, TupleT) else None
        items = []
        for i, item in enumerate(e.items):
            items.append(
                self.expr(item, scope, hint.items[i] if hint and i < len(hint.items) else None)
            )
        if e.dots:  # `{a, ...}`: the items after a at their defaults
            wanted = self.dots_target(e, expected)
            for ft in wanted[len(e.items) :]:
                d = ir.DefaultValue(e.pos)
                items.append(self.expr(d, scope, ft))
                e.items.append(d)
            e.dots = False
        if isinstance(expected, (HeaderT, TupleT)):
            t = TupleT(items)
            e.type = t
            self.list_to(e, expected)
            return expected
        return TupleT(items)

    def struct_init(self, e: ir.StructInit, scope: Scope, expected: Type | None) -> Type:
        if not isinstance(expected, HeaderT):
            raise P4Error.at(
                e.pos,
                "a {field = value} initializer needs a struct or header type from context",
            )
        if e.dots:  # `{f = a, ...}`: the other fields at their defaults
            given = {n for n, _ in e.fields}
            e.fields += [(n, ir.DefaultValue(e.pos)) for n, _ in expected.fields if n not in given]
            e.dots = False
        for n, item in e.fields:
            ft = expected.field_type(n)
            if ft is None:
                raise P4Error.at(item.pos, f"{expected} has no field '{n}'")
            self.expr(item, scope, ft)
        self.list_to(e, expected)
        return expected

    @staticmethod
    def dots_target(e: ir.Expr, expected: Type | None) -> list[Type]:
        """The types of the fields or items an initializer ending in `...` fills."""
        if isinstance(expected, TupleT):
            return expected.items
        if isinstance(expected, HeaderT):
            return [ft for _, ft in expected.fields]
        raise P4Error.at(
            e.pos,
            "an initializer with '...' needs the struct, header or tuple type it initializes "
            "from context",
        )

    def default_value(self, e: ir.DefaultValue, scope: Scope, expected: Type | None) -> Type:
        """The default value of the type expected (spec "Default values"): 0, false, the
        first member of an enum without a type, error.NoError; a header invalid."""
        if isinstance(expected, Bits):
            e.const = 0
        elif isinstance(expected, BoolT):
            e.const = False
        elif isinstance(expected, EnumT):
            e.const = 0 if expected.underlying is not None else expected.values[expected.members[0]]
        elif isinstance(expected, ErrorT):
            e.const = expected.members["NoError"]
        elif expected is None or isinstance(expected, (InfInt, StringT, ExternT, VoidT)):
            raise P4Error.at(e.pos, f"'...' cannot stand for a value of type {expected}")
        return expected

    def type_expr(self, e: ir.TypeExpr, scope: Scope) -> Type:
        raise P4Error.at(e.pos, "a type is not a value here")

    def keyset_expr(self, e: ir.Mask | ir.Range | ir.Default, scope: Scope) -> Type:
        raise P4Error.at(e.pos, "keyset expression outside a select case or table entry")

    def name(self, e: ir.Name, scope: Scope) -> Type:
        if e.name == "error":
            e.decl = TypeEntry(self.error_type)
            return self.error_type
        d = self.scope.lookup(e.name) if e.absolute else scope.lookup(e.name)
        if d is None:
            if e.name == "list":
                raise unsupported(e.pos, "the list<T> type")
            raise P4Error.at(e.pos, f"'{e.name}' is not declared")
        e.decl = d
        if isinstance(d, Var):
            if d.direction == "const":
                e.const = d.const
            return d.type
        if isinstance(d, Instance):
            return d.type
        if isinstance(d, TypeEntry):
            return d.type
        if isinstance(d, ir.TableDecl):
            return TableT(d)
        if isinstance(d, (ir.ActionDecl, Overloads)):
            return VoidT()
        raise P4Error.at(e.pos, f"'{e.name}' cannot be used here")

    def member(self, e: ir.Member, scope: Scope) -> Type:
        base = e.expr
        bt = self.expr(base, scope)
        if isinstance(base, ir.Name) and isinstance(base.decl, TypeEntry):
            if isinstance(bt, ErrorT):
                if e.name not in bt.members:
                    raise P4Error.at(
                        e.pos, f"error.{e.name} is not declared (declared: {', '.join(bt.members)})"
                    )
                e.const = bt.members[e.name]
                return bt
            if isinstance(bt, EnumT):
                if e.name not in bt.values:
                    raise P4Error.at(
                        e.pos,
                        f"{bt.enum_name} has no member '{e.name}' (members: {', '.join(bt.members)})",
                    )
                e.const = bt.values[e.name]
                return bt
            raise P4Error.at(e.pos, f"type {bt} has no member '{e.name}'")
        if isinstance(bt, HeaderT):
            ft = bt.field_type(e.name)
            field = constant_field(base, bt, e.name) if ft is not None else None
            if field is not None:
                e.const = field.const  # `C.f` of a composite constant C is a constant
            if ft is None:
                if bt.kind == "header" and e.name in ("isValid", "setValid", "setInvalid"):
                    return VoidT()  # resolved by call()
                if bt.kind == "header_union" and e.name == "isValid":
                    return VoidT()  # resolved by call()
                if e.name in SIZE_METHODS:
                    return VoidT()  # resolved by call()
                raise P4Error.at(e.pos, f"{bt.kind} {bt.type_name} has no field '{e.name}'")
            return ft
        if isinstance(bt, StackT):
            if e.name in ("next", "last", "lastIndex") and not self.in_parser:
                raise P4Error.at(
                    e.pos,
                    f"stack '{e.name}' can only be used in a parser (P4_16 spec, Header stacks)",
                )
            if e.name in ("next", "last"):
                return bt.elem
            if e.name in ("lastIndex", "size"):
                if e.name == "size":
                    e.const = bt.size
                return Bits(32)
            if e.name in ("push_front", "pop_front"):
                return VoidT()
            raise P4Error.at(
                e.pos,
                f"header stack has no member '{e.name}' (next, last, lastIndex, size, push_front, pop_front)",
            )
        if isinstance(bt, ApplyResultT):
            if e.name in ("hit", "miss"):
                return BoolT()
            if e.name == "action_run":
                return ActionEnumT(bt.table)
            raise P4Error.at(
                e.pos, f"table apply result has no member '{e.name}' (hit, miss, action_run)"
            )
        if isinstance(bt, (ExternT, TableT, BlockT)):
            return VoidT()  # a method: resolved by call()
        raise P4Error.at(e.pos, f"a value of type {bt} has no member '{e.name}'")

    @staticmethod
    def enum_as_bits(e: ir.Expr) -> Type:
        """The type of e, with a serializable enum replaced by its underlying bit<W> (the
        run-time value already is that integer)."""
        if isinstance(e.type, EnumT) and e.type.underlying is not None:
            e.type = e.type.underlying
        return e.type

    def unify(self, a: ir.Expr, b: ir.Expr, pos, op: str) -> Type:
        ta, tb = a.type, b.type
        if isinstance(ta, InfInt) and isinstance(tb, Bits):
            self.coerce(a, tb)
            return tb
        if isinstance(tb, InfInt) and isinstance(ta, Bits):
            self.coerce(b, ta)
            return ta
        if isinstance(ta, InfInt) and isinstance(tb, InfInt):
            return ta
        if ta == tb and isinstance(ta, (Bits, BoolT, Varbit)):
            return ta
        if same_stack(ta, tb):
            return ta
        if isinstance(ta, ErrorT) and isinstance(tb, ErrorT):
            return ta
        raise P4Error.at(
            pos, f"operands of '{op}' have different types: {ta} and {tb} (cast one of them)"
        )

    def unary(self, e: ir.Unary, scope: Scope, expected) -> Type:
        t = self.expr(e.expr, scope, expected if e.op != "!" else None)
        self.newtype_rule(e.op, e.expr, e.pos)
        c = e.expr.const
        if e.op == "!":
            if not isinstance(t, BoolT):
                raise P4Error.at(e.pos, f"'!' needs a bool operand, got {t}")
            e.const = None if c is None else not c
            return t
        if not isinstance(t, (Bits, InfInt)):
            raise P4Error.at(e.pos, f"'{e.op}' needs an integer operand, got {t}")
        if c is not None:
            if e.op == "-":
                e.const = t.wrap(-c) if isinstance(t, Bits) else -c
            elif e.op == "~":
                if isinstance(t, InfInt):
                    raise P4Error.at(e.pos, "'~' needs an operand with a width (e.g. 8w5)")
                e.const = t.wrap(~c)
            else:
                e.const = c
        elif e.op == "~" and isinstance(t, InfInt):
            raise P4Error.at(e.pos, "'~' needs an operand with a width")
        return t

    def binary(self, e: ir.Binary, scope: Scope, expected) -> Type:
        op = e.op
        if op in ("&&", "||"):
            self.condition(e.left, scope)
            self.condition(e.right, scope)
            a, b = e.left.const, e.right.const
            if a is not None and b is not None:
                e.const = (a and b) if op == "&&" else (a or b)
            return BoolT()
        hint = expected if op in ARITH or op in ("<<", ">>") else None
        lt = self.expr(e.left, scope, hint)
        rt = self.expr(e.right, scope, hint if op not in ("<<", ">>") else None)
        if not (op in ("==", "!=") and lt == rt):  # a `type` compares with its own type
            self.newtype_rule(op, e.right if is_newtype(rt) else e.left, e.pos)
        # Spec 8.12.2: a serializable enum converts implicitly to its underlying type in
        # arithmetic, shifts, concatenation and comparisons with other values (two values
        # of the same enum type compare as they are).
        if not (op in ("==", "!=") and isinstance(lt, EnumT) and lt is rt):
            lt, rt = self.enum_as_bits(e.left), self.enum_as_bits(e.right)
        if op in ("<<", ">>"):
            if isinstance(rt, Bits) and rt.signed:
                raise P4Error.at(e.right.pos, "shift amount must be unsigned")
            if not isinstance(rt, (Bits, InfInt)) or not isinstance(lt, (Bits, InfInt)):
                raise P4Error.at(e.pos, f"'{op}' needs integer operands, got {lt} and {rt}")
            if isinstance(lt, InfInt) and e.right.const is None:
                raise P4Error.at(
                    e.left.pos,
                    "the left operand of a shift by a non-constant needs a width (e.g. 32w1)",
                )
            if isinstance(rt, InfInt) and e.right.const is not None and e.right.const < 0:
                raise P4Error.at(e.right.pos, "shift amount must not be negative")
            if e.left.const is not None and e.right.const is not None:
                if e.right.const > MAX_CONST_SHIFT:
                    raise P4Error.at(
                        e.pos,
                        f"constant shift by {e.right.const}: p4c folds shifts of constants "
                        f"by at most {MAX_CONST_SHIFT} bits",
                    )
                e.const = (
                    fold(op, e.left.const, e.right.const, lt, e.pos)
                    if e.right.const < 4096 or isinstance(lt, Bits)
                    else 0
                )
                if isinstance(lt, Bits) and e.right.const >= lt.width:
                    e.const = (-1 if e.left.const < 0 and op == ">>" else 0) if lt.signed else 0
                    e.const = lt.wrap(e.const)
            return lt
        if op == "++":
            for side, st in ((e.left, lt), (e.right, rt)):
                if not isinstance(st, Bits):
                    raise P4Error.at(
                        side.pos, f"'++' needs operands with a width (bit<W>/int<W>), got {st}"
                    )
            t = Bits(lt.width + rt.width, lt.signed)
            if e.left.const is not None and e.right.const is not None:
                r = ((e.left.const & ((1 << lt.width) - 1)) << rt.width) | (
                    e.right.const & ((1 << rt.width) - 1)
                )
                e.const = t.wrap(r)
            return t
        if op in ("/", "%"):
            for side, st in ((e.left, lt), (e.right, rt)):
                if isinstance(st, InfInt) and side.const is not None and side.const < 0:
                    raise P4Error.at(
                        e.pos, f"'{op}' is not defined on negative numbers ({side.const})"
                    )
        if op in COMPARE and ExternT in (type(lt), type(rt)):
            raise P4Error.at(e.pos, f"extern objects cannot be compared ('{op}' on {lt})")
        t = self.unify(e.left, e.right, e.pos, op)
        if op in COMPARE:
            if op not in ("==", "!=") and not isinstance(t, (Bits, InfInt)):
                raise P4Error.at(e.pos, f"'{op}' needs integer operands, got {t}")
            if isinstance(t, TypeVar):  # in a generic function's body, as p4c
                raise P4Error.at(e.pos, f"values of type variable {t} cannot be compared")
            if not isinstance(t, (Bits, InfInt, BoolT, EnumT, ErrorT, Varbit, HeaderT, StackT)):
                raise unsupported(e.pos, f"comparison of {t} values")
            a, b = e.left.const, e.right.const
            if a is not None and b is not None:
                e.const = {
                    "==": a == b,
                    "!=": a != b,
                    "<": a < b,
                    ">": a > b,
                    "<=": a <= b,
                    ">=": a >= b,
                }[op]
            return BoolT()
        if not isinstance(t, (Bits, InfInt)):
            raise P4Error.at(e.pos, f"'{op}' needs integer operands, got {t}")
        if op in ("/", "%"):
            if isinstance(t, Bits) and t.signed:
                raise P4Error.at(e.pos, f"'{op}' is not defined on signed values ({t})")
            if e.right.const is not None and e.right.const <= 0:
                raise P4Error.at(e.right.pos, f"'{op}' by {e.right.const}")
        a, b = e.left.const, e.right.const
        if a is not None and b is not None:
            e.const = fold(op, a, b, t, e.pos)
        elif op in ("/", "%") and a != 0:
            self.target_checks.append((self.run_time_division, e, self.block))
        return t

    @staticmethod
    def newtype_rule(op: str, operand: ir.Expr, pos) -> None:
        """Spec, "Introducing new types": a value of a `type` is assigned, compared with ==
        and != to its own type, and cast; every other operator needs a cast to the base type
        first."""
        t = operand.type
        if is_newtype(t):
            raise P4Error.at(
                operand.pos,
                f"'{op}' cannot take a value of type {t}, a 'type' over {base_type(t)}: cast "
                f"it first, ({base_type(t)})(...)",
            )

    def cast(self, e: ir.Cast, scope: Scope) -> Type:
        to = self.resolve_type(e.to, scope)
        ft = self.expr(e.expr, scope, to if isinstance(to, HeaderT) else None)
        c = e.expr.const
        if is_newtype(to) or is_newtype(ft):
            # spec, "Introducing new types": a `type` converts to and from its base type
            # (and other `type`s over it) only; an integer literal converts to a `type`
            # over bit<W>/int<W>
            literal = isinstance(ft, InfInt) and isinstance(to, Bits)
            if not (literal or base_type(ft) == base_type(to)):
                raise P4Error.at(
                    e.pos,
                    f"cannot cast {ft} to {to}: a 'type' casts only to and from its base "
                    f"type ({base_type(to if is_newtype(to) else ft)})",
                )
            if c is not None:
                e.const = to.wrap(c) if isinstance(to, Bits) else c
            return to
        ok = False
        if isinstance(to, Bits):
            if isinstance(ft, (Bits, InfInt)):
                ok = True
                if c is not None:
                    e.const = to.wrap(c)
            elif isinstance(ft, BoolT) and to.width == 1 and not to.signed:
                ok = True
                if c is not None:
                    e.const = int(c)
            elif isinstance(ft, EnumT) and ft.underlying is not None:
                ok = ft.underlying == to  # p4c: to its own underlying type only
                if c is not None:
                    e.const = to.wrap(c)
        elif isinstance(to, BoolT):
            if (isinstance(ft, Bits) and ft.width == 1 and not ft.signed) or isinstance(ft, BoolT):
                ok = True
                if c is not None:
                    e.const = bool(c)
            elif isinstance(ft, InfInt) and c in (0, 1):
                ok = True
                e.const = bool(c)
        elif isinstance(to, EnumT) and to.underlying is not None:
            # p4c: from an integer, from the underlying type itself or from an enum over it
            over = ft.underlying if isinstance(ft, EnumT) else ft
            if isinstance(ft, InfInt) or over == to.underlying:
                ok = True
                if c is not None:
                    e.const = to.underlying.wrap(c)
        elif isinstance(to, HeaderT) and ft is to:
            ok = True
        elif ft is to or ft == to:
            ok = True
            e.const = c
        if not ok:
            enum = next((t for t in (to, ft) if isinstance(t, EnumT) and t.underlying), None)
            why = (
                f": a serializable enum casts only to and from its underlying type "
                f"({enum.underlying}) and enums over it"
                if enum is not None
                else ""
            )
            raise P4Error.at(e.pos, f"cannot cast {ft} to {to}{why}")
        return to


# The rule for each kind of expression, by IR class (the classes are leaves: the exact type
# finds the rule): those whose type the expression alone decides, and those that take the
# type the context expects (an integer literal's width, a list's struct or tuple type).
CONTEXT_FREE_EXPRESSIONS = {
    ir.IntLit: ExpressionRules.int_lit,
    ir.BoolLit: ExpressionRules.bool_lit,
    ir.StrLit: ExpressionRules.str_lit,
    ir.Name: ExpressionRules.name,
    ir.Member: ExpressionRules.member,
    ir.Index: ExpressionRules.index,
    ir.Slice: ExpressionRules.slice_expr,
    ir.Cast: ExpressionRules.cast,
    ir.Call: CallRules.call,
    ir.TypeExpr: ExpressionRules.type_expr,
    ir.Mask: ExpressionRules.keyset_expr,
    ir.Range: ExpressionRules.keyset_expr,
    ir.Default: ExpressionRules.keyset_expr,
}
EXPRESSIONS_TYPED_BY_CONTEXT = {
    ir.Unary: ExpressionRules.unary,
    ir.Binary: ExpressionRules.binary,
    ir.Ternary: ExpressionRules.ternary,
    ir.ListExpr: ExpressionRules.list_expr,
    ir.StructInit: ExpressionRules.struct_init,
    ir.DefaultValue: ExpressionRules.default_value,
}
