"""Declarations: types, constants, externs, functions, actions, parsers and controls, with
the parameter rules they share.
"""

from __future__ import annotations

import copy

from p4sim.errors import P4Error, unsupported
from p4sim.frontend import ir
from p4sim.frontend.typecheck.expressions import constant_initializer
from p4sim.frontend.typecheck.symbols import Frame, Overloads, Scope, TypeEntry, Var
from p4sim.frontend.typecheck.typerules import contains_extern
from p4sim.frontend.types import (
    Bits,
    BlockT,
    BoolT,
    EnumT,
    ErrorT,
    ExternT,
    GenericHeaderT,
    HeaderT,
    InfInt,
    NewBits,
    NewBool,
    StringT,
    Type,
    TypeParam,
    TypeVar,
    Varbit,
    VoidT,
    base_type,
    flattened_fields,
)
from p4sim.limits import MAX_TABLE_SIZE


class DeclarationRules:
    """The checker's rules for declarations (a part of `Checker`, which holds the state)."""

    def declaration(self, d, scope: Scope | None = None) -> None:
        scope = scope or self.scope
        if scope is self.scope and getattr(d, "name", None) == "main":
            self.main_rules(d)
        rule = TYPE_DECLARATIONS.get(type(d))
        if rule is None:
            self.type_param_rules(d)
            rule = GENERIC_DECLARATIONS.get(type(d), DeclarationRules.unsupported_decl)
        rule(self, d, scope)

    def error_decl(self, d: ir.ErrorDecl, scope: Scope) -> None:
        """`error {...}` and `match_kind {...}`: members add to the one type of each."""
        target = self.error_type if d.kind == "error" else self.match_kinds
        for name, pos in d.members:
            if d.kind == "error":
                if name in target.members:
                    raise P4Error.at(pos, f"error.{name} is already declared")
                target.members[name] = len(target.members)
            else:
                if name in target.members:
                    raise P4Error.at(pos, f"match_kind {name} is already declared")
                target.members.add(name)

    @staticmethod
    def translation(d: ir.TypedefDecl) -> tuple[str, int | None] | None:
        """A `type`'s @p4runtime_translation("uri", W | bit<W> | string): (uri, W or None
        for a string), as p4c reads it into P4Info's translated_type."""
        a = ir.annotation(d.annotations, "p4runtime_translation")
        if a is None:
            return None
        args = a.args
        uri = args[0] if args and isinstance(args[0], str) else None
        if uri is not None and args[1:] in (["string"],):
            return uri, None
        if (
            uri is not None
            and args[-1:]
            and isinstance(args[-1], int)
            and args[1:-1] in ([], ["bit"])
        ):
            return uri, args[-1]
        raise P4Error.at(
            a.pos,
            f"@p4runtime_translation of {d.name} takes a URI string and the control plane's "
            f'type: a width, bit<W> or string (e.g. @p4runtime_translation("p4.org/x", 32))',
        )

    def typedef_decl(self, d: ir.TypedefDecl, scope: Scope) -> None:
        t = self.resolve_type(d.typeref, scope)
        if d.newtype and not isinstance(t, (Bits, BoolT)):
            # spec, "Introducing new types" (p4c agrees): `type` only over bit<W>,
            # int<W>, bool or another `type`
            raise P4Error.at(
                d.typeref.pos,
                f"'type' can only define a new type over bit<W>, int<W>, bool or another "
                f"'type', not over {t} (use typedef for a synonym)",
            )
        # P4Info lists a `type`'s annotations but the translation (type_info.new_types)
        notes = tuple(a.text for a in d.annotations if a.name != "p4runtime_translation")
        if d.newtype and isinstance(t, Bits):  # a type of its own, run as its base type
            t = NewBits(t.width, t.signed, d.name, self.translation(d), notes)
        elif d.newtype:
            t = NewBool(d.name, notes)
        self.declare(scope, d.name, TypeEntry(t), d.pos)

    def header_decl(self, d: ir.HeaderDecl, scope: Scope) -> None:
        """A header, header_union or struct type; a generic one is made per specialisation."""
        if d.type_params:
            self.type_param_rules(d)
            # checked as p4c checks it, its type parameters unknown; made per specialisation
            self.header_type(
                d, self.type_scope(scope, {n: TypeParam(n) for n in d.type_params}), d.name
            )
            self.declare(scope, d.name, TypeEntry(GenericHeaderT(d, scope)), d.pos)
            return
        t = self.header_type(d, scope, d.name)
        self.declare(scope, d.name, TypeEntry(t), d.pos)
        ann = ir.annotation(d.annotations, "controller_header")
        if ann is not None:
            self.controller_headers.append(t)

    def header_type(self, d: ir.HeaderDecl, scope: Scope, name: str) -> HeaderT:
        """The type d declares, its fields' types resolved in scope."""
        fields = []
        seen = set()
        for f in d.fields:
            ft = self.resolve_type(f.typeref, scope)
            if f.name in seen:
                raise P4Error.at(f.pos, f"duplicate field '{f.name}' in {d.name}")
            seen.add(f.name)
            if d.kind == "header" and isinstance(ft, HeaderT) and ft.kind == "struct":
                # P4_16 "Header types": a struct of bit<W>, int<W>, bool, serializable enums
                # or such structs (p4c flattens it into the header)
                bad = next((x for _, x in flattened_fields(ft) if not _serialisable(x)), None)
                if bad is not None:
                    raise P4Error.at(
                        f.pos,
                        f"header field {d.name}.{f.name}: a struct in a header may hold only "
                        f"bit<W>, int<W>, bool, serializable enums or such structs, not {bad}",
                    )
            elif d.kind == "header" and not (isinstance(ft, Varbit) or _serialisable(ft)):
                raise P4Error.at(
                    f.pos,
                    f"header field {d.name}.{f.name} must be bit<W>, int<W>, bool or a serializable enum, not {ft}",
                )
            if isinstance(ft, StringT):
                raise P4Error.at(f.pos, f"field {d.name}.{f.name} cannot have type string")
            match = ir.annotation(f.annotations, "match")
            if (
                d.kind == "struct"
                and match
                and match.args not in ([k] for k in self.match_kinds.members)
            ):
                raise P4Error.at(
                    match.pos,
                    f"@match of field {d.name}.{f.name} must name one match_kind: "
                    f"{', '.join(sorted(self.match_kinds.members))}",
                )
            is_header = isinstance(ft, TypeVar) or (isinstance(ft, HeaderT) and ft.kind == "header")
            if d.kind == "header_union" and not is_header:
                raise P4Error.at(f.pos, f"header_union {d.name} may only contain headers, not {ft}")
            one_more = isinstance(ft, Varbit) and any(isinstance(x, Varbit) for _, x in fields)
            if d.kind == "header" and one_more:
                raise P4Error.at(f.pos, f"header {d.name} has more than one varbit field")
            fields.append((f.name, ft))
        t = HeaderT(name, d.kind, fields, d.annotations)
        if t.nested and any(isinstance(ft, Varbit) for _, ft in fields):
            raise unsupported(d.pos, f"header {d.name} with both a varbit and a struct field")
        t.field_annotations = [f.annotations for f in d.fields]
        return t

    def enum_decl(self, d: ir.EnumDecl, scope: Scope) -> None:
        under = None
        if d.underlying is not None:
            under = self.resolve_type(d.underlying, scope)
            if not isinstance(under, Bits):
                raise P4Error.at(d.pos, "a serializable enum needs a bit<W> or int<W> type")
        t = EnumT(d.name, [m[0] for m in d.members], under)
        for i, (mname, value, mpos) in enumerate(d.members):
            if mname in t.values:
                raise P4Error.at(mpos, f"duplicate member {d.name}.{mname}")
            if under is not None:
                if value is None:
                    raise P4Error.at(
                        mpos, f"member {d.name}.{mname} of a serializable enum needs a value"
                    )
                t.values[mname] = under.wrap(self.const_int(value, scope))
            else:
                t.values[mname] = i
        self.declare(scope, d.name, TypeEntry(t), d.pos)

    def const_decl(self, d: ir.ConstDecl, scope: Scope) -> None:
        t = self.resolve_type(d.typeref, scope)
        self.expr(d.value, scope, t)
        self.coerce(d.value, t)
        composite = constant_initializer(d.value) if d.value.const is None else None
        if d.value.const is None and composite is None:
            raise P4Error.at(
                d.value.pos, f"value of constant '{d.name}' is not a compile-time constant"
            )
        var = Var(d.name, t, "const", None, d.value.const, d.pos, composite=composite)
        self.declare(scope, d.name, var, d.pos)

    @staticmethod
    def type_param_rules(d) -> None:
        """The type parameters of a generic declaration are distinct."""
        names = getattr(d, "type_params", None) or []
        dup = next((n for i, n in enumerate(names) if n in names[:i]), None)
        if dup:
            raise P4Error.at(d.pos, f"duplicate type parameter '{dup}' of {d.name}")
        params = [*(getattr(d, "params", None) or []), *(getattr(d, "ctor_params", None) or [])]
        clash = next((p for p in params if p.name in names), None)
        if clash is not None:
            raise P4Error.at(
                clash.pos, f"'{clash.name}' names both a type parameter and a parameter of {d.name}"
            )

    def extern_decl(self, d: ir.ExternDecl, scope: Scope) -> None:
        self.declare(scope, d.name, TypeEntry(ExternT(d, [])), d.pos)
        # overloads are told apart by the number and the names of their parameters
        signatures: set[tuple] = set()
        for m in d.methods:
            sig = (m.name, tuple(p.name for p in m.params))
            if sig in signatures:
                raise P4Error.at(
                    m.pos,
                    f"{d.name}.{m.name}({', '.join(sig[1])}) is declared twice",
                )
            signatures.add(sig)
        for m in d.methods:
            if m.ret is None and m.name != d.name:
                raise P4Error.at(
                    m.pos,
                    f"'{m.name}' has no return type and is not a constructor of {d.name}",
                )
            if m.name == d.name and m.ret is not None:
                raise P4Error.at(m.pos, f"constructor {d.name} cannot have a return type")
            self.param_rules(m.params, scope, [*d.type_params, *m.type_params])
            for ref, t in self.signature(m, scope, [*d.type_params, *m.type_params]):
                if contains_extern(t, d):
                    raise P4Error.at(
                        ref.pos,
                        f"extern {d.name} refers to itself in {m.name}: a type cannot "
                        f"contain itself",
                    )

    def method_decl(self, d: ir.MethodDecl, scope: Scope) -> None:
        """An extern function."""
        self.param_rules(d.params, scope, d.type_params)
        self.signature(d, scope, d.type_params)
        self.declare(scope, d.name, Overloads([d]), d.pos)

    def block_decl(self, d: ir.ParserDecl | ir.ControlDecl | ir.PackageDecl, scope: Scope) -> None:
        """A parser, control or package, or the type of one (no body)."""
        generic = d.type_params and has_body(d)
        if getattr(d, "ctor_params", None) or generic:
            # checked once per instance, with its constructor and type arguments bound
            # (specialize)
            d.template = copy.deepcopy(d)
        self.param_rules(d.params, scope, d.type_params)
        d.param_types = [t for _, t in self.signature(d, scope, d.type_params)]
        self.param_rules(getattr(d, "ctor_params", []), scope, d.type_params)
        if {p.name for p in d.params} & {p.name for p in getattr(d, "ctor_params", [])}:
            dup = next(p for p in d.ctor_params if p.name in {q.name for q in d.params})
            raise P4Error.at(dup.pos, f"duplicate parameter '{dup.name}'")
        self.declare(scope, d.name, TypeEntry(BlockT(d)), d.pos)
        if generic:  # as p4c, its body is checked with the type parameters unknown
            self.check_generic_block(d)
        if getattr(d, "ctor_params", None):
            for p in d.ctor_params:
                p.type = self.resolve_type(p.typeref, scope)
                if isinstance(p.type, BlockT) and has_body(p.type.decl):
                    raise P4Error.at(
                        p.pos,
                        f"{p.name}: a parameter cannot have the type of {kind_of(p.type.decl)} "
                        f"{p.type.decl.name}, which is a declaration (give a "
                        f"{kind_of(p.type.decl)} type, `{kind_of(p.type.decl)} "
                        f"T(...);`)",
                    )
        elif generic:
            pass
        elif isinstance(d, ir.ParserDecl) and d.states is not None:
            self.parser_decl(d)
        elif isinstance(d, ir.ControlDecl) and d.body is not None:
            self.control_decl(d)

    def instantiation_decl(self, d: ir.Instantiation, scope: Scope) -> None:
        inst = self.instantiation(d, scope)
        self.declare(scope, d.name, inst, d.pos)
        if d.name == "main" and scope is self.scope:
            self.main = inst

    def unsupported_decl(self, d, scope: Scope) -> None:
        raise unsupported(getattr(d, "pos", None), type(d).__name__)

    def main_rules(self, d) -> None:
        """The top-level name `main` is the program's package instance."""
        t = self.resolve_type(d.typeref, self.scope) if isinstance(d, ir.Instantiation) else None
        if not (isinstance(t, BlockT) and isinstance(t.decl, ir.PackageDecl)):
            what = f"an instance of {t}" if t is not None else "a declaration"
            raise P4Error.at(
                d.pos,
                f"main must be a package instantiation such as V1Switch(...) main; "
                f"here it is {what}",
            )

    def param_rules(self, params: list[ir.Param], scope: Scope, type_params=()) -> None:
        """P4_16 spec, "Parameter declarations" and "Directions": names are unique in a list;
        int, string and extern-typed parameters are directionless; only in parameters (and
        directionless ones) may have a default value. Runs on declarations with and without
        bodies, so prototypes (parser types, packages, externs) are held to it too."""
        seen: set[str] = set()
        for p in params:
            if p.name in seen:
                raise P4Error.at(p.pos, f"duplicate parameter '{p.name}'")
            seen.add(p.name)
            if p.default is not None and p.direction in ("out", "inout"):
                raise P4Error.at(
                    p.pos, f"{p.direction} parameter '{p.name}' cannot have a default value"
                )
            if not p.direction:
                continue
            ref = p.typeref
            what = None
            if isinstance(ref, ir.BaseTypeRef) and ref.name == "string":
                what = "string"
            elif isinstance(ref, ir.BaseTypeRef) and ref.name == "int" and ref.width is None:
                what = "int"
            elif isinstance(ref, ir.NamedTypeRef) and ref.name not in type_params:
                entry = scope.lookup(ref.name)
                if isinstance(entry, TypeEntry) and isinstance(entry.type, ExternT):
                    what = f"extern {ref.name}"
            if what:
                raise P4Error.at(
                    p.pos,
                    f"parameter '{p.name}' of type {what} must be directionless "
                    f"(remove '{p.direction}')",
                )

    def signature(self, d, scope: Scope, type_params) -> list[tuple[ir.TypeRef, Type]]:
        """The parameter and return types of a declaration without a body (extern method or
        function, parser/control/package type), resolved with its type parameters unbound:
        they must name existing, well-formed types even where nothing calls them."""
        tscope = self.type_scope(scope, {n: TypeVar(n) for n in type_params})
        refs = [p.typeref for p in d.params] + [r for r in [getattr(d, "ret", None)] if r]
        return [(ref, self.resolve_type(ref, tscope)) for ref in refs]

    @staticmethod
    def type_scope(scope: Scope, binding: dict[str, Type]) -> Scope:
        """scope with the type parameters of a generic declaration bound (to TypeVars when
        not known yet)."""
        inner = Scope(scope)
        inner.names.update((n, TypeEntry(t)) for n, t in binding.items())
        return inner

    def params(
        self, params: list[ir.Param], scope: Scope, frame: Frame | None, block: bool = False
    ) -> None:
        """Declare params in scope, each in a slot of frame. block: the apply parameters of
        a parser or control, which may be extern objects (`register<bit<8>> r`), bound to
        the instance each apply call passes (no slot: the model binds them)."""
        self.param_rules(params, scope)
        for p in params:
            t = self.resolve_type(p.typeref, scope)
            p.type = t
            is_object = (
                isinstance(t, ExternT)
                and frame is not None
                and t.decl.name not in ("packet_in", "packet_out")
            )
            if is_object and not block:
                raise unsupported(p.pos, "extern object as a parameter of an action or function")
            if is_object:  # directionless: param_rules
                var = Var(p.name, t, "", None, None, p.pos)
                var.binding = self.object_binding(t)
                p.var = var
                self.declare(scope, p.name, var, p.pos)
                continue
            var = Var(p.name, t, p.direction, frame.alloc() if frame else None, None, p.pos)
            p.var = var
            self.declare(scope, p.name, var, p.pos)

    @staticmethod
    def no_optional_params(params: list[ir.Param]) -> None:
        """p4c: @optional is for the parameters of externs, parsers, controls and packages
        (architecture declarations), not of functions or actions."""
        for p in params:
            if ir.annotation(p.annotations, "optional"):
                raise P4Error.at(
                    p.pos,
                    f"{p.name}: @optional is allowed only on parameters of externs, parsers, "
                    "controls and packages",
                )

    def function_decl(self, d: ir.FunctionDecl, scope: Scope) -> None:
        self.no_optional_params(d.params)
        if d.type_params:  # checked per list of type arguments its calls give (specialize_function)
            self.type_param_rules(d)
            self.signature(d, scope, d.type_params)
            d.template, d.scope, d.specializations = copy.deepcopy(d), scope, {}
            unknown = {n: TypeParam(n) for n in d.type_params}
            self.check_generic(lambda: self.specialize_function(d, unknown))
            self.declare(scope, d.name, Overloads([d]), d.pos)
            return
        saved = (self.frame, self.return_type)
        self.frame = Frame()
        fscope = Scope(scope)
        self.params(d.params, fscope, self.frame)
        d.ret_type = self.resolve_type(d.ret, scope)
        self.return_type = d.ret_type
        self.stmt(d.body, fscope)
        if not isinstance(d.ret_type, VoidT) and not leaves(d.body):
            raise P4Error.at(d.pos, f"function '{d.name}' does not return a value on all paths")
        d.frame_size = self.frame.size
        self.frame, self.return_type = saved
        self.declare(scope, d.name, Overloads([d]), d.pos)

    # what checking a declaration adds to the whole program's lists (P4Info, back-end checks)
    _PROGRAM_LISTS = (
        "actions",
        "controller_headers",
        "digest_calls",
        "direct_meters",
        "extern_function_calls",
        "target_checks",
    )

    def check_generic(self, check) -> None:
        """Run check(), a generic declaration's body checked with its type parameters unknown
        (as p4c checks it), keeping nothing it adds to the program: only its specialisations
        run and are part of the program."""
        lengths = {n: len(getattr(self, n)) for n in self._PROGRAM_LISTS}
        state = ("frame", "block", "in_parser", "return_type", "in_action", "action")
        saved = {n: getattr(self, n) for n in state}
        self.block, self.in_parser, self.in_action, self.action = None, False, False, None
        try:
            check()
        finally:
            for n, v in saved.items():
                setattr(self, n, v)
            for n, length in lengths.items():
                del getattr(self, n)[length:]

    def check_generic_block(self, d: ir.ParserDecl | ir.ControlDecl) -> None:
        if getattr(d, "ctor_params", None):
            return  # checked per instance, with its constructor arguments (specialize)
        spec = copy.deepcopy(d.template)
        spec.type_params = []
        unknown = {n: TypeParam(n) for n in d.type_params}
        rule = self.parser_decl if isinstance(d, ir.ParserDecl) else self.control_decl
        self.check_generic(lambda: rule(spec, (), unknown))

    def specialize_function(self, d: ir.FunctionDecl, binding: dict) -> ir.FunctionDecl:
        """Generic function d with its type parameters bound: a copy of it, checked with
        them bound, made once per list of type arguments (as p4c specialises it)."""
        args = [binding[n] for n in d.type_params]
        key = tuple(str(a) for a in args)
        if key not in d.specializations:
            spec = copy.deepcopy(d.template)
            spec.type_params = []
            state = ("frame", "block", "in_parser", "return_type", "in_action", "action")
            saved = {n: getattr(self, n) for n in state}
            self.block, self.in_parser, self.in_action, self.action = None, False, False, None
            try:
                self.function_decl(spec, self.type_scope(d.scope, dict(zip(d.type_params, args))))
            finally:
                for n, v in saved.items():
                    setattr(self, n, v)
            d.specializations[key] = spec
        return d.specializations[key]

    def action_decl(self, d: ir.ActionDecl, scope: Scope) -> None:
        self.no_optional_params(d.params)
        top_level = self.frame is None
        saved = self.frame
        if top_level:
            self.frame = Frame()
        ascope = Scope(scope)
        seen_directionless = False
        for p in d.params:
            if p.direction == "":
                seen_directionless = True
            elif seen_directionless:
                raise P4Error.at(
                    p.pos, "directional action parameters must come before directionless ones"
                )
        for p in d.params:
            ref = p.typeref
            untyped_int = isinstance(ref, ir.BaseTypeRef) and ref.name == "int" and not ref.width
            if not p.direction and untyped_int:
                raise P4Error.at(
                    p.pos,
                    f"action parameter '{p.name}' of type int: parameters set by the "
                    f"control plane need a fixed-width type such as bit<W>",
                )
        self.params(d.params, ascope, self.frame)
        prev_action, self.in_action = self.in_action, True
        outer, self.action = self.action, d
        d.meters_read = set()
        self.stmt(d.body, ascope)
        self.in_action = prev_action
        self.action = outer
        d.top_level = top_level
        d.frame_size = self.frame.size if top_level else None
        if top_level:
            self.frame = saved
        d.qualified = d.name
        self.declare(scope, d.name, d, d.pos)
        self.actions.append(d)

    def parser_decl(self, d: ir.ParserDecl, bound=(), types=None) -> None:
        """bound: (name, constant Var or Instance, pos) of the constructor parameters;
        types: a generic parser's type parameters bound (specialize)."""
        self.frame = Frame()
        self.in_parser = True
        pscope = Scope(self.type_scope(self.scope, types) if types else self.scope)
        self.params(d.params, pscope, self.frame, block=True)
        for name, obj, pos in bound:
            self.declare(pscope, name, obj, pos)
        for p in d.params:
            p.var.block = d
        d.block_applies = []
        self.block = d
        for loc in d.locals:
            self.local(loc, pscope)
        d.state_map = {}
        for s in d.states:
            if s.name in d.state_map or s.name in ("accept", "reject"):
                raise P4Error.at(
                    s.pos, f"state '{s.name}' is declared twice (or is a reserved state)"
                )
            d.state_map[s.name] = s
        if "start" not in d.state_map:
            raise P4Error.at(d.pos, f"parser {d.name} has no 'start' state")
        for s in d.states:
            sscope = Scope(pscope)
            for st in s.stmts:
                self.stmt(st, sscope)
            tr = s.transition
            if tr is None:  # spec, "Parser states": no transition statement is `reject`
                tr = s.transition = ir.Transition(s.pos, "reject")
            targets = [tr.state] if tr.state is not None else [c.state for c in tr.cases]
            for tname, pos in zip(targets, [tr.pos] if tr.state else [c.pos for c in tr.cases]):
                if tname not in d.state_map and tname not in ("accept", "reject"):
                    raise P4Error.at(pos, f"transition to unknown state '{tname}'")
            if tr.select is not None:
                types = []
                for e in tr.select:
                    t = self.expr(e, sscope)
                    if not isinstance(t, (Bits, BoolT, EnumT, ErrorT, InfInt)):
                        raise P4Error.at(e.pos, f"cannot select on a value of type {t}")
                    types.append(t)
                for c in tr.cases:
                    if len(c.keyset) == 1 and isinstance(c.keyset[0], ir.Default):
                        continue
                    if self.select_value_set(c, types, sscope):
                        continue
                    if len(c.keyset) != len(types):
                        raise P4Error.at(
                            c.pos,
                            f"select has {len(types)} expression(s) but this case has {len(c.keyset)}",
                        )
                    for k, t in zip(c.keyset, types):
                        self.keyset_element(k, t, sscope)
        if not {"accept", "reject"} & reachable_states(d):
            raise P4Error.at(d.pos, f"parser {d.name} never reaches the accept or reject state")
        d.frame_size = self.frame.size
        self.frame = None
        self.in_parser = False
        self.block = None

    def value_set_decl(self, d: ir.ValueSetDecl, scope: Scope) -> None:
        """value_set<T>(size): T is bit<W> (or a serializable enum, a new type of bit<W>) or
        a struct of such fields, each matched as its @match annotation says (exact when
        absent), as p4c's P4Info describes it."""
        t = self.resolve_type(d.typeref, scope)
        if isinstance(t, HeaderT) and t.kind == "struct":
            annots = getattr(t, "field_annotations", [[] for _ in t.fields])
            members = [(n, ft, a) for (n, ft), a in zip(t.fields, annots)]
        else:
            members = [("", t, [])]
        d.fields = []  # (name, width, match kind)
        for name, ft, annots in members:
            if value_set_width(ft) is None:
                what = f"field {t.name()}.{name}" if name else "element type"
                raise P4Error.at(
                    d.typeref.pos,
                    f"value_set {d.name}: {what} must be bit<W> (or a struct of bit<W> "
                    f"fields), not {ft}",
                )
            match = ir.annotation(annots, "match")
            d.fields.append((name, value_set_width(ft), match.args[0] if match else "exact"))
        d.type = t
        d.size_value = self.const_int(d.size, scope)
        if not 0 < d.size_value <= MAX_TABLE_SIZE:
            raise P4Error.at(
                d.size.pos,
                f"value_set size {d.size_value} must be between 1 and {MAX_TABLE_SIZE:,}",
            )

    def select_value_set(self, c: ir.SelectCase, types: list[Type], scope: Scope) -> bool:
        """A select case whose keyset is a value set: its fields must be as many and as wide
        as the select's expressions."""
        k = c.keyset[0] if len(c.keyset) == 1 else None
        vs = scope.lookup(k.name) if isinstance(k, ir.Name) else None
        if not isinstance(vs, ir.ValueSetDecl):
            return False
        widths = [value_set_width(t) for t in types]
        if widths != [w for _, w, _ in vs.fields]:
            raise P4Error.at(
                k.pos,
                f"value_set {vs.name} holds {vs.type} values, which do not match the select "
                f"expression types ({', '.join(str(t) for t in types)})",
            )
        k.decl = c.value_set = vs
        return True

    def keyset_element(self, k: ir.Expr, t: Type, scope: Scope) -> None:
        if isinstance(k, ir.Default):
            return
        parts = (
            [k.value, k.mask]
            if isinstance(k, ir.Mask)
            else [k.low, k.high] if isinstance(k, ir.Range) else [k]
        )
        for p in parts:
            pt = t
            if isinstance(k, ir.Mask) and p is k.mask and isinstance(t, EnumT) and t.underlying:
                pt = t.underlying  # a mask on a serializable enum is a plain bit string (p4c)
            self.expr(p, scope, pt)
            self.coerce(p, pt)
            if p.const is None:
                raise P4Error.at(p.pos, "select keysets must be compile-time constants")

    def control_decl(self, d: ir.ControlDecl, bound=(), types=None) -> None:
        """bound: (name, constant Var or Instance, pos) of the constructor parameters;
        types: a generic control's type parameters bound (specialize)."""
        self.frame = Frame()
        cscope = Scope(self.type_scope(self.scope, types) if types else self.scope)
        self.params(d.params, cscope, self.frame, block=True)
        for name, obj, pos in bound:
            self.declare(cscope, name, obj, pos)
        for p in d.params:
            p.var.block = d
        d.block_applies = []  # apply calls of parser/control instances, for the model
        d.tables = []
        d.instances = []
        d.local_actions = []
        self.block = d
        for loc in d.locals:
            self.local(loc, cscope, d)
        self.stmt(d.body, cscope)
        d.frame_size = self.frame.size
        self.frame = None
        self.block = None

    def local(self, loc, scope: Scope, control: ir.ControlDecl | None = None) -> None:
        if isinstance(loc, ir.ConstDecl):
            self.declaration(loc, scope)
        elif isinstance(loc, ir.VarDecl):
            self.stmt(loc, scope)
        elif isinstance(loc, ir.Instantiation):
            inst = self.instantiation(loc, scope)
            if isinstance(inst.type, BlockT) and inst.type.decl is self.block:
                raise P4Error.at(
                    loc.pos, f"{loc.name}: {self.block.name} cannot instantiate itself"
                )
            loc.instance = inst
            self.declare(scope, loc.name, inst, loc.pos)
            if control is not None:
                control.instances.append(inst)
        elif isinstance(loc, ir.ValueSetDecl):
            if not self.in_parser:
                raise P4Error.at(loc.pos, f"value_set {loc.name}: value sets belong in parsers")
            self.value_set_decl(loc, scope)
            self.declare(scope, loc.name, loc, loc.pos)
        elif isinstance(loc, ir.ActionDecl):
            self.action_decl(loc, scope)
            control.local_actions.append(loc)
        elif isinstance(loc, ir.TableDecl):
            self.table_decl(loc, scope)
            self.declare(scope, loc.name, loc, loc.pos)
            control.tables.append(loc)
        else:
            raise unsupported(getattr(loc, "pos", None), type(loc).__name__)


