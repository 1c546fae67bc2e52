"""P4Runtime differential: the same request sequences to p4sim and to BMv2's simple_switch_grpc.

    python -m p4sim.conformance.rtdiff [--seed S] [--requests N] [--length L]
                                       [--programs NAME,...] [--cases DIR] [--json] [-v]
    python -m p4sim.conformance.rtdiff --replay CASE.json [-v]

Each program (PROGRAMS) is compiled by p4c-bm2-ss; simple_switch_grpc (`--no-p4`) gets its
JSON, p4sim (in this process, `P4RuntimeServer` over the interpreter) the same source, and both
p4c's P4Info. Sequences of L requests (`rtgen.RequestGenerator`, seeded by S and the
sequence's number) go to both, each sequence on a fresh pipeline (VERIFY_AND_COMMIT) and
with its own election ids, then reads of every entity kind. Per request the outcomes are
compared: the gRPC status code, each update's canonical code in a failed Write's details, the
entities a Read returns (canonical bytestrings), the fields a GetForwardingPipelineConfig
returns, the arbitration answer to a second client or to the primary's re-arbitration, and
what the primary's stream brings after a PacketOut or a DigestListAck (PacketIns, StreamErrors
and arbitration answers in order, then the DigestLists' data in order: nothing orders the two
kinds, `digests_last`; up to the PacketIn of a marker PacketOut sent after it and, when a
digest is configured, the marker's digest; the DigestLists are acknowledged once the marker
came, so that digest data a step repeats comes before its ack on both).

Verdicts per request: `same`, `explained` (p4sim follows the P4Runtime specification where
PI does not, or the spec leaves the answer open: `rtexplain.py`, each with the spec's section
and PI's source line) or `DIFFER`. An explained difference that leaves the two in different
states (PI applied what p4sim refused, say) ends its sequence: what follows would differ
because of it. A sequence with a DIFFER is cut after its first difference, shrunk (steps left
out while the difference stays) and written to --cases (default ./rtdiff-cases) as a JSON
case that `--replay` runs again. Exit status 1 on DIFFER, or when a server stops answering.
"""

from __future__ import annotations

import json
import os
import queue
import random
import signal
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

import grpc
from google.protobuf import text_format
from google.rpc import code_pb2, status_pb2
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from dccommon.cliargs import ArgumentParser, int_range
from p4sim.conformance import bmv2
from p4sim.conformance.rtexplain import (
    LEAKED_GROUP,
    PARTED_IN_BATCH,
    RECONCILE_DROPS_PRE,
    differences,
    differing_updates,
    entity_text,
    explain,
    leaked_group,
    wrote_what_reconcile_drops,
)
from p4sim.conformance.rtgen import (
    DEVICE_CONFIG,
    PRIMARY_ELECTION_ID,
    STREAM_RPCS,
    RequestGenerator,
    Step,
    final_reads,
)
from p4sim.tool import ToolError, add_json_option, add_seed_option, report_stream, write_json

