"""The architectures p4sim runs: the interpreter device of a program, chosen by its `main`
(`ProgramModel.arch`: "v1model" for V1Switch, "tna" or "t2na" for Switch(pipe))."""

from __future__ import annotations

ARCHITECTURES = ("v1model", "tna", "t2na")


def interpreter_device(program, cpu_port: int | None = None, seed: int | None = None):
    """A device running `program` on the interpreter, under its architecture."""
    if program.model.arch in ("tna", "t2na"):
        from p4sim.tna import TnaDevice

        return TnaDevice(program, cpu_port, seed)
    from p4sim.v1model import V1ModelDevice

    return V1ModelDevice(program, cpu_port, seed)
