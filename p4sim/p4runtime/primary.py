"""A bare P4Runtime session as primary: one channel, one StreamChannel whose first message
made us primary. p4sim's bench and its tests talk to a switch through it when they check the
server itself, so the controller's encoding is not what they test (the controller's own
client is controlplane/client.py).

    session = PrimarySession("127.0.0.1:9559", ready_timeout_s=60)
    assert session.arbitration.status.code == 0   # OK: we are primary
    session.write(update)
    session.close()
"""

from __future__ import annotations

import queue

import grpc
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

ELECTION_ID = 1
WRITE_TIMEOUT_S = 10


class PrimarySession:
    def __init__(self, address: str, ready_timeout_s: float | None = None) -> None:
        """Connect to `address` (waiting up to `ready_timeout_s` for a server still starting,
        if given) and arbitrate for device 0 with election id 1; the answer is in
        `arbitration`."""
        self.channel = grpc.insecure_channel(address)
        if ready_timeout_s is not None:
            grpc.channel_ready_future(self.channel).result(timeout=ready_timeout_s)
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self._requests: queue.Queue = queue.Queue()
        request = p4runtime_pb2.StreamMessageRequest()
        request.arbitration.device_id = 0
        request.arbitration.election_id.low = ELECTION_ID
        self._requests.put(request)
        self.stream = self.stub.StreamChannel(iter(self._requests.get, None))
        self.arbitration = next(self.stream).arbitration

    def send(self, message: p4runtime_pb2.StreamMessageRequest) -> None:
        """A stream message (a PacketOut, another arbitration)."""
        self._requests.put(message)

    def write(self, *updates: p4runtime_pb2.Update) -> None:
        """One Write of `updates` as primary; grpc.RpcError when the server refuses it."""
        request = p4runtime_pb2.WriteRequest(device_id=0, updates=updates)
        request.election_id.low = ELECTION_ID
        self.stub.Write(request, timeout=WRITE_TIMEOUT_S)

    def close(self) -> None:
        self._requests.put(None)
        self.channel.close()