ROOT = Path(__file__).resolve().parents[2]
P4C_SAMPLES = Path(os.environ.get("P4C_SAMPLES", "/opt/p4tools/p4c-testdata/p4_16_samples"))
#: the programs that send every frame back to the controller (stream steps: rtgen.py)
STREAM_PROGRAMS = {"stream"}
#: the programs whose P4Info the requests come from, and what each brings
PROGRAMS = {
    "dc_splitter": ROOT / "p4src" / "dc_splitter.p4",  # exact keys, const default actions
    "runtime_fwd": ROOT / "p4sim" / "tests" / "p4" / "runtime_fwd.p4",  # lpm, ternary,
    # counters, a direct counter, a meter, a register, multicast
    "runtime_kinds": ROOT / "p4sim" / "tests" / "p4" / "runtime_kinds.p4",  # range, optional
    # and ternary keys in a writable table, a direct counter, a direct meter
    "action_selector": ROOT / "p4sim" / "tests" / "stf" / "action_selector.p4",  # profiles
    "range": P4C_SAMPLES / "table-entries-range-bmv2.p4",  # range keys, const entries
    "optional": P4C_SAMPLES / "table-entries-optional-bmv2.p4",  # optional keys, const
    "stream": ROOT / "p4sim" / "tests" / "p4" / "runtime_stream.p4",  # PacketOut/In, a
    # parser value set, a digest
}
#: what a run takes without --programs
DEFAULT_PROGRAMS = list(PROGRAMS)
RPC_TIMEOUT_S = 60  # a loaded machine; no answer in this time is a hang
ARBITRATION_TIMEOUT_S = 30
STREAM_TIMEOUT_S = 30  # for the marker's PacketIn and digest
CPU_PORT = 64  # runtime_stream.p4's; both switches send PacketOut in and PacketIn out here
MARKER_KIND = 0xFF  # the data header kind of the marker PacketOut (no value set holds it)
MARKER_TAGS = 1 << 31  # the markers' tags count from here, the generated PacketOuts' from 1
ELECTION_STRIDE = 1000  # each fresh start's election ids: a new base + the generated ones
CHANNEL_OPTIONS = [("grpc.max_receive_message_length", 64 * 1024 * 1024)]


class ServerGone(Exception):
    """A server stopped answering (crashed or hung): the first thing to fix."""


# -- the two targets -------------------------------------------------------------------------


