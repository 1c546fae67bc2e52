"""A C preprocessor for P4 sources, as much of cpp as P4 programs use.

Supports #include "..." and <...>, object- and function-like #define (with # and ##), #undef,
#if/#ifdef/#ifndef/#elif/#else/#endif with defined() and integer expressions, #error, #line
and #pragma (kept for the parser). The output carries `# N "file"` line markers, like cpp's,
so that the lexer reports positions in the original files. Comments are blanked out (replaced
by spaces, newlines kept) so line and column numbers survive.
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

from dccommon.cliargs import NAME_TOO_LONG, InputFileError, check_input_file, short_path
from p4sim.errors import P4Error
from p4sim.limits import MAX_NESTING, MAX_SOURCE_BYTES

P4INCLUDE = Path(__file__).resolve().parent.parent / "p4include"
BUILTIN_INCLUDES = ("core.p4", "v1model.p4")
# Each macro expansion counts this many characters besides its text against
# MAX_SOURCE_BYTES, so that a macro that doubles at every level stops after about 2^18
# expansions (a few seconds), not 2^24.
_EXPANSION_COST = 64

_IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
# Tokens that macro expansion must step over unchanged: strings and numbers.
_SKIP = re.compile(r'"(?:\\.|[^"\\])*"|\d[\w.]*')
_DIRECTIVE = re.compile(r"\s*#\s*(\w*)(.*)$", re.DOTALL)


class _Pos:
    def __init__(self, file: str, line: int, col: int = 1):
        self.file, self.line, self.col = file, line, col


def decode_source(data: bytes, file: str) -> str:
    """P4 source bytes as text: UTF-8 (a UTF-8 byte-order mark is dropped). Anything else
    (UTF-16/32, Latin-1, a binary file) is an error at the first offending byte."""
    if len(data) > MAX_SOURCE_BYTES:
        raise P4Error(
            f"file is larger than p4sim's limit of {MAX_SOURCE_BYTES:,} bytes", file, 1, 1
        )
    for bom, name in (
        (b"\xff\xfe", "UTF-16"),
        (b"\xfe\xff", "UTF-16"),
        (b"\0\0\xfe\xff", "UTF-32"),
    ):
        if data.startswith(bom):
            raise P4Error(f"file is {name} (byte-order mark); P4 source must be UTF-8", file, 1, 1)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    nul = data.find(b"\0")
    try:
        text = data[: nul if nul >= 0 else len(data)].decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col = _line_col(data, exc.start)
        raise P4Error(
            f"byte {data[exc.start]:#04x} is not UTF-8 text; P4 source must be UTF-8",
            file,
            line,
            col,
        ) from None
    if nul >= 0:
        line, col = _line_col(data, nul)
        raise P4Error("NUL byte: a binary file, not P4 source", file, line, col)
    return text


def _line_col(data: bytes, offset: int) -> tuple[int, int]:
    """1-based line and column (in characters) of a byte offset whose line prefix is UTF-8."""
    start = data.rfind(b"\n", 0, offset) + 1
    return data.count(b"\n", 0, offset) + 1, len(data[start:offset].decode("utf-8", "replace")) + 1


class Macro:
    def __init__(self, name: str, params: list[str] | None, body: str):
        self.name, self.params, self.body = name, params, body


def strip_comments(text: str, file: str) -> str:
    """Blank out // and /* */ comments, keeping newlines and string literals."""
    out = []
    i, n = 0, len(text)
    line = 1
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"' and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise P4Error("unterminated comment", file, line, 1)
            chunk = text[i : j + 2]
            out.append(re.sub(r"[^\n]", " ", chunk))
            i = j + 2
        else:
            if c == "\n":
                line += 1
            out.append(c)
            i += 1
    return "".join(out)


