"""Instantiations: extern objects with their constructor arguments, the package `main` with
its parser and control arguments, and parsers and controls specialised by theirs.
"""

from __future__ import annotations

import copy

from p4sim.errors import P4Error, unsupported
from p4sim.frontend import ir
from p4sim.frontend.typecheck.declarations import kind_of
from p4sim.frontend.typecheck.symbols import Instance, Scope, TypeEntry, Var
from p4sim.frontend.typecheck.typerules import same_type, substitute, unifies
from p4sim.frontend.types import (
    Bits,
    BlockT,
    DontCareT,
    ExternT,
    Type,
    TypeVar,
)


class InstanceRules:
    """The checker's rules for instantiations (a part of `Checker`, which holds the state)."""

    def instantiation(self, d: ir.Instantiation, scope: Scope) -> Instance:
        t = self.resolve_type(d.typeref, scope)
        inst = Instance(d.name, t, d, [], d.annotations)
        if d.initializer is not None and not isinstance(t, ExternT):
            raise P4Error.at(
                d.pos,
                f"{d.name}: initializers (`= {{ ... }}`) are only allowed for extern instances, "
                f"and {t.name()} is not an extern",
            )
        if isinstance(t, ExternT):
            ctors = [m for m in t.decl.methods if m.ret is None]
            # An exact arity first; then one that leaves out @optional parameters (T2NA's
            # Counter(size, type, @optional true_egress_accounting)).
            ctor = next((c for c in ctors if len(c.params) == len(d.args)), None) or next(
                (c for c in ctors if self.arity_ok(c.params, d.args)), None
            )
            if ctor is None:
                raise P4Error.at(
                    d.pos,
                    f"{t.decl.name} takes {' or '.join(str(len(c.params)) for c in ctors) or 'no'} constructor argument(s), got {len(d.args)}",
                )
            names = t.decl.type_params
            optional = V1MODEL_OPTIONAL_INDEX.get(t.decl.name, ())
            left_out = names[len(t.args) :]
            if t.args and len(t.args) != len(names) and not set(left_out) <= set(optional):
                raise P4Error.at(
                    d.typeref.pos,
                    f"{t.decl.name} takes {len(names)} type argument(s), got {len(t.args)}",
                )
            binding = self.object_binding(t)
            self.infer_from_args(ctor.params, d.args, scope, binding)
            for p, a in zip(ctor.params, d.args):
                if p.name == "size":
                    self.check_extern_size(t.decl.name, a.value)
            self.convert_args(ctor.params, d.args, scope, binding, t.decl.name)
            for i, n in enumerate(names):
                given = t.args[i] if i < len(t.args) else None
                if isinstance(binding[n], TypeVar) and isinstance(given, DontCareT):
                    binding[n] = given  # `E<_>`: what no argument determines stays `_`
                elif isinstance(binding[n], TypeVar) and not t.args:
                    raise P4Error.at(
                        d.pos,
                        f"{d.name}: could not infer a type for type parameter {n} of "
                        f"{t.decl.name} (no constructor argument determines it): give the "
                        f"type arguments, {t.decl.name}<...>(...)",
                    )
            for p, a in zip(ctor.params, d.args):
                obj = self.extern_ctor_arg(a.value, scope)
                if obj is None and a.value.const is None:
                    raise P4Error.at(
                        a.value.pos,
                        f"constructor argument '{p.name}' must be a compile-time constant",
                    )
                inst.ctor_args.append(a.value.const if obj is None else obj)
            inst.binding = binding
            self.instance_methods(d, inst, scope)
            if t.decl.name == "direct_meter":
                self.direct_meters.append(inst)
            return inst
        if isinstance(t, BlockT):
            if isinstance(t.decl, ir.PackageDecl):
                if not self.arity_ok(t.decl.params, d.args):
                    raise P4Error.at(
                        d.pos,
                        f"package {t.decl.name} takes {len(t.decl.params)} arguments, got {len(d.args)}",
                    )
                args = d.args
                if any(a.name for a in args):  # V1Switch(p = P(), ig = I(), ...)
                    by_name = {a.name: a for a in args}
                    if set(by_name) != {p.name for p in t.decl.params}:
                        raise P4Error.at(
                            d.pos,
                            f"package {t.decl.name} takes the named arguments "
                            f"{', '.join(p.name for p in t.decl.params)}",
                        )
                    args = [by_name[p.name] for p in t.decl.params]
                tscope = self.type_scope(scope, {n: TypeVar(n) for n in t.decl.type_params})
                # the package's type parameters: as given (`V1Switch<H, M>(...)`), else inferred
                targs = [self.resolve_type(a, scope) for a in getattr(d.typeref, "args", [])]
                if targs and len(targs) != len(t.decl.type_params):
                    raise P4Error.at(
                        d.typeref.pos,
                        f"package {t.decl.name} takes {len(t.decl.type_params)} type "
                        f"argument(s), got {len(targs)}",
                    )
                binding: dict[str, Type] = {
                    n: a for n, a in zip(t.decl.type_params, targs) if not isinstance(a, DontCareT)
                }
                for p, a in zip(t.decl.params, args):
                    arg = self.block_arg(a.value, scope)
                    self.package_arg_rules(p, arg, a.value.pos, tscope, binding)
                    inst.ctor_args.append(arg)
                for p in t.decl.params[len(args) :]:
                    if p.default is None:
                        continue  # an @optional one left out
                    unbound = [
                        n
                        for n in getattr(p.typeref, "args", [])
                        if getattr(n, "name", None) in t.decl.type_params and n.name not in binding
                    ]
                    if unbound:  # as p4c: a default's types come from the other arguments
                        raise P4Error.at(
                            d.pos,
                            f"{d.name}: could not infer a type for variable {unbound[0].name}",
                        )
                return inst
            if scope is self.scope:
                raise P4Error.at(
                    d.pos,
                    f"{d.name}: {t.decl.name} cannot be instantiated at the top level (only "
                    f"externs and packages can; instantiate it inside a parser or control)",
                )
            if d.args or getattr(t.decl, "ctor_params", None) or t.decl.type_params:
                inst.type = self.specialize(t, d.args, scope, d.pos, d.typeref)
            return inst
        raise P4Error.at(d.pos, f"cannot instantiate {t}")

    @staticmethod
    def extern_ctor_arg(e: ir.Expr, scope: Scope) -> Instance | None:
        """An extern instance passed to a constructor (TNA's `RegisterAction(reg)`)."""
        if isinstance(e, ir.Name):
            obj = scope.lookup(e.name)
            if isinstance(obj, Instance) and isinstance(obj.type, ExternT):
                return obj
        return None

    def instance_methods(self, d: ir.Instantiation, inst: Instance, scope: Scope) -> None:
        """The initializer `= { ... }` of an extern instance: each method implements one of
        the extern's abstract methods with its signature (the instance's type arguments
        substituted); it runs in the enclosing control, whose names it sees (spec
        "Abstract methods"). Every abstract method not marked @optional must be implemented."""
        decl = inst.type.decl
        abstract = {m.name: m for m in decl.methods if m.abstract}
        inst.methods = {}
        if not abstract and d.initializer is None:
            return
        if d.initializer is None:
            raise P4Error.at(
                d.pos,
                f"{d.name}: {decl.name} needs an initializer implementing "
                f"{', '.join(sorted(abstract))} ({decl.name}<...>(...) {d.name} = {{ ... }};)",
            )
        if self.frame is None or self.in_parser:
            raise unsupported(
                d.pos, f"{d.name}: an instance with abstract methods outside a control"
            )
        for fd in d.initializer:
            am = abstract.get(fd.name)
            if am is None:
                raise P4Error.at(
                    fd.pos,
                    f"{d.name}: {decl.name} has no abstract method '{fd.name}' "
                    f"(abstract: {', '.join(sorted(abstract)) or 'none'})",
                )
            if fd.name in inst.methods:
                raise P4Error.at(fd.pos, f"{d.name}: method '{fd.name}' is implemented twice")
            self.abstract_method(d.name, fd, am, inst.binding, scope)
            inst.methods[fd.name] = fd
        required = {n for n, m in abstract.items() if not ir.annotation(m.annotations, "optional")}
        missing = sorted(required - set(inst.methods))
        if missing:
            raise P4Error.at(
                d.pos, f"{d.name}: the initializer does not implement {', '.join(missing)}"
            )

    def abstract_method(self, iname: str, fd: ir.FunctionDecl, am, binding, scope) -> None:
        """One method of an initializer against the abstract one it implements: parameters
        (those marked @optional may be left out at the end) in the enclosing control's
        frame, then the body in a scope that sees the control's names."""
        what = f"{iname}.{fd.name}"
        required = [p for p in am.params if not ir.annotation(p.annotations, "optional")]
        if not len(required) <= len(fd.params) <= len(am.params):
            raise P4Error.at(
                fd.pos,
                f"{what} takes {len(am.params)} parameter(s) as declared in the extern, "
                f"got {len(fd.params)}",
            )
        if fd.type_params:
            raise P4Error.at(fd.pos, f"{what}: an abstract method's implementation is not generic")
        mscope = Scope(scope)
        self.params(fd.params, mscope, self.frame)
        for p, ap in zip(fd.params, am.params):
            want = self.param_type(ap, scope, binding)
            if p.direction != ap.direction or not same_type(p.type, want):
                wanted = " ".join(filter(None, (ap.direction, want.name())))
                got = " ".join(filter(None, (p.direction, p.type.name())))
                raise P4Error.at(
                    p.pos,
                    f"{what}: parameter '{p.name}' must be {wanted} as declared in the extern, "
                    f"got {got}",
                )
        fd.ret_type = self.resolve_type(fd.ret, scope)
        want_ret = self.param_type(ir.Param(am.pos, "", am.ret, "", None, []), scope, binding)
        if not same_type(fd.ret_type, want_ret):
            raise P4Error.at(fd.pos, f"{what} must return {want_ret.name()}")
        saved = self.return_type
        self.return_type = fd.ret_type
        self.stmt(fd.body, mscope)
        self.return_type = saved

    def object_binding(self, t: ExternT) -> dict:
        """The type parameters of an extern object's type bound to its type arguments,
        v1model's index type I, when not given, to bit<32> (V1MODEL_OPTIONAL_INDEX)."""
        binding = self.bind_type_params(t.decl.type_params, t.args)
        optional = V1MODEL_OPTIONAL_INDEX.get(t.decl.name, ())
        binding.update((n, Bits(32)) for n in optional if isinstance(binding[n], TypeVar))
        return binding

    def direct_instance(self, ref: ir.Name, t: BlockT) -> Instance:
        """`C.apply(...)` on a parser or control type (spec, "Direct type invocation"): a
        fresh instance of C without constructor arguments, local to the block that applies
        it and named by the type, as p4c's frontend names it (`Ingress.C.t` for its table)."""
        if not isinstance(t.decl, (ir.ParserDecl, ir.ControlDecl)) or self.block is None:
            raise P4Error.at(
                ref.pos,
                f"{ref.name} is a type: only a parser or control type "
                "can be applied directly, from a parser or control",
            )
        if t.decl is self.block:
            raise P4Error.at(ref.pos, f"{ref.name} cannot apply itself")
        if t.decl.ctor_params:
            raise P4Error.at(
                ref.pos,
                f"{ref.name} has constructor parameters: instantiate it to apply it "
                f"({ref.name}(...) name;)",
            )
        loc = ir.Instantiation(ref.pos, ref.name, [], ir.NamedTypeRef(ref.pos, ref.name), [])
        loc.instance = Instance(ref.name, t, loc)
        self.block.locals.append(loc)
        if isinstance(self.block, ir.ControlDecl):
            self.block.instances.append(loc.instance)
        return loc.instance

    def specialize(self, t: BlockT, args: list[ir.Arg], scope: Scope, pos, typeref=None) -> BlockT:
        """The parser or control type t with its constructor parameters bound to args and
        its type parameters to typeref's type arguments: a copy of its declaration, checked
        with each value parameter a constant and each parser or control parameter the
        instance given (spec, "Instantiations"; p4c likewise checks and names every
        instance's objects separately)."""
        decl = t.decl
        types = None
        if decl.type_params:
            given = getattr(typeref, "args", None) or []
            if len(given) != len(decl.type_params):
                raise P4Error.at(
                    pos,
                    f"generic {kind_of(decl)} {decl.name} needs its {len(decl.type_params)} "
                    f"type argument(s) ({', '.join(decl.type_params)}): "
                    f"{decl.name}<...>(...) name;",
                )
            types = dict(zip(decl.type_params, (self.resolve_type(a, scope) for a in given)))
        params = decl.ctor_params
        if any(a.name for a in args):
            by_name = {a.name: a for a in args}
            if set(by_name) != {p.name for p in params}:
                raise P4Error.at(
                    pos,
                    f"{decl.name} takes the constructor arguments "
                    f"{', '.join(p.name for p in params)}",
                )
            args = [by_name[p.name] for p in params]
        if len(args) != len(params):
            raise P4Error.at(
                pos, f"{decl.name} takes {len(params)} constructor argument(s), got {len(args)}"
            )
        bound = []
        for p, a in zip(params, args):
            if isinstance(p.type, BlockT):
                arg = self.block_arg(a.value, scope)
                self.package_arg_rules(p, arg, a.value.pos, self.scope, {}, "constructor parameter")
                bound.append((p.name, arg, p.pos))
                continue
            self.expr(a.value, scope, p.type)
            self.coerce(a.value, p.type)
            if a.value.const is None:
                raise P4Error.at(
                    a.value.pos, f"constructor argument '{p.name}' must be a compile-time constant"
                )
            var = Var(p.name, p.type, "const", None, a.value.const, p.pos, ctor_param=True)
            bound.append((p.name, var, p.pos))
        spec = copy.deepcopy(decl.template)
        spec.ctor_params, spec.param_types, spec.type_params = [], decl.param_types, []
        state = ("frame", "block", "in_parser", "return_type", "in_action", "action")
        saved = {n: getattr(self, n) for n in state}
        self.return_type, self.in_action, self.action = None, False, None
        try:
            if isinstance(spec, ir.ParserDecl):
                self.parser_decl(spec, bound, types)
            else:
                self.control_decl(spec, bound, types)
        finally:
            for n, v in saved.items():
                setattr(self, n, v)
        spec.bound_instances = [obj for _, obj, _ in bound if isinstance(obj, Instance)]
        return BlockT(spec)

    def package_arg_rules(
        self,
        p: ir.Param,
        arg: Instance,
        pos,
        scope: Scope,
        binding: dict[str, Type],
        what: str = "package parameter",
    ) -> None:
        """A package argument is a parser where the parameter's type is a parser type and a
        control where it is a control type, with the same parameter directions and types
        (the package's type parameters, such as V1Switch's H and M, bind once for all its
        arguments: spec, "Type inference")."""
        want = self.resolve_type(p.typeref, scope)
        if not isinstance(want, BlockT):
            raise P4Error.at(pos, f"{what} '{p.name}' is not a parser or control type")
        kind = {ir.ParserDecl: "parser", ir.ControlDecl: "control", ir.PackageDecl: "package"}
        got_kind, want_kind = kind[type(arg.type.decl)], kind[type(want.decl)]
        if got_kind != want_kind:
            raise P4Error.at(
                pos,
                f"{got_kind} {arg.type.decl.name} does not match {what} "
                f"'{p.name}' of type {want_kind} {want.decl.name}",
            )
        got_params, want_params = arg.type.decl.params, want.decl.params
        omitted = want_params[len(got_params) :]  # only those with a default (or @optional)
        if len(got_params) > len(want_params) or any(
            w.default is None and not ir.annotation(w.annotations, "optional") for w in omitted
        ):
            raise P4Error.at(
                pos,
                f"{got_kind} {arg.type.decl.name} has {len(got_params)} parameter(s), but "
                f"{what} '{p.name}' of type {want.decl.name} takes "
                f"{len(want_params)}",
            )
        if len(got_params) == len(want_params):
            for g, w in zip(got_params, want_params):
                if g.direction != w.direction:
                    raise P4Error.at(
                        g.pos,
                        f"parameter '{g.name}' of {arg.type.decl.name} is "
                        f"'{g.direction or 'directionless'}', but {want.decl.name} declares "
                        f"it '{w.direction or 'directionless'}' ({what} '{p.name}')",
                    )
            # `Parser<H, M>`: the parser type's own type parameters stand for the package's
            targs = [self.resolve_type(a, scope) for a in getattr(p.typeref, "args", [])]
            rename = {
                n: TypeVar(f"{p.name}.{n}") if isinstance(a, DontCareT) else a  # `_`: infer
                for n, a in zip(want.decl.type_params, targs)
            }
            if not rename:
                binding = {}  # a type without arguments binds its own type parameters
            got_types, want_types = arg.type.decl.param_types, want.decl.param_types
            for g, gt, wt in zip(got_params, got_types, want_types):
                wt = substitute(wt, rename)
                if not unifies(wt, gt, binding):
                    raise P4Error.at(
                        g.pos,
                        f"parameter '{g.name}' of {arg.type.decl.name} has type {gt}, but "
                        f"{want.decl.name} declares it {substitute(wt, binding)} (package "
                        f"parameter '{p.name}')",
                    )

    def block_arg(self, e: ir.Expr, scope: Scope) -> Instance:
        """A package argument: `Ctl()` (anonymous instance) or the name of an instance."""
        if isinstance(e, ir.Call) and isinstance(e.func, ir.Name):
            entry = scope.lookup(e.func.name)
            if isinstance(entry, TypeEntry) and isinstance(entry.type, BlockT):
                t = entry.type
                if e.args or getattr(t.decl, "ctor_params", None):
                    t = self.specialize(t, e.args, scope, e.pos)
                return Instance(e.func.name, t, None)
        if isinstance(e, ir.Name):
            entry = scope.lookup(e.name)
            if isinstance(entry, Instance) and isinstance(entry.type, BlockT):
                return entry
        raise P4Error.at(
            e.pos, "package arguments must be parser/control instances such as MyIngress()"
        )


# p4c's default v1model.p4 (V1MODEL_VERSION 20180101) declares these externs without the
# index type I that p4sim's v1model.p4 declares (as p4c's 20200408 version does), with a
# bit<32> index: programs written for it give no type argument for I, which is then bit<32>.
V1MODEL_OPTIONAL_INDEX = {"counter": ("I",), "meter": ("I",), "register": ("I",)}
