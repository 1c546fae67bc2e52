"""The code p4c keeps: its front and mid end drop statements under a constant condition
(`if (false)`), statements after `exit` or `return`, tables never applied and actions never
called or listed by an applied table. The back end's checks (p4c-bm2-ss's v1model rules)
see only what is left. P4Info is written between the two ends, when code after an `exit`
is still there unless its body also has a `return` (live_calls' `exit_ends`).
"""

from __future__ import annotations

from p4sim.frontend import ir

_CHILDREN = (ir.Expr, ir.Stmt, ir.Arg, ir.SwitchCase, list)
_NOT_CHILDREN = ("decl", "target", "type", "var", "const")


def _children(x):
    if isinstance(x, list):
        yield from x
    elif isinstance(x, _CHILDREN):
        for name, value in vars(x).items():
            if name not in _NOT_CHILDREN and isinstance(value, _CHILDREN):
                yield value


def has_return(x) -> bool:
    """Whether a `return` statement stands anywhere in `x`."""
    return isinstance(x, ir.Return) or any(has_return(c) for c in _children(x))


def live_calls(x, exit_ends: bool = True):
    """The calls in a statement or expression, leaving out branches under a constant
    condition that can never run (`if (false)`, `true ? a : b`) and the statements of a
    block after a `return`, and after an `exit` when `exit_ends`. For P4Info, pass
    `has_return(body)`: p4c's front end drops what follows an `exit` only while it removes a
    body's returns (RemoveReturns), so P4Info lists a table or an action that only code
    after an `exit` uses in a body without a `return`."""
    if isinstance(x, list):
        for item in x:
            yield from live_calls(item, exit_ends)
            if isinstance(item, ir.Return) or (exit_ends and isinstance(item, ir.Exit)):
                return
        return
    if isinstance(x, (ir.If, ir.Ternary)) and x.cond.const is not None:
        yield from live_calls(x.then if x.cond.const else x.other, exit_ends)
        return
    if isinstance(x, ir.Call):
        yield x
    for child in _children(x):
        yield from live_calls(child, exit_ends)


def table_actions(t: ir.TableDecl) -> list[ir.ActionDecl]:
    """The actions an applied table can run: its actions list, default action and entries."""
    refs = []
    for p in t.properties:
        if p.name == "actions":
            refs += p.value
        elif p.name == "default_action" and isinstance(p.value, ir.ActionRef):
            refs.append(p.value)
        elif p.name == "entries":
            refs += [entry.action for entry in p.value]
    return [r.decl for r in refs if isinstance(getattr(r, "decl", None), ir.ActionDecl)]


def kept_calls(blocks) -> set[int]:
    """The ids of the calls p4c keeps in `blocks` (parser and control declarations): the
    live calls of each apply body and parser state, then, transitively, of the actions and
    functions they call and of the actions of the tables they apply."""
    todo = []
    for d in blocks:
        if isinstance(d, ir.ControlDecl) and d.body is not None:
            todo.append(d.body)
        elif isinstance(d, ir.ParserDecl) and d.states:
            todo += [s.stmts for s in d.states]
    kept: set[int] = set()
    seen: set[int] = set()
    while todo:
        code = todo.pop()
        for call in live_calls(code):
            kept.add(id(call))
            kind, target = getattr(call, "kind", None), getattr(call, "target", None)
            if kind == "table_apply":
                bodies = [a.body for a in table_actions(target)]
            elif kind in ("action", "function"):
                bodies = [target.body]
            else:
                continue
            for body in bodies:
                if id(body) not in seen:
                    seen.add(id(body))
                    todo.append(body)
    return kept
