"""The P4Runtime gRPC service (p4runtime 1.6.0 protos) in front of a running `Switch`.

One device (`device_id`), role "default" only; arbitration in `arbitration.py`. Only the
primary may Write, SetForwardingPipelineConfig and send PacketOut; PacketIn goes to the
primary. Entities are translated and validated in `entities.py` (and the modules of each
entity family it dispatches to), controller headers in
`packets.py`, pipelines built in `pipeline.py`.

Write applies each update in order (CONTINUE_ON_ERROR), each one atomic for packets (the device
lock is held for slices of a few milliseconds, between updates, as for Reads); if any fails,
the RPC ends with UNKNOWN and `grpc-status-details-bin` holds a google.rpc.Status whose
details are one p4.v1.Error per update (OK for those applied), as the spec and BMv2's PI
server do, cut to fit gRPC's 8 KiB trailer limit.

Every RPC runs inside `_rpc`: whatever its input makes go wrong ends in a status with the
spec's code and a clipped message (a bug in p4sim: INTERNAL, logged), never in grpc's
UNKNOWN "Exception calling application". Reads hold the device lock for slices of a few
milliseconds, so a large Read never stalls the packets.
"""

from __future__ import annotations

import errno
import functools
import inspect
import itertools
import logging
import socket
import threading
import time
import traceback
from concurrent import futures
from pathlib import Path

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, status_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from p4sim.limits import MAX_ERROR_DETAILS_BYTES, MAX_MESSAGE_CHARS, MAX_READ_ENTITIES
from p4sim.p4runtime import digests, entities, idle_timeouts, packets
from p4sim.p4runtime.arbitration import Arbiter, Client, election_id
from p4sim.p4runtime.digest_lists import DigestLists
from p4sim.p4runtime.errors import (
    StatusError,
    clip,
    internal,
    invalid,
    not_found,
    unimplemented,
)
from p4sim.p4runtime.pipeline import Compiler, default_compiler, from_config
from p4sim.p4runtime.table_entries import encode_entry
from p4sim.switch import Pipeline, Switch

log = logging.getLogger("p4sim.p4runtime")

API_VERSION = "1.6.0"
_READ_CHUNK = 1000  # entities per ReadResponse
_LOCK_SLICE_S = 0.002  # a Read holds the device lock this long at a time, then lets packets in
_MAX_MESSAGE = 256 * 1024 * 1024
_END = object()
# Open StreamChannels at once (PI allows 16 too). Each holds a gRPC worker thread for its
# lifetime, so the cap keeps workers free for unary RPCs; the spec's answer beyond the
# limit is RESOURCE_EXHAUSTED.
MAX_STREAMS = 16

Action = p4runtime_pb2.SetForwardingPipelineConfigRequest
ResponseType = p4runtime_pb2.GetForwardingPipelineConfigRequest


class BatchFailed(Exception):
    """Some updates of a Write failed: one StatusError (or None: applied) per update."""

    def __init__(self, errors: list[StatusError | None]) -> None:
        super().__init__("Write: some updates failed")
        self.errors = errors


def _rpc(method):
    """Run a servicer method so that any failure becomes a proper status (see `_fail`)."""
    if inspect.isgeneratorfunction(method):

        @functools.wraps(method)
        def streaming(self, request, context):
            try:
                yield from method(self, request, context)
            except Exception as exc:  # noqa: BLE001 - every failure gets a status
                self._fail(context, exc, method.__name__)

        return streaming

    @functools.wraps(method)
    def unary(self, request, context):
        try:
            return method(self, request, context)
        except Exception as exc:  # noqa: BLE001 - every failure gets a status
            self._fail(context, exc, method.__name__)

    return unary


