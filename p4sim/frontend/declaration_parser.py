"""The declarations of P4_16 source: constants, types, externs, parsers with their states
and transitions, controls with their local declarations, actions and tables. A part of
`p4sim.frontend.parser.Parser`, which holds the tokens and parses types, statements and
expressions.
"""

from __future__ import annotations

from p4sim.errors import P4Error, unsupported
from p4sim.frontend import ir


class DeclarationParser:
    """Mixed into Parser: one method per declaration form."""

    def declaration(self):
        annots = self.annotations()
        t = self.tok
        kw = t.text if t.kind == "keyword" else None
        if kw == "const":
            return self.const_decl(annots)
        if kw in ("header", "struct", "header_union"):
            return self.header_decl(annots)
        if kw == "enum":
            return self.enum_decl(annots)
        if kw in ("error", "match_kind") and self.peek().text == "{":
            self.i += 1
            self.expect("{")
            members = []
            while not self.at("}"):
                pos = self.tok.pos
                members.append((self.ident(f"an {kw} member"), pos))
                if not self.accept(","):
                    break
            self.expect("}")
            return ir.ErrorDecl(t.pos, kw, annots, members, kw)
        if kw in ("typedef", "type"):
            self.i += 1
            ref = self.typeref()
            name = self.ident("a type name")
            self.expect(";")
            self.typenames.add(name)
            return ir.TypedefDecl(t.pos, name, annots, ref, kw == "type")
        if kw == "extern":
            return self.extern_decl(annots)
        if kw == "parser":
            return self.parser_decl(annots)
        if kw == "control":
            return self.control_decl(annots)
        if kw == "package":
            self.i += 1
            name = self.ident("a package name")
            self.typenames.add(name)
            tps = self.type_params()
            params = self.params()
            self.expect(";")
            return ir.PackageDecl(t.pos, name, annots, tps, params)
        if kw == "action":
            return self.action_decl(annots)
        if kw in ("value_set", "valueset"):
            raise unsupported(t.pos, "value_set")
        if kw == "abstract":
            raise unsupported(t.pos, "abstract method outside an extern")
        # Function declaration (`T f(...) {`), or instantiation (`T(args) name;`).
        start = self.i
        ref = self.typeref()
        if self.at("("):
            return self.instantiation(t, annots, ref)
        if self.is_ident():
            name = self.ident()
            tps = self.type_params()
            if self.at("("):
                params = self.params()
                body = self.block()
                return ir.FunctionDecl(t.pos, name, annots, ref, tps, params, body)
        self.i = start
        raise self.error("expected a declaration")

    def const_decl(self, annots) -> ir.ConstDecl:
        pos = self.expect("const").pos
        ref = self.typeref()
        name = self.ident("a constant name")
        self.expect("=")
        value = self.expression()
        self.expect(";")
        self.valuenames.add(name)
        return ir.ConstDecl(pos, name, annots, ref, value)

    def header_decl(self, annots) -> ir.HeaderDecl:
        t = self.tok
        self.i += 1
        name = self.ident(f"a {t.text} name")
        self.typenames.add(name)
        tps = self.type_params()
        self.expect("{")
        fields = []
        while not self.at("}"):
            fa = self.annotations()
            pos = self.tok.pos
            if self.at("_"):  # the grammar's field type is a typeRef, which `_` is not
                raise self.error("expected the type of a field ('_' is not a type here)")
            ref = self.typeref()
            fname = self.ident("a field name")
            self.expect(";")
            fields.append(ir.FieldDecl(pos, fname, ref, fa))
        self.expect("}")
        return ir.HeaderDecl(t.pos, name, annots, fields, t.text, tps)

    def enum_decl(self, annots) -> ir.EnumDecl:
        pos = self.expect("enum").pos
        underlying = None
        if self.at("bit", "int"):
            underlying = self.typeref()
        name = self.ident("an enum name")
        self.typenames.add(name)
        self.expect("{")
        members = []
        while not self.at("}"):
            mpos = self.tok.pos
            mname = self.ident("an enum member")
            value = None
            if self.accept("="):
                value = self.expression()
            members.append((mname, value, mpos))
            if not self.accept(","):
                break
        self.expect("}")
        return ir.EnumDecl(pos, name, annots, members, underlying)

    def type_params(self) -> list[str]:
        out = []
        if self.accept("<"):
            while True:
                n = self.ident("a type parameter")
                self.typenames.add(n)
                out.append(n)
                if not self.accept(","):
                    break
            self.close_angle()
        return out

    def params(self) -> list[ir.Param]:
        self.expect("(")
        out = []
        while not self.at(")"):
            annots = self.annotations()
            pos = self.tok.pos
            direction = ""
            if self.at("in", "out", "inout"):
                direction = self.tok.text
                self.i += 1
            ref = self.typeref()
            name = self.ident("a parameter name")
            default = None
            if self.accept("="):
                default = self.expression()
            self.valuenames.add(name)
            out.append(ir.Param(pos, direction, ref, name, default, annots))
            if not self.accept(","):
                break
        self.expect(")")
        return out

    def extern_decl(self, annots):
        pos = self.expect("extern").pos
        # `extern Name<T> { methods }` declares an extern object type; anything else is an
        # extern function `extern T name<...>(...);`.
        start = self.i
        if self.is_ident() and self.peek().text in ("{", "<"):
            name = self.ident()
            self.typenames.add(name)
            tps = self.type_params()
            if self.at("{"):
                self.expect("{")
                methods = []
                while not self.at("}"):
                    ma = self.annotations()
                    mpos = self.tok.pos
                    abstract = bool(self.accept("abstract"))
                    if self.is_ident() and self.tok.text == name and self.peek().text == "(":
                        self.i += 1
                        params = self.params()
                        self.expect(";")
                        methods.append(ir.MethodDecl(mpos, name, ma, None, [], params))
                        continue
                    ret = self.typeref()
                    mname = self.ident("a method name")
                    mtps = self.type_params()
                    params = self.params()
                    self.expect(";")
                    methods.append(ir.MethodDecl(mpos, mname, ma, ret, mtps, params, abstract))
                self.expect("}")
                return ir.ExternDecl(pos, name, annots, tps, methods)
            self.i = start
        ret = self.typeref()
        name = self.ident("an extern function name")
        tps = self.type_params()
        params = self.params()
        self.expect(";")
        return ir.MethodDecl(pos, name, annots, ret, tps, params)

    def parser_decl(self, annots):
        pos = self.expect("parser").pos
        name = self.ident("a parser name")
        self.typenames.add(name)
        tps = self.type_params()
        params = self.params()
        if self.accept(";"):
            return ir.ParserDecl(pos, name, annots, tps, params, [], [], None)
        ctor = self.params() if self.at("(") else []
        self.expect("{")
        locals_, states = [], []
        while not self.at("}"):
            la = self.annotations()
            if self.at("state"):
                states.append(self.parser_state(la))
            else:
                locals_.append(self.local_decl(la))
        self.expect("}")
        return ir.ParserDecl(pos, name, annots, tps, params, ctor, locals_, states)

    def parser_state(self, annots) -> ir.ParserState:
        pos = self.expect("state").pos
        name = self.ident("a state name")
        self.expect("{")
        stmts = []
        transition = None
        while not self.at("}"):
            if self.at("transition"):
                transition = self.transition()
                break
            stmts.append(self.statement())
        self.expect("}", "(a transition must be the last statement of a state)")
        return ir.ParserState(pos, name, annots, stmts, transition)

    def transition(self) -> ir.Transition:
        pos = self.expect("transition").pos
        if self.at("select"):
            self.i += 1
            self.expect("(")
            exprs = [] if self.at(")") else [self.expression()]  # `select()`: p4c's grammar
            while exprs and self.accept(","):
                exprs.append(self.expression())
            self.expect(")")
            self.expect("{")
            cases = []
            while not self.at("}"):
                cpos = self.tok.pos
                keyset = self.keyset()
                self.expect(":")
                state = self.ident("a state name")
                self.expect(";")
                cases.append(ir.SelectCase(cpos, keyset, state))
            self.expect("}")
            self.accept(";")
            return ir.Transition(pos, None, exprs, cases)
        state = self.ident("a state name")
        self.expect(";")
        return ir.Transition(pos, state)

    def keyset(self) -> list[ir.Expr]:
        if self.at("("):
            # A tuple keyset `(a, b)`; a parenthesised single expression is also fine.
            start = self.i
            self.i += 1
            items = [self.keyset_element()]
            if self.at(","):
                while self.accept(","):
                    items.append(self.keyset_element())
                self.expect(")")
                return items
            self.i = start
        return [self.keyset_element()]

    def keyset_element(self) -> ir.Expr:
        t = self.tok
        if self.at("default", "_"):
            self.i += 1
            return ir.Default(t.pos)
        e = self.expression()
        if self.accept("&&&"):
            return ir.Mask(t.pos, e, self.expression())
        if self.accept(".."):
            return ir.Range(t.pos, e, self.expression())
        return e

    def control_decl(self, annots):
        pos = self.expect("control").pos
        name = self.ident("a control name")
        self.typenames.add(name)
        tps = self.type_params()
        params = self.params()
        if self.accept(";"):
            return ir.ControlDecl(pos, name, annots, tps, params, [], [], None)
        ctor = self.params() if self.at("(") else []
        self.expect("{")
        locals_ = []
        body = None
        while not self.at("}"):
            la = self.annotations()
            if self.at("apply"):
                self.i += 1
                body = self.block()
                continue
            if self.at("action"):
                locals_.append(self.action_decl(la))
            elif self.at("table"):
                locals_.append(self.table_decl(la))
            else:
                locals_.append(self.local_decl(la))
        self.expect("}")
        if body is None:
            raise P4Error.at(pos, f"control {name} has no apply block")
        return ir.ControlDecl(pos, name, annots, tps, params, ctor, locals_, body)

    def local_decl(self, annots):
        """Constants, variables and instantiations inside a parser or control."""
        t = self.tok
        if self.at("const"):
            return self.const_decl(annots)
        if self.at("value_set", "valueset"):
            self.i += 1
            self.expect("<")
            elem = self.typeref()
            self.close_angle()
            self.expect("(")
            size = self.expression()
            self.expect(")")
            name = self.ident("a value set name")
            self.expect(";")
            self.valuenames.add(name)
            return ir.ValueSetDecl(t.pos, name, annots, elem, size)
        ref = self.typeref()
        if self.at("("):
            return self.instantiation(t, annots, ref)
        name = self.ident("a variable name")
        init = self.expression() if self.accept("=") else None
        self.expect(";")
        self.valuenames.add(name)
        return ir.VarDecl(t.pos, ref, name, init, annots)

    def action_decl(self, annots) -> ir.ActionDecl:
        pos = self.expect("action").pos
        name = self.ident("an action name")
        params = self.params()
        body = self.block()
        return ir.ActionDecl(pos, name, annots, params, body)

    def table_decl(self, annots) -> ir.TableDecl:
        pos = self.expect("table").pos
        name = self.ident("a table name")
        if self.at("(") and self.peek().text == ")":  # `table t() {`, which p4c accepts
            self.i += 2
        self.expect("{")
        props = []
        while not self.at("}"):
            pa = self.annotations()
            ppos = self.tok.pos
            is_const = bool(self.accept("const"))
            if self.at("key"):
                self.i += 1
                self.expect("=")
                self.expect("{")
                keys = []
                while not self.at("}"):
                    kpos = self.tok.pos
                    e = self.expression()
                    self.expect(":")
                    mk = self.ident("a match kind")
                    ka = self.annotations()
                    self.expect(";")
                    keys.append(ir.KeyElement(kpos, e, mk, ka))
                self.expect("}")
                self.accept(";")
                props.append(ir.TableProperty(ppos, "key", is_const, keys, pa))
            elif self.at("actions"):
                self.i += 1
                self.expect("=")
                self.expect("{")
                refs = []
                while not self.at("}"):
                    aa = self.annotations()
                    refs.append(self.action_ref(aa))
                    self.expect(";")
                self.expect("}")
                self.accept(";")
                props.append(ir.TableProperty(ppos, "actions", is_const, refs, pa))
            elif self.at("entries"):
                self.i += 1
                self.expect("=")
                self.expect("{")
                entries = []
                while not self.at("}"):
                    ea = self.annotations()
                    epos = self.tok.pos
                    entry_const = bool(self.accept("const"))
                    prio = None
                    if self.accept("priority"):
                        self.expect("=")
                        prio = self.expression()
                        self.expect(":")
                    keyset = self.keyset()
                    if len(keyset) == 1 and isinstance(keyset[0], ir.ListExpr):
                        # p4c takes an entry's `{a, b}` as its key tuple (a list expression
                        # is the key values themselves, ListExpression::buildOrReturn)
                        keyset = keyset[0].items
                    self.expect(":")
                    aref = self.action_ref([])
                    late = self.annotations()  # `key : action(...) @priority(N);` (p4c)
                    self.expect(";")
                    entries.append(ir.EntryDecl(epos, keyset, aref, prio, ea + late, entry_const))
                self.expect("}")
                self.accept(";")
                props.append(ir.TableProperty(ppos, "entries", is_const, entries, pa))
            else:
                pname = self.ident("a table property")
                self.expect("=")
                if pname == "default_action":
                    value = self.action_ref([])
                else:
                    value = self.expression()
                self.expect(";")
                props.append(ir.TableProperty(ppos, pname, is_const, value, pa))
        self.expect("}")
        return ir.TableDecl(pos, name, annots, props)

    def action_ref(self, annots) -> ir.ActionRef:
        pos = self.tok.pos
        absolute = bool(self.accept("."))
        name = ir.Name(pos, self.ident("an action name"), absolute)
        args = self.arguments() if self.at("(") else []
        return ir.ActionRef(pos, name, args, annots)
