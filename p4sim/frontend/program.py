"""From the typed IR to the control-plane view: the instance tree and the `ProgramModel`.

Naming follows p4c (P4Info): a control instantiated anonymously in `main` is named by its type
(`MyIngress`), a named instance by its name; objects declared in a control are
`<control path>.<local name>`, nested control instances extend the path
(`DcIngress.ue_sessions.ue_sessions_v4`); top-level actions keep their plain name (`NoAction`).
`@name("x")` replaces the local part, `@name(".x")` makes the name absolute. `@hidden` objects
are left out of the model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from p4sim.errors import P4Error, unsupported
from p4sim.frontend import ir
from p4sim.frontend.liveness import has_return, live_calls
from p4sim.frontend.typecheck import Checker
from p4sim.frontend.typecheck.symbols import Instance
from p4sim.frontend.types import (
    Bits,
    BlockT,
    BoolT,
    EnumT,
    ErrorT,
    ExternT,
    HeaderT,
    NewBits,
    NewBool,
    TupleT,
    bit_width,
    flattened_fields,
)
from p4sim.model import (
    PRIORITY_MATCH_KINDS,
    ActionDef,
    ActionProfileDef,
    ActionRefDef,
    ConstEntryDef,
    ControllerHeaderDef,
    CounterDef,
    DigestDef,
    FieldMatch,
    MatchFieldDef,
    MeterDef,
    PackageInfo,
    ParamDef,
    ProgramModel,
    RegisterDef,
    TableDef,
    ValueSetDef,
)


def qualify(path: str, local: str, annotations: list[ir.Annotation]) -> str:
    a = ir.annotation(annotations, "name")
    if a is not None and a.args and isinstance(a.args[0], str):
        local = a.args[0]
        if local.startswith("."):
            return local[1:]
    return f"{path}.{local}" if path else local


def is_hidden(annotations) -> bool:
    return ir.annotation(annotations, "hidden") is not None


def annotation_texts(annotations) -> list[str]:
    return [a.text for a in annotations if a.name not in ("name",)]


def annotation_string(annotations, name: str) -> str:
    """The string of `@name("...")` (the parser checked it is one); "" without it."""
    a = ir.annotation(annotations, name)
    return a.args[0] if a is not None and a.args else ""


@dataclass(eq=False)
class BlockNode:
    """One parser or control instance in the program, with the names of what it declares."""

    path: str
    decl: object  # ir.ParserDecl | ir.ControlDecl
    tables: dict = field(default_factory=dict)  # ir.TableDecl -> TableDef
    actions: dict = field(default_factory=dict)  # ir.ActionDecl -> qualified name
    externs: dict = field(default_factory=dict)  # Instance -> qualified name
    children: dict = field(default_factory=dict)  # Instance -> BlockNode
    value_sets: dict = field(default_factory=dict)  # ir.ValueSetDecl -> qualified name


_LITERAL_BASE = re.compile(r"(?:\d+[ws])?0([xXoObB])")
_BASE_PREFIX = {"x": ("0x", "x"), "o": ("0o", "o"), "b": ("0b", "b"), "": ("", "d")}


def literal_text(e: ir.IntLit) -> str:
    """An integer literal as p4c names it in a key: without its width, in the base it was
    written in (`0x10101010101` for `0x010101010101`, `0xf0` for `16w0x00F0`)."""
    m = _LITERAL_BASE.match(e.text)
    prefix, fmt = _BASE_PREFIX[m.group(1).lower() if m else ""]
    return f"{'-' if e.value < 0 else ''}{prefix}{abs(e.value):{fmt}}"


def field_control_name(t, name: str) -> str:
    """A struct or header field's name in a key name: its @name if it has one, as in p4c."""
    if isinstance(t, HeaderT) and name in t.index and hasattr(t, "field_annotations"):
        return annotation_string(t.field_annotations[t.index[name]], "name") or name
    return name