class Target:
    """One P4Runtime server and the clients the steps name (a primary, second clients)."""

    def __init__(self, name: str, address: str, device_config: bytes, info) -> None:
        self.name = name
        self.address = address
        self.device_config = device_config
        self.info = info
        self.channel = grpc.insecure_channel(address, options=CHANNEL_OPTIONS)
        grpc.channel_ready_future(self.channel).result(timeout=RPC_TIMEOUT_S)
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        # each StreamChannel: (requests, call, answers); the first is the primary's
        self.streams: list[tuple[queue.Queue, object, queue.Queue]] = []
        self.base = 0
        self.second_eid: int | None = None
        self.markers = 0
        # a VERIFY_AND_SAVE config waits for COMMIT (run_sequence keeps it): a DigestEntry
        # read answers for that config, not for the running pipeline that sends digests
        self.saved = False

    # -- streams --------------------------------------------------------------------------
    def _open_stream(self, message) -> str:
        """A new StreamChannel sending `message` (an arbitration); the answer: the code of
        the arbitration status, or of the error that ended the stream."""
        requests: queue.Queue = queue.Queue()
        answers: queue.Queue = queue.Queue()
        requests.put(message)
        call = self.stub.StreamChannel(iter(requests.get, None))
        self.streams.append((requests, call, answers))

        def pump() -> None:
            try:
                for answer in call:
                    answers.put(answer)
            except grpc.RpcError as exc:
                answers.put(exc)

        threading.Thread(target=pump, daemon=True, name=f"rtdiff-{self.name}-stream").start()
        return self._arbitration_answer(answers)

    def _arbitration_answer(self, answers: queue.Queue) -> str:
        try:
            answer = answers.get(timeout=ARBITRATION_TIMEOUT_S)
        except queue.Empty:
            return "no answer"
        if isinstance(answer, grpc.RpcError):
            if answer.code() == grpc.StatusCode.UNAVAILABLE:
                raise ServerGone(f"{self.name}: StreamChannel: {answer.details()}")
            return answer.code().name
        if answer.HasField("arbitration"):
            return code_pb2.Code.Name(answer.arbitration.status.code)
        return f"first message {answer.WhichOneof('update')}"

    def _stream_step(self, message, times: int = 1) -> dict:
        """`message` (a PacketOut, DigestListAck or the primary's arbitration) on the
        primary's stream, `times` times back to back, then a marker PacketOut; what the
        stream brings up to the marker's PacketIn and, with its digest configured, the
        marker's digest: one text line each (DigestLists acknowledged)."""
        requests, _, answers = self.streams[0]
        _drain(answers)
        configured = {} if self.saved else self._configured_digests()
        for _ in range(times):
            requests.put(message)
        return {
            "code": "OK",
            "stream": self._until_marker(requests, answers, bool(configured)),
            # what may explain data sent again before its ack (rtexplain.may_send_again)
            "ack_timeout_ns": min(configured.values(), default=None),
        }

    def _until_marker(self, requests: queue.Queue, answers: queue.Queue, digests: bool):
        """Send a marker PacketOut; what the stream brings until its PacketIn (and its digest
        when `digests`), one line each."""
        self.markers += 1
        marker = p4runtime_pb2.StreamMessageRequest()
        marker_tag = MARKER_TAGS + self.markers
        marker.packet.payload = bytes([MARKER_KIND]) + marker_tag.to_bytes(4, "big")
        for m in _packet_out_metadata(self.info):
            marker.packet.metadata.add(metadata_id=m.id, value=b"\x00")
        requests.put(marker)
        lines: list[str] = []
        # DigestLists are acknowledged once the marker came: data a step repeats (rtgen's
        # same_digest_data) then comes before the ack on both, whenever the switch's
        # pipeline gets to it
        acks: list[p4runtime_pb2.StreamMessageRequest] = []
        packet_seen, digest_seen = False, not digests
        deadline = time.monotonic() + STREAM_TIMEOUT_S
        while not (packet_seen and digest_seen):
            try:
                answer = answers.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                lines.append("the marker's " + ("digest" if packet_seen else "PacketIn")
                             + f" did not come within {STREAM_TIMEOUT_S} s")  # fmt: skip
                break
            if isinstance(answer, grpc.RpcError):
                if answer.code() == grpc.StatusCode.UNAVAILABLE:
                    raise ServerGone(f"{self.name}: StreamChannel: {answer.details()}")
                lines.append(f"stream ended {answer.code().name}")
                break
            kind = answer.WhichOneof("update")
            if kind == "packet" and answer.packet.payload == marker.packet.payload:
                packet_seen = True
            elif kind == "digest":
                ack = p4runtime_pb2.StreamMessageRequest()
                ack.digest_ack.digest_id = answer.digest.digest_id
                ack.digest_ack.list_id = answer.digest.list_id
                acks.append(ack)
                for data in answer.digest.data:
                    tag = data.struct.members[0].bitstring if data.struct.members else b""
                    if int.from_bytes(tag, "big") == marker_tag:
                        digest_seen = True
                    else:
                        lines.append(
                            "digest " + text_format.MessageToString(data, as_one_line=True)
                        )
            elif kind == "arbitration":
                lines.append(f"arbitration {code_pb2.Code.Name(answer.arbitration.status.code)}")
            elif kind == "error":
                error = answer.error
                lines.append(f"error {code_pb2.Code.Name(error.canonical_code)} on "
                             f"{error.WhichOneof('details')}")  # fmt: skip
                if error.packet_out.packet_out.payload == marker.packet.payload:
                    lines.append("the marker refused")  # no PacketIn will come
                    break
            else:
                lines.append(f"{kind} " + text_format.MessageToString(getattr(answer, kind),
                                                                     as_one_line=True))  # fmt: skip
        for ack in acks:
            requests.put(ack)
        return digests_last(lines)

    def _configured_digests(self) -> dict[int, int]:
        """The digests a DigestEntry configures now, with their ack_timeout_ns: a Read of
        each by its id (PI reads no wildcard digest_id, rtexplain.py); NOT_FOUND when it is
        not configured."""
        configured = {}
        for digest in self.info.digests:
            request = p4runtime_pb2.ReadRequest(device_id=0)
            request.entities.add().digest_entry.digest_id = digest.preamble.id
            try:
                for response in self.stub.Read(request, timeout=RPC_TIMEOUT_S):
                    for entity in response.entities:
                        timeout = entity.digest_entry.config.ack_timeout_ns
                        configured[digest.preamble.id] = timeout
            except grpc.RpcError as exc:
                if exc.code() != grpc.StatusCode.NOT_FOUND:
                    raise ServerGone(f"{self.name}: reading DigestEntry: {exc.code().name}")
        return configured

    def close_streams(self) -> None:
        for requests, call, _ in self.streams:
            requests.put(None)
            call.cancel()
        self.streams = []

    def start_afresh(self, base: int) -> None:
        """A fresh primary (election ids above `base`, above every earlier stream's: a stream
        closed a moment ago may still count on the server) and a fresh pipeline."""
        self.close_streams()
        self.base = base
        self.second_eid = None
        arbitration = p4runtime_pb2.StreamMessageRequest()
        arbitration.arbitration.device_id = 0
        arbitration.arbitration.election_id.low = self.base + PRIMARY_ELECTION_ID
        code = self._open_stream(arbitration)
        if code != "OK":
            raise ServerGone(f"{self.name}: the primary's arbitration answered {code}")
        request = p4runtime_pb2.SetForwardingPipelineConfigRequest(
            device_id=0, action=p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT
        )
        request.election_id.low = self.base + PRIMARY_ELECTION_ID
        request.config.p4info.CopyFrom(self.info)
        request.config.p4_device_config = self.device_config
        try:
            self.stub.SetForwardingPipelineConfig(request, timeout=RPC_TIMEOUT_S)
        except grpc.RpcError:
            # PI refuses a new config while one VERIFY_AND_SAVE saved waits (rtexplain.py):
            # commit that one first
            commit = p4runtime_pb2.SetForwardingPipelineConfigRequest(
                device_id=0, action=p4runtime_pb2.SetForwardingPipelineConfigRequest.COMMIT
            )
            commit.election_id.CopyFrom(request.election_id)
            self.stub.SetForwardingPipelineConfig(commit, timeout=RPC_TIMEOUT_S)
            self.stub.SetForwardingPipelineConfig(request, timeout=RPC_TIMEOUT_S)

    # -- one step ---------------------------------------------------------------------------
    def prepare(self, step: Step):
        """The step's request as this target gets it: its own device config, election ids
        moved to this sequence's."""
        request = type(step.request)()
        request.CopyFrom(step.request)
        if step.rpc == "Arbitrate":
            request.arbitration.election_id.low += self.base
            return request
        if step.rpc in STREAM_RPCS:
            return request
        if hasattr(request, "election_id") and request.HasField("election_id"):
            if step.client == "second" and self.second_eid is not None:
                request.election_id.low = self.second_eid
            else:
                request.election_id.low += self.base
        if step.rpc == "SetForwardingPipelineConfig" and (
            request.config.p4_device_config == DEVICE_CONFIG
        ):
            request.config.p4_device_config = self.device_config
        return request

    def run(self, step: Step) -> dict:
        request = self.prepare(step)
        if step.rpc == "Arbitrate" and step.client == "primary":
            return self._stream_step(request)
        if step.rpc == "Arbitrate":
            self.second_eid = request.arbitration.election_id.low
            return {"code": self._open_stream(request)}
        if step.rpc in STREAM_RPCS:
            return self._stream_step(request, step.times)
        method = getattr(self.stub, step.rpc)
        try:
            if step.rpc == "Read":
                entities = [e for r in method(request, timeout=RPC_TIMEOUT_S) for e in r.entities]
                return {"code": "OK", "entities": sorted(entity_text(e) for e in entities)}
            response = method(request, timeout=RPC_TIMEOUT_S)
        except grpc.RpcError as exc:
            if exc.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                raise ServerGone(f"{self.name}: {step.rpc}: {exc.code().name}: {exc.details()}")
            outcome = {"code": exc.code().name, "message": exc.details() or ""}
            if step.rpc == "Write":
                outcome["updates"], outcome["messages"] = update_errors(exc)
            return outcome
        outcome = {"code": "OK"}
        if step.rpc == "GetForwardingPipelineConfig":
            config = response.config
            outcome["config"] = sorted(
                name
                for name, present in (
                    ("p4info", config.HasField("p4info")),
                    ("p4_device_config", bool(config.p4_device_config)),
                    ("cookie", config.HasField("cookie")),
                )
                if present
            )
        return outcome

    def close(self) -> None:
        self.close_streams()
        self.channel.close()


