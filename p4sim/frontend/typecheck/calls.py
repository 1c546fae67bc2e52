"""Calls: methods of headers, stacks, tables, parsers, controls and externs; actions,
functions and extern functions; arguments bound to parameters, with the type arguments
inferred from them.
"""

from __future__ import annotations

from p4sim.errors import P4Error, unsupported
from p4sim.frontend import ir
from p4sim.frontend.typecheck.symbols import Instance, Overloads, Scope, TypeEntry
from p4sim.frontend.typecheck.targets import (
    PIPELINE_EXTERNS,
    REFUSED_V1MODEL_CALLS,
    nested_struct_out,
)
from p4sim.frontend.typecheck.typerules import SIZE_METHODS, free_vars, serialized_size, unifies
from p4sim.frontend.types import (
    ApplyResultT,
    BlockT,
    BoolT,
    DontCareT,
    EnumT,
    ErrorT,
    ExternT,
    HeaderT,
    InfInt,
    StackT,
    StringT,
    TableT,
    Type,
    TypeVar,
    Varbit,
    VoidT,
)


class CallRules:
    """The checker's rules for calls (a part of `Checker`, which holds the state)."""

    def call(self, e: ir.Call, scope: Scope) -> Type:
        f = e.func
        targs = [self.resolve_type(t, scope) for t in e.type_args]
        e.targs = targs
        if isinstance(f, ir.Member):
            bt = self.expr(f.expr, scope)
            m = f.name
            if isinstance(bt, HeaderT) and m in SIZE_METHODS:
                # spec 8.9: compile-time sizes of the serialised header/struct
                if bt.kind == "header_union":
                    raise unsupported(e.pos, f"{m}() of a header union")
                self.no_args(e, 0)
                e.kind, e.target = "size_method", m
                e.const = serialized_size(bt, m)
                return InfInt()
            if isinstance(bt, HeaderT) and bt.kind == "header_union" and m == "isValid":
                self.no_args(e, 0)
                e.kind, e.target = "header_method", m
                return BoolT()
            if (
                isinstance(bt, HeaderT)
                and bt.kind == "header"
                and m in ("isValid", "setValid", "setInvalid")
            ):
                self.no_args(e, 0)
                e.kind, e.target = "header_method", m
                return BoolT() if m == "isValid" else VoidT()
            if isinstance(bt, StackT) and m in ("push_front", "pop_front"):
                self.no_args(e, 1)
                e.count = self.const_int(e.args[0].value, scope)
                e.kind, e.target = "stack_method", m
                return VoidT()
            if isinstance(bt, TableT) and m == "apply":
                self.no_args(e, 0)
                e.kind, e.target = "table_apply", bt.decl
                if self.in_action:
                    raise P4Error.at(e.pos, "tables cannot be applied inside actions")
                return ApplyResultT(bt.decl)
            if isinstance(bt, BlockT) and m == "apply":
                if isinstance(f.expr, ir.Name) and isinstance(f.expr.decl, TypeEntry):
                    f.expr.decl = self.direct_instance(f.expr, bt)
                inst = f.expr.decl
                decl = bt.decl
                want = ir.ParserDecl if self.in_parser else ir.ControlDecl
                if not isinstance(decl, want) or not isinstance(inst, Instance):
                    where = "a parser" if self.in_parser else "a control"
                    raise P4Error.at(
                        e.pos,
                        f"{where} can only apply {'parser' if self.in_parser else 'control'} instances",
                    )
                if self.in_action:
                    raise P4Error.at(e.pos, "controls cannot be applied inside actions")
                e.kind, e.target = "block_apply", inst
                self.bind_args(e, decl.params, scope, {}, decl.name)
                self.block.block_applies.append(e)
                return VoidT()
            if isinstance(bt, ExternT):
                return self.extern_method(e, bt, m, scope)
            raise P4Error.at(f.pos, f"{bt} has no method '{m}'")
        if isinstance(f, ir.Name):
            d = self.scope.lookup(f.name) if f.absolute else scope.lookup(f.name)
            if d is None:
                if f.name == "static_assert":  # declared by p4c's core.p4 (2023), not ours
                    return self.static_assert(e, scope)
                raise P4Error.at(f.pos, f"'{f.name}' is not declared")
            f.decl = d
            if isinstance(d, ir.ActionDecl):
                if e.type_args:
                    raise P4Error.at(
                        e.pos, f"action {d.name} is not generic: a call takes no type arguments"
                    )
                if self.in_parser and not self.in_action:
                    raise P4Error.at(e.pos, f"action {d.name} cannot be called from a parser")
                if self.return_type is not None:
                    raise P4Error.at(e.pos, f"action {d.name} cannot be called from a function")
                e.kind, e.target = "action", d
                d.used = True
                self.bind_args(e, d.params, scope, {}, d.name)
                return VoidT()
            if isinstance(d, Overloads):
                cands = [c for c in d.decls if self.arity_ok(c.params, e.args)]
                if not cands:
                    raise P4Error.at(
                        e.pos, f"no overload of '{f.name}' takes {len(e.args)} argument(s)"
                    )
                decl = cands[0]
                self.type_args_rule(e, decl.type_params, f.name)
                binding = self.bind_type_params(decl.type_params, targs)
                e.kind = "function" if isinstance(decl, ir.FunctionDecl) else "extern_func"
                e.target = decl
                if e.kind == "extern_func" and f.name != "verify":
                    self.extern_function_calls.append(e)  # (p4c's P4Info ignores verify)
                if f.name == "verify" and not self.in_parser:
                    raise P4Error.at(e.pos, "verify() can only be called in a parser")
                self.bind_args(e, decl.params, scope, binding, f.name)
                if e.kind == "function" and decl.type_params:
                    open_ = [n for n in decl.type_params if free_vars(binding[n])]
                    if open_:
                        raise P4Error.at(
                            e.pos,
                            f"cannot infer type parameter(s) {', '.join(open_)} of {f.name}: "
                            f"give them ({f.name}<...>(...))",
                        )
                    for n in decl.type_params:  # as p4c: values only
                        if isinstance(binding[n], (BlockT, ExternT, TableT)):
                            raise P4Error.at(
                                e.pos, f"{f.name}: an argument cannot have type {binding[n]}"
                            )
                    e.target = self.specialize_function(decl, binding)
                if e.kind == "extern_func":
                    self.target_checks.append((nested_struct_out, e, self.block))
                if e.kind == "extern_func" and f.name in PIPELINE_EXTERNS:
                    node = (e, self.block)
                    self.target_checks.append((self.v1model_pipeline_call, node, self.block))
                if e.kind == "extern_func" and (
                    f.name in REFUSED_V1MODEL_CALLS and (f.name != "mark_to_drop" or not e.args)
                ):
                    self.target_checks.append((self.v1model_refused_call, e, self.block))
                if f.name == "digest" and len(e.args) == 2 and e.args[1].value is not None:
                    data = e.args[1].value
                    parts = getattr(data.type, "fields", None) or list(
                        enumerate(getattr(data.type, "items", ()))
                    )
                    typed = [
                        str(n)
                        for n, ft in parts
                        if isinstance(ft, ErrorT)
                        or (isinstance(ft, EnumT) and ft.underlying is None)
                    ]
                    if typed:  # P4Info types them (error {}, enum {name}) and P4Data names them
                        raise unsupported(
                            data.pos,
                            f"a digest field of an error or enum type ({', '.join(typed)})",
                        )
                    # the control-plane name: the struct's; a list's, ModelBuilder's
                    e.digest_name = getattr(data.type, "type_name", "digest")
                    self.digest_calls.append(e)
                ret = (
                    e.target.ret_type
                    if isinstance(decl, ir.FunctionDecl)
                    else self.param_type(
                        ir.Param(decl.pos, "", decl.ret, "", None, []), scope, binding
                    )
                )
                return ret
            raise P4Error.at(f.pos, f"'{f.name}' is not a function, action or method")
        raise P4Error.at(e.pos, "this expression cannot be called")

    def no_args(self, e: ir.Call, n: int) -> None:
        if len(e.args) != n:
            raise P4Error.at(e.pos, f"expected {n} argument(s), got {len(e.args)}")

    def arity_ok(self, params: list[ir.Param], args: list[ir.Arg]) -> bool:
        """Spec 6.8.2: a parameter with a default value or @optional may be left out."""
        required = sum(
            1 for p in params if p.default is None and not ir.annotation(p.annotations, "optional")
        )
        return required <= len(args) <= len(params)

    def extern_method(self, e: ir.Call, et: ExternT, m: str, scope: Scope) -> Type:
        cands = [
            md
            for md in et.decl.methods
            if md.name == m and md.ret is not None and self.arity_ok(md.params, e.args)
        ]
        if not cands:
            names = sorted({md.name for md in et.decl.methods if md.ret is not None})
            raise P4Error.at(
                e.pos,
                f"{et.decl.name} has no method '{m}' taking {len(e.args)} argument(s) (methods: {', '.join(names)})",
            )
        exact = [md for md in cands if len(md.params) == len(e.args)]
        if len(exact) > 1:
            raise P4Error.at(
                e.pos,
                f"ambiguous call: {et.decl.name} declares {len(exact)} methods '{m}' taking "
                f"{len(e.args)} argument(s)",
            )
        md = cands[0]
        inst = e.func.expr.decl
        binding = dict(
            getattr(inst, "binding", None) or self.bind_type_params(et.decl.type_params, et.args)
        )
        self.type_args_rule(e, md.type_params, f"{et.decl.name}.{m}")
        binding.update(self.bind_type_params(md.type_params, e.targs))
        e.kind, e.target, e.method = "extern_method", inst, md
        if et.decl.name == "direct_meter" and m == "read" and self.action is not None:
            self.action.meters_read.add(inst)
            inst.read_by_action = True
        self.bind_args(e, md.params, scope, binding, f"{et.decl.name}.{m}")
        self.target_checks.append((nested_struct_out, e, self.block))
        if f"{et.decl.name}.{m}" in REFUSED_V1MODEL_CALLS:
            self.target_checks.append((self.v1model_refused_call, e, self.block))
        if et.decl.name == "packet_in":
            self.packet_in_rules(e, m)
        return self.param_type(ir.Param(md.pos, "", md.ret, "", None, []), scope, binding)

    def static_assert(self, e: ir.Call, scope: Scope) -> Type:
        """core.p4's `bool static_assert(bool check[, string message])`: true, or a
        compile-time error where check is false (p4c evaluates it wherever it stands)."""
        if not 1 <= len(e.args) <= 2 or any(a.name for a in e.args):
            raise P4Error.at(e.pos, "static_assert takes a condition and an optional message")
        check = e.args[0].value
        self.expr(check, scope, BoolT())
        if not isinstance(check.type, BoolT) or check.const is None:
            raise P4Error.at(check.pos, "static_assert needs a compile-time constant bool")
        message = ""
        if len(e.args) == 2:
            m = e.args[1].value
            if not isinstance(self.expr(m, scope), StringT) or m.const is None:
                raise P4Error.at(m.pos, "static_assert's message must be a string literal")
            message = m.const
        if not check.const:
            raise P4Error.at(e.pos, f"static_assert failed{': ' + message if message else ''}")
        e.kind, e.const = "static_assert", True
        return BoolT()

    @staticmethod
    def packet_in_rules(e: ir.Call, m: str) -> None:
        """core.p4's packet_in: extract takes a header (with a size only for a header with a
        varbit field); lookahead<T> takes a fixed-size type."""
        if m == "extract" and e.args and e.args[0].value is not None:
            target = e.args[0].value
            t = target.type
            if not (isinstance(t, HeaderT) and t.kind == "header"):
                raise P4Error.at(target.pos, f"extract needs a header, got {t}")
            has_varbit = any(isinstance(ft, Varbit) for _, ft in t.fields)
            if has_varbit != (len(e.args) == 2):
                raise P4Error.at(
                    e.pos,
                    "extract(hdr, size_in_bits) is for headers with a varbit field, "
                    "extract(hdr) for the others",
                )
        if m == "lookahead" and e.targs:
            t = e.targs[0]
            if isinstance(t, VoidT) or (
                isinstance(t, HeaderT) and any(isinstance(ft, Varbit) for _, ft in t.fields)
            ):
                raise P4Error.at(
                    e.pos,
                    f"lookahead<{t}> needs a fixed-size type (bit<W>, a header without varbit)",
                )

    def bind_args(
        self, e: ir.Call, params: list[ir.Param], scope: Scope, binding, what: str
    ) -> None:
        if any(a.name for a in e.args):
            by_name = {a.name: a for a in e.args}
            if None in by_name or set(by_name) - {p.name for p in params}:
                raise P4Error.at(
                    e.pos,
                    f"bad named arguments for {what} (parameters: {', '.join(p.name for p in params)})",
                )
            e.args = [by_name.get(p.name, ir.Arg(p.default, p.name, e.pos)) for p in params]
        if not self.arity_ok(params, e.args):
            raise P4Error.at(e.pos, f"{what} takes {len(params)} argument(s), got {len(e.args)}")
        for p in params[len(e.args) :]:  # trailing arguments left out: their defaults
            if p.default is None:
                break
            e.args.append(ir.Arg(p.default, p.name, e.pos))
        e.params = params
        self.infer_from_args(params, e.args, scope, binding)
        self.convert_args(params, e.args, scope, binding, what)
        for p, a in zip(params, e.args):
            if a.value is not None and p.direction in ("out", "inout"):
                self.check_lvalue(a.value)

    def infer_from_args(self, params: list[ir.Param], args: list[ir.Arg], scope, binding) -> None:
        """Type the arguments, binding the type variables the call leaves open to the types
        of the arguments passed for them (spec "Type inference": all arguments first, so
        `random(x, 0, 255)` takes T from x; an integer literal gives no width)."""
        for p, a in zip(params, args):
            if a.value is None:
                continue
            pt = getattr(p, "type", None) or self.param_type(p, scope, binding)
            self.expr(a.value, scope, pt)
            if isinstance(a.value.type, TableT):
                raise P4Error.at(
                    a.value.pos,
                    f"a table cannot be passed as an argument (parameter '{p.name}'); "
                    f"arguments are values, extern objects, parsers or controls",
                )
            if free_vars(pt):
                unifies(pt, a.value.type, binding, open_vars=True)

    def convert_args(self, params: list[ir.Param], args: list[ir.Arg], scope, binding, what):
        """Each argument against its parameter's type with the type variables inferred."""
        for p, a in zip(params, args):
            pt = getattr(p, "type", None) or self.param_type(p, scope, binding)
            if a.value is None:
                if p.direction != "out":
                    raise P4Error.at(a.pos, "'_' can only be passed to an out parameter")
                if isinstance(pt, TypeVar):
                    raise P4Error.at(
                        a.pos,
                        f"'_' gives no type for parameter '{p.name}' of {what}: pass a "
                        f"variable or field of the type wanted",
                    )
                continue
            if a.value is p.default and not _compile_time(a.value):
                raise P4Error.at(
                    a.value.pos,
                    f"default value of parameter '{p.name}' must be a compile-time constant",
                )
            generic = isinstance(p.typeref, ir.NamedTypeRef) and p.typeref.name in binding
            if generic and isinstance(pt, DontCareT):
                raise P4Error.at(
                    a.value.pos,
                    f"could not infer a type for parameter '{p.name}' of {what}: its type "
                    f"{p.typeref.name} is `_` in the instance's type (give the type there)",
                )
            if free_vars(pt):
                if isinstance(a.value.type, InfInt):
                    raise P4Error.at(
                        a.value.pos,
                        f"could not infer a width for parameter '{p.name}' of {what} from "
                        f"an integer without one: give it a width (e.g. 32w{a.value.const})",
                    )
                continue  # generic parameters take the argument's type as it is
            if generic and p.direction and isinstance(pt, StringT):
                raise P4Error.at(
                    a.value.pos,
                    f"parameter '{p.name}' of {what} has a direction ({p.direction}), so its "
                    f"type {p.typeref.name} cannot be string (only directionless "
                    f"parameters take strings)",
                )
            try:
                self.coerce(a.value, pt)
            except P4Error as err:
                if not generic:
                    raise
                raise P4Error.at(
                    a.value.pos,
                    f"{err.message} (parameter '{p.name}' of {what} has type "
                    f"{p.typeref.name}, which is {pt} here)",
                ) from None

    @staticmethod
    def bind_type_params(names: list[str], args: list[Type]) -> dict[str, Type]:
        """Type parameters bound to the type arguments given; the others, and those given as
        `_`, stay open (TypeVar) for inference from the arguments."""
        binding: dict[str, Type] = {n: TypeVar(n) for n in names}
        for n, a in zip(names, args):
            if not isinstance(a, DontCareT):
                binding[n] = a
        return binding

    def type_args_rule(self, e: ir.Call, names: list[str], what: str) -> None:
        if e.targs and len(e.targs) != len(names):
            raise P4Error.at(
                e.pos,
                f"{what} takes {len(names)} type argument(s), got {len(e.targs)}",
            )

    def param_type(self, p: ir.Param, scope: Scope, binding: dict[str, Type]) -> Type:
        ref = p.typeref
        if isinstance(ref, ir.NamedTypeRef) and ref.name in binding:
            return binding[ref.name]
        try:
            return self.resolve_type(ref, self.type_scope(scope, binding) if binding else scope)
        except P4Error:
            return TypeVar(getattr(ref, "name", "?"))


def _compile_time(e: ir.Expr) -> bool:
    """A constant, or a list or struct expression of constants (`{0, 0}` for a struct)."""
    if isinstance(e, ir.ListExpr):
        return all(_compile_time(x) for x in e.items)
    if isinstance(e, ir.StructInit):
        return all(_compile_time(x) for _, x in e.fields)
    return e.const is not None