def expr_text(e: ir.Expr) -> str:
    """An expression as p4c prints it (used for match-field names)."""
    if isinstance(e, ir.Name):
        return ("." if e.absolute else "") + e.name
    if isinstance(e, ir.Member):
        name = field_control_name(getattr(e.expr, "type", None), e.name)
        if name.startswith("."):  # a global @name: the field alone, without the dot
            return name[1:]
        return f"{expr_text(e.expr)}.{name}"
    if isinstance(e, ir.Index):
        return f"{expr_text(e.expr)}[{expr_text(e.index)}]"
    if isinstance(e, ir.Slice):
        return f"{expr_text(e.expr)}[{expr_text(e.hi)}:{expr_text(e.lo)}]"
    if isinstance(e, ir.IntLit):
        return literal_text(e)
    if isinstance(e, ir.Call):
        if isinstance(e.func, ir.Member) and e.func.name == "isValid" and not e.args:
            return f"{expr_text(e.func.expr)}.$valid$"  # p4c's name for validity keys
        return f"{expr_text(e.func)}()" if not e.args else f"{expr_text(e.func)}(...)"
    if isinstance(e, ir.Cast):
        return f"({expr_text(e.expr)})"
    if isinstance(e, ir.Binary):
        return f"{expr_text(e.left)} {e.op} {expr_text(e.right)}"
    return "?"


def value_width(t) -> int:
    if isinstance(t, (Bits, BoolT)) or (isinstance(t, EnumT) and t.underlying):
        return bit_width(t)
    return 32  # error / plain enums as keys: P4Runtime sees them as 32-bit values here


# BMv2's priorities are int32, the smallest wins; simple_switch_grpc's P4Runtime server (PI)
# shows a BMv2 priority b as 2^31-1 - b, where the largest wins.
BMV2_MAX_PRIORITY = 2**31 - 1


def bmv2_entries(
    t: ir.TableDecl, entries: list[ConstEntryDef], needs_priority: bool
) -> list[ConstEntryDef]:
    """A table's `entries` as p4c hands them to BMv2, with the priorities BMv2 matches them
    by, written as P4Runtime priorities (larger wins; 0 in a table without priorities).

    p4c sorts the entries by their P4 priorities (`t.entry_priorities`: highest first, lowest
    first when `largest_priority_wins = false`; equal ones in the listed order), and gives
    each its position 1, 2, ... in that order as its BMv2 priority, or N for p4c's
    `@priority(N)` annotation on the entry. BMv2 picks the matching entry with the smallest
    one, the first of equals."""
    order = sorted(
        range(len(entries)),
        key=lambda i: -t.entry_priorities[i] if t.largest_priority_wins else t.entry_priorities[i],
    )
    out = []
    for position, i in enumerate(order, 1):
        a = ir.annotation(t.entries[i].annotations, "priority")
        if a is not None and (len(a.args) != 1 or not isinstance(a.args[0], int)):
            raise P4Error.at(a.pos, "@priority needs one integer: @priority(N)")
        bmv2 = a.args[0] if a is not None else position
        entries[i].priority = BMV2_MAX_PRIORITY - bmv2 if needs_priority else 0
        out.append(entries[i])
    return out


# The keys P4Info's PkgInfo and its PlatformProperties have; p4c warns about others and
# leaves them out.
PKGINFO_KEYS = ("name", "version", "organization", "contact", "url", "arch")
PLATFORM_PROPERTY_KEYS = (
    "multicast_group_table_size",
    "multicast_group_table_total_replicas",
    "multicast_group_table_max_replicas_per_entry",
)


def package_info(main: Instance) -> PackageInfo:
    """pkg_info from the annotations on `main` (P4Runtime spec 6.1, as p4c-bm2-ss writes it):
    @pkginfo's strings, @platform_property's integers and main's other annotations."""
    package = PackageInfo()
    for a in main.annotations:
        if a.name == "pkginfo":
            for key, value in a.pairs:
                if key not in PKGINFO_KEYS:
                    continue
                if not isinstance(value, ir.StrLit):
                    raise P4Error.at(value.pos, f"@pkginfo: the value of '{key}' must be a string")
                package.fields[key] = value.value
        elif a.name == "platform_property":
            for key, value in a.pairs:
                if key not in PLATFORM_PROPERTY_KEYS:
                    continue
                if not isinstance(value, ir.IntLit):
                    raise P4Error.at(
                        value.pos, f"@platform_property: the value of '{key}' must be an integer"
                    )
                package.platform_properties[key] = value.value
        else:
            package.annotations.append(a.text)
    return package


