"""Register cells of the program, read and written by name: over P4Runtime when the target
implements it (p4sim), else through BMv2's Thrift runtime (BMv2's P4Runtime server answers
UNIMPLEMENTED, p4lang/PI issue 376).

The choice is made by capability, once per connection: the first access goes over
P4Runtime; an UNIMPLEMENTED answer switches to Thrift at the address given for the target.
"""

from __future__ import annotations

from collections.abc import Callable

from controlplane import entries as E
from controlplane.client import P4RuntimeClient, P4RuntimeError
from controlplane.p4info import P4InfoIndex


class RegisterAccess:
    def __init__(
        self,
        client: P4RuntimeClient,
        index: Callable[[], P4InfoIndex],
        thrift_addr: str | None = None,
    ):
        self.client = client
        self._index = index  # the pipeline may be pushed after this object is made
        self.thrift_addr = thrift_addr
        self._thrift = None  # a BMv2Thrift once P4Runtime said UNIMPLEMENTED

    @property
    def via(self) -> str:
        """'thrift' once the target showed it has no P4Runtime register access, else 'p4runtime'."""
        return "thrift" if self._thrift is not None else "p4runtime"

    def read(self, register: str, idx: int) -> int:
        name = self._index().register(register).preamble.name
        if self._thrift is None:
            try:
                found = self.client.read([E.register_entity(self._index(), register, idx)])
                return E.decode(found[0].register_entry.data.bitstring)
            except P4RuntimeError as exc:
                self._fall_back(exc, "reads")
        return self._thrift.register_read(name, idx)

    def write(self, register: str, idx: int, value: int) -> None:
        name = self._index().register(register).preamble.name
        if self._thrift is None:
            entity = E.register_entity(self._index(), register, idx, value)
            try:
                self.client.write([E.update("MODIFY", "register_entry", entity.register_entry)])
                return
            except P4RuntimeError as exc:
                self._fall_back(exc, "writes")
        self._thrift.register_write(name, idx, value)

    def _fall_back(self, exc: P4RuntimeError, what: str) -> None:
        if "UNIMPLEMENTED" not in exc.codes:
            raise exc
        if self.thrift_addr is None:
            raise P4RuntimeError(
                f"{self.client.addr} does not implement register {what} over P4Runtime "
                f"(BMv2: p4lang/PI issue 376); give the switch's Thrift address "
                f"(thrift_addr, e.g. 127.0.0.1:9090, BMv2's --thrift-port) to use its "
                f"Thrift runtime instead",
                "UNIMPLEMENTED",
            ) from None
        from controlplane.bmv2 import BMv2Thrift

        self._thrift = BMv2Thrift(self.thrift_addr)

    def close(self) -> None:
        if self._thrift is not None:
            self._thrift.close()
            self._thrift = None