class Preprocessor:
    """With `file_system=False` (a program pushed over P4Runtime) nothing is read from disk
    but p4sim's own core.p4 and v1model.p4: any other #include is an error, so a client can
    neither read the server's files nor learn what they hold."""

    def __init__(
        self, include_dirs=(), defines: dict[str, str] | None = None, file_system: bool = True
    ):
        self.include_dirs = [Path(d) for d in include_dirs]
        self.file_system = file_system
        self.macros: dict[str, Macro] = {}
        for name, value in (defines or {}).items():
            self.macros[name] = Macro(name, None, "1" if value is None else str(value))
        self.out: list[str] = []
        self.size = 0  # characters in `out`, and macro expansion work (see _grow)
        self.depth = 0

    # -- files -------------------------------------------------------------------------
    def run_file(self, path: str | Path) -> str:
        path = Path(path)
        text = read_source(path)
        if not text.strip():  # the program itself: an empty #include is fine
            raise P4Error(
                "the file is empty (expected a P4_16 program, e.g. one ending in "
                "V1Switch(...) main;)",
                str(path),
                1,
                1,
            )
        self._process(text, str(path))
        return "".join(self.out)

    def run_text(self, text: str, filename: str) -> str:
        if len(text) > MAX_SOURCE_BYTES:
            raise P4Error(
                f"program is larger than p4sim's limit of {MAX_SOURCE_BYTES:,} characters",
                filename,
                1,
                1,
            )
        self._process(text, filename)
        return "".join(self.out)

    def _include(self, name: str, system: bool, current: str, pos: _Pos) -> tuple[str, str]:
        """(text, file name) of an #include."""
        if not self.file_system:
            if name not in BUILTIN_INCLUDES:
                raise P4Error.at(
                    pos,
                    f"cannot #include '{name}': a program pushed over P4Runtime may include only "
                    f"{' and '.join(BUILTIN_INCLUDES)} (p4sim's own); preprocess it first "
                    "(p4sim compile -o writes a device config with every include applied)",
                )
            path = P4INCLUDE / name
        else:
            path = self._find_include(name, system, current, pos)
        return read_source(path), str(path)

    def _grow(self, n: int, pos: _Pos) -> None:
        self.size += n
        if self.size > MAX_SOURCE_BYTES:
            raise P4Error.at(
                pos,
                f"preprocessor output exceeds p4sim's limit of {MAX_SOURCE_BYTES:,} characters "
                "(a macro that expands without end?)",
            )

    def _find_include(self, name: str, system: bool, current: str, pos: _Pos) -> Path:
        candidates = []
        if not system:
            candidates.append(Path(current).parent / name)
        candidates += [d / name for d in self.include_dirs]
        candidates.append(P4INCLUDE / name)
        unusable = None  # a candidate that exists but is no regular file
        for c in candidates:
            try:
                check_input_file(c)
                return c
            except InputFileError as exc:
                if exc.reason == NAME_TOO_LONG:
                    raise P4Error.at(pos, f"include file '{short_path(name)}': {exc.reason}")
                if exc.reason != "no such file":
                    unusable = unusable or exc
        if unusable:
            raise P4Error.at(pos, f"include file '{name}': {unusable.reason}")
        where = ", ".join(str(c.parent) for c in candidates)
        raise P4Error.at(pos, f"cannot find include file '{name}' (searched {where})")

    # -- lines -------------------------------------------------------------------------
    def _process(self, text: str, file: str) -> None:
        self.depth += 1
        if self.depth > 50:
            raise P4Error("#include nested too deeply (more than 50 levels)", file, 1, 1)
        text = strip_comments(text.replace("\r\n", "\n"), file)
        lines = text.split("\n")
        self.out.append(f'# 1 "{file}"\n')
        # Stack of (this branch taken, some branch of this #if already taken, parent active).
        conds: list[list[bool]] = []
        active = True
        i = 0
        while i < len(lines):
            lineno = i + 1
            line = lines[i]
            consumed = 1
            # Join continuation lines, leaving blank lines to keep numbering.
            while line.endswith("\\") and i + consumed < len(lines):
                line = line[:-1] + " " + lines[i + consumed]
                consumed += 1
            i += consumed
            m = _DIRECTIVE.match(line)
            pos = _Pos(file, lineno, line.find("#") + 1 if m else 1)
            if m:
                name, rest = m.group(1), m.group(2).strip()
                if name in ("if", "ifdef", "ifndef"):
                    if not active:
                        conds.append([False, True, False])
                    else:
                        if name == "if":
                            taken = self._eval_condition(rest, pos)
                        else:
                            ident = rest.split()[0] if rest.split() else ""
                            if not _IDENT.fullmatch(ident):
                                raise P4Error.at(pos, f"#{name} needs a macro name")
                            taken = (ident in self.macros) == (name == "ifdef")
                        conds.append([taken, taken, True])
                elif name in ("elif", "else", "endif"):
                    if not conds:
                        raise P4Error.at(pos, f"#{name} without #if")
                    top = conds[-1]
                    if name == "endif":
                        conds.pop()
                    elif name == "else":
                        top[0] = top[2] and not top[1]
                        top[1] = True
                    else:
                        top[0] = top[2] and not top[1] and self._eval_condition(rest, pos)
                        top[1] = top[1] or top[0]
                elif active:
                    self._directive(name, rest, file, pos)
                active = all(c[0] for c in conds)
                self.out.append("\n" * consumed)
                if name == "include" and active:
                    self.out.append(f'# {i + 1} "{file}"\n')
                continue
            if active:
                expanded = self._expand(line, pos)
                self._grow(len(expanded), pos)
                self.out.append(expanded + "\n" * consumed)
            else:
                self.out.append("\n" * consumed)
        if conds:
            raise P4Error("unterminated #if (missing #endif)", file, len(lines), 1)
        self.depth -= 1

    def _directive(self, name: str, rest: str, file: str, pos: _Pos) -> None:
        if name == "include":
            rest = self._expand(rest, pos).strip() if not rest.startswith(('"', "<")) else rest
            m = re.match(r'"([^"]+)"|<([^>]+)>', rest)
            if not m:
                raise P4Error.at(pos, '#include expects "file" or <file>')
            text, name = self._include(m.group(1) or m.group(2), m.group(2) is not None, file, pos)
            self._process(text, name)
        elif name == "define":
            m = re.match(r"([A-Za-z_]\w*)(\(([^)]*)\))?\s*(.*)$", rest, re.DOTALL)
            if not m:
                raise P4Error.at(pos, "#define expects a macro name")
            params = None
            if m.group(2) is not None:
                params = [p.strip() for p in m.group(3).split(",") if p.strip()]
            self.macros[m.group(1)] = Macro(m.group(1), params, m.group(4).strip())
        elif name == "undef":
            self.macros.pop(rest.split()[0] if rest else "", None)
        elif name == "error":
            raise P4Error.at(pos, f"#error {rest}")
        elif name == "warning":
            pass
        elif name == "line":
            m = re.match(r'(\d+)(?:\s+"([^"]*)")?', rest)
            if not m:
                raise P4Error.at(pos, "#line expects a line number")
            self.out.append(f'# {int(m.group(1)) - 1} "{m.group(2) or file}"\n')
        elif name == "pragma":
            self.out.append(f"#pragma {rest}")
        elif name == "":
            pass  # a lone '#' or a line marker from an earlier cpp run: kept for the lexer
        elif name.isdigit():
            self.out.append(f"# {name}{rest and ' ' + rest}")
        else:
            raise P4Error.at(pos, f"unknown preprocessor directive #{name}")

    # -- macros ------------------------------------------------------------------------
    def _expand(self, text: str, pos: _Pos, hide: frozenset = frozenset()) -> str:
        if len(hide) > MAX_NESTING:  # `hide` holds the macros being expanded around us
            raise P4Error.at(
                pos, f"macros nested more than {MAX_NESTING} levels deep (p4sim's limit)"
            )
        out = []
        i, n = 0, len(text)
        while i < n:
            m = _SKIP.match(text, i)
            if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
                out.append(m.group(0))
                i = m.end()
                continue
            m = _IDENT.match(text, i)
            if not m or (i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")):
                out.append(text[i])
                i += 1
                continue
            name = m.group(0)
            macro = self.macros.get(name)
            if macro is None or name in hide:
                out.append(name)
                i = m.end()
                continue
            if macro.params is None:
                out.append(self._expand(macro.body, pos, hide | {name}))
                self._grow(len(out[-1]) + _EXPANSION_COST, pos)
                i = m.end()
                continue
            j = m.end()
            while j < n and text[j] in " \t":
                j += 1
            if j >= n or text[j] != "(":
                out.append(name)  # a function-like macro name without arguments
                i = m.end()
                continue
            args, i = self._split_args(text, j, pos)
            if len(args) == 1 and args[0].strip() == "" and not macro.params:
                args = []
            if len(args) != len(macro.params):
                raise P4Error.at(
                    pos,
                    f"macro {name} expects {len(macro.params)} argument(s), got {len(args)}",
                )
            body = self._substitute(macro, [a.strip() for a in args], pos, hide)
            out.append(self._expand(body, pos, hide | {name}))
            self._grow(len(out[-1]) + _EXPANSION_COST, pos)
        return "".join(out)

    def _split_args(self, text: str, j: int, pos: _Pos) -> tuple[list[str], int]:
        depth, args, cur = 0, [], []
        j += 1
        while j < len(text):
            c = text[j]
            if c == "(":
                depth += 1
            elif c == ")":
                if depth == 0:
                    args.append("".join(cur))
                    return args, j + 1
                depth -= 1
            elif c == "," and depth == 0:
                args.append("".join(cur))
                cur = []
                j += 1
                continue
            cur.append(c)
            j += 1
        raise P4Error.at(pos, "unterminated macro argument list")

    def _substitute(self, macro: Macro, args: list[str], pos: _Pos, hide: frozenset) -> str:
        values = dict(zip(macro.params, args))
        body = macro.body
        # Stringification (#param) and token pasting (a ## b) use the unexpanded arguments.
        body = re.sub(
            r"#\s*([A-Za-z_]\w*)",
            lambda m: '"' + values[m.group(1)] + '"' if m.group(1) in values else m.group(0),
            body,
        )
        pasted = re.split(r"\s*##\s*", body)
        if len(pasted) > 1:
            pasted = [
                values.get(p, p) if _IDENT.fullmatch(p) else p for p in (x.strip() for x in pasted)
            ]
            body = "".join(pasted)
        expanded = {k: self._expand(v, pos, hide) for k, v in values.items()}
        return _IDENT.sub(lambda m: expanded.get(m.group(0), m.group(0)), body)

    # -- #if expressions ---------------------------------------------------------------
    def _eval_condition(self, expr: str, pos: _Pos) -> bool:
        expr = re.sub(
            r"\bdefined\s*(\(\s*([A-Za-z_]\w*)\s*\)|([A-Za-z_]\w*))",
            lambda m: "1" if (m.group(2) or m.group(3)) in self.macros else "0",
            expr,
        )
        expr = self._expand(expr, pos)
        expr = _IDENT.sub("0", expr)  # cpp: remaining identifiers are 0
        expr = re.sub(r"(0[xX][0-9a-fA-F]+|\d+)[uUlL]+", r"\1", expr)
        py = expr.replace("&&", " and ").replace("||", " or ")
        py = re.sub(r"!(?!=)", " not ", py).replace("/", "//")
        try:
            return bool(_eval_int(ast.parse(py.strip() or "0", mode="eval").body))
        except (SyntaxError, ValueError, ZeroDivisionError, RecursionError, MemoryError) as e:
            shown = expr.strip() if len(expr.strip()) <= 80 else expr.strip()[:80] + "..."
            reason = "nested too deeply" if isinstance(e, (RecursionError, MemoryError)) else e
            raise P4Error.at(pos, f"invalid #if expression '{shown}': {reason}") from None


_BINOPS = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: int(a / b),
    ast.Mod: lambda a, b: a % b,
    ast.LShift: lambda a, b: _shift_left(a, b),
    ast.RShift: lambda a, b: a >> b,
    ast.BitAnd: lambda a, b: a & b,
    ast.BitOr: lambda a, b: a | b,
    ast.BitXor: lambda a, b: a ^ b,
}
_CMPS = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
}