def tna_arch(pkg: ir.PackageDecl) -> str | None:
    """ "tna" or "t2na" for TNA's / T2NA's top-level package (`@pkginfo(arch="TNA")` or
    "T2NA" in tna.p4/t2na.p4), else None."""
    info = ir.annotation(pkg.annotations, "pkginfo")
    arch = dict(info.pairs).get("arch") if info is not None else None
    ok = isinstance(arch, ir.StrLit) and arch.value in ("TNA", "T2NA")
    return arch.value.lower() if ok else None


# TNA externs the model lists (what P4Runtime reads and writes) and those that are stateless
# for the control plane (their state, if any, lives in the device: register actions run on
# the Register they name, a DirectRegister's cells on its table's entries).
TNA_STATELESS_EXTERNS = (
    "RegisterAction",
    "DirectRegister",
    "DirectRegisterAction",
    "Hash",
    "CRCPolynomial",
    "Checksum",
    "Random",
)
# bf-p4c gives a table without `size` 512 entries (BMv2 1024, the type checker's default).
TNA_DEFAULT_TABLE_SIZE = 512
# TNA externs p4sim declares but does not run, refused where they are instantiated.
TNA_REFUSED_EXTERNS = ("Mirror",)


class ModelBuilder:
    def __init__(self, checker: Checker):
        self.checker = checker
        self.tables: list[TableDef] = []
        self.hidden_tables: list[TableDef] = []
        self.actions: dict[str, ActionDef] = {}  # in the model (referenced by visible tables)
        self.all_actions: dict[str, ActionDef] = {}  # also those of @hidden tables
        self.registers: list[RegisterDef] = []
        self.counters: list[CounterDef] = []
        self.meters: list[MeterDef] = []
        self.value_sets: list[ValueSetDef] = []
        self.unlisted_externs: list[str] = []  # TNA: in P4Info aliases only
        self.extern_instances: list[str] = []
        self.names: set[str] = set()
        self.nodes: list[BlockNode] = []
        self.global_externs: dict = {}  # top-level extern Instance -> name
        self.enums: dict = {}  # serializable enums seen by the control plane (P4Info)
        self.new_types: dict = {}  # and `type`s
        self.new_type_annotations: dict = {}  # their annotations, P4Info lists them too
        self.new_type_annotations: dict = {}  # their annotations, P4Info lists them too
        self.profiles: dict[str, ActionProfileDef] = {}  # action profiles and selectors
        self.direct_actions: set[str] = set()  # called from apply
        self.table_actions: set[str] = set()  # actions of visible tables
        self.default_table_size = 0  # 0: the type checker's (BMv2's 1024)

    def build(self) -> tuple[ProgramModel, list[BlockNode]]:
        main = self.checker.main
        pkg = main.type.decl
        arch, pipe = "v1model", ""
        if isinstance(pkg, ir.PackageDecl) and tna_arch(pkg):
            arch = tna_arch(pkg)
            blocks, pipe = self.tna_blocks(main)
            self.default_table_size = TNA_DEFAULT_TABLE_SIZE
        else:
            blocks = self.v1switch_blocks(main)
        # Extern objects instantiated at the top level (a register shared by ingress and
        # egress) keep their plain name and are visible in every block, as in p4c.
        top = BlockNode("", None)
        for inst in self.checker.scope.names.values():
            if isinstance(inst, Instance) and isinstance(inst.type, ExternT):
                self.instance(top, inst)
        self.global_externs = top.externs
        roots = [self.block(arg, arg.name) for arg in blocks]
        for node in self.nodes:  # parents first: a parameter may pass on its own binding
            self.bind_extern_params(node)
        controller = []
        for t in self.checker.controller_headers:
            a = ir.annotation(t.annotations, "controller_header")
            name = a.args[0] if a.args else t.type_name
            fields = [
                ParamDef(".".join(p), bit_width(ft), [], type_name=self.note_newtype(ft))
                for p, ft in flattened_fields(t)
            ]
            controller.append(
                ControllerHeaderDef(
                    name, fields, annotation_texts(t.annotations), t.type_name, t.nested
                )
            )
        digests = self.digests()
        actions = [
            (
                ActionDef(a.name, [], a.annotations)
                if a.name in self.direct_actions and a.name not in self.table_actions
                else a
            )
            for a in self.actions.values()
        ]
        model = ProgramModel(
            self.tables,
            actions,
            self.registers,
            self.counters,
            self.meters,
            controller,
            digests,
            # those p4c's P4Info generator meets: not in an action nothing uses (issue1535)
            extern_functions=sorted(
                {e.target.name for e in self.checker.extern_function_calls if self.checker.kept(e)}
            ),
            serializable_enums=self.enums,
            new_types=self.new_types,
            new_type_annotations=self.new_type_annotations,
            errors=sorted(self.checker.error_type.members, key=self.checker.error_type.members.get),
            action_profiles=list(self.profiles.values()),
            value_sets=self.value_sets,
            unlisted_externs=self.unlisted_externs,
            extern_instances=self.extern_instances,
            arch=arch,
            pipe=pipe,
            ingress_parser=roots[0].path if pipe else "",  # P4Info: its $PORT_METADATA
            package=package_info(main),
        )
        return model, roots

    def digests(self) -> list[DigestDef]:
        """The digests P4Info lists, as p4c: one per struct type sent, and one per call that
        sends a list (`digest(1, {a, b})`), named digest_0, digest_1, ... in program order
        (p4c's auto-generated names; it warns that it found no better one). Calls in code
        p4c drops count for neither."""
        digests: list[DigestDef] = []
        for e in self.checker.digest_calls:
            t = e.args[1].value.type
            if not self.checker.kept(e):
                continue
            if isinstance(t, TupleT):
                e.digest_name = f"digest_{sum(d.is_tuple for d in digests)}"
                fields = [(str(i), it) for i, it in enumerate(t.items)]
            elif isinstance(t, HeaderT) and all(d.name != t.type_name for d in digests):
                fields = t.fields
            else:
                continue
            digests.append(
                DigestDef(
                    e.digest_name,
                    [
                        ParamDef(n, value_width(ft), [], type_name=self.note_newtype(ft))
                        for n, ft in fields
                    ],
                    is_tuple=isinstance(t, TupleT),
                )
            )
        return digests

    def v1switch_blocks(self, main: Instance) -> list[Instance]:
        """The six blocks of `V1Switch(...) main`."""
        pkg = main.type.decl
        if not isinstance(pkg, ir.PackageDecl) or pkg.name != "V1Switch" or len(pkg.params) != 6:
            raise P4Error.at(
                main.node.pos,
                f"main must be a V1Switch package (v1model) or a Switch package (TNA), got {pkg.name}",
            )
        # v1model as BMv2 runs it (p4c-bm2-ss): headers and user metadata are structs, the
        # parser's 2nd and 3rd parameters
        for p, what in zip(main.ctor_args[0].type.decl.params[1:3], ("headers", "user metadata")):
            if not (isinstance(p.type, HeaderT) and p.type.kind == "struct"):
                raise P4Error.at(
                    p.typeref.pos,
                    f"V1Switch: the {what} type must be a struct, got {p.type.name()} "
                    f"(wrap it in a struct)",
                )
        return main.ctor_args

    def tna_blocks(self, main: Instance) -> tuple[list[Instance], str]:
        """The six blocks of `Switch(pipe) main` and the name of the Pipeline instance
        (p4c-barefoot hashes P4Info ids with it; the names themselves leave it out)."""
        pkg = main.type.decl
        pipes = [a for a in main.ctor_args if a is not None]
        if pkg.name != "Switch" or len(pipes) != 1:
            raise P4Error.at(
                main.node.pos,
                f"main: p4sim runs a TNA Switch of one Pipeline (Switch(pipe) main), "
                f"got {pkg.name} with {len(pipes)} pipeline(s)",
            )
        pipe = pipes[0]
        if pipe.node is None or len(pipe.ctor_args) != 6:
            raise P4Error.at(
                main.node.pos,
                "main: give the Pipeline as a named instance, `Pipeline(...) pipe;` then "
                "`Switch(pipe) main;` (p4sim does not take it constructed inside Switch(...))",
            )
        return pipe.ctor_args, pipe.name

    def unique(self, name: str, pos, kind: str) -> str:
        """name, checked unique among the control-plane objects of its P4Info kind (`table`,
        `direct_meter`, ...): as in p4c, objects of two kinds may share a name."""
        if (kind, name) in self.names:
            raise P4Error.at(
                pos,
                f"two {kind.replace('_', ' ')}s are both named '{name}' (use @name to rename one)",
            )
        self.names.add((kind, name))
        return name

    def block(self, inst: Instance, path: str, parent: BlockNode | None = None) -> BlockNode:
        decl = inst.type.decl
        node = BlockNode(path, decl)
        node.externs.update(self.global_externs)
        self.nodes.append(node)
        # a parser or control given as a constructor argument: the instance the enclosing
        # block declared (one instance, shared by all it was given to), or an anonymous one
        for bound in getattr(decl, "bound_instances", ()):
            shared = parent.children.get(bound) if parent is not None else None
            node.children[bound] = shared or self.block(bound, f"{path}.{bound.name}", node)
        if isinstance(decl, ir.ControlDecl):
            for loc in decl.locals:
                if isinstance(loc, ir.Instantiation):
                    self.instance(node, loc.instance)
            for a in decl.local_actions:
                node.actions[a] = qualify(path, a.name, a.annotations)
            # As p4c, which drops dead code and then unused declarations: P4Info lists the tables applied and the actions called
            # in the live code of apply (a directly called action without its parameters,
            # which the call binds).
            calls = list(live_calls(decl.body, exit_ends=has_return(decl.body)))
            applied = {c.target for c in calls if c.kind == "table_apply"}
            todo = list(applied)
            while todo:  # a table applied in an applied table's key (p4c's issue2362)
                for k in todo.pop().keys:
                    for c in live_calls(k.expr):
                        if c.kind == "table_apply" and c.target not in applied:
                            applied.add(c.target)
                            todo.append(c.target)
            for c in calls:
                if c.kind == "action":
                    name = self.action_name(node, c.target)
                    self.action_def(c.target, name)
                    self.direct_actions.add(name)
            for t in decl.tables:
                node.tables[t] = self.table(node, t, applied=t in applied)
        elif isinstance(decl, ir.ParserDecl):
            for loc in decl.locals:
                if isinstance(loc, ir.Instantiation):
                    self.instance(node, loc.instance)
                elif isinstance(loc, ir.ValueSetDecl):
                    name = self.unique(
                        qualify(path, loc.name, loc.annotations), loc.pos, "value_set"
                    )
                    fields = [MatchFieldDef(n, w, kind) for n, w, kind in loc.fields]
                    annots = annotation_texts(loc.annotations)
                    self.value_sets.append(ValueSetDef(name, fields, loc.size_value, annots))
                    node.value_sets[loc] = name
        return node

    @staticmethod
    def bind_extern_params(node: BlockNode) -> None:
        """The extern objects node's apply calls pass to the parsers and controls it applies
        (`c.apply(hdr, reg1)` for `control c(..., register<bit<8>> r)`): each such parameter
        of the applied instance names the object passed, in its BlockNode's externs. One
        instance applied in several places must be passed the same objects in all."""
        for e in getattr(node.decl, "block_applies", ()):
            child = node.children[e.target]
            for p, a in zip(child.decl.params, e.args):
                if p.var.slot is not None:
                    continue
                name = node.externs.get(a.value.decl)
                if name is None:
                    raise unsupported(a.value.pos, f"extern argument '{a.value.name}' here")
                bound = child.externs.setdefault(p.var, name)
                if bound != name:
                    raise unsupported(
                        a.value.pos,
                        f"applying {child.path} with two different objects for its "
                        f"parameter '{p.name}' ({bound}, {name})",
                    )

    def instance(self, node: BlockNode, inst: Instance) -> None:
        name = qualify(node.path, inst.name, inst.annotations)
        t = inst.type
        if isinstance(t, BlockT):
            node.children[inst] = self.block(inst, name, node)
            return
        kind = t.decl.name
        node.externs[inst] = name
        self.extern_instances.append(name)
        annots = annotation_texts(inst.annotations)
        pos = inst.node.pos
        if kind == "register":
            elem = inst.binding.get("T")
            serializable = isinstance(elem, EnumT) and elem.underlying is not None
            if not (isinstance(elem, (Bits, BoolT)) or serializable):
                raise P4Error.at(
                    pos,
                    f"register {inst.name} needs an element type bit<W>, int<W> or a "
                    f"serializable enum (register<bit<32>>(N))",
                )
            self.note_enum(elem)  # the cells hold the underlying bits; P4Info names the enum
            width = elem.underlying.width if serializable else bit_width(elem)
            self.registers.append(
                RegisterDef(
                    self.unique(name, pos, "register"),
                    inst.ctor_args[0],
                    width,
                    annots,
                    type_name=elem.enum_name if serializable else "",
                )
            )
        elif kind in ("counter", "direct_counter"):
            ctype = self.enum_member(inst.ctor_args[-1], "CounterType")
            size = inst.ctor_args[0] if kind == "counter" else 0
            self.counters.append(
                CounterDef(
                    self.unique(name, pos, kind), size, ctype, None, annots, kind != "counter"
                )
            )
        elif kind in ("meter", "direct_meter"):
            mtype = self.enum_member(inst.ctor_args[-1], "MeterType")
            size = inst.ctor_args[0] if kind == "meter" else 0
            self.meters.append(
                MeterDef(self.unique(name, pos, kind), size, mtype, None, annots, kind != "meter")
            )
        elif kind in ("action_profile", "action_selector"):
            self.profile(name, inst)
        elif kind == "Register":
            elem = inst.binding.get("T")
            if not isinstance(elem, (Bits, BoolT)):
                raise P4Error.at(
                    pos, f"Register {inst.name} needs an element type bit<W> or int<W>"
                )
            initial = inst.ctor_args[1] if len(inst.ctor_args) > 1 else 0
            self.registers.append(
                RegisterDef(
                    self.unique(name, pos, "register"),
                    inst.ctor_args[0],
                    bit_width(elem),
                    annots,
                    initial,
                )
            )
        elif kind in ("Counter", "DirectCounter"):
            # The type is the first argument after the size; T2NA may add an optional one.
            ctype_arg = inst.ctor_args[1] if kind == "Counter" else inst.ctor_args[0]
            ctype = self.enum_member(ctype_arg, "CounterType_t").lower()
            size = inst.ctor_args[0] if kind == "Counter" else 0
            self.counters.append(
                CounterDef(
                    self.unique(name, pos, "counter" if kind == "Counter" else "direct_counter"),
                    size,
                    ctype,
                    None,
                    annots,
                    kind != "Counter",
                )
            )
        elif kind == "Meter":
            mtype = self.enum_member(inst.ctor_args[1], "MeterType_t").lower()
            self.meters.append(
                MeterDef(self.unique(name, pos, "meter"), inst.ctor_args[0], mtype, None, annots)
            )
        elif kind in TNA_REFUSED_EXTERNS:
            raise P4Error.at(pos, f"{inst.name}: the TNA extern {kind} is not supported by p4sim")
        elif kind in ("Hash", "DirectRegister"):
            self.unlisted_externs.append(name)
        elif kind in ("packet_in", "packet_out", "Checksum16") + TNA_STATELESS_EXTERNS:
            pass
        else:
            raise P4Error.at(pos, f"extern {kind} is not supported by p4sim")

    def profile(self, name: str, inst: Instance) -> ActionProfileDef:
        """The ActionProfileDef of an action_profile/action_selector instance, with p4c's
        P4Info annotations: @max_group_size, @selector_size_semantics and
        @max_member_weight (only meaningful for selectors) become fields."""
        sizing = ("max_group_size", "selector_size_semantics", "max_member_weight")
        pos = inst.node.pos if inst.node is not None else None
        selector = inst.type.decl.name == "action_selector"
        d = ActionProfileDef(
            self.unique(name, pos, "action_profile"),
            inst.ctor_args[1] if selector else inst.ctor_args[0],
            selector,
            [],
            algorithm=getattr(inst, "algorithm", ""),
            annotations=[
                a.text for a in inst.annotations if a.name not in ("name", "hidden") + sizing
            ],
        )
        if selector:
            values = {}
            for key in sizing:
                a = ir.annotation(inst.annotations, key)
                if a is not None:
                    if len(a.args) != 1 or not isinstance(a.args[0], (int, str)):
                        raise P4Error.at(a.pos or pos, f"@{key} takes one value")
                    values[key] = a.args[0]
            try:
                d.max_group_size = int(values.get("max_group_size", 0))
                d.max_member_weight = int(values.get("max_member_weight", 0))
            except ValueError:
                raise P4Error.at(pos, "@max_group_size and @max_member_weight take an integer")
            semantics = values.get("selector_size_semantics", "")
            if semantics not in ("", "sum_of_weights", "sum_of_members"):
                raise P4Error.at(
                    pos,
                    f'@selector_size_semantics must be "sum_of_weights" or '
                    f'"sum_of_members", got {semantics!r}',
                )
            d.size_semantics = semantics
        self.profiles[d.name] = d
        return d

    def enum_member(self, value: int, enum: str) -> str:
        entry = self.checker.scope.lookup(enum)
        return entry.type.members[value]

    def action_def(self, decl: ir.ActionDecl, name: str, visible: bool = True) -> None:
        if name in self.all_actions:
            if visible and name not in self.actions:
                self.actions[name] = self.all_actions[name]
            return
        params = [
            ParamDef(
                p.name,
                value_width(p.type),
                annotation_texts(p.annotations),
                control_name=annotation_string(p.annotations, "name"),
                type_name=self.note_newtype(p.type),
            )
            for p in decl.params
            if p.direction == ""
        ]
        for p in decl.params:
            if p.direction == "":
                self.note_enum(p.type)
        self.all_actions[name] = ActionDef(name, params, annotation_texts(decl.annotations))
        if visible:
            self.actions[name] = self.all_actions[name]

    def note_enum(self, t) -> None:
        if isinstance(t, EnumT) and t.underlying is not None:
            members = [(m, t.values[m]) for m in t.members]
            self.enums[t.enum_name] = (t.underlying.width, members)

    def note_newtype(self, t) -> str:
        """The name of the `type` `t` is, noted for P4Info's type_info; "" for other types.
        A translated one is noted as ("translated", uri, control-plane width or None)."""
        if isinstance(t, NewBits) and t.translation is not None:
            self.new_types[t.type_name] = ("translated", *t.translation)
        elif isinstance(t, NewBits):
            self.new_types[t.type_name] = ("int" if t.signed else "bit", t.width)
        elif isinstance(t, NewBool):
            self.new_types[t.type_name] = ("bool", 1)
        else:
            return ""
        if t.annotations:
            self.new_type_annotations[t.type_name] = list(t.annotations)
        return t.type_name

    def action_name(self, node: BlockNode, decl: ir.ActionDecl) -> str:
        if decl in node.actions:
            return node.actions[decl]
        return qualify("", decl.name, decl.annotations)

    def table(self, node: BlockNode, t: ir.TableDecl, applied: bool = True) -> TableDef:
        name = qualify(node.path, t.name, t.annotations)
        keys = []
        for k in t.keys:
            self.note_enum(k.expr.type)
            kname = annotation_string(k.annotations, "name") or expr_text(k.expr)
            keys.append(
                MatchFieldDef(
                    kname,
                    value_width(k.expr.type),
                    k.match_kind,
                    annotation_texts(k.annotations),
                    is_error=isinstance(k.expr.type, ErrorT),
                    type_name=self.note_newtype(k.expr.type),
                )
            )
        refs = []
        hidden = is_hidden(t.annotations) or not applied
        for r in t.action_refs:
            aname = self.action_name(node, r.decl)
            scope = "TABLE_AND_DEFAULT"
            if ir.annotation(r.annotations, "defaultonly"):
                scope = "DEFAULT_ONLY"
            elif ir.annotation(r.annotations, "tableonly"):
                scope = "TABLE_ONLY"
            refs.append(ActionRefDef(aname, scope, [a.text for a in r.annotations]))
            self.action_def(r.decl, aname, visible=not hidden)
            if not hidden:
                self.table_actions.add(aname)
        if t.default is not None:
            default = self.action_name(node, t.default.decl)
            default_args = self.action_args(t.default)
        else:
            # p4c's frontend gives such a table `default_action = NoAction()` and, when
            # NoAction is not among its actions, adds it as @defaultonly (P4Info shows it).
            default, default_args = "NoAction", {}
            if all(r.name != "NoAction" for r in refs):
                refs.append(ActionRefDef("NoAction", "DEFAULT_ONLY", ["@defaultonly"]))
                self.action_def(self.checker.scope.lookup("NoAction"), "NoAction", not hidden)
        const_entries = None
        listed = []
        if t.entries is not None:
            for e in t.entries:
                match = {}
                for kdef, kdecl, ks in zip(keys, t.keys, e.keyset):
                    fm = self.field_match(kdef, ks)
                    if fm is not None:
                        match[kdef.name] = fm
                listed.append(
                    ConstEntryDef(
                        match,
                        self.action_name(node, e.action.decl),
                        self.action_args(e.action),
                        0,  # set by bmv2_entries
                        is_const=e.is_const,
                    )
                )
            listed = bmv2_entries(
                t, listed, any(k.match_kind in PRIORITY_MATCH_KINDS for k in keys)
            )
            if t.entries_const:
                const_entries = listed
        size = t.size
        if self.default_table_size and all(p.name != "size" for p in t.properties):
            size = self.default_table_size
        td = TableDef(
            name,
            keys,
            refs,
            size,
            default,
            default_args,
            t.const_default,
            const_entries,
            direct_counter=node.externs.get(t.direct_counter) if t.direct_counter else None,
            direct_meter=node.externs.get(t.direct_meter) if t.direct_meter else None,
            annotations=annotation_texts(t.annotations),
            initial_entries=listed if t.entries is not None and not t.entries_const else [],
            support_timeout=t.support_timeout,
        )
        if t.implementation is not None and not hidden:
            inst = t.implementation
            if getattr(inst, "anonymous", False):
                pname = inst.name.lstrip(".")  # p4c: the property's @name, unqualified
                prof = self.profiles.get(pname) or self.profile(pname, inst)
            else:
                prof = self.profiles[node.externs[inst]]
            prof.tables.append(name)
            td.implementation = prof.name
        for inst, lst in ((t.direct_counter, self.counters), (t.direct_meter, self.meters)):
            if inst is not None:
                for d in lst:
                    if d.name == node.externs[inst]:
                        d.direct_table = name
        if hidden:
            self.hidden_tables.append(td)
        else:
            self.unique(name, t.pos, "table")
            self.tables.append(td)
        return td

    @staticmethod
    def action_args(ref: ir.ActionRef) -> dict[str, int]:
        out = {}
        for p, a in zip(ref.decl.params, ref.args):
            if p.direction == "":
                out[p.name] = int(a.value.const) & ((1 << value_width(p.type)) - 1)
        return out

    @staticmethod
    def field_match(k: MatchFieldDef, ks: ir.Expr) -> FieldMatch | None:
        w = k.bitwidth
        full = (1 << w) - 1
        kind = k.match_kind
        if isinstance(ks, ir.Default):
            if kind == "exact":
                raise P4Error.at(ks.pos, f"exact key {k.name} cannot be a wildcard")
            return None
        if isinstance(ks, ir.Mask):
            v, m = int(ks.value.const) & full, int(ks.mask.const) & full
            if kind == "ternary":
                return FieldMatch("ternary", v & m, mask=m)
            if kind == "lpm":
                plen = m.bit_count()
                if m != (full << (w - plen)) & full:
                    raise P4Error.at(ks.pos, f"mask {m:#x} of lpm key {k.name} is not a prefix")
                return FieldMatch("lpm", v & m, prefix_len=plen)
            raise P4Error.at(ks.pos, f"a mask (&&&) is not allowed for the {kind} key {k.name}")
        if isinstance(ks, ir.Range):
            if kind != "range":
                raise P4Error.at(ks.pos, f"a range (..) is not allowed for the {kind} key {k.name}")
            return FieldMatch("range", low=int(ks.low.const) & full, high=int(ks.high.const) & full)
        v = int(ks.const) & full
        if kind == "exact":
            return FieldMatch("exact", v)
        if kind == "ternary":
            return FieldMatch("ternary", v, mask=full)
        if kind == "lpm":
            return FieldMatch("lpm", v, prefix_len=w)
        if kind == "range":
            return FieldMatch("range", low=v, high=v)
        return FieldMatch("optional", v)