def digests_last(lines: list[str]) -> list[str]:
    """What a stream brought, compared as: PacketIns, StreamErrors and arbitration answers in
    the order they came, then the DigestLists' data in the order they came. Nothing orders a
    DigestList against a PacketIn (the spec does not; in simple_switch_grpc the digest leaves
    at the end of ingress through the learn engine's thread and PI's digest task queue, the
    PacketIn after egress through the CPU port's), and simple_switch_grpc sends either first."""
    digests = [line for line in lines if line.startswith("digest ")]
    return [line for line in lines if not line.startswith("digest ")] + digests


def _drain(answers: queue.Queue) -> None:
    while True:
        try:
            answers.get_nowait()
        except queue.Empty:
            return


def _packet_out_metadata(info) -> list:
    return [m for c in info.controller_packet_metadata if c.preamble.name == "packet_out"
            for m in c.metadata]  # fmt: skip


def update_errors(exc: grpc.RpcError) -> tuple[list[str], list[str]]:
    """The canonical code and message of each update in a failed Write's details (empty
    lists without them)."""
    for key, value in exc.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            errors = [
                p4runtime_pb2.Error.FromString(d.value)
                for d in status_pb2.Status.FromString(value).details
            ]
            return [code_pb2.Code.Name(e.canonical_code) for e in errors], [
                e.message for e in errors
            ]
    return [], []


