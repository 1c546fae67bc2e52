"""p4sim's front end: preprocess -> lex -> parse -> type check -> program model.

Entry points used by the rest of the project:
- `preprocess(path, include_dirs=(), defines={})` -> preprocessed text with line markers;
- `compile_file(path, include_dirs=(), defines={})` -> `CompiledProgram`;
- `compile_source(text, filename)` -> `CompiledProgram` (text may be preprocessed output:
  that is the device-config payload of p4sim's P4Runtime server).
Every problem in the input raises `p4sim.errors.P4Error` (`file:line:col: error: ...`).
"""

from __future__ import annotations

import os

from p4sim.errors import P4Error
from p4sim.frontend.lexer import Pos
from p4sim.frontend.parser import parse
from p4sim.frontend.preprocess import preprocess, preprocess_text
from p4sim.frontend.program import ModelBuilder
from p4sim.frontend.typecheck import Checker
from p4sim.model import ProgramModel

INTERNAL_ERROR = "internal error in p4sim while compiling this"


def innermost_position(exc: BaseException) -> Pos | None:
    """The source position held by the innermost frame of `exc`'s traceback that holds one
    (a token or an IR node in a local variable)."""
    found = None
    tb = exc.__traceback__
    while tb is not None:
        for value in tb.tb_frame.f_locals.values():
            pos = value if isinstance(value, Pos) else getattr(value, "pos", None)
            if isinstance(pos, Pos):
                found = pos
                break
        tb = tb.tb_next
    return found


class CompiledProgram:
    """A checked program; satisfies `p4sim.model.CompiledProgram`."""

    def __init__(self, source: str, filename: str):
        self.source = source
        self.filename = filename
        try:
            self.ir = parse(source, filename)
            self.checker = Checker(self.ir)
            self.checker.run()
            builder = ModelBuilder(self.checker)
            self.model, self.roots = builder.build()
            self.hidden_tables = builder.hidden_tables
            self.all_actions = builder.all_actions
            # Compile once now, so that errors the engine finds are reported at compile time.
            self.new_device()
        except RecursionError as exc:
            # The parser bounds nesting (limits.MAX_NESTING); this is the safety net for any
            # other recursion, reported where the innermost construct being handled starts.
            raise P4Error.at(
                innermost_position(exc), "program nests too deeply for p4sim"
            ) from None
        except P4Error:
            raise
        except Exception as exc:
            raise P4Error.at(
                innermost_position(exc),
                f"{INTERNAL_ERROR} ({type(exc).__name__}: {str(exc)[:200]}); please report it",
            ) from exc
        self.model: ProgramModel

    def new_device(self, cpu_port: int | None = None, seed: int | None = None):
        from p4sim.architectures import interpreter_device

        return interpreter_device(self, cpu_port, seed)


def compile_source(
    text: str, filename: str = "<input>", file_system: bool = True
) -> CompiledProgram:
    """Compile source text. Raw source is preprocessed (includes resolve against p4sim's
    p4include); preprocessed text passes through unchanged, its line markers included.
    `file_system=False` (programs pushed over P4Runtime): no #include but p4sim's own
    core.p4 and v1model.p4."""
    return CompiledProgram(preprocess_text(text, filename, file_system=file_system), filename)


def compile_file(path, include_dirs=(), defines: dict[str, str] | None = None) -> CompiledProgram:
    text = preprocess(path, include_dirs, defines or {})
    return CompiledProgram(text, os.fspath(path))


__all__ = [
    "CompiledProgram",
    "P4Error",
    "compile_file",
    "compile_source",
    "preprocess",
    "preprocess_text",
]