class P4RuntimeServicer(p4runtime_pb2_grpc.P4RuntimeServicer):
    def __init__(
        self, switch: Switch, device_id: int = 0, compiler: Compiler = default_compiler
    ) -> None:
        self.switch = switch
        self.device_id = device_id
        self.compiler = compiler
        self.arbiter = Arbiter()
        self._saved: Pipeline | None = None  # VERIFY_AND_SAVE, waiting for COMMIT
        self._config_lock = threading.Lock()
        self._client_ids = itertools.count(1)
        self._streams = threading.BoundedSemaphore(MAX_STREAMS)
        switch.add_packet_in_listener(self._packet_in)
        self._digest_lists = DigestLists(self._send_digest_list)
        self._digest_lists.start()
        switch.add_digest_listener(self._digests)
        self._idle_timeouts = idle_timeouts.IdleTimeouts(
            lambda: self.switch.pipeline, self._send_idle_timeouts
        )
        self._idle_timeouts.start()

    # -- helpers ------------------------------------------------------------------------------

    def _check_device(self, device_id: int) -> None:
        if device_id != self.device_id:
            raise not_found(
                f"unknown device_id {device_id}; this p4sim serves device "
                f"{self.device_id} (--device-id)"
            )

    @staticmethod
    def _check_role(request) -> None:
        role = getattr(request, "role", "")
        role_id = getattr(request, "role_id", 0)
        if role or role_id:  # spec (Write, Read, SetForwardingPipelineConfig): NOT_FOUND
            raise not_found(
                f"role {role or role_id!r}: p4sim has only the default role (leave role unset)"
            )

    def _check_primary(self, request, what: str) -> None:
        if not request.HasField("election_id"):
            raise StatusError(
                grpc.StatusCode.PERMISSION_DENIED,
                f"{what} needs the primary client's election id; the request has none",
            )
        eid = election_id(request.election_id)
        if not self.arbiter.is_primary(eid):
            raise StatusError(
                grpc.StatusCode.PERMISSION_DENIED,
                f"{what} needs the primary client's election id; {eid} is "
                "not the primary (open a StreamChannel and arbitrate first)",
            )

    def _pipeline(self, entities: bool = False) -> Pipeline:
        """The running pipeline; for Read and Write (`entities`) the one VERIFY_AND_SAVE
        saved, if any: the spec has later reads and writes refer to the saved config while
        the forwarding state stays as it is, and COMMIT brings in what they wrote."""
        pipeline = self.switch.pipeline
        if entities and self._saved is not None:
            pipeline = self._saved
        if pipeline is None:
            raise StatusError(
                grpc.StatusCode.FAILED_PRECONDITION,
                "no forwarding pipeline config set (push one with "
                "SetForwardingPipelineConfig, or start p4sim with a program)",
            )
        return pipeline

    @staticmethod
    def _fail(context, exc: Exception, rpc: str) -> None:
        """End the RPC with the status `exc` calls for (context.abort raises)."""
        if isinstance(exc, BatchFailed):
            status = _batch_status(exc.errors)
            log.info("P4Runtime %s: %s", rpc, status.message)
            context.set_trailing_metadata(
                (("grpc-status-details-bin", status.SerializeToString()),)
            )
            context.abort(grpc.StatusCode.UNKNOWN, status.message)
        if isinstance(exc, StatusError):
            error = exc
        elif isinstance(exc, RecursionError):  # input nested deeper than a check foresaw
            error = invalid(f"{rpc}: the request is nested too deeply for p4sim")
        elif isinstance(exc, MemoryError):  # an engine's (model.NoMemory) names what
            what = str(exc) or "not enough memory for the request"
            error = StatusError(grpc.StatusCode.RESOURCE_EXHAUSTED, f"{rpc}: {what}")
        else:  # a bug in p4sim: say so, keep the server up, keep the log line bounded
            log.error("P4Runtime %s: internal error\n%s", rpc, _clipped_traceback(exc))
            error = internal(exc)
        log.info("P4Runtime %s: %s: %s", rpc, error.code.name, error.message)
        context.abort(error.code, error.message)

    # -- RPCs ---------------------------------------------------------------------------------

    @_rpc
    def Capabilities(self, request, context):
        return p4runtime_pb2.CapabilitiesResponse(p4runtime_api_version=API_VERSION)

    @_rpc
    def SetForwardingPipelineConfig(self, request, context):
        self._check_device(request.device_id)
        self._check_role(request)
        self._check_primary(request, "SetForwardingPipelineConfig")
        with self._config_lock:
            self._set_pipeline(request)
        idle_timeouts.written()  # a new program may start with entries in timeout tables
        return p4runtime_pb2.SetForwardingPipelineConfigResponse()

    def _set_pipeline(self, request) -> None:
        action = request.action
        if action == Action.COMMIT:  # spec: the saved config; no config in the request
            if request.HasField("config"):
                raise invalid("COMMIT takes no config: it commits the one VERIFY_AND_SAVE saved")
            if self._saved is None:
                raise not_found("COMMIT without a config saved by VERIFY_AND_SAVE")
            pipeline, self._saved = self._saved, None
            self.switch.set_pipeline(pipeline)
            return
        if action not in (
            Action.VERIFY,
            Action.VERIFY_AND_SAVE,
            Action.VERIFY_AND_COMMIT,
            Action.RECONCILE_AND_COMMIT,
        ):
            raise invalid(
                "action must be VERIFY, VERIFY_AND_SAVE, VERIFY_AND_COMMIT, COMMIT "
                "or RECONCILE_AND_COMMIT"
            )
        if not request.HasField("config"):
            raise invalid("the request has no config")
        if action == Action.RECONCILE_AND_COMMIT:
            self._reconcile(request.config)
            return
        pipeline = from_config(request.config, self.compiler, self.switch.cpu_port)
        if action == Action.VERIFY_AND_SAVE:
            self._saved = pipeline
        elif action == Action.VERIFY_AND_COMMIT:
            self._saved = None  # a config saved earlier is superseded
            self.switch.set_pipeline(pipeline)

    def _reconcile(self, config) -> None:
        """RECONCILE_AND_COMMIT must keep the forwarding state (spec). p4sim can do that only
        for the program it runs (a controller reconnecting and pushing its pipeline again):
        the entries stay, the P4Info and cookie are taken from the request. Another program
        is INVALID_ARGUMENT, as the spec says for state that cannot be preserved."""
        current = self.switch.pipeline
        candidate = from_config(config, self.compiler, self.switch.cpu_port)  # verify first
        if current is None or current.device_config != config.p4_device_config:
            raise invalid(
                "RECONCILE_AND_COMMIT: p4sim can preserve the forwarding state only when "
                "the program stays the same; use VERIFY_AND_COMMIT to change it (state is "
                "cleared)"
            )
        with current.device.lock:
            current.p4info = candidate.p4info
            current.cookie = candidate.cookie
        self._saved = None

    @_rpc
    def GetForwardingPipelineConfig(self, request, context):
        self._check_device(request.device_id)
        response = p4runtime_pb2.GetForwardingPipelineConfigResponse()
        pipeline = self.switch.pipeline
        if pipeline is None:
            # spec: no config known yet -> `config` unset (BMv2's PI: FAILED_PRECONDITION)
            return response
        config = response.config
        kind = request.response_type
        if pipeline.cookie is not None:
            config.cookie.cookie = pipeline.cookie
        if kind in (ResponseType.ALL, ResponseType.P4INFO_AND_COOKIE):
            config.p4info.CopyFrom(pipeline.p4info)
        if kind in (ResponseType.ALL, ResponseType.DEVICE_CONFIG_AND_COOKIE):
            config.p4_device_config = pipeline.device_config
        return response

    @_rpc
    def Write(self, request, context):
        self._check_device(request.device_id)
        self._check_role(request)
        self._check_primary(request, "Write")
        pipeline = self._pipeline(entities=True)
        if request.atomicity != p4runtime_pb2.WriteRequest.CONTINUE_ON_ERROR:
            raise unimplemented("only CONTINUE_ON_ERROR atomicity is supported by p4sim")
        # Each update is atomic for packets; the batch is not (CONTINUE_ON_ERROR does not ask
        # for it, nor does BMv2 give it): the device lock is held for slices of _LOCK_SLICE_S
        # between updates, as for Reads, so a large batch never stalls the data path.
        errors: list[StatusError | None] = []
        updates = iter(request.updates)
        while len(errors) < len(request.updates):
            with pipeline.device.lock:
                deadline = time.monotonic() + _LOCK_SLICE_S
                for update in updates:
                    errors.append(_apply_update(pipeline, update))
                    if time.monotonic() > deadline:
                        break
            time.sleep(0)  # let a waiting packet take the lock
        if any(u.entity.WhichOneof("entity") == "digest_entry" for u in request.updates):
            self._digest_lists.reconfigured()  # a MODIFY may bring a pending list's deadline in
        if any(errors):
            raise BatchFailed(errors)
        return p4runtime_pb2.WriteResponse()

    @_rpc
    def Read(self, request, context):
        self._check_device(request.device_id)
        self._check_role(request)
        pipeline = self._pipeline(entities=True)
        index, device = pipeline.index, pipeline.device
        with device.lock:
            total = sum(entities.count_entity(index, device, e) for e in request.entities)
        if total > MAX_READ_ENTITIES:  # refused before any entity is built
            raise StatusError(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"the read selects {total:,} entities; p4sim answers at most "
                f"{MAX_READ_ENTITIES:,} per ReadRequest (read fewer tables or cells at once)",
            )
        found = itertools.chain.from_iterable(
            entities.read_entity(index, device, e) for e in request.entities
        )
        while True:
            chunk, done = _next_chunk(device, found)
            if chunk or done:  # an empty read still gets one (empty) response
                yield p4runtime_pb2.ReadResponse(entities=chunk)
            if done:
                return

    # -- StreamChannel --------------------------------------------------------------------------

    @_rpc
    def StreamChannel(self, request_iterator, context):
        if not self._streams.acquire(blocking=False):
            raise StatusError(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"p4sim serves at most {MAX_STREAMS} StreamChannels at once",
            )
        try:
            yield from self._serve_stream(request_iterator, context)
        finally:
            self._streams.release()

    def _serve_stream(self, request_iterator, context):
        client = Client(ident=next(self._client_ids))
        context.add_callback(lambda: client.outbox.put(_END))
        reader = threading.Thread(
            target=self._read_stream,
            args=(client, request_iterator),
            name=f"p4rt-stream-{client.ident}",
            daemon=True,
        )
        reader.start()
        try:
            while True:
                item = client.outbox.get()
                if item is _END:
                    return
                if isinstance(item, StatusError):
                    raise item
                yield item
        finally:
            self.arbiter.remove(client)

    def _read_stream(self, client: Client, request_iterator) -> None:
        try:
            for request in request_iterator:
                kind = request.WhichOneof("update")
                try:
                    if kind == "arbitration":
                        self._arbitrate(client, request.arbitration)
                    elif kind == "packet":
                        self._packet_out(client, request.packet)
                    elif kind == "digest_ack":
                        self._digest_ack(request.digest_ack)
                    elif kind == "other":
                        raise unimplemented(
                            "p4sim has no architecture-specific stream messages (other)"
                        )
                    else:
                        raise invalid("empty StreamMessageRequest (no update set)")
                except StatusError as exc:
                    if kind == "arbitration":  # arbitration errors end the stream
                        client.outbox.put(exc)
                        return
                    client.outbox.put(self._stream_error(exc, request))
        except grpc.RpcError:
            pass  # the client went away
        except Exception as exc:  # noqa: BLE001 - logged; the stream ends
            log.error("StreamChannel reader failed\n%s", _clipped_traceback(exc))
        finally:
            client.outbox.put(_END)

    def _arbitrate(self, client: Client, update) -> None:
        # spec "Rules for Handling MasterArbitrationUpdate": a live stream that changes its
        # device id is FAILED_PRECONDITION; an unknown device on a new stream NOT_FOUND
        if client.arbitrated and update.device_id != client.device_id:
            raise StatusError(
                grpc.StatusCode.FAILED_PRECONDITION, "a stream cannot change its device_id"
            )
        self._check_device(update.device_id)
        if update.role.name or update.role.id:
            raise unimplemented(
                f"role {update.role.name or update.role.id!r}: p4sim supports "
                "only the default role"
            )
        client.device_id = update.device_id
        # no election id: a backup for good (it can read and receive arbitration updates)
        eid = election_id(update.election_id) if update.HasField("election_id") else None
        self.arbiter.arbitrate(client, eid)

    def _packet_out(self, client: Client, packet) -> None:
        if client.election_id is None or not self.arbiter.is_primary(client.election_id):
            raise StatusError(
                grpc.StatusCode.PERMISSION_DENIED, "PacketOut from a client that is not the primary"
            )
        pipeline = self._pipeline()
        if self.switch.cpu_port is None:
            raise StatusError(
                grpc.StatusCode.FAILED_PRECONDITION,
                "no CPU port: start p4sim with --cpu-port N for PacketOut",
            )
        frame = packets.build_packet_out(pipeline.index.packet_out, packet)
        self.switch.packet_out(frame)

    def _digest_ack(self, ack) -> None:
        """The data of the list acknowledged may be sent again (digest_lists.py); an ack for
        a digest the program does not have is an error (spec "Stream Error Reporting")."""
        pipeline = self.switch.pipeline
        if pipeline is None or ack.digest_id not in pipeline.index.digests:
            raise invalid(f"DigestListAck for digest_id {ack.digest_id}: no such digest")
        self._digest_lists.ack(ack.digest_id, ack.list_id)

    @staticmethod
    def _stream_error(exc: StatusError, request) -> p4runtime_pb2.StreamMessageResponse:
        """A StreamError whose details name the message that caused it (the spec requires
        the details oneof to be set; the offending message is copied in)."""
        msg = p4runtime_pb2.StreamMessageResponse()
        msg.error.canonical_code = exc.canonical_code
        msg.error.message = exc.message
        kind = request.WhichOneof("update")
        if kind == "packet":
            msg.error.packet_out.packet_out.CopyFrom(request.packet)
        elif kind == "digest_ack":
            msg.error.digest_list_ack.digest_list_ack.CopyFrom(request.digest_ack)
        else:  # `other`, or nothing at all
            msg.error.other.other.CopyFrom(request.other)
        return msg

    def _packet_in(self, frame: bytes) -> None:
        pipeline = self.switch.pipeline
        outbox = self.arbiter.primary_outbox()
        if pipeline is None or outbox is None:
            log.debug("packet-in of %d bytes dropped: no primary client", len(frame))
            return
        msg = p4runtime_pb2.StreamMessageResponse()
        msg.packet.CopyFrom(packets.parse_packet_in(pipeline.index.packet_in, frame))
        outbox.put(msg)

    def _digests(self, records: list[tuple[str, int, list[int]]]) -> None:
        """digest() records of one packet, for the digests a DigestEntry configures: gathered
        into DigestLists as their config asks (digest_lists.py)."""
        pipeline = self.switch.pipeline
        if pipeline is None:
            return
        index = pipeline.index
        for name, _receiver, values in records:
            digest_id = index.digest_ids.get(name)
            if digest_id is not None:
                self._digest_lists.add(index, digest_id, tuple(values))

    def _send_digest_list(self, index, digest_id: int, list_id: int, records) -> bool:
        """One DigestList to the primary; False when there is none to take it."""
        outbox = self.arbiter.primary_outbox()
        if outbox is None:
            return False
        msg = p4runtime_pb2.StreamMessageResponse()
        msg.digest.digest_id = digest_id
        msg.digest.list_id = list_id
        msg.digest.timestamp = time.time_ns()
        definition = index.digests[digest_id]
        msg.digest.data.extend(digests.digest_data(definition, values) for values in records)
        outbox.put(msg)
        return True

    def _send_idle_timeouts(self, index, table, entries) -> bool:
        """One IdleTimeoutNotification to the primary; False when there is none to take it."""
        outbox = self.arbiter.primary_outbox()
        if outbox is None:
            return False
        msg = p4runtime_pb2.StreamMessageResponse()
        notification = msg.idle_timeout_notification
        notification.table_entry.extend(encode_entry(index, table, e) for e in entries)
        notification.timestamp = time.time_ns()
        outbox.put(msg)
        return True

    def close(self) -> None:
        self.switch.remove_packet_in_listener(self._packet_in)
        self.switch.remove_digest_listener(self._digests)
        self._digest_lists.close()
        self._idle_timeouts.close()
        with self.arbiter.lock:
            clients = list(self.arbiter.clients)
        for c in clients:
            c.outbox.put(_END)