class Rig:
    """simple_switch_grpc and p4sim serving one program, each with a client."""

    def __init__(self, program: Path, work: Path) -> None:
        from p4sim import frontend
        from p4sim.io import InProcessPorts
        from p4sim.p4runtime import P4RuntimeServer
        from p4sim.p4runtime.device_config import DeviceConfig
        from p4sim.switch import Switch

        if not program.is_file():
            raise ToolError(
                f"{program} not found (p4c's samples: set P4C_SAMPLES to its p4_16_samples "
                "folder, or leave the program out with --programs)",
                exit_code=2,
            )
        compiled = bmv2.compile_p4c(program, work / "p4c")
        if not compiled.ok:
            raise ToolError(f"p4c-bm2-ss rejects {program}: {compiled.message[:300]}")
        self.info = p4info_pb2.P4Info()
        text_format.Parse(compiled.p4info_path.read_text(), self.info)
        source = frontend.compile_file(str(program)).source
        self.switch = Switch(InProcessPorts([0, 1, 2, 3]), cpu_port=CPU_PORT)
        self.switch.start()
        self.server = P4RuntimeServer(self.switch, "127.0.0.1:0")
        self.server.start()
        self.bmv2 = None
        self.targets: list[Target] = []
        self.starts = 0
        try:
            bmv2_config = compiled.json_path.read_bytes()
            self.bmv2, theirs = bmv2.start_grpc_switch(
                [0, 1, 2, 3],
                [],
                work / "bmv2",
                lambda address: Target("bmv2", address, bmv2_config, self.info),
                cpu_port=CPU_PORT,
            )
            config = DeviceConfig(source, program.name).encode()
            ours = Target("p4sim", self.server.address, config, self.info)
            self.targets = [ours, theirs]
        except BaseException:
            self.close()
            raise

    def start_afresh(self) -> None:
        """Both targets with a fresh pipeline and primary, election ids of their own."""
        self.starts += 1
        for target in self.targets:
            target.start_afresh(self.starts * ELECTION_STRIDE)

    def alive(self) -> None:
        if self.bmv2 is not None and self.bmv2.proc.poll() is not None:
            raise ServerGone(f"simple_switch_grpc exited ({self.bmv2.proc.returncode})")

    def close(self) -> None:
        for target in self.targets:
            target.close()
        if self.bmv2 is not None:
            self.bmv2.stop()
        self.server.stop()
        self.switch.close()


# -- comparing ----------------------------------------------------------------------------


