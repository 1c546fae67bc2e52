"""Recursive-descent parser for P4_16, producing `p4sim.frontend.ir` nodes.

Operator precedence follows p4c's grammar (note `==` binds looser than `|`, unlike C). Type
names are tracked as they are declared, which resolves the classic ambiguities (casts,
declarations vs. expressions, generic calls) the way p4c's lexer feedback does.
Declarations are parsed by `declaration_parser.DeclarationParser`, a part of `Parser`.
"""

from __future__ import annotations

import dataclasses

from p4sim.errors import P4Error, unsupported
from p4sim.frontend import ir
from p4sim.frontend.declaration_parser import DeclarationParser
from p4sim.frontend.lexer import Token, tokenize
from p4sim.limits import MAX_NESTING

# Binary operators by precedence level, lowest first.
_LEVELS = [
    ("||",),
    ("&&",),
    ("==", "!="),
    ("<", ">", "<=", ">="),
    ("|",),
    ("^",),
    ("&",),
    ("<<", ">>"),
    ("++", "+", "-", "|+|", "|-|"),
    ("*", "/", "%"),
]
_PREC = {op: i for i, ops in enumerate(_LEVELS) for op in ops}

BUILTIN_TYPES = {"packet_in", "packet_out"}  # declared in core.p4, but known early for safety


# Compound assignment operators as the lexer splits them (`>>=` is `>` `>=`, the others end
# in a separate `=`): `a op= b` means `a = a op b`.
COMPOUND_ASSIGNMENTS = (
    (("+",), "+"),
    (("-",), "-"),
    (("*",), "*"),
    (("/",), "/"),
    (("%",), "%"),
    (("&",), "&"),
    (("|",), "|"),
    (("^",), "^"),
    (("<<",), "<<"),
    ((">", ">="), ">>"),
    (("|+|",), "|+|"),
    (("|-|",), "|-|"),
)


# What p4c's ParseAnnotations expects in the bodies it parses.
ANNOTATION_BODIES = {
    "pkginfo": 'key=value pairs, e.g. @pkginfo(name="prog.p4", version="1.0")',
    "platform_property": "key=value pairs, e.g. @platform_property(multicast_group_table_size=64)",
    "name": 'a string, e.g. @name("ingress.t")',
    "deprecated": 'a string, e.g. @deprecated("use g() instead")',
    "noWarn": 'a string, e.g. @noWarn("unused")',
}


class NestingError(P4Error):
    """Nesting past MAX_NESTING: final, never retried by speculation (which would make the
    retries exponential in the depth)."""


def too_deep(pos) -> NestingError:
    return NestingError.at(pos, f"nested more than {MAX_NESTING} levels deep (p4sim's limit)")