# The rules for each kind of declaration, by IR class (the classes are leaves: the exact type
# finds the rule). Types and constants first; the other declarations may be generic, and
# their type parameters are checked before their rule runs.
TYPE_DECLARATIONS = {
    ir.ErrorDecl: DeclarationRules.error_decl,
    ir.TypedefDecl: DeclarationRules.typedef_decl,
    ir.HeaderDecl: DeclarationRules.header_decl,
    ir.EnumDecl: DeclarationRules.enum_decl,
    ir.ConstDecl: DeclarationRules.const_decl,
}
GENERIC_DECLARATIONS = {
    ir.ExternDecl: DeclarationRules.extern_decl,
    ir.MethodDecl: DeclarationRules.method_decl,
    ir.FunctionDecl: DeclarationRules.function_decl,
    ir.ActionDecl: DeclarationRules.action_decl,
    ir.ParserDecl: DeclarationRules.block_decl,
    ir.ControlDecl: DeclarationRules.block_decl,
    ir.PackageDecl: DeclarationRules.block_decl,
    ir.Instantiation: DeclarationRules.instantiation_decl,
}


def reachable_states(d: ir.ParserDecl) -> set[str]:
    """Names of the states the parser's written transitions lead to from `start`."""
    seen, todo = set(), ["start"]
    while todo:
        name = todo.pop()
        state = d.state_map.get(name)
        if name in seen or state is None:
            seen.add(name)
            continue
        seen.add(name)
        tr = state.transition
        todo += [tr.state] if tr.state is not None else [c.state for c in tr.cases]
    return seen


