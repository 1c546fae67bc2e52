"""Errors reported for bad P4 input, shaped like p4c's: `file:line:col: error: message`."""

from __future__ import annotations

import signal
from contextlib import contextmanager


class P4Error(Exception):
    """A problem in the P4 source (syntax, type, unsupported construct, undefined name)."""

    def __init__(self, message: str, file: str = "<input>", line: int = 0, col: int = 0):
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.col = col

    @classmethod
    def at(cls, pos, message: str) -> P4Error:
        """Build an error at a source position (anything with .file .line .col, or None)."""
        if pos is None:
            return cls(message)
        return cls(message, pos.file, pos.line, pos.col)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}: error: {self.message}"


class P4Errors(P4Error):
    """Several errors reported together; behaves as the first one."""

    def __init__(self, errors: list[P4Error]):
        first = errors[0]
        super().__init__(first.message, first.file, first.line, first.col)
        self.errors = errors

    def __str__(self) -> str:
        return "\n".join(str(e) for e in self.errors)


def unsupported(pos, what: str) -> P4Error:
    """The standard message for valid P4 that p4sim does not implement."""
    return P4Error.at(pos, f"{what} is not supported by p4sim")


class CompileTimeout(Exception):
    """A compile ran past its time limit (raised by `time_limit`)."""


@contextmanager
def time_limit(seconds: float):
    """Raise CompileTimeout in the main thread when the block runs longer than `seconds`
    (SIGALRM; the fuzzer and the rejection corpus bound each compile with it)."""

    def expire(signum, frame):
        raise CompileTimeout(f"no answer within {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