def _apply_update(pipeline, update) -> StatusError | None:
    """One update of a Write batch, applied (None) or the error it ends in."""
    try:
        entities.apply_update(pipeline.index, pipeline.device, update)
        return None
    except StatusError as exc:
        log.info(
            "Write: update failed (%s): %s", exc.code.name, clip(exc.message, MAX_MESSAGE_CHARS)
        )
        return exc
    except RecursionError:
        return invalid("the update is nested too deeply for p4sim")
    except Exception as exc:  # noqa: BLE001 - a bug must not take the server down
        log.error("Write: internal error on an update\n%s", _clipped_traceback(exc))
        return internal(exc)


def _next_chunk(device, found) -> tuple[list, bool]:
    """Up to _READ_CHUNK entities from `found`, made under the device lock in slices of
    _LOCK_SLICE_S; (chunk, whether `found` is exhausted)."""
    chunk: list = []
    while len(chunk) < _READ_CHUNK:
        with device.lock:
            deadline = time.monotonic() + _LOCK_SLICE_S
            for item in found:
                chunk.append(item)
                if len(chunk) >= _READ_CHUNK or time.monotonic() > deadline:
                    break
            else:
                return chunk, True
        time.sleep(0)  # let a waiting packet take the lock
    return chunk, False


def _batch_status(errors: list[StatusError | None]) -> status_pb2.Status:
    """The google.rpc.Status of a failed Write: one p4.v1.Error per update, in order, with
    messages shortened (and, for huge batches, the tail left out) so that the trailer stays
    within MAX_ERROR_DETAILS_BYTES, below the 8 KiB that gRPC clients accept by default."""
    failed = [e for e in errors if e is not None]
    message = clip(
        f"{len(failed)} of {len(errors)} updates failed; first: "
        f"{failed[0].code.name}: {failed[0].message}",
        MAX_MESSAGE_CHARS * 2,
    )
    budget = MAX_ERROR_DETAILS_BYTES - len(message.encode())
    # an Error packed in an Any costs about 50 bytes besides its message (and clip() adds
    # about 30 characters to what it cuts)
    room = budget // max(1, len(failed)) - 80
    room = room if room >= 40 else 0
    details = []
    used = 0
    for exc in errors:
        detail = p4runtime_pb2.Error(canonical_code=code_pb2.OK)
        if exc is not None:
            detail.canonical_code = exc.canonical_code
            detail.message = clip(exc.message, min(MAX_MESSAGE_CHARS, room)) if room > 0 else ""
        packed = any_pb2.Any()
        packed.Pack(detail)
        used += packed.ByteSize() + 3
        if used > budget:
            break
        details.append(packed)
    if len(details) < len(errors):
        message += (
            f" (errors of updates {len(details) + 1}..{len(errors)} left out: "
            "gRPC trailers are limited to 8 KiB)"
        )
    return status_pb2.Status(code=code_pb2.UNKNOWN, message=message, details=details)


