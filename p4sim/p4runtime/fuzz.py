"""The P4Runtime request fuzzer (`python -m p4sim.fuzz p4runtime`, see p4sim/fuzz.py).

Starts the `p4sim` console script on p4sim/tests/p4/runtime_fwd.p4 (CPU port 64, a Unix
socket), becomes primary, and sends for a time budget: valid requests with fields replaced by
hostile values (random and zero ids, empty, 4 KB and 1 MB bytestrings, out-of-range enum
values, huge priorities, wrong roles and device ids, election ids of others), byte-level
mutants of valid requests, wildcard reads of everything many times over, bad device configs,
and stream messages (PacketOut with random metadata, arbitration with random ids and roles).

Rules: no UNKNOWN but a Write's per-update batch error, no INTERNAL from p4sim's code (grpc's
own "Exception deserializing request" for undecodable bytes is counted apart), every trailer
under 8 KiB, no RPC without an answer in 60 s; afterwards the server answers, forwards
(PacketOut to the CPU port returns as PacketIn) and its RSS grew by less than 40 MB after the
warm-up.
"""

from __future__ import annotations

import collections
import json
import os
import queue
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import grpc
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from dccommon.processes import rss_kib
from p4sim.limits import GRPC_TRAILER_LIMIT

PROGRAM = Path(__file__).resolve().parent.parent / "tests" / "p4" / "runtime_fwd.p4"
CPU_PORT = 64
RSS_GROWTH_MB = 40
RPC_TIMEOUT_S = 60
Update = p4runtime_pb2.Update
SERVICE = "/p4.v1.P4Runtime/"


def trailer_size(err: grpc.RpcError) -> int:
    """An error's trailer as gRPC counts it against GRPC_TRAILER_LIMIT: key + value + 32 bytes
    per entry, the status message included."""
    entries = list(err.trailing_metadata() or ()) + [("grpc-message", err.details() or "")]
    return sum(len(k) + len(v) + 32 for k, v in entries)


def _rss_mb(pid: int) -> float:
    return rss_kib(pid) / 1024