def leaves(s: ir.Stmt | None) -> bool:
    """Whether every path through `s` ends in `return` or `exit` (what follows it is
    unreachable, as p4c's def-use analysis finds it)."""
    if isinstance(s, (ir.Return, ir.Exit)):
        return True
    if isinstance(s, ir.Block):
        return any(leaves(st) for st in s.stmts)
    if isinstance(s, ir.If):
        return leaves(s.then) and leaves(s.other)
    if isinstance(s, ir.Switch):
        has_default = any(None in c.labels for c in s.cases)
        return has_default and all(leaves(c.body) for c in s.cases if c.body is not None)
    return False


def value_set_width(t: Type) -> int | None:
    """The width of a value set field or select expression of type t: bit<W>, a type over
    bit<W>, a serializable enum; None for any other type."""
    b = base_type(t)
    if isinstance(b, Bits) and not b.signed:
        return b.width
    if isinstance(t, EnumT) and t.underlying is not None:
        return t.underlying.width
    return None


def kind_of(d) -> str:
    return {ir.ParserDecl: "parser", ir.ControlDecl: "control"}.get(type(d), "package")


def has_body(d) -> bool:
    """A parser or control declaration, not a parser or control type (prototype)."""
    return getattr(d, "states", None) is not None or getattr(d, "body", None) is not None


def _serialisable(t) -> bool:
    """A type a header field (or a field of a header's struct) may have, besides varbit; a
    generic declaration's type parameter may become one."""
    return isinstance(t, (Bits, BoolT, TypeVar)) or (
        isinstance(t, EnumT) and t.underlying is not None
    )