def _clipped_traceback(exc: BaseException) -> str:
    """A traceback for the log with every line clipped (a value in an exception message
    can be megabytes long)."""
    lines = "".join(traceback.format_exception(exc)).splitlines()
    return "\n".join(clip(line, MAX_MESSAGE_CHARS) for line in lines[-40:])


class _UndecodableRequests(logging.Filter):
    """grpc logs a traceback for every request that is not a valid protobuf message (and
    answers INTERNAL "Exception deserializing request!"); a client must not be able to fill
    the log with them, so each becomes one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.getMessage().startswith("Exception deserializing"):
            record.msg, record.args, record.exc_info, record.exc_text = (
                "P4Runtime: refused a request that is not a valid protobuf message",
                (),
                None,
                None,
            )
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


class P4RuntimeServer:
    """The gRPC server: `start()` binds `address` (port 0 = ephemeral, see `.port`)."""

    def __init__(
        self,
        switch: Switch,
        address: str = "127.0.0.1:9559",
        device_id: int = 0,
        compiler: Compiler = default_compiler,
        max_workers: int = 64,
    ) -> None:
        self.servicer = P4RuntimeServicer(switch, device_id, compiler)
        grpc_log = logging.getLogger("grpc._common")
        if not any(isinstance(f, _UndecodableRequests) for f in grpc_log.filters):
            grpc_log.addFilter(_UndecodableRequests())
        # every open StreamChannel holds a worker for its lifetime: keep plenty for unary RPCs
        self._server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="p4rt"),
            # a device config carries the whole preprocessed program; reads can be large
            options=[
                ("grpc.max_receive_message_length", _MAX_MESSAGE),
                ("grpc.max_send_message_length", _MAX_MESSAGE),
                # grpc binds with SO_REUSEPORT by default: a second switch on the same port
                # would start silently and clients would be spread over both. Refuse instead,
                # as simple_switch_grpc does.
                ("grpc.so_reuseport", 0),
            ],
        )
        p4runtime_pb2_grpc.add_P4RuntimeServicer_to_server(self.servicer, self._server)
        try:
            self.port = self._server.add_insecure_port(address)
        except RuntimeError:
            self.port = 0
        if self.port == 0:
            raise OSError(f"cannot listen on {address} ({_why_not_listening(address)})")
        if address.startswith("unix:"):  # a Unix socket reaches across network namespaces
            self.address = address
        else:
            self.address = f"{address.rsplit(':', 1)[0]}:{self.port}"

    def start(self) -> None:
        self._server.start()

    def stop(self, grace: float = 0.5) -> None:
        self.servicer.close()
        self._server.stop(grace).wait()

    def wait(self) -> None:
        self._server.wait_for_termination()


def _why_not_listening(address: str) -> str:
    """Why gRPC could not listen on `address` (it says only that it could not)."""
    if address.startswith("unix:"):
        path = Path(address[len("unix:") :])
        if not path.parent.is_dir():
            return f"its folder {path.parent} does not exist"
        if path.exists() or path.is_symlink():
            return f"{path} exists: give a path that does not, or remove an old socket"
        return f"cannot create a socket in {path.parent}"
    host, _, port = address.rpartition(":")
    host = host.strip("[]")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.bind((host, int(port)))
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            return "another process listens on that port"
        if exc.errno == errno.EADDRNOTAVAIL:
            return f"{host} is not an address of this host (in this network namespace)"
        return exc.strerror or str(exc)
    except (ValueError, socket.gaierror):
        pass
    return "in use, or not an address of this host"
