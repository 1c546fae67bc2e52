"""Name resolution, type checking and constant folding of the supported P4_16 subset.

The checker walks the IR once, in declaration order (P4 declares before use), and annotates
it in place: every expression gets `.type` and, when it is a compile-time constant, `.const`;
every name gets `.decl` (a `Var`, an `Instance`, a declaration); every call gets `.kind` and
`.target`. Variables get a slot in the frame of the parser/control/function that owns them,
which is how the engine addresses them without dictionaries.

Representation of values shared with the engine: bit<W>/int<W> are Python ints (int<W> in
two's complement range), bool is bool, `error` and plain enums are ints (member index; for
`error`, NoError is 0), serializable enums are their underlying value.

The checker is one class composed of rule families, one module each: `declarations`,
`instances`, `tables`, `statements`, `expressions`, `calls` and `targets` (p4c-bm2-ss's
rules); `symbols` holds what names stand for (Var, Instance, Scope, ...), `typerules` the
relations between types.
"""

from p4sim.frontend.typecheck.checker import Checker

__all__ = ["Checker"]