def _shift_left(a: int, b: int) -> int:
    if not 0 <= b < 64:  # cpp computes in intmax_t
        raise ValueError(f"shift count {b} is outside 0..63")
    return a << b


def _eval_int(node) -> int:
    """Evaluate a restricted Python AST (the translated #if expression)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return int(node.value)
    if isinstance(node, ast.BoolOp):
        vals = [_eval_int(v) for v in node.values]
        return int(all(vals) if isinstance(node.op, ast.And) else any(vals))
    if isinstance(node, ast.UnaryOp):
        v = _eval_int(node.operand)
        if isinstance(node.op, ast.Not):
            return int(not v)
        if isinstance(node.op, ast.USub):
            return -v
        if isinstance(node.op, ast.Invert):
            return ~v
        return v
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return _BINOPS[type(node.op)](_eval_int(node.left), _eval_int(node.right))
    if isinstance(node, ast.Compare):
        left = _eval_int(node.left)
        for op, right in zip(node.ops, node.comparators):
            r = _eval_int(right)
            if type(op) not in _CMPS or not _CMPS[type(op)](left, r):
                return 0
            left = r
        return 1
    raise ValueError("unsupported operator")


def read_source(path: Path) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_SOURCE_BYTES + 1)  # decode_source names a larger file
    except OSError as e:
        raise P4Error(f"cannot read {path}: {e.strerror}", str(path), 0, 0) from None
    return decode_source(data, str(path))


def preprocess(path, include_dirs=(), defines: dict[str, str] | None = None) -> str:
    """Preprocess a P4 file; <core.p4> and <v1model.p4> resolve to p4sim's own copies."""
    return Preprocessor(include_dirs, defines).run_file(os.fspath(path))


def preprocess_text(
    text: str, filename: str = "<input>", include_dirs=(), defines=None, file_system=True
) -> str:
    return Preprocessor(include_dirs, defines, file_system).run_text(text, filename)