@dataclass
class StepResult:
    step: int
    rpc: str
    note: str
    verdict: str  # same | explained | DIFFER
    detail: list[str] = field(default_factory=list)  # the explanations, then the differences
    reasons: list[str] = field(default_factory=list)  # the explanations alone
    parted: bool = False  # the states parted here: both started afresh after it


def run_sequence(rig: Rig, steps: list[Step]) -> list[StepResult]:
    """Every step on both targets, from a fresh start; a result per step. After a difference
    that leaves the two in different states, both start afresh (a new pipeline and primary)
    and the sequence goes on from there on equal terms."""
    rig.start_afresh()
    results = []
    saved = False  # a VERIFY_AND_SAVE config waits for COMMIT on both
    pre = False  # both hold what PI's RECONCILE_AND_COMMIT drops
    for i, step in enumerate(steps):
        for target in rig.targets:
            target.saved = saved
        ours, theirs = (target.run(step) for target in rig.targets)
        rig.alive()
        pre |= wrote_what_reconcile_drops(step, ours, theirs)
        diff = differences(step, ours, theirs)
        explained = explain(step, ours, theirs, saved) if diff else None
        verdict = "same" if not diff else ("DIFFER" if explained is None else "explained")
        reasons, parted = explained if explained is not None else ([], False)
        reconciled = (
            step.rpc == "SetForwardingPipelineConfig"
            and step.request.action == step.request.RECONCILE_AND_COMMIT
            and ours["code"] == theirs["code"] == "OK"
        )
        leak = leaked_group(step, theirs)
        for known, why in ((pre and reconciled, RECONCILE_DROPS_PRE),
                           (leak is not None, LEAKED_GROUP)):  # fmt: skip
            if known:  # the states part here, whatever the answers
                verdict = "explained" if verdict == "same" else verdict
                reasons, parted = [why] + reasons, True
        if verdict == "DIFFER" and leak is not None:
            later = differing_updates(ours, theirs)
            if later and min(later) > leak and ours["code"] == theirs["code"]:
                verdict, reasons = "explained", reasons + [PARTED_IN_BATCH]
        results.append(StepResult(i, step.rpc, step.note, verdict, reasons + diff, reasons, parted))
        if parted:
            rig.start_afresh()
            saved = pre = False
        elif step.rpc == "SetForwardingPipelineConfig" and ours["code"] == theirs["code"] == "OK":
            saved = step.request.action == step.request.VERIFY_AND_SAVE or (
                saved and step.request.action == step.request.VERIFY
            )
    return results


# -- cases ---------------------------------------------------------------------------------


def step_json(step: Step) -> dict:
    text = text_format.MessageToString(step.request)
    doc = {"rpc": step.rpc, "client": step.client, "note": step.note, "request": text}
    return doc | ({"times": step.times} if step.times != 1 else {})


def step_from_json(doc: dict) -> Step:
    kinds = {
        "Write": p4runtime_pb2.WriteRequest,
        "Read": p4runtime_pb2.ReadRequest,
        "SetForwardingPipelineConfig": p4runtime_pb2.SetForwardingPipelineConfigRequest,
        "GetForwardingPipelineConfig": p4runtime_pb2.GetForwardingPipelineConfigRequest,
        "Capabilities": p4runtime_pb2.CapabilitiesRequest,
        "Arbitrate": p4runtime_pb2.StreamMessageRequest,
        "PacketOut": p4runtime_pb2.StreamMessageRequest,
        "DigestListAck": p4runtime_pb2.StreamMessageRequest,
    }
    if doc.get("rpc") not in kinds:
        raise ToolError(f"case step rpc {doc.get('rpc')!r}: expected one of {', '.join(kinds)}")
    request = text_format.Parse(doc["request"], kinds[doc["rpc"]]())
    times = doc.get("times", 1)
    if not isinstance(times, int) or not 1 <= times <= 10:
        raise ToolError(f"case step times {times!r}: expected a whole number from 1 to 10")
    return Step(doc["rpc"], request, doc.get("client", "primary"), doc.get("note", ""), times)


