"""The P4_16 lexical grammar: tokens with their original positions.

Input is preprocessed text; `# N "file"` and `#line N "file"` markers reset the position, so
every token knows the file, line and column it came from. `>>` is never one token: the parser
joins two adjacent `>` into a shift, which keeps `bit<bit<8>>`-style nesting simple, as p4c does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from p4sim.errors import P4Error
from p4sim.limits import MAX_WIDTH

KEYWORDS = {
    "abstract", "action", "actions", "apply", "bool", "bit", "break", "const", "continue",
    "control", "default", "else", "entries", "enum", "error", "exit", "extern", "false", "for",
    "header", "header_union", "if", "in", "inout", "int", "key", "list", "match_kind", "out",
    "package", "parser", "priority", "return", "select", "state", "string", "struct", "switch",
    "table", "this", "transition", "true", "tuple", "type", "typedef", "varbit", "valueset",
    "value_set", "void", "_",
}  # fmt: skip

# Longest first, so that `&&&` wins over `&&` and `&`.
PUNCT = [
    "&&&", "|+|", "|-|", "...", "<<", "==", "!=", "<=", ">=", "&&", "||", "++", "..", "+", "-",
    "*", "/", "%", "&", "|", "^", "~", "!", "<", ">", "=", "(", ")", "{", "}", "[", "]", ";",
    ":", ",", ".", "?", "@", "#",
]  # fmt: skip

_TOKEN = re.compile(
    r"""
    (?P<ws>[ \t\r\f\v]+)
  | (?P<nl>\n)
  | (?P<marker>^\#\s*(?:line\s+)?(?P<mline>\d+)(?:\s+"(?P<mfile>[^"]*)")?[^\n]*)
  | (?P<pragma>^\#\s*pragma[^\n]*)
  | (?P<num>(?:\d+[wsWS]-?)?(?:0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|0[dD][0-9_]+|\d[\d_]*))
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<string>"(?:\\.|[^"\\\n])*")
  | (?P<punct>"""
    + "|".join(re.escape(p) for p in PUNCT)
    + r""")
    """,
    re.VERBOSE | re.MULTILINE | re.ASCII,  # P4 names and numbers are ASCII (\d is not)
)


@dataclass(slots=True)
class Pos:
    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(slots=True)
class Token:
    kind: str  # "ident", "keyword", "int", "string", "punct", "unexpected", "eof"
    text: str
    pos: Pos
    end: int  # offset just past the token in the source text (adjacency checks)
    start: int = 0
    value: object = None  # for int tokens: (value, width or None, signed)


def parse_int_literal(text: str, pos: Pos) -> tuple[int, int | None, bool]:
    """`8w255` -> (255, 8, False); `8s-1` is the parser's business (sign is a separate token)."""
    width, signed = None, False
    m = re.match(r"(\d+)([wsWS])(.*)$", text)
    if m:
        width = int(m.group(1))
        signed = m.group(2) in "sS"
        text = m.group(3)
        if width == 0 and not signed:
            raise P4Error.at(pos, "bit width of a literal must be positive")
        if width > MAX_WIDTH:
            raise P4Error.at(
                pos, f"width {width} of a literal is above p4sim's limit of {MAX_WIDTH}"
            )
    body = text.replace("_", "")
    negative = body.startswith("-")
    body = body.lstrip("-")
    base = 10
    if len(body) > 1 and body[0] == "0" and body[1] in "xXbBoOdD":
        base = {"x": 16, "b": 2, "o": 8, "d": 10}[body[1].lower()]
        body = body[2:]
    try:
        value = int(body, base)
    except ValueError:
        raise P4Error.at(pos, f"malformed integer literal '{text}'") from None
    return (-value if negative else value), width, signed


def tokenize(text: str, filename: str = "<input>") -> list[Token]:
    tokens: list[Token] = []
    file, line, line_start = filename, 1, 0
    i, n = 0, len(text)
    while i < n:
        m = _TOKEN.match(text, i)
        if not m:
            # p4c's UNEXPECTED_TOKEN: fine in a free-form annotation body (`@a(don't)`), an
            # error anywhere else (the parser says so when it meets one)
            tokens.append(
                Token("unexpected", text[i], Pos(file, line, i - line_start + 1), i + 1, i)
            )
            i += 1
            continue
        kind = m.lastgroup
        tok_text = m.group(0)
        pos = Pos(file, line, i - line_start + 1)
        if kind == "nl":
            line += 1
            line_start = m.end()
        elif kind in ("mline", "mfile", "marker"):
            # The marker names the line number of the *next* line.
            line = int(m.group("mline")) - 1
            if m.group("mfile") is not None:
                file = m.group("mfile")
        elif kind == "num":
            tok = Token("int", tok_text, pos, m.end(), i)
            tok.value = parse_int_literal(tok_text, pos)
            tokens.append(tok)
        elif kind == "ident":
            tokens.append(
                Token("keyword" if tok_text in KEYWORDS else "ident", tok_text, pos, m.end(), i)
            )
        elif kind == "string":
            tokens.append(Token("string", tok_text[1:-1], pos, m.end(), i))
        elif kind == "punct":
            if tok_text == "#":
                raise P4Error.at(pos, "stray '#' (preprocessor directive not at line start?)")
            tokens.append(Token("punct", tok_text, pos, m.end(), i))
        # ws and pragma: skipped (no pragma changes p4sim's behaviour)
        i = m.end()
    tokens.append(Token("eof", "", Pos(file, line, i - line_start + 1), n, n))
    return tokens
