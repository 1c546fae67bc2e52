"""p4sim's native engine: the P4 program compiled to C, built with the system compiler.

`new_device(program, engine=...)` is the one place that picks an engine: "interp" is the
Python interpreter (p4sim.engine + p4sim.v1model), "native" the generated C (codegen.py,
runtime.h, pipeline.c, api.c, io.c, loaded by device.py). A program with a construct the
generator does not translate, or a failed C build, runs on the interpreter, and the engine
logs which construct (with its source position) made it fall back.
"""

from __future__ import annotations

import logging

from p4sim.architectures import interpreter_device
from p4sim.native.build import BuildError
from p4sim.native.codegen import Unsupported

log = logging.getLogger("p4sim.native")

ENGINES = ("interp", "native")
DEFAULT_ENGINE = "interp"


def new_device(
    program, cpu_port: int | None = None, seed: int | None = None, engine: str = DEFAULT_ENGINE
):
    """A running device of `program` on `engine`; `.engine` says which one it got and
    `.fallback_reason` (interpreter devices made for "native") why."""
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r} (allowed: {', '.join(ENGINES)})")
    reason = None
    if engine == "native" and program.model.arch != "v1model":
        reason = f"main: the {program.model.arch} architecture (the generator translates v1model)"
        log.warning(
            "native engine: %s is not supported natively; this pipeline runs on the interpreter",
            reason,
        )
    elif engine == "native":
        from p4sim.native.device import NativeDevice

        try:
            return NativeDevice(program, cpu_port, seed)
        except Unsupported as exc:
            reason = f"{exc.pos}: {exc.what}" if exc.pos else exc.what
            log.warning(
                "native engine: %s is not supported natively; this pipeline runs on the interpreter",
                reason,
            )
        except MemoryError as exc:  # what could not be allocated (device.py names it)
            reason = str(exc) or "no memory"
            log.error("native engine: %s; this pipeline runs on the interpreter", reason)
        except BuildError as exc:
            reason = str(exc)
            log.error("native engine: build failed, this pipeline runs on the interpreter: %s", exc)
        except Exception as exc:  # a bug in the generator must not stop the switch
            reason = f"internal error: {type(exc).__name__}: {exc}"
            log.exception("native engine: internal error; this pipeline runs on the interpreter")
    device = interpreter_device(program, cpu_port, seed)
    device.engine = "interp"
    device.fallback_reason = reason
    return device


class EngineProgram:
    """A compiled program whose `new_device` runs on the chosen engine (what the P4Runtime
    server's pipelines and the CLI's start-up program use)."""

    def __init__(self, program, engine: str):
        self._program = program
        self.engine = engine

    def __getattr__(self, name):
        return getattr(self._program, name)

    def new_device(self, cpu_port: int | None = None, seed: int | None = None):
        return new_device(self._program, cpu_port, seed, self.engine)


def compiler(engine: str):
    """A P4Runtime server compiler (text, filename) -> program for `engine`."""
    from p4sim.p4runtime.pipeline import default_compiler

    if engine == "interp":
        return default_compiler

    def compile_for_engine(text: str, filename: str):
        return EngineProgram(default_compiler(text, filename), engine)

    return compile_for_engine


__all__ = [
    "DEFAULT_ENGINE",
    "ENGINES",
    "BuildError",
    "EngineProgram",
    "Unsupported",
    "compiler",
    "new_device",
]