def shrink(rig: Rig, steps: list[Step], budget: int = 30) -> list[Step]:
    """`steps` (whose last step differs) with earlier steps left out while the last still
    differs unexplained: at most `budget` reruns."""
    kept = list(steps)
    i = 0
    while i < len(kept) - 1 and budget > 0:
        candidate = kept[:i] + kept[i + 1 :]
        budget -= 1
        if run_sequence(rig, candidate)[-1].verdict == "DIFFER":
            kept = candidate
        else:
            i += 1
    return kept


def write_case(folder: Path, name: str, program: str, steps: list[Step], last: StepResult):
    folder.mkdir(parents=True, exist_ok=True)
    doc = {
        "program": program,
        "steps": [step_json(s) for s in steps],
        "differs": last.detail,
    }
    path = folder / f"{name}.json"
    path.write_text(json.dumps(doc, indent=1) + "\n")
    return path


# -- the run -------------------------------------------------------------------------------


@dataclass
class SequenceResult:
    name: str
    program: str
    verdict: str = "same"
    steps: list[StepResult] = field(default_factory=list)
    case: str = ""
    seconds: float = 0.0


def run_program(program: str, seed: int, numbers: list[int], length: int, cases: Path, work):
    """The sequences `numbers` of `seed` on one program: a SequenceResult each."""
    rig = Rig(PROGRAMS[program], work / program)
    try:
        for number in numbers:
            start = time.monotonic()
            result = SequenceResult(f"seq_{seed}_{number}", program)
            generator = RequestGenerator(
                rig.info, random.Random(f"rtdiff:{seed}:{number}"), program in STREAM_PROGRAMS
            )
            steps = generator.sequence(length) + final_reads(rig.info)
            result.steps = run_sequence(rig, steps)
            verdicts = {r.verdict for r in result.steps}
            result.verdict = next(v for v in ("DIFFER", "explained", "same") if v in verdicts)
            if result.verdict == "DIFFER":
                first = next(r for r in result.steps if r.verdict == "DIFFER")
                kept = shrink(rig, steps[: first.step + 1])
                last = run_sequence(rig, kept)[-1]
                result.case = str(write_case(cases, result.name, program, kept, last))
            result.seconds = time.monotonic() - start
            yield result
    finally:
        rig.close()


def replay(path: Path, verbose: bool, out) -> int:
    try:
        doc = json.loads(path.read_text())
        steps = [step_from_json(s) for s in doc["steps"]]
        program = doc["program"]
    except (OSError, ValueError, KeyError, text_format.ParseError) as exc:
        raise ToolError(f"{path}: not an rtdiff case ({exc})", exit_code=2) from None
    if program not in PROGRAMS:
        raise ToolError(f"{path}: program {program!r}: expected one of {', '.join(PROGRAMS)}", 2)
    with tempfile.TemporaryDirectory(prefix="rtdiff-") as tmp:
        rig = Rig(PROGRAMS[program], Path(tmp))
        try:
            results = run_sequence(rig, steps)
        finally:
            rig.close()
    for r in results:
        if r.verdict != "same" or verbose:
            print(f"step {r.step} {r.rpc} {r.note}: {r.verdict}", file=out)
            for line in r.detail:
                print(f"    {line[:300]}", file=out)
    differ = sum(r.verdict == "DIFFER" for r in results)
    print(f"{path.name}: {len(results)} requests, {differ} differ", file=out)
    return 1 if differ else 0


def program_list(text: str) -> list[str]:
    names = [n for n in text.split(",") if n]
    unknown = [n for n in names if n not in PROGRAMS]
    if unknown or not names:
        import argparse

        raise argparse.ArgumentTypeError(
            f"unknown program {', '.join(unknown) or '(none)'}: expected names from "
            f"{', '.join(PROGRAMS)}, separated by commas"
        )
    return names


PROG = "python -m p4sim.conformance.rtdiff"


