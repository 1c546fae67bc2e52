"""Client arbitration for one device and the default role (P4Runtime spec, "Client
Arbitration and Controller Replication").

The primary is the client whose election id is at least as high as any the server has ever
seen (`highest_seen`). When the primary leaves nobody is promoted: the server has no primary
until a client arbitrates with an id >= the highest seen. A client that sends no election id
at all is a backup that never becomes primary (and is not checked for duplicates).

Notifications (MasterArbitrationUpdate, spec "Client Arbitration Notifications"): when the primary changes (a new primary, a
primary that downgraded itself or left) every client hears of it; a client that arbitrates
without changing the primary hears only its own answer. The primary gets OK, backups
ALREADY_EXISTS, everyone NOT_FOUND while there is no primary; the election id is the highest
seen, left unset while there has never been a primary.
"""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass, field

from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2

from p4sim.p4runtime.errors import invalid


def election_id(msg) -> int:
    return (msg.high << 64) | msg.low


def _uint128(value: int, out) -> None:
    out.high = value >> 64
    out.low = value & 0xFFFFFFFFFFFFFFFF


@dataclass(eq=False)
class Client:
    """One open StreamChannel."""

    ident: int
    outbox: queue.Queue = field(default_factory=queue.Queue)
    arbitrated: bool = False  # it has sent a MasterArbitrationUpdate
    election_id: int | None = None  # None: none sent (a backup for good)
    device_id: int = 0


class Arbiter:
    """Primary/backup election for the default role of one device."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.clients: list[Client] = []
        self.highest_seen: int | None = None
        self.primary: Client | None = None

    def arbitrate(self, client: Client, election_id: int | None) -> None:
        with self.lock:
            if election_id is not None:
                for other in self.clients:
                    if other is not client and other.election_id == election_id:
                        raise invalid(
                            f"election id {election_id} is already used by another "
                            "client of this role"
                        )
            previous = self.primary
            client.arbitrated = True
            client.election_id = election_id
            if client not in self.clients:
                self.clients.append(client)
            if election_id is not None and (
                self.highest_seen is None or election_id > self.highest_seen
            ):
                self.highest_seen = election_id
            self._elect()
            if self.primary is not previous or client is previous:
                self._notify_all()  # a new primary, or the primary re-arbitrated
            else:
                client.outbox.put(self._update_for(client))  # a backup: only its answer

    def remove(self, client: Client) -> None:
        with self.lock:
            if client not in self.clients:
                return
            self.clients.remove(client)
            was_primary = client is self.primary
            self._elect()
            if was_primary:
                self._notify_all()

    def _elect(self) -> None:
        candidates = [c for c in self.clients if c.election_id is not None]
        best = max(candidates, key=lambda c: c.election_id, default=None)
        if best is not None and best.election_id >= self.highest_seen:
            self.primary = best
        else:
            self.primary = None  # the primary left: nobody until an id >= highest_seen comes

    def _notify_all(self) -> None:
        for c in self.clients:
            c.outbox.put(self._update_for(c))

    def _update_for(self, client: Client) -> p4runtime_pb2.StreamMessageResponse:
        msg = p4runtime_pb2.StreamMessageResponse()
        arb = msg.arbitration
        arb.device_id = client.device_id
        if self.primary is None:
            if self.highest_seen is not None:  # unset while there has never been a primary
                _uint128(self.highest_seen, arb.election_id)
            arb.status.code = code_pb2.NOT_FOUND
            arb.status.message = "no primary client for this role"
        else:
            _uint128(self.primary.election_id, arb.election_id)
            if client is self.primary:
                arb.status.code = code_pb2.OK
                arb.status.message = "you are the primary client"
            else:
                arb.status.code = code_pb2.ALREADY_EXISTS
                arb.status.message = "another client is primary; you are a backup"
        return msg

    def is_primary(self, election_id: int) -> bool:
        with self.lock:
            return self.primary is not None and self.primary.election_id == election_id

    def primary_outbox(self) -> queue.Queue | None:
        with self.lock:
            return self.primary.outbox if self.primary else None
