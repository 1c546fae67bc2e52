"""The P4Runtime gRPC client: connection, arbitration, pipeline push, Write and Read, and the
translation of gRPC errors into readable ones.

A failed Write carries one `p4.v1.Error` per update in the status details (P4Runtime spec
section 12.3); `P4RuntimeWriteError` unpacks them into one line per failed update.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Self

import grpc
from google.rpc import code_pb2, status_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from dccommon.cliargs import LO_DOWN_FIX, is_loopback_addr, loopback_is_up

DEFAULT_ADDR = "127.0.0.1:9559"
CONNECT_TIMEOUT_S = 5.0


class P4RuntimeError(Exception):
    """Any failure talking to the target; the message is meant for a person. `codes` holds
    the status code names (the failed updates' codes for a batch error)."""

    def __init__(self, message: str, code: str | None = None):
        super().__init__(message)
        self.code = code

    @property
    def codes(self) -> set[str]:
        return {self.code} if self.code else set()


class ConnectionFailed(P4RuntimeError):
    pass


class NotPrimary(P4RuntimeError):
    pass


class P4RuntimeWriteError(P4RuntimeError):
    """A Write that failed; `failures` holds (update index, code name, message)."""

    def __init__(self, summary: str, failures: list[tuple[int, str, str]], lines: list[str]):
        self.failures = failures
        super().__init__("\n".join([summary] + lines))
        self.code = "UNKNOWN"

    @property
    def codes(self) -> set[str]:
        return {code for _, code, _ in self.failures}


def _code_name(code: int) -> str:
    try:
        return code_pb2.Code.Name(code)
    except ValueError:
        return f"CODE_{code}"


def translate_rpc_error(
    exc: grpc.RpcError,
    what: str,
    updates: list[p4runtime_pb2.Update] | None = None,
    describe: Callable[[p4runtime_pb2.Update], str] | None = None,
) -> P4RuntimeError:
    """A P4RuntimeError whose message names the call, the status and each failed update."""
    code = exc.code() if hasattr(exc, "code") else None
    details = exc.details() if hasattr(exc, "details") else str(exc)
    summary = f"{what} failed: {code.name if code else 'UNKNOWN'}: {details}"
    failures: list[tuple[int, str, str]] = []
    lines: list[str] = []
    status = _status_details(exc)
    if status is not None:
        for i, any_msg in enumerate(status.details):
            error = p4runtime_pb2.Error()
            if not any_msg.Unpack(error) or error.canonical_code == code_pb2.OK:
                continue
            name = _code_name(error.canonical_code)
            failures.append((i, name, error.message))
            subject = ""
            if updates is not None and i < len(updates):
                subject = " " + (
                    describe(updates[i])
                    if describe
                    else p4runtime_pb2.Update.Type.Name(updates[i].type)
                )
            lines.append(f"  update {i}{subject}: {name}: {error.message}")
    if failures:
        return P4RuntimeWriteError(summary, failures, lines)
    if code == grpc.StatusCode.UNAVAILABLE:
        return ConnectionFailed(summary, code.name)
    return P4RuntimeError(summary, code.name if code else None)


def _status_details(exc: grpc.RpcError) -> status_pb2.Status | None:
    if not hasattr(exc, "trailing_metadata"):
        return None
    for key, value in exc.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            status = status_pb2.Status()
            status.ParseFromString(value)
            return status
    return None


class P4RuntimeClient:
    """One primary controller session with one device.

    Opening the client connects (failing with the address tried), opens the StreamChannel
    and sends a MasterArbitrationUpdate; `NotPrimary` if another controller holds a higher
    election id.
    """

    def __init__(
        self,
        addr: str = DEFAULT_ADDR,
        device_id: int = 0,
        election_id: int = 1,
        timeout_s: float = CONNECT_TIMEOUT_S,
    ):
        self.addr = addr
        self.device_id = device_id
        self.election_id = election_id
        self.describe_update: Callable[[p4runtime_pb2.Update], str] | None = None
        if is_loopback_addr(addr) and not loopback_is_up():
            raise ConnectionFailed(
                f"cannot connect to the P4Runtime target at {addr}: the loopback interface "
                f"lo is down in this network namespace; {LO_DOWN_FIX}"
            )
        socket_path = Path(addr[len("unix:") :]) if addr.startswith("unix:") else None
        if socket_path is not None and not socket_path.is_socket():
            what = "is not a socket" if socket_path.exists() else "does not exist"
            raise ConnectionFailed(
                f"cannot connect to the P4Runtime target at {addr}: {socket_path} {what} (is "
                f"the switch running with --grpc-server-addr {addr}?)"
            )
        self._channel = grpc.insecure_channel(addr)
        ready = grpc.channel_ready_future(self._channel)
        try:
            ready.result(timeout=timeout_s)
        except grpc.FutureTimeoutError:
            ready.cancel()  # before close, as in targets.wait_serving
            self._channel.close()
            raise ConnectionFailed(
                f"cannot connect to the P4Runtime target at {addr} "
                f"(no answer within {timeout_s:g} s; is the switch "
                f"running with --grpc-server-addr {addr}?)"
            ) from None
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self._channel)
        self._requests: queue.Queue = queue.Queue()
        self._responses: queue.Queue = queue.Queue()
        self._stream = self.stub.StreamChannel(iter(self._requests.get, None))
        self._reader = threading.Thread(target=self._read_stream, daemon=True)
        self._reader.start()
        try:
            self._arbitrate(timeout_s)
        except BaseException:
            self.close()
            raise

    # -- stream --------------------------------------------------------------

    def _read_stream(self) -> None:
        try:
            for response in self._stream:
                self._responses.put(response)
        except grpc.RpcError as exc:
            self._responses.put(exc)

    def arbitrate(self, election_id: int, timeout_s: float = CONNECT_TIMEOUT_S) -> None:
        """Send a new MasterArbitrationUpdate on the open stream with another election id
        (e.g. to become primary again after a controller with a higher id has left: P4Runtime
        servers remember the highest election id they have seen)."""
        self.election_id = election_id
        self._arbitrate(timeout_s)

    def _arbitrate(self, timeout_s: float) -> None:
        request = p4runtime_pb2.StreamMessageRequest()
        request.arbitration.device_id = self.device_id
        request.arbitration.election_id.high = self.election_id >> 64
        request.arbitration.election_id.low = self.election_id & ((1 << 64) - 1)
        # Drop stale notifications (the server tells every client when the primary changes):
        # the answer to this request is the next arbitration message.
        while True:
            try:
                self._responses.get_nowait()
            except queue.Empty:
                break
        self._requests.put(request)
        while True:
            try:
                response = self._responses.get(timeout=timeout_s)
            except queue.Empty:
                raise P4RuntimeError(
                    f"{self.addr}: no arbitration answer within " f"{timeout_s:g} s"
                ) from None
            if isinstance(response, grpc.RpcError):
                raise translate_rpc_error(response, f"arbitration with {self.addr}")
            if response.HasField("arbitration"):
                break
        status = response.arbitration.status
        if status.code != code_pb2.OK:
            # The answer carries the highest election id the server has seen, which a
            # server may keep after that client left (P4Runtime spec, "Arbitration").
            seen = response.arbitration.election_id
            highest = (seen.high << 64) | seen.low
            raise NotPrimary(
                f"{self.addr} device {self.device_id}: election id {self.election_id} "
                f"is not primary ({status.message}); the highest election id this switch "
                f"has seen is {highest}: use {highest + 1} or more"
            )

    def close(self) -> None:
        """End the stream and wait (briefly) for the server to close it, so that the next
        client may reuse this election id at once; then close the channel."""
        self._requests.put(None)
        self._reader.join(timeout=2.0)
        self._channel.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def next_packet_in(self, timeout_s: float) -> p4runtime_pb2.PacketIn | None:
        """The next PacketIn on the stream (the server sends them to the primary), or None
        after timeout_s. Other stream messages (arbitration notices) are skipped."""
        deadline = time.monotonic() + timeout_s
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            try:
                response = self._responses.get(timeout=remaining)
            except queue.Empty:
                return None
            if isinstance(response, grpc.RpcError):
                raise translate_rpc_error(response, f"stream from {self.addr}")
            if response.HasField("packet"):
                return response.packet

    # -- RPCs ----------------------------------------------------------------

    def _election(self, msg) -> None:
        msg.election_id.high = self.election_id >> 64
        msg.election_id.low = self.election_id & ((1 << 64) - 1)

    def set_pipeline(self, p4info, device_config: bytes, cookie: int = 0) -> None:
        request = p4runtime_pb2.SetForwardingPipelineConfigRequest(
            device_id=self.device_id,
            action=p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT,
        )
        self._election(request)
        request.config.p4info.CopyFrom(p4info)
        request.config.p4_device_config = device_config
        request.config.cookie.cookie = cookie
        try:
            self.stub.SetForwardingPipelineConfig(request)
        except grpc.RpcError as exc:
            raise translate_rpc_error(exc, f"pipeline push to {self.addr}") from None

    def get_cookie(self) -> int | None:
        """The cookie of the pipeline on the device, None when it has none."""
        request = p4runtime_pb2.GetForwardingPipelineConfigRequest(
            device_id=self.device_id,
            response_type=p4runtime_pb2.GetForwardingPipelineConfigRequest.COOKIE_ONLY,
        )
        try:
            response = self.stub.GetForwardingPipelineConfig(request)
        except grpc.RpcError as exc:
            if exc.code() == grpc.StatusCode.FAILED_PRECONDITION:  # no pipeline yet
                return None
            raise translate_rpc_error(exc, f"reading the pipeline of {self.addr}") from None
        return response.config.cookie.cookie if response.config.HasField("cookie") else None

    def get_p4info(self):
        request = p4runtime_pb2.GetForwardingPipelineConfigRequest(
            device_id=self.device_id,
            response_type=p4runtime_pb2.GetForwardingPipelineConfigRequest.P4INFO_AND_COOKIE,
        )
        try:
            response = self.stub.GetForwardingPipelineConfig(request)
        except grpc.RpcError as exc:
            raise translate_rpc_error(exc, f"reading the pipeline of {self.addr}") from None
        if not response.config.HasField("p4info"):
            raise P4RuntimeError(
                f"{self.addr} has no pipeline yet (push one first: " f"dcctl push)"
            )
        return response.config.p4info

    def write(self, updates: Iterable[p4runtime_pb2.Update]) -> None:
        updates = list(updates)
        if not updates:
            return
        request = p4runtime_pb2.WriteRequest(device_id=self.device_id, updates=updates)
        self._election(request)
        try:
            self.stub.Write(request)
        except grpc.RpcError as exc:
            raise translate_rpc_error(
                exc, f"write to {self.addr}", updates, self.describe_update
            ) from None

    def read(self, entities: Iterable[p4runtime_pb2.Entity]) -> list[p4runtime_pb2.Entity]:
        request = p4runtime_pb2.ReadRequest(device_id=self.device_id, entities=list(entities))
        result: list[p4runtime_pb2.Entity] = []
        try:
            for response in self.stub.Read(request):
                result.extend(response.entities)
        except grpc.RpcError as exc:
            raise translate_rpc_error(exc, f"read from {self.addr}") from None
        return result
