"""P4Runtime errors: a gRPC status code plus a message, raised anywhere below the servicer."""

from __future__ import annotations

import grpc

from p4sim import model
from p4sim.limits import MAX_MESSAGE_CHARS

# A status message travels in the grpc-message trailer (percent-encoded, up to 3 bytes a
# character); with the details of a failed Write it must fit gRPC's 8 KiB trailer limit.
MAX_STATUS_MESSAGE = 1000


def clip(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """`text`, cut to `limit` characters with a note of how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit} more characters)"


class StatusError(Exception):
    """A gRPC status to answer with, raised anywhere below the servicer; the servicer's RPC
    wrapper turns it into the status. The message is clipped here, once, so no offending value makes it huge.
    """

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        message = clip(message, MAX_STATUS_MESSAGE)
        super().__init__(message)
        self.code = code
        self.message = message

    @property
    def canonical_code(self) -> int:
        """The google.rpc.Code number (grpc.StatusCode.value is (number, name))."""
        return self.code.value[0]


def invalid(message: str) -> StatusError:
    return StatusError(grpc.StatusCode.INVALID_ARGUMENT, message)


def not_found(message: str) -> StatusError:
    return StatusError(grpc.StatusCode.NOT_FOUND, message)


def out_of_range(message: str) -> StatusError:
    return StatusError(grpc.StatusCode.OUT_OF_RANGE, message)


def unimplemented(message: str) -> StatusError:
    return StatusError(grpc.StatusCode.UNIMPLEMENTED, message)


def internal(exc: BaseException) -> StatusError:
    """A bug in p4sim, reported as INTERNAL with the exception (the server stays up)."""
    return StatusError(grpc.StatusCode.INTERNAL, f"p4sim internal error: {clip(repr(exc))}")


# The engine's table errors (p4sim.model) and the status code each maps to.
_ENGINE_CODES = {
    model.EntryExists: grpc.StatusCode.ALREADY_EXISTS,
    model.EntryNotFound: grpc.StatusCode.NOT_FOUND,
    model.InvalidEntry: grpc.StatusCode.INVALID_ARGUMENT,
    model.TableFull: grpc.StatusCode.RESOURCE_EXHAUSTED,
    model.NoMemory: grpc.StatusCode.RESOURCE_EXHAUSTED,
    model.ConstViolation: grpc.StatusCode.PERMISSION_DENIED,
    model.InUse: grpc.StatusCode.FAILED_PRECONDITION,
}


def from_engine(exc: model.ControlPlaneError) -> StatusError:
    for cls, code in _ENGINE_CODES.items():
        if isinstance(exc, cls):
            return StatusError(code, str(exc) or cls.__doc__.split(":")[0])
    return StatusError(grpc.StatusCode.INTERNAL, str(exc))