class Parser(DeclarationParser):
    def __init__(self, text: str, filename: str = "<input>"):
        self.text = text
        self.toks: list[Token] = tokenize(text, filename)
        self.i = 0
        self.typenames: set[str] = set(BUILTIN_TYPES)
        self.valuenames: set[str] = set()  # variables, parameters, constants, instances
        self.nesting = 0  # expressions, statements and types being parsed, innermost last
        self.structured: list[ir.Annotation] = []  # `@a[...]`, for the checker to fold

    def enter(self) -> None:
        """One level deeper (the caller leaves with `self.nesting -= 1` in a finally)."""
        self.nesting += 1
        if self.nesting > MAX_NESTING:
            raise too_deep(self.tok.pos)

    # -- token helpers -----------------------------------------------------------------
    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def instantiation(self, t: Token, annots, ref) -> ir.Instantiation:
        """`T(args) name;`, from the arguments on, or `T(args) name = { methods };` with an
        initializer implementing the extern's abstract methods (spec "Abstract methods",
        `RegisterAction<...>(r) ra = { void apply(...) {...} };`)."""
        args = self.arguments()
        name = self.ident("an instance name")
        initializer = None
        if self.accept("="):
            initializer = self.instance_initializer()
        self.expect(";")
        self.valuenames.add(name)
        return ir.Instantiation(t.pos, name, annots, ref, args, initializer)

    def instance_initializer(self) -> list[ir.FunctionDecl]:
        self.expect("{", "to start an instance initializer")
        methods = []
        while not self.accept("}"):
            annots = self.annotations()
            pos = self.tok.pos
            ret = self.typeref()
            if self.at("("):
                raise unsupported(pos, "an instantiation inside an instance initializer")
            name = self.ident("a method name")
            tps = self.type_params()
            params = self.params()
            body = self.block()
            methods.append(ir.FunctionDecl(pos, name, annots, ret, tps, params, body))
        return methods

    def peek(self, k: int = 1) -> Token:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def at(self, *texts: str) -> bool:
        t = self.tok
        return t.kind in ("punct", "keyword") and t.text in texts

    def accept(self, text: str) -> Token | None:
        if self.at(text):
            t = self.tok
            self.i += 1
            return t
        return None

    def expect(self, text: str, what: str | None = None) -> Token:
        if self.at(text):
            t = self.tok
            self.i += 1
            return t
        raise self.error(f"expected '{text}'" + (f" {what}" if what else ""))

    def error(self, message: str, tok: Token | None = None) -> P4Error:
        tok = tok or self.tok
        if tok.kind == "unexpected":  # a character no token starts with, outside an annotation
            return P4Error.at(tok.pos, f"unexpected character {tok.text!r}")
        found = "end of input" if tok.kind == "eof" else f"'{tok.text}'"
        return P4Error.at(tok.pos, f"{message}, found {found}")

    def ident(self, what: str = "a name") -> str:
        t = self.tok
        # Some keywords are ordinary names in most places (`apply`, `key`, `actions`, ...).
        if t.kind == "ident" or (t.kind == "keyword" and t.text in _SOFT_KEYWORDS):
            self.i += 1
            return t.text
        raise self.error(f"expected {what}")

    def is_ident(self, tok: Token | None = None) -> bool:
        t = tok or self.tok
        return t.kind == "ident" or (t.kind == "keyword" and t.text in _SOFT_KEYWORDS)

    def speculate(self, fn):
        """Run fn; on a syntax error rewind and return None."""
        start, nesting = self.i, self.nesting
        try:
            return fn()
        except NestingError:
            raise
        except P4Error:
            self.i, self.nesting = start, nesting
            return None

    def close_angle(self) -> None:
        self.expect(">")

    # -- program -----------------------------------------------------------------------
    def parse_program(self) -> ir.Program:
        decls = []
        while self.tok.kind != "eof":
            if self.accept(";"):
                continue
            decls.append(self.declaration())
        prog = ir.Program(decls, self.text)
        prog.end_pos = self.tok.pos
        prog.structured_annotations = self.structured
        return prog

    def annotations(self) -> list[ir.Annotation]:
        out = []
        while self.at("@"):
            start = self.tok
            self.i += 1
            name = self.tok.text
            if self.tok.kind not in ("ident", "keyword"):
                raise self.error("expected an annotation name")
            self.i += 1
            args: list = []
            end = self.toks[self.i - 1].end
            body = self.i
            if self.at("[") and self.tok.start == end:
                out.append(self.structured_annotation(name, start))
                self.annotation_names(out)
                continue
            if self.at("(", "[") and (
                self.tok.start == end or (name in ANNOTATION_BODIES and self.at("("))
            ):
                close = ")" if self.tok.text == "(" else "]"
                opener = self.tok.text
                depth = 0
                while True:
                    t = self.tok
                    if t.kind == "eof":
                        raise self.error(f"unterminated annotation @{name}")
                    self.i += 1
                    if t.text == opener and t.kind == "punct":
                        depth += 1
                    elif t.text == close and t.kind == "punct":
                        depth -= 1
                        if depth == 0:
                            end = t.end
                            break
                    elif t.kind == "string":
                        args.append(t.text)
                    elif t.kind == "int":
                        args.append(t.value[0])
                    elif t.kind in ("ident", "keyword"):
                        args.append(t.text)
            out.append(ir.Annotation(name, self.text[start.start : end], args, start.pos))
            self.annotation_body(out[-1], body, start)
            self.annotation_names(out)
        return out

    def annotation_body(self, annotation: ir.Annotation, body: int, start: Token) -> None:
        """The bodies p4c gives a meaning (its ParseAnnotations): @pkginfo and
        @platform_property hold key=value pairs (P4Runtime spec), @name/@deprecated/@noWarn
        a string (or strings joined by `++`). Other unstructured bodies are any balanced
        tokens (spec 18.1)."""
        name = annotation.name
        if name not in ANNOTATION_BODIES:
            return
        after, self.i = self.i, body + 1
        if not self.toks[body].text == "(" or body == after:
            raise P4Error.at(start.pos, f"@{name} must hold {ANNOTATION_BODIES[name]}")
        if name in ("pkginfo", "platform_property"):
            items, _ = self.annotation_items(name, ")")
            if not items or not all(key is not None for key, _ in items):
                raise P4Error.at(
                    self.toks[body].pos, f"@{name} must hold {ANNOTATION_BODIES[name]}"
                )
            annotation.pairs = items
        else:
            e = self.expression()
            parts, todo = [], [e]
            while todo:
                p = todo.pop()
                if isinstance(p, ir.Binary) and p.op == "++":
                    todo += [p.right, p.left]
                else:
                    parts.append(p)
            if not all(isinstance(p, ir.StrLit) for p in parts) or not self.at(")"):
                raise P4Error.at(e.pos, f"@{name} must hold {ANNOTATION_BODIES[name]}")
            annotation.args = ["".join(p.value for p in parts)]
        self.i = after

    def structured_annotation(self, name: str, start: Token) -> ir.Annotation:
        """`@name[e1, e2]` or `@name[k1 = e1, k2 = e2]` (spec 18.2): an expression list or
        a key-value list, not both, each key once. The checker folds the values."""
        open_ = self.expect("[")
        items, keyed = self.annotation_items(name, "]")
        if keyed and any(k is None for k, _ in items):
            raise P4Error.at(
                open_.pos,
                f"@{name}: a structured annotation holds expressions "
                "or key=value pairs, not both",
            )
        end = self.toks[self.i - 1].end
        a = ir.Annotation(name, self.text[start.start : end], [], start.pos)
        a.structured = items
        self.structured.append(a)
        return a

    def annotation_items(
        self, name: str, close: str
    ) -> tuple[list[tuple[str | None, ir.Expr]], bool]:
        """Comma-separated `expression` or `key = expression` items of annotation `name` up
        to `close` (consumed), each key once; whether any item has a key."""
        items: list[tuple[str | None, ir.Expr]] = []
        while not self.at(close):
            key = None
            if self.is_ident() and self.peek().text == "=" and self.peek().kind == "punct":
                key = self.ident()
                self.i += 1
            e = self.expression()
            if key is not None and any(key == k for k, _ in items):
                kind = " in structured annotation" if close == "]" else ""
                raise P4Error.at(e.pos, f"@{name}: duplicate key '{key}'{kind}")
            items.append((key, e))
            if not self.accept(","):
                break
        self.expect(close, "to close the annotation")
        return items, any(k is not None for k, _ in items)

    @staticmethod
    def annotation_names(annots: list[ir.Annotation]) -> None:
        """Spec 18: one structured annotation per name on an element, and no name used by
        both kinds; unstructured ones of one name accumulate. Checks the last one added."""
        last = annots[-1]
        for a in annots[:-1]:
            if a.name == last.name and (a.structured is not None or last.structured is not None):
                raise P4Error.at(
                    last.pos, f"@{last.name}: duplicate name for structured annotation"
                )

    # -- types -------------------------------------------------------------------------
    def is_type_start(self, tok: Token | None = None) -> bool:
        t = tok or self.tok
        if t.kind == "keyword":
            return t.text in (
                "bit",
                "int",
                "varbit",
                "bool",
                "string",
                "void",
                "error",
                "tuple",
                "match_kind",
                "_",
            )
        return t.kind == "ident" and t.text in self.typenames

    def typeref(self) -> ir.TypeRef:
        self.enter()
        try:
            return self._typeref()
        finally:
            self.nesting -= 1

    def _typeref(self) -> ir.TypeRef:
        t = self.tok
        if self.accept("."):
            t = self.tok  # absolute type name: same meaning here
        if t.kind == "keyword" and t.text in ("bit", "int", "varbit"):
            self.i += 1
            width = None
            if self.accept("<"):
                if self.at("("):
                    self.i += 1
                    width = self.expression()
                    self.expect(")")
                else:
                    width = self.primary()
                self.close_angle()
            elif t.text == "varbit":
                raise self.error("varbit needs a maximum width")
            ref = ir.BaseTypeRef(t.pos, t.text, width)
        elif t.kind == "keyword" and t.text in (
            "bool",
            "string",
            "void",
            "error",
            "match_kind",
            "_",
        ):
            self.i += 1
            ref = ir.BaseTypeRef(t.pos, t.text)
        elif t.kind == "keyword" and t.text in ("tuple", "list"):
            self.i += 1
            self.expect("<")
            args = [self.typeref()]
            while self.accept(","):
                args.append(self.typeref())
            self.close_angle()
            ref = ir.TupleTypeRef(t.pos, args, t.text)
        elif self.is_ident(t):
            self.i += 1
            args = []
            if self.at("<"):
                self.i += 1
                args = [self.typeref()]
                while self.accept(","):
                    args.append(self.typeref())
                self.close_angle()
            ref = ir.NamedTypeRef(t.pos, t.text, args)
        else:
            raise self.error("expected a type")
        while self.at("["):
            self.i += 1
            size = self.expression()
            self.expect("]")
            ref = ir.StackTypeRef(t.pos, ref, size)
        return ref

    # -- statements --------------------------------------------------------------------
    def block(self) -> ir.Block:
        pos = self.expect("{").pos
        stmts = []
        while not self.at("}"):
            if self.tok.kind == "eof":
                raise self.error("expected '}'")
            stmts.append(self.statement())
        self.expect("}")
        return ir.Block(pos, stmts)

    def statement(self) -> ir.Stmt:
        self.enter()
        try:
            return self._statement()
        finally:
            self.nesting -= 1

    def _statement(self) -> ir.Stmt:
        annots = self.annotations()
        t = self.tok
        if self.at("{"):
            return self.block()
        if self.accept(";"):
            return ir.Empty(t.pos)
        if self.accept("if"):
            self.expect("(")
            cond = self.expression()
            self.expect(")")
            then = self.statement()
            other = self.statement() if self.accept("else") else None
            return ir.If(t.pos, cond, then, other)
        if self.accept("exit"):
            self.expect(";")
            return ir.Exit(t.pos)
        if self.accept("return"):
            value = None if self.at(";") else self.expression()
            self.expect(";")
            return ir.Return(t.pos, value)
        if self.accept("switch"):
            return self.switch(t)
        if self.at("const"):
            c = self.const_decl(annots)
            return ir.VarDecl(c.pos, c.typeref, c.name, c.value, annots, True)
        if self.accept("for"):
            return self.for_statement(t)
        if self.accept("break"):
            self.expect(";")
            return ir.Break(t.pos)
        if self.accept("continue"):
            self.expect(";")
            return ir.Continue(t.pos)
        if self.is_type_start():

            def declaration():
                decl = self._var_decl()
                decl.annotations = annots
                return decl

            return self.either(declaration, self.expression_statement)
        return self.expression_statement()

    def expression_statement(self) -> ir.Stmt:
        s = self.simple_statement()
        self.expect(";", "after an expression statement")
        return s

    def either(self, first, second):
        """`first()`, else (rewound) `second()`; when both are syntax errors, the error of
        the reading that got further into the text, which names the real problem."""
        start, nesting = self.i, self.nesting
        try:
            return first()
        except NestingError:
            raise
        except P4Error as e:
            first_error = e
            self.i, self.nesting = start, nesting
        try:
            return second()
        except NestingError:
            raise
        except P4Error as e:
            further = first_error.file == e.file and (first_error.line, first_error.col) > (
                e.line,
                e.col,
            )
            if further:
                raise first_error from None
            raise

    def simple_statement(self) -> ir.Stmt:
        """An assignment, compound assignment or call, without its ';'."""
        t = self.tok
        e = self.expression()
        if self.accept("="):
            return ir.Assign(t.pos, e, self.expression())
        for toks, op in COMPOUND_ASSIGNMENTS:
            n = len(toks)
            if all(self.peek(k).text == toks[k] for k in range(n)) and (
                op == ">>" or self.peek(n).text == "="
            ):
                pos = self.tok.pos
                self.i += n if op == ">>" else n + 1
                rhs = self.expression()
                return ir.Assign(t.pos, e, ir.Binary(pos, op, e, rhs))
        if not isinstance(e, ir.Call):
            raise P4Error.at(t.pos, "an expression statement must be a method or function call")
        return ir.CallStmt(t.pos, e)

    def for_statement(self, t: Token) -> ir.For:
        self.expect("(")
        depth, k = 0, 0
        while self.peek(k).kind != "eof" and not (depth == 0 and self.peek(k).text in (";", ")")):
            depth += {"(": 1, ")": -1}.get(self.peek(k).text, 0)
            if depth == 0 and self.peek(k).text == "in":
                raise unsupported(t.pos, "'for (... in ...)' statement")
            k += 1
        init = self._for_list(";", declarations=True)
        self.expect(";")
        if self.at(";"):  # the grammar (and p4c) require it, unlike C's `for (;;)`
            raise self.error("a for loop needs a condition (write `true` for none)")
        cond = self.expression()
        self.expect(";")
        update = self._for_list(")", declarations=False)
        self.expect(")")
        return ir.For(t.pos, init, cond, update, self.statement())

    def _for_list(self, end: str, declarations: bool) -> list[ir.Stmt]:
        items: list[ir.Stmt] = []
        while not self.at(end):
            decl = None
            if declarations and self.is_type_start():
                decl = self.speculate(lambda: self._var_decl(terminated=False))
            items.append(decl if decl is not None else self.simple_statement())
            if not self.accept(","):
                break
        return items

    def _var_decl(self, terminated: bool = True) -> ir.VarDecl:
        t = self.tok
        ref = self.typeref()
        if not self.is_ident():
            raise self.error("expected a variable name")
        name = self.ident()
        init = self.expression() if self.accept("=") else None
        if terminated:
            self.expect(";")
        elif not self.at(",", ";"):
            raise self.error("expected ',' or ';'")
        self.valuenames.add(name)
        return ir.VarDecl(t.pos, ref, name, init)

    def switch(self, t: Token) -> ir.Switch:
        self.expect("(")
        e = self.expression()
        self.expect(")")
        self.expect("{")
        cases = []
        while not self.at("}"):
            cpos = self.tok.pos
            if self.accept("default"):
                label = None
            else:
                label = self.expression()
            self.expect(":")
            body = self.block() if self.at("{") else None
            cases.append(ir.SwitchCase([label], body, cpos))
        self.expect("}")
        return ir.Switch(t.pos, e, cases)

    # -- expressions -------------------------------------------------------------------
    def arguments(self) -> list[ir.Arg]:
        self.expect("(")
        args = []
        while not self.at(")"):
            pos = self.tok.pos
            name = None
            if self.is_ident() and self.peek().text == "=" and self.peek(2).text != "=":
                name = self.ident()
                self.i += 1
            if self.at("_") and self.peek().text in (",", ")"):
                self.i += 1
                args.append(ir.Arg(None, name, pos))
            else:
                args.append(ir.Arg(self.expression(), name, pos))
            if not self.accept(","):
                break
        self.expect(")")
        return args

    def expression(self) -> ir.Expr:
        # Each parenthesis costs four Python frames (expression, binary, unary, primary),
        # so MAX_NESTING levels stay well inside Python's recursion limit.
        self.enter()
        try:
            cond = self.binary(0)
            if self.at("?"):
                pos = self.tok.pos
                self.i += 1
                then = self.expression()
                self.expect(":")
                other = self.expression()
                return ir.Ternary(pos, cond, then, other)
            return cond
        finally:
            self.nesting -= 1

    def _binop(self) -> str | None:
        t = self.tok
        if t.kind != "punct":
            return None
        n = self.peek()
        adjacent = n.kind == "punct" and n.start == t.end
        if t.text == ">" and adjacent:
            if n.text == ">":
                return ">>"
            if n.text == ">=":
                return None  # `>>=`: a compound assignment ends the expression
        if adjacent and n.text == "=":
            return None  # `+=`, `<<=`, ...
        return t.text if t.text in _PREC else None

    def binary(self, min_level: int) -> ir.Expr:
        """Operators of precedence `min_level` and above, left-associative (precedence
        climbing: one frame per operand, not one per precedence level)."""
        left = self.unary()
        while True:
            op = self._binop()
            if op is None or _PREC[op] < min_level:
                return left
            pos = self.tok.pos
            self.i += 2 if op == ">>" else 1
            right = self.binary(_PREC[op] + 1)
            left = ir.Binary(pos, op, left, right)

    def unary(self) -> ir.Expr:
        t = self.tok
        if t.kind == "punct" and t.text in ("!", "~", "-", "+"):
            self.i += 1
            self.enter()
            try:
                return ir.Unary(t.pos, t.text, self.unary())
            finally:
                self.nesting -= 1
        if t.kind == "punct" and t.text == "(" and self.is_type_start(self.peek()):
            return self.either(self._cast, lambda: self.postfix(self.primary()))
        return self.postfix(self.primary())

    def _cast(self) -> ir.Cast:
        pos = self.expect("(").pos
        ref = self.typeref()
        self.expect(")")
        t = self.tok
        if t.kind in ("punct",) and t.text not in ("(", "{", "-", "!", "~", "+", "."):
            raise self.error("not a cast")
        return ir.Cast(pos, ref, self.unary())

    def postfix(self, e: ir.Expr) -> ir.Expr:
        while True:
            t = self.tok
            if self.accept("."):
                name = self.tok
                if name.kind not in ("ident", "keyword"):
                    raise self.error("expected a member name")
                self.i += 1
                e = ir.Member(t.pos, e, name.text)
            elif self.at("["):
                self.i += 1
                first = self.expression()
                if self.accept(":"):
                    lo = self.expression()
                    self.expect("]")
                    e = ir.Slice(t.pos, e, first, lo)
                else:
                    self.expect("]")
                    e = ir.Index(t.pos, e, first)
            elif self.at("("):
                e = ir.Call(t.pos, e, [], self.arguments())
            elif self.at("<") and isinstance(e, (ir.Name, ir.Member)):
                targs = self.speculate(self._type_args_then_call)
                if targs is None:
                    return e
                e = ir.Call(t.pos, e, targs, self.arguments())
            else:
                return e

    def _type_args_then_call(self) -> list[ir.TypeRef]:
        self.expect("<")
        args = [self.typeref()]
        while self.accept(","):
            args.append(self.typeref())
        self.close_angle()
        if not self.at("("):
            raise self.error("not a generic call")
        return args

    def primary(self) -> ir.Expr:
        t = self.tok
        if t.kind == "int":
            self.i += 1
            value, width, signed = t.value
            return ir.IntLit(t.pos, value, width, signed, t.text)
        if t.kind == "string":
            self.i += 1
            return ir.StrLit(t.pos, t.text)
        if t.kind == "keyword" and t.text in ("true", "false"):
            self.i += 1
            return ir.BoolLit(t.pos, t.text == "true")
        if t.kind == "keyword" and t.text in ("bit", "int", "varbit", "bool", "tuple"):
            return ir.TypeExpr(t.pos, self.typeref())
        if t.kind == "keyword" and t.text in ("error", "this"):
            self.i += 1
            return ir.Name(t.pos, t.text)
        if self.accept("."):
            return ir.Name(t.pos, self.ident(), True)
        if self.is_ident():
            self.i += 1
            if (
                t.text in self.typenames
                and t.text not in self.valuenames
                and not self.at("(", ".", "<")
            ):
                # p4c's grammar: a type in an expression is constructed or has a member taken
                raise self.error(f"expected '(' or '.' after the type name {t.text}")
            return ir.Name(t.pos, t.text)
        if self.accept("("):
            e = self.expression()
            self.expect(")")
            return e
        if self.accept("{"):
            if self.accept("}"):
                return ir.ListExpr(t.pos, [])
            if self.accept("..."):  # `{ ... }`: every field or item at its default
                self.expect("}", "after '...' (it ends an initializer)")
                return ir.ListExpr(t.pos, [], dots=True)
            if self.is_ident() and self.peek().text == "=" and self.peek(2).text != "=":
                fields, dots = [], False
                while not self.at("}"):
                    if self.accept("..."):
                        dots = True
                        break
                    fname = self.ident("a field name")
                    self.expect("=")
                    fields.append((fname, self.expression()))
                    if not self.accept(","):
                        break
                self.expect("}", "after '...' (it ends an initializer)" if dots else "")
                return ir.StructInit(t.pos, fields, dots)
            items, dots = [self.expression()], False
            while self.accept(","):
                if self.at("}"):
                    break
                if self.accept("..."):
                    dots = True
                    break
                items.append(self.expression())
            self.expect("}", "after '...' (it ends an initializer)" if dots else "")
            return ir.ListExpr(t.pos, items, dots)
        raise self.error("expected an expression")


# Keywords that may still be used as ordinary identifiers.
_SOFT_KEYWORDS = {"apply", "key", "actions", "entries", "state", "type", "priority", "list"}


def parse(text: str, filename: str = "<input>") -> ir.Program:
    program = Parser(text, filename).parse_program()
    check_depth(program)
    return program


def check_depth(program: ir.Program) -> None:
    """The parser bounds its own recursion, but a flat chain (`a + a + ... + a`, `else if`
    after `else if`) builds a tree as deep as it is long, and the type checker and engine
    recurse over trees. Walk the tree without recursion and refuse what is too deep."""
    stack = [(program, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (ir.Expr, ir.Stmt, ir.TypeRef)):
            depth += 1
            if depth > MAX_NESTING:
                raise too_deep(node.pos)
        if isinstance(node, list):
            stack.extend((item, depth) for item in node)
        elif dataclasses.is_dataclass(node):
            for f in dataclasses.fields(node):
                child = getattr(node, f.name)
                if isinstance(child, (list, tuple)) or dataclasses.is_dataclass(child):
                    stack.append((child, depth))