class RuntimeFuzzer:
    def __init__(self, seed: int) -> None:
        self.rnd = random.Random(seed)
        self.seed = seed
        self.outcomes: collections.Counter = collections.Counter()
        self.kinds: collections.Counter = collections.Counter()
        self.failures: list[str] = []

    # -- the server ---------------------------------------------------------------------------
    def start(self, tmp: Path) -> None:
        p4sim = str(Path(sys.executable).parent / "p4sim")
        self.address = f"unix:{tmp}/p4rt.sock"
        self.log = open(tmp / "p4sim.log", "w+")  # noqa: SIM115 - closed in run()
        self.proc = subprocess.Popen(
            [p4sim, str(PROGRAM), "--grpc-server-addr", self.address]
            + ["--cpu-port", str(CPU_PORT), "--log-level", "warn"],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.channel = grpc.insecure_channel(self.address)
        grpc.channel_ready_future(self.channel).result(timeout=120)
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self.requests: queue.Queue = queue.Queue()
        self.packet_ins: queue.Queue = queue.Queue()
        self.arbitrate(1)
        self.stream = self.stub.StreamChannel(iter(self.requests.get, None))
        threading.Thread(target=self._pump, daemon=True).start()
        got = self.stub.GetForwardingPipelineConfig(
            p4runtime_pb2.GetForwardingPipelineConfigRequest(device_id=0), timeout=30
        )
        self.p4info = got.config.p4info
        self.device_config = got.config.p4_device_config
        self.ids = {}
        for kind in ("tables", "actions", "counters", "direct_counters", "registers", "meters"):
            for obj in getattr(self.p4info, kind):
                self.ids[obj.preamble.name] = obj.preamble.id

    def arbitrate(self, low: int, high: int = 0) -> None:
        msg = p4runtime_pb2.StreamMessageRequest()
        msg.arbitration.device_id = 0
        msg.arbitration.election_id.low = low
        msg.arbitration.election_id.high = high
        self.requests.put(msg)

    def _pump(self) -> None:
        try:
            for msg in self.stream:
                if msg.WhichOneof("update") == "packet":
                    self.packet_ins.put(msg.packet)
        except grpc.RpcError:
            pass

    def stop(self) -> None:
        self.requests.put(None)
        self.channel.close()
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 15)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait()

    # -- inputs -------------------------------------------------------------------------------
    def value(self) -> bytes:
        r = self.rnd.random()
        if r < 0.1:
            return b""
        if r < 0.2:
            return bytes([0xFF]) * 4096
        if r < 0.23:
            return self.rnd.randbytes(1_000_000)
        return self.rnd.randbytes(self.rnd.randint(1, 8))

    def some_id(self) -> int:
        return self.rnd.choice(
            [0, 1, self.rnd.getrandbits(32), *self.ids.values(), *self.ids.values()]
        )

    def table_entry(self, entry: p4runtime_pb2.TableEntry) -> None:
        entry.table_id = self.some_id()
        for _ in range(self.rnd.choice([0, 1, 1, 2, 5])):
            m = entry.match.add(field_id=self.rnd.choice([0, 1, 2, 3, 99]))
            kind = self.rnd.choice(["exact", "lpm", "ternary", "range", "optional"])
            if kind == "exact":
                m.exact.value = self.value()
            elif kind == "lpm":
                m.lpm.value, m.lpm.prefix_len = self.value(), self.rnd.randint(-5, 200)
            elif kind == "ternary":
                m.ternary.value, m.ternary.mask = self.value(), self.value()
            elif kind == "range":
                m.range.low, m.range.high = self.value(), self.value()
            else:
                m.optional.value = self.value()
        if self.rnd.random() < 0.8:
            action = entry.action.action
            action.action_id = self.some_id()
            for _ in range(self.rnd.choice([0, 1, 2])):
                action.params.add(param_id=self.rnd.choice([0, 1, 2, 7]), value=self.value())
        entry.priority = self.rnd.choice([0, 1, 10, -1, -(2**31), 2**31 - 1])
        if self.rnd.random() < 0.2:
            entry.is_default_action = True
        if self.rnd.random() < 0.2:
            entry.counter_data.packet_count = self.rnd.getrandbits(63)
        if self.rnd.random() < 0.2:
            cfg = entry.meter_config
            cfg.cir, cfg.cburst = self.rnd.getrandbits(63), self.rnd.randint(-1, 10)
            cfg.pir, cfg.pburst = self.rnd.getrandbits(20), self.rnd.getrandbits(63)

    def entity(self, entity: p4runtime_pb2.Entity) -> None:
        kind = self.rnd.choice(
            ["table_entry", "counter_entry", "direct_counter_entry", "register_entry",
             "meter_entry", "direct_meter_entry", "pre", "digest_entry", "empty",
             "action_profile_member"]
        )  # fmt: skip
        if kind == "table_entry":
            self.table_entry(entity.table_entry)
        elif kind in ("counter_entry", "register_entry", "meter_entry"):
            msg = getattr(entity, kind)
            setattr(msg, kind.replace("_entry", "_id"), self.some_id())
            if self.rnd.random() < 0.7:
                msg.index.index = self.rnd.choice([0, 3, 511, 512, 2**63 - 1, -1])
            if kind == "register_entry" and self.rnd.random() < 0.7:
                msg.data.bitstring = self.value()
            if kind == "counter_entry":
                msg.data.byte_count = self.rnd.getrandbits(63)
        elif kind in ("direct_counter_entry", "direct_meter_entry"):
            self.table_entry(getattr(entity, kind).table_entry)
        elif kind == "pre":
            pre = entity.packet_replication_engine_entry
            if self.rnd.random() < 0.5:
                group = pre.multicast_group_entry
                group.multicast_group_id = self.rnd.choice([0, 1, 2, 2**32 - 1])
                replicas = group.replicas
            else:
                session = pre.clone_session_entry
                session.session_id = self.rnd.choice([0, 1, 5, 2**32 - 1])
                session.packet_length_bytes = self.rnd.choice([-1, 0, 64, 2**31 - 1])
                replicas = session.replicas
            for _ in range(self.rnd.choice([0, 1, 3])):
                if self.rnd.random() < 0.5:
                    replicas.add(port=self.value(), instance=self.rnd.getrandbits(32))
                else:
                    replicas.add(egress_port=self.rnd.getrandbits(32), instance=1)
        elif kind == "digest_entry":
            entity.digest_entry.digest_id = self.some_id()
            entity.digest_entry.config.max_list_size = self.rnd.randint(-1, 1000)
        elif kind == "action_profile_member":
            entity.action_profile_member.action_profile_id = self.some_id()

    def write(self) -> p4runtime_pb2.WriteRequest:
        req = p4runtime_pb2.WriteRequest(device_id=self.rnd.choice([0, 0, 0, 0, 1]))
        if self.rnd.random() < 0.9:
            req.election_id.low = 1
        if self.rnd.random() < 0.05:
            req.role = self.rnd.choice(["x", "y" * 5000])
        req.atomicity = self.rnd.choice([0, 0, 0, 1, 2, 77])
        for _ in range(self.rnd.choice([1, 1, 2, 10, 100])):
            update = req.updates.add(type=self.rnd.choice([1, 1, 2, 3, 0, 9]))
            self.entity(update.entity)
        return req

    def read(self) -> p4runtime_pb2.ReadRequest:
        req = p4runtime_pb2.ReadRequest(device_id=self.rnd.choice([0, 0, 0, 7]))
        if self.rnd.random() < 0.05:
            req.role = "someone"
        if self.rnd.random() < 0.2:  # wildcards of everything, many times over
            everything = p4runtime_pb2.Entity()
            everything.table_entry.SetInParent()
            cells = p4runtime_pb2.Entity()
            cells.counter_entry.SetInParent()
            req.entities.extend([everything, cells] * self.rnd.choice([1, 100, 1000]))
        else:
            for _ in range(self.rnd.choice([1, 2, 5])):
                self.entity(req.entities.add())
        return req

    def pipeline(self) -> p4runtime_pb2.SetForwardingPipelineConfigRequest:
        req = p4runtime_pb2.SetForwardingPipelineConfigRequest(device_id=0)
        req.election_id.low = 1
        req.action = self.rnd.choice([1, 1, 1, 2, 4, 5, 0, 42])  # VERIFY mostly: keep state
        program = json.loads(self.device_config)["program"]
        r = self.rnd.random()
        if r < 0.2:
            config = b"[" * self.rnd.choice([10, 2000, 100_000])
        elif r < 0.4:
            config = self.rnd.randbytes(self.rnd.randint(0, 300))
        elif r < 0.6:
            cut = program[: self.rnd.randrange(len(program))]
            config = json.dumps({"p4sim_device_config": 1, "program": cut, "file": "x"}).encode()
        elif r < 0.8:
            text = self.rnd.choice(
                ['#include "/etc/passwd"\n', "(" * 5000, "\udcff\x00", "bit<99999999999> x;"]
            )
            config = json.dumps({"p4sim_device_config": 1, "program": text}).encode()
        else:
            config = self.device_config
        req.config.p4_device_config = config
        if self.rnd.random() < 0.5:
            req.config.p4info.CopyFrom(self.p4info)
            if self.rnd.random() < 0.5 and req.config.p4info.tables:
                req.config.p4info.tables[0].preamble.id ^= 1
        return req

    def byte_mutant(self, message) -> bytes:
        data = bytearray(message.SerializeToString())
        for _ in range(self.rnd.randint(1, 8)):
            if not data:
                break
            at = self.rnd.randrange(len(data))
            op = self.rnd.random()
            if op < 0.5:
                data[at] = self.rnd.getrandbits(8)
            elif op < 0.75:
                del data[at : at + self.rnd.randint(1, 8)]
            else:
                data[at:at] = self.rnd.randbytes(self.rnd.randint(1, 8))
        return bytes(data)

    # -- one request --------------------------------------------------------------------------
    def one(self) -> None:
        r = self.rnd.random()
        if r < 0.35:
            kind, method, request = "write", "Write", self.write()
        elif r < 0.6:
            kind, method, request = "read", "Read", self.read()
        elif r < 0.7:
            kind, method, request = "pipeline", "SetForwardingPipelineConfig", self.pipeline()
        elif r < 0.75:
            kind, method = "get", "GetForwardingPipelineConfig"
            request = p4runtime_pb2.GetForwardingPipelineConfigRequest(
                device_id=self.rnd.choice([0, 3]), response_type=self.rnd.choice([0, 1, 2, 3, 9])
            )
        elif r < 0.85:
            self.stream_message()
            return
        else:
            kind = "byte mutant"
            method, request = self.rnd.choice(
                [("Write", self.write()), ("Read", self.read()), ("Capabilities", None)]
            )
            request = request or p4runtime_pb2.CapabilitiesRequest()
            request = self.byte_mutant(request)
        self.kinds[kind] += 1
        self.call(kind, method, request)

    def call(self, kind: str, method: str, request) -> None:
        streaming = method == "Read"
        raw = isinstance(request, bytes)
        serialize = (lambda b: b) if raw else (lambda m: m.SerializeToString())
        if streaming:
            rpc = self.channel.unary_stream(SERVICE + method, request_serializer=serialize)
        else:
            rpc = self.channel.unary_unary(SERVICE + method, request_serializer=serialize)
        try:
            result = rpc(request, timeout=RPC_TIMEOUT_S)
            if streaming:
                for _ in result:
                    pass
            self.outcomes["OK"] += 1
        except grpc.RpcError as err:
            self.judge(kind, method, err, raw)

    def judge(self, kind: str, method: str, err: grpc.RpcError, raw: bool) -> None:
        code, details = err.code(), err.details() or ""
        trailers = dict(err.trailing_metadata() or ())
        size = trailer_size(err)
        label = code.name
        problem = None
        if code == grpc.StatusCode.INTERNAL and "deserializ" in details and raw:
            label = "INTERNAL (grpc: undecodable request)"
        elif code == grpc.StatusCode.INTERNAL:
            problem = "INTERNAL from p4sim"
        elif code == grpc.StatusCode.UNKNOWN and not (
            method == "Write" and "grpc-status-details-bin" in trailers
        ):
            problem = "UNKNOWN that is not a Write batch error"
        elif code == grpc.StatusCode.RESOURCE_EXHAUSTED and "metadata" in details:
            problem = "trailer over gRPC's 8 KiB limit"
        elif code == grpc.StatusCode.DEADLINE_EXCEEDED:
            problem = f"no answer in {RPC_TIMEOUT_S} s"
        elif code == grpc.StatusCode.UNAVAILABLE:
            problem = "server unavailable"
        if size >= GRPC_TRAILER_LIMIT:
            problem = f"trailer of {size} bytes"
        self.outcomes[label] += 1
        if problem:
            self.failures.append(f"{problem}: {kind} {method}: {code.name}: {details[:300]}")

    def stream_message(self) -> None:
        """A message on a second stream: PacketOut with random metadata, arbitration with
        random ids (below the primary's) and roles, digest acks, nothing at all."""
        self.kinds["stream"] += 1
        msg = p4runtime_pb2.StreamMessageRequest()
        r = self.rnd.random()
        if r < 0.5:
            msg.packet.payload = self.rnd.randbytes(self.rnd.choice([0, 14, 64, 9000]))
            for _ in range(self.rnd.choice([0, 1, 2, 3])):
                msg.packet.metadata.add(metadata_id=self.rnd.randint(0, 3), value=self.value())
        elif r < 0.7:
            msg.arbitration.device_id = self.rnd.choice([0, 1])
            msg.arbitration.election_id.low = 0
            if self.rnd.random() < 0.3:
                msg.arbitration.role.name = "fuzz"
        elif r < 0.85:
            msg.digest_ack.digest_id = self.some_id()
        requests = [msg] if r >= 0.7 else [self._backup_arbitration(), msg]
        try:
            responses = self.stub.StreamChannel(iter(requests), timeout=5)
            for _ in responses:
                pass
            self.outcomes["stream ended"] += 1
        except grpc.RpcError as err:
            if err.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                self.outcomes["stream ended"] += 1  # the server keeps streams open
            else:
                self.judge("stream", "StreamChannel", err, False)

    def _backup_arbitration(self) -> p4runtime_pb2.StreamMessageRequest:
        msg = p4runtime_pb2.StreamMessageRequest()
        msg.arbitration.device_id = 0
        return msg  # no election id: a backup for good

    # -- afterwards ---------------------------------------------------------------------------
    def still_forwarding(self) -> bool:
        """PacketOut to the CPU port runs the pipeline (parser, ingress, egress, deparser)
        and comes back as PacketIn."""
        while not self.packet_ins.empty():
            self.packet_ins.get()
        self.arbitrate(2**64 - 1, 2**64 - 1)  # primary again, whatever the fuzzing did
        time.sleep(0.5)
        msg = p4runtime_pb2.StreamMessageRequest()
        msg.packet.payload = bytes(range(64))
        msg.packet.metadata.add(metadata_id=1, value=CPU_PORT.to_bytes(2, "big"))
        msg.packet.metadata.add(metadata_id=2, value=b"\x00")
        self.requests.put(msg)
        try:
            packet = self.packet_ins.get(timeout=30)
        except queue.Empty:
            return False
        # no packet_in header was set: the PacketIn header is read off the frame's first
        # two bytes (runtime_fwd.p4's packet_in is 16 bits), the rest is the payload
        return packet.payload == bytes(range(2, 64))

    def run(self, seconds: float) -> int:
        tried = 0
        with tempfile.TemporaryDirectory(prefix="p4rtfuzz-") as tmp:
            self.start(Path(tmp))
            try:
                warm = time.monotonic() + min(5.0, seconds / 5)
                deadline = time.monotonic() + seconds
                baseline = None
                samples = []
                while time.monotonic() < deadline:
                    self.one()
                    tried += 1
                    if baseline is None and time.monotonic() > warm:
                        baseline = _rss_mb(self.proc.pid)
                    if tried % 250 == 0:
                        samples.append(round(_rss_mb(self.proc.pid)))
                alive = self.stub.Capabilities(p4runtime_pb2.CapabilitiesRequest(), timeout=30)
                forwarding = self.still_forwarding()
                rss = _rss_mb(self.proc.pid)
            finally:
                self.stop()
                self.log.seek(0)
                log = self.log.read()
                self.log.close()
        if not alive.p4runtime_api_version:
            self.failures.append("the server does not answer Capabilities")
        if not forwarding:
            self.failures.append("the server no longer forwards (PacketOut -> PacketIn)")
        if baseline is not None and rss - baseline > RSS_GROWTH_MB:
            self.failures.append(f"RSS grew from {baseline:.0f} MB to {rss:.0f} MB")
        if "Traceback" in log:
            self.failures.append("the server logged a traceback:\n" + log[-3000:])
        print(f"P4Runtime request fuzzer (seed {self.seed}, {seconds:.0f} s): {tried} inputs")
        print("  inputs:   " + ", ".join(f"{k} {n}" for k, n in sorted(self.kinds.items())))
        print("  outcomes: " + ", ".join(f"{k} {n}" for k, n in sorted(self.outcomes.items())))
        print(
            f"  afterwards: alive, {'forwarding' if forwarding else 'NOT forwarding'}, "
            f"RSS {baseline or 0:.0f} MB after warm-up -> {rss:.0f} MB "
            f"(every 250 inputs: {samples})"
        )
        for f in self.failures[:20]:
            print("  FAIL " + f)
        return 1 if self.failures else 0