def main(argv=None) -> int:
    ap = ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    add_seed_option(ap, "the request sequences")
    ap.add_argument(
        "--requests",
        type=int_range(1, 10_000_000, "requests"),
        default=400,
        help="generated requests in all, spread over the programs (default: 400)",
    )
    ap.add_argument(
        "--length",
        type=int_range(1, 10_000, "length"),
        default=20,
        help="requests per sequence (default: 20)",
    )
    ap.add_argument(
        "--programs",
        type=program_list,
        default=DEFAULT_PROGRAMS,
        help=f"programs, separated by commas, of {','.join(PROGRAMS)} "
        f"(default: {','.join(DEFAULT_PROGRAMS)})",
    )
    ap.add_argument(
        "--cases",
        type=Path,
        default=Path("rtdiff-cases"),
        help="where a differing sequence goes, as a case for --replay (default: ./rtdiff-cases)",
    )
    ap.add_argument("--replay", type=Path, help="run one case file again (no generation)")
    add_json_option(ap, "every sequence's result")
    ap.add_argument("-v", "--verbose", action="store_true", help="every request's verdict")
    args = ap.parse_args(argv)
    out = report_stream(args.json)
    if args.replay:
        return replay(args.replay, args.verbose, out)
    start = time.monotonic()
    sequences = max(1, -(-args.requests // args.length))
    by_program = {p: [n for n in range(sequences) if n % len(args.programs) == i]
                  for i, p in enumerate(args.programs)}  # fmt: skip
    results: list[SequenceResult] = []
    steps: Counter = Counter()
    gone = None
    print(f"{'sequence':<14}  {'program':<16}  {'result':<9}  requests  seconds", file=out)
    with tempfile.TemporaryDirectory(prefix="rtdiff-") as tmp:
        for program, numbers in by_program.items():
            if not numbers:
                continue
            try:
                for r in run_program(program, args.seed, numbers, args.length, args.cases,
                                     Path(tmp)):  # fmt: skip
                    results.append(r)
                    steps.update(s.verdict for s in r.steps)
                    print(f"{r.name:<14}  {program:<16}  {r.verdict:<9}  {len(r.steps):8d}  "
                          f"{r.seconds:7.1f}", file=out)  # fmt: skip
                    for s in r.steps:
                        if s.verdict != "same" and (s.verdict == "DIFFER" or args.verbose):
                            print(f"    step {s.step} {s.rpc} ({s.note}): {s.verdict}", file=out)
                            for line in s.detail[:4]:
                                print(f"        {line[:300]}", file=out)
                    if r.case:
                        print(f"    case: {r.case}", file=out)
                    out.flush()
            except ServerGone as exc:
                gone = f"{program}: {exc}"
                print(f"FAIL: a server stopped answering: {gone}", file=out)
    counts = Counter(r.verdict for r in results)
    parted = sum(s.parted for r in results for s in r.steps)
    print(f"\nseed {args.seed}: {len(results)} sequences, {sum(steps.values())} requests "
          f"(both started afresh {parted} times, where the states parted)", file=out)  # fmt: skip
    reasons = Counter(why for r in results for s in r.steps for why in s.reasons)
    for verdict in ("same", "explained", "DIFFER"):
        print(f"  {verdict:<9}  {counts[verdict]:4d} sequences  {steps[verdict]:6d} requests",
              file=out)  # fmt: skip
    if reasons:
        print("explained by (requests, rule):", file=out)
        for why, n in reasons.most_common():
            print(f"  {n:6d}  {why.split(' [')[0]}", file=out)
    print(f"time: {time.monotonic() - start:.0f} s", file=out)
    write_json(PROG, [asdict(r) for r in results], args.json)
    if counts["DIFFER"]:
        print(f"FAIL: p4sim answers differently from simple_switch_grpc (cases in {args.cases})",
              file=out)  # fmt: skip
    return 1 if counts["DIFFER"] or gone else 0


def _exit_on_sigterm(signum, frame) -> None:
    """SIGTERM unwinds like an error: the rigs' `finally` stops simple_switch_grpc."""
    sys.exit(128 + signum)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    from p4sim.tool import run

    sys.exit(run(PROG, main))
