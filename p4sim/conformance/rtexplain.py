"""The known differences between p4sim's and BMv2's P4Runtime answers, for the P4Runtime
differential (`rtdiff.py`): how two answers are compared, and which differences are
explained.

An answer (an "outcome") is a dict: the status `code` and `message`, for a failed Write the
`updates` codes and `messages` of its details, for a Read the `entities` (one canonical text
line each, `entity_text`), for GetForwardingPipelineConfig the `config` fields present.
Codes, per-update codes, entities and config fields are compared; messages only help match
an explanation.

Each `Explanation` is a rule on one pair of answers (a status, or one update of a Write) with
the specification's section and PI's source line: "PI" where p4sim follows the P4Runtime
specification (v1.4) and PI (p4lang/PI, BMv2's P4Runtime server) does not, "silent" where the
spec names no code and the two choose differently, "p4sim" for a limitation p4sim documents.
A rule that leaves the two targets in different states `diverges`: the differential stops
that sequence there, since what follows would differ because of it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from google.protobuf import text_format
from p4.v1 import p4runtime_pb2

from p4sim.conformance.rtgen import SAME_DATA_AFTER_ACK, SAME_DATA_BEFORE_ACK, Step


def entity_text(entity: p4runtime_pb2.Entity) -> str:
    """One line per entity, replicas sorted: a multicast group or clone session is bound to
    a set of replicas (spec 9.6.1), which PI returns in an order of its own."""
    kind = entity.packet_replication_engine_entry.WhichOneof("type")
    if kind is not None:
        sorted_entity = p4runtime_pb2.Entity()
        sorted_entity.CopyFrom(entity)
        replicas = getattr(sorted_entity.packet_replication_engine_entry, kind).replicas
        ordered = [
            _copy(r)
            for r in sorted(replicas, key=lambda r: r.SerializeToString(deterministic=True))
        ]
        del replicas[:]
        replicas.extend(ordered)
        entity = sorted_entity
    return text_format.MessageToString(entity, as_one_line=True)


def _copy(message):
    copy = type(message)()
    copy.CopyFrom(message)
    return copy


PI = "p4lang/PI@f96af95 proto/"  # the PI source the explanations cite


@dataclass
class Explanation:
    """A known difference, matched on one answer pair (a status, or one update of a Write):
    `kind` "PI" where p4sim follows the P4Runtime specification and PI does not, "silent"
    where the spec names no code and the two choose differently, "p4sim" for a limitation
    p4sim documents. `diverges`: the two are left in different states, so the sequence
    stops there (what follows would differ because of it)."""

    name: str
    kind: str
    spec: str  # the P4Runtime specification's section (v1.4)
    pi: str  # PI's source line
    ours: tuple[str, ...]  # p4sim's codes this applies to
    theirs: tuple[str, ...]  # PI's codes
    ours_says: str = ""  # a piece of p4sim's message
    theirs_says: str = ""  # a piece of PI's message
    rpcs: tuple[str, ...] = ("Write", "Read")
    diverges: bool = False

    def matches(self, rpc: str, ours: tuple[str, str], theirs: tuple[str, str]) -> bool:
        return (
            rpc in self.rpcs
            and ours[0] in self.ours
            and theirs[0] in self.theirs
            and self.ours_says in ours[1]
            and self.theirs_says in theirs[1]
        )

    def text(self) -> str:
        return f"{self.name} [{self.kind}; spec {self.spec}; {PI}{self.pi}]"


REFUSED = ("INVALID_ARGUMENT", "OUT_OF_RANGE", "NOT_FOUND", "PERMISSION_DENIED",
           "FAILED_PRECONDITION", "ALREADY_EXISTS", "RESOURCE_EXHAUSTED")  # fmt: skip
EXPLANATIONS = [
    Explanation(
        name="an id absent from the P4Info: p4sim NOT_FOUND, PI INVALID_ARGUMENT",
        kind="silent",
        spec="9 P4 Entity Messages (no code given)",
        pi="frontend/src/common.h:173",
        ours=("NOT_FOUND",),
        theirs=("INVALID_ARGUMENT",),
        ours_says="with id",
        theirs_says="Invalid P4 id",
    ),
    Explanation(
        name="a bytestring wider than its field is OUT_OF_RANGE; PI says INVALID_ARGUMENT",
        kind="PI",
        spec="8.4 Bytestrings",
        pi="frontend/src/common.cpp:84",
        ours=("OUT_OF_RANGE",),
        theirs=("INVALID_ARGUMENT",),
        ours_says="does not fit",
        theirs_says="does not fit",
    ),
    Explanation(
        name="an empty bytestring is always rejected (OUT_OF_RANGE); PI pads it to zero",
        kind="PI",
        spec="8.4 Bytestrings",
        pi="frontend/src/common.cpp:65",
        ours=("OUT_OF_RANGE",),
        theirs=("OK", "UNKNOWN") + REFUSED,
        ours_says="empty bytestring",
        diverges=True,
    ),
    Explanation(
        name="an index past the array is OUT_OF_RANGE; PI reports the target's refusal as UNKNOWN",
        kind="PI",
        spec="9.4 CounterEntry, 9.5 MeterEntry",
        pi="frontend/src/device_mgr.cpp:2983",
        ours=("OUT_OF_RANGE",),
        theirs=("UNKNOWN",),
        ours_says="is outside",
    ),
    Explanation(
        name="PI serves no RegisterEntry (PI issue 376)",
        kind="PI",
        spec="9.7 RegisterEntry",
        pi="frontend/src/device_mgr.cpp:2076",
        ours=("OK",) + REFUSED,
        theirs=("UNIMPLEMENTED",),
        theirs_says="Register",
    ),
    Explanation(
        name="an unknown device_id is NOT_FOUND before the primary check; PI makes a device for "
        "any id and answers PERMISSION_DENIED",
        kind="PI",
        spec="12 Write RPC (checks, in this order)",
        pi="server/pi_server.cpp:414",
        ours=("NOT_FOUND",),
        theirs=("PERMISSION_DENIED",),
        ours_says="device_id",
        theirs_says="Not primary",
        rpcs=("Write", "SetForwardingPipelineConfig"),
    ),
    Explanation(
        name="a role no arbitration named is NOT_FOUND; PI's Write and Read ignore the role",
        kind="PI",
        spec="12 Write RPC, 13 Read RPC",
        pi="server/pi_server.cpp:408",
        ours=("NOT_FOUND",),
        theirs=("OK", "UNKNOWN", "PERMISSION_DENIED") + REFUSED,
        ours_says="role",
        diverges=True,
    ),
    Explanation(
        name="a priority on a table without ternary, range or optional keys is INVALID_ARGUMENT; "
        "PI refuses positive ones only",
        kind="PI",
        spec="9.1.1 TableEntry (priority)",
        pi="frontend/src/device_mgr.cpp:2424",
        ours=("INVALID_ARGUMENT",),
        theirs=("OK", "NOT_FOUND", "ALREADY_EXISTS"),
        ours_says="priority must be 0",
        diverges=True,
    ),
    Explanation(
        name="a wildcard read (table_id 0) takes no other filter, is_default_action included; PI "
        "returns every table's default entry",
        kind="PI",
        spec="9.1.9 Wildcard Reads",
        pi="frontend/src/device_mgr.cpp:1352",
        ours=("INVALID_ARGUMENT",),
        theirs=("OK", "UNKNOWN"),
        ours_says="needs a table_id",
    ),
    Explanation(
        name="const tables refuse writes with PERMISSION_DENIED; PI passes them to BMv2",
        kind="PI",
        spec="9.1.6 Constant Tables",
        pi="frontend/src/device_mgr.cpp:2704",
        ours=("PERMISSION_DENIED",),
        theirs=("UNKNOWN", "INVALID_ARGUMENT", "NOT_FOUND", "OUT_OF_RANGE"),
        ours_says="const entries",
    ),
    Explanation(
        name="an action profile without a selector has members only; PI takes groups in it too",
        kind="PI",
        spec="9.2 Action Profiles (the simpler variant: entries point to members only)",
        pi="frontend/src/action_prof_mgr.cpp:1227",
        ours=("INVALID_ARGUMENT",),
        theirs=("OK", "NOT_FOUND", "ALREADY_EXISTS", "INVALID_ARGUMENT"),
        ours_says="has no selector",
        diverges=True,
    ),
    Explanation(
        name="a group naming a member twice is INVALID_ARGUMENT (p4sim checks the request before "
        "the state); PI names a missing member or group first",
        kind="silent",
        spec="9.2.2 ActionProfileGroup (no order of checks)",
        pi="frontend/src/action_prof_mgr.cpp:456",
        ours=("INVALID_ARGUMENT",),
        theirs=("NOT_FOUND", "ALREADY_EXISTS"),
        ours_says="listed twice",
    ),
    Explanation(
        name="an action with a parameter too wide and parameters missing or extra: p4sim names the "
        "width (OUT_OF_RANGE), PI the count",
        kind="silent",
        spec="9.1.3 Action Specification (no order of checks)",
        pi="frontend/src/action_helpers.cpp:52",
        ours=("OUT_OF_RANGE",),
        theirs=("INVALID_ARGUMENT",),
        ours_says="parameter",
        theirs_says="number of action parameters",
    ),
    Explanation(
        name="a member or group id never inserted is NOT_FOUND; PI says INVALID_ARGUMENT",
        kind="PI",
        spec="9.1.3 Action Specification",
        pi="frontend/src/device_mgr.cpp:2533",
        ours=("NOT_FOUND",),
        theirs=("INVALID_ARGUMENT",),
        theirs_says="Invalid member / group id",
    ),
    Explanation(
        name="members and groups beside one shots in a profile: the spec forbids no mix; p4sim "
        "refuses one only while the other kind exists, PI for good once a profile was "
        "programmed one way (and then also its reads)",
        kind="silent",
        spec="9.2.3 One Shot Action Selector Programming",
        pi="frontend/src/action_prof_mgr.cpp:1227",
        ours=("OK",) + REFUSED,
        theirs=("INVALID_ARGUMENT",),
        theirs_says="mix action selector programming",
        rpcs=("Write", "Read", "SetForwardingPipelineConfig"),
        diverges=True,
    ),
    Explanation(
        name="a meter config with cir above pir is INVALID_ARGUMENT; PI answers UNKNOWN, yet BMv2 "
        "keeps the rates (sorted, with their bursts swapped)",
        kind="PI",
        spec="9.5.2 MeterEntry",
        pi="frontend/src/device_mgr.cpp:740",
        ours=("INVALID_ARGUMENT",),
        theirs=("UNKNOWN",),
        ours_says="exceeds pir",
        theirs_says="writing meter spec",
        diverges=True,
    ),
    Explanation(
        name="BMv2 refuses what p4sim refuses, with a code; PI reports the target's refusal as "
        "UNKNOWN",
        kind="PI",
        spec="12 Write RPC (INVALID_ARGUMENT unless a more specific code applies)",
        pi="frontend/src/device_mgr.cpp:2704",
        ours=REFUSED,
        theirs=("UNKNOWN",),
        theirs_says="Error when",
    ),
    Explanation(
        name="VERIFY_AND_COMMIT (or VERIFY_AND_SAVE) after a VERIFY_AND_SAVE: PI refuses until "
        "a COMMIT",
        kind="PI",
        spec="14 SetForwardingPipelineConfig RPC",
        pi="frontend/src/device_mgr.cpp:594",
        ours=("OK",),
        theirs=("UNKNOWN",),
        theirs_says="first phase",
        rpcs=("SetForwardingPipelineConfig",),
        diverges=True,
    ),
    Explanation(
        name="COMMIT with a config is INVALID_ARGUMENT, without a saved one NOT_FOUND; PI fails "
        "in the target (UNKNOWN), or commits the saved one and ignores the config",
        kind="PI",
        spec="14 SetForwardingPipelineConfig RPC",
        pi="frontend/src/device_mgr.cpp:621",
        ours=("INVALID_ARGUMENT", "NOT_FOUND"),
        theirs=("UNKNOWN", "OK"),
        ours_says="COMMIT",
        rpcs=("SetForwardingPipelineConfig",),
        diverges=True,
    ),
    Explanation(
        name="a config the target cannot realize is INVALID_ARGUMENT; PI answers UNKNOWN (and "
        "after a RECONCILE_AND_COMMIT of one, BMv2 no longer reads)",
        kind="PI",
        spec="14 SetForwardingPipelineConfig RPC",
        pi="frontend/src/device_mgr.cpp:577",
        ours=("INVALID_ARGUMENT",),
        theirs=("UNKNOWN",),
        rpcs=("SetForwardingPipelineConfig",),
        diverges=True,
    ),
    Explanation(
        name="VERIFY checks the device config too (INVALID_ARGUMENT when it cannot be realized); "
        "PI's VERIFY reads only the P4Info",
        kind="PI",
        spec="14 SetForwardingPipelineConfig RPC",
        pi="frontend/src/device_mgr.cpp:496",
        ours=("INVALID_ARGUMENT",),
        theirs=("OK",),
        ours_says="p4_device_config",
        rpcs=("SetForwardingPipelineConfig",),
    ),
    Explanation(
        name="RECONCILE_AND_COMMIT of the running program keeps the state; PI fails to replay it "
        "(UNKNOWN) when a table has const entries",
        kind="PI",
        spec="14 SetForwardingPipelineConfig RPC",
        pi="frontend/src/device_mgr.cpp:612",
        ours=("OK",),
        theirs=("UNKNOWN",),
        theirs_says="reconciling",
        rpcs=("SetForwardingPipelineConfig",),
        diverges=True,
    ),
    Explanation(
        name="a DirectCounterEntry of an entry that does not exist is NOT_FOUND; PI says "
        "INVALID_ARGUMENT",
        kind="PI",
        spec="9.4.1 DirectCounterEntry",
        pi="frontend/src/device_mgr.cpp:760",
        ours=("NOT_FOUND",),
        theirs=("INVALID_ARGUMENT",),
        ours_says="no such entry",
        theirs_says="Cannot map table entry",
    ),
    Explanation(
        name="clone sessions with a class of service: PI has none (UNIMPLEMENTED)",
        kind="PI",
        spec="9.6.2 CloneSessionEntry",
        pi="frontend/src/pre_clone_mgr.cpp:94",
        ours=("OK",) + REFUSED,
        theirs=("UNIMPLEMENTED",),
        theirs_says="COS for clone sessions",
        diverges=True,
    ),
    Explanation(
        name="clone sessions that truncate (packet_length_bytes): BMv2's PI target refuses them, "
        "PI answers UNKNOWN",
        kind="PI",
        spec="9.6.2 CloneSessionEntry",
        pi="frontend/src/pre_clone_mgr.cpp:101",
        ours=("OK",),
        theirs=("UNKNOWN",),
        theirs_says="Error when creating clone session",
        diverges=True,
    ),
    Explanation(
        name="PI serves no ValueSetEntry write (UNIMPLEMENTED); p4sim applies it",
        kind="PI",
        spec="9.8 ValueSetEntry",
        pi="frontend/src/device_mgr.cpp:2135",
        ours=("OK",) + REFUSED,
        theirs=("UNIMPLEMENTED",),
        theirs_says="ValueSet writes",
        diverges=True,
    ),
    Explanation(
        name="PI serves no ValueSetEntry read (UNIMPLEMENTED)",
        kind="PI",
        spec="9.8 ValueSetEntry",
        pi="frontend/src/device_mgr.cpp:2071",
        ours=("OK",) + REFUSED,
        theirs=("UNIMPLEMENTED",),
        theirs_says="ValueSet reads",
    ),
    Explanation(
        name="a DigestEntry read with digest_id 0 reads every configured digest; PI answers "
        "UNIMPLEMENTED",
        kind="PI",
        spec="9.9 DigestEntry, 11.1 Wildcard Reads (an id of 0 is a wildcard)",
        pi="frontend/src/digest_mgr.cpp:922",
        ours=("OK",) + REFUSED,  # or p4sim refused another entity of the read first
        theirs=("UNIMPLEMENTED",),
        theirs_says="digest_id must be set",
    ),
    Explanation(
        name="a DigestEntry write with digest_id 0: p4sim INVALID_ARGUMENT (no digest named), "
        "PI NOT_FOUND",
        kind="silent",
        spec="9.9 DigestEntry (no code given)",
        pi="frontend/src/digest_mgr.cpp:846",
        ours=("INVALID_ARGUMENT",),
        theirs=("NOT_FOUND",),
        ours_says="digest_id 0",
        theirs_says="not a valid digest id",
    ),
    Explanation(
        name="p4sim has only the default role: an arbitration naming a role is UNIMPLEMENTED",
        kind="p4sim",
        spec="5 Client Arbitration (roles)",
        pi="server/pi_server.cpp:496",
        ours=("UNIMPLEMENTED",),
        theirs=("OK", "ALREADY_EXISTS", "INVALID_ARGUMENT", "NOT_FOUND"),
        rpcs=("Arbitrate",),
        diverges=True,
    ),
]


def _not_const(entity: p4runtime_pb2.Entity) -> None:
    entity.table_entry.is_const = False


def _match_only(entity: p4runtime_pb2.Entity) -> None:
    kind = entity.WhichOneof("entity")
    if kind in ("direct_counter_entry", "direct_meter_entry"):
        getattr(entity, kind).table_entry.ClearField("action")


#: differences in what a Read returns: p4sim's entity, changed so, is the one BMv2 returns
ENTITY_EXPLANATIONS = [
    (
        _not_const,
        (
            "the entries of a const table are read with is_const true; PI predates the field "
            f"[PI; spec 9.1.1 TableEntry (is_const); {PI}frontend/src/device_mgr.cpp:1319]"
        ),
    ),
    (
        _match_only,
        (
            "the table entry of a DirectCounterEntry or DirectMeterEntry read: p4sim returns "
            "it with its action, PI with its match only [silent; spec 9.4.1 "
            "DirectCounterEntry, 9.5.1 DirectMeterEntry name no form]"
        ),
    ),
]


def _ignored_filter_copies(step: Step, line: str) -> int:
    """How many copies of this table entry PI returns beyond the spec: one for each entity of
    the read that filters the entry's table by another priority and no match (spec 9.1.9
    Wildcard Reads: a non-zero priority filters; PI ignores it)."""
    entity = text_format.Parse(line, p4runtime_pb2.Entity())
    if not entity.HasField("table_entry") or entity.table_entry.is_default_action:
        return 0
    return sum(
        1
        for e in step.request.entities
        if e.HasField("table_entry")
        and e.table_entry.table_id == entity.table_entry.table_id
        and not e.table_entry.is_default_action
        and not e.table_entry.match
        and e.table_entry.priority not in (0, entity.table_entry.priority)
    )


IGNORED_FILTER = (
    "a read filtered by priority returns only entries of that priority; PI ignores the "
    f"filter [PI; spec 9.1.9 Wildcard Reads; {PI}frontend/src/device_mgr.cpp:1280]"
)


def only_in(a: list[str], b: list[str]) -> list[str]:
    """The entities of read `a` that read `b` lacks (as multisets: twice is not once)."""
    return sorted((Counter(a) - Counter(b)).elements())


def explain_entities(step: Step, ours: list[str], theirs: list[str]) -> list[str] | None:
    """The explanations pairing every entity only p4sim read with one only BMv2 read (or
    one a filter PI ignores leaves out); None when one stays unexplained."""
    kept, ignored = [], Counter()
    for line in theirs:
        if ignored[line] < _ignored_filter_copies(step, line):
            ignored[line] += 1
        else:
            kept.append(line)
    found = [IGNORED_FILTER] if ignored else []
    ours, theirs = list(ours), kept
    for change, text in ENTITY_EXPLANATIONS:
        for line in list(ours):
            entity = text_format.Parse(line, p4runtime_pb2.Entity())
            change(entity)
            changed = entity_text(entity)
            if changed != line and changed in theirs:
                ours.remove(line)
                theirs.remove(changed)
                found.append(text)
    return None if ours or theirs else found


PARTED_IN_BATCH = "follows from an earlier update of the same batch that parted the states"
SAVED_COOKIE = (
    "the cookie GetForwardingPipelineConfig returns while a VERIFY_AND_SAVE config waits "
    "for COMMIT: p4sim the running config's, PI the saved one's [silent; spec 14 "
    "SetForwardingPipelineConfig RPC, 15 GetForwardingPipelineConfig RPC]"
)


def explain(
    step: Step, ours: dict, theirs: dict, saved: bool = False
) -> tuple[list[str], bool] | None:
    """The explanations of every difference between the outcomes and whether one of them
    leaves the targets in different states; None when something stays unexplained.
    `saved`: a config VERIFY_AND_SAVE saved waits for COMMIT on both."""
    pairs = []
    mine, pi = ours.get("updates") or [], theirs.get("updates") or []
    if mine and pi:  # both failed some updates: compare them one by one
        if len(mine) != len(pi):
            return None
        pairs += [
            ((a, ours["messages"][i]), (b, theirs["messages"][i]))
            for i, (a, b) in enumerate(zip(mine, pi))
            if a != b
        ]
    elif mine or pi:  # one failed the whole RPC or applied it all: its status pairs with
        # each failed update of the other
        whole, per_update = (theirs, ours) if mine else (ours, theirs)
        status = (whole["code"], whole.get("message", ""))
        for code, message in zip(per_update["updates"], per_update["messages"]):
            if code != status[0]:
                pair = ((code, message), status)
                pairs.append(pair if per_update is ours else pair[::-1])
    elif ours["code"] != theirs["code"]:
        pairs.append(((ours["code"], ours.get("message", "")),
                      (theirs["code"], theirs.get("message", ""))))  # fmt: skip
    found, diverges = [], False
    for pair in pairs:  # in the order of the updates
        match = next((e for e in EXPLANATIONS if e.matches(step.rpc, *pair)), None)
        if match is None and diverges:
            found.append(PARTED_IN_BATCH)  # an earlier update of the batch parted the states
            continue
        if match is None:
            return None
        found.append(match.text())
        diverges |= match.diverges
    if ours["code"] == theirs["code"] == "OK":
        a, b = ours.get("entities", []), theirs.get("entities", [])
        paired = explain_entities(step, only_in(a, b), only_in(b, a))
        if paired is None:
            return None
        found += paired
    if ours.get("stream") != theirs.get("stream"):
        why = explain_stream(
            step,
            ours.get("stream") or [],
            theirs.get("stream") or [],
            saved,
            ours.get("ack_timeout_ns"),
        )
        if why is None:
            return None
        found.append(why)
    if ours.get("config") != theirs.get("config"):
        if not (saved and {"cookie"} == set(ours["config"]) ^ set(theirs["config"])):
            return None
        found.append(SAVED_COOKIE)
    return sorted(set(found)), diverges


MALFORMED_PACKET_OUT = (
    "a PacketOut whose metadata is unknown, missing, given twice or too wide: p4sim drops it "
    "with a StreamError (INVALID_ARGUMENT or OUT_OF_RANGE); PI sends a StreamError only when "
    "the client asked for error reports, and sends the packet with a missing field zero and "
    "the last of a field given twice [PI; spec 16.1 PacketOut, 16.4 Error Reporting; "
    f"{PI}frontend/src/packet_io_mgr.cpp:256]"
)
SAME_ELECTION_ID = (
    "the primary arbitrating again with the election id it has: p4sim answers (OK), PI "
    "answers nothing [silent; spec 5 Client Arbitration; "
    f"{PI}server/pi_server.cpp:245]"
)
UNKNOWN_DIGEST_ACK = (
    "a DigestListAck naming a digest the P4Info does not have: p4sim answers a StreamError "
    "(INVALID_ARGUMENT), PI ignores it [PI; spec 16.3 DigestListAck, 16.4 Error Reporting "
    f"(DigestListAckError); {PI}frontend/src/device_mgr.cpp:2169]"
)
SAVED_CONFIG_DIGESTS = (
    "while a config VERIFY_AND_SAVE saved waits for COMMIT, the running pipeline's digests: "
    "p4sim sends them as the running pipeline's DigestEntry configures them, PI sends none "
    "(VERIFY_AND_SAVE already moves its digest manager to the saved P4Info, where no digest "
    "is configured, and it drops what the running pipeline learns) [PI; spec 14 "
    "SetForwardingPipelineConfig: VERIFY_AND_SAVE does not modify the forwarding state; "
    f"{PI}frontend/src/device_mgr.cpp:596, digest_mgr.cpp:471]"
)
HELD_LONGER = (
    "digest data a step repeats: p4sim sends it again once its list is acknowledged or "
    "ack_timeout_ns old, PI holds it longer: its ack task keeps a reference to the stream's "
    "request, which the next message read overwrites (an ack right after another can be "
    "lost), and its cache sweep runs every ack_timeout_ns but at least every 100 ms, "
    "dropping a list on its second visit [PI; spec 9.9 DigestEntry: the server must delete "
    "a list's cache entries when they are at least ack_timeout_ns old or when a matching "
    f"DigestListAck is received; {PI}frontend/src/digest_mgr.cpp:947, server/pi_server.cpp:496, "
    "frontend/src/digest_mgr.cpp:727, digest_mgr.cpp:389]"
)
SAME_DATA_NOTES = (SAME_DATA_BEFORE_ACK, SAME_DATA_AFTER_ACK)
SAVED_CONFIG_DIGEST_ENTRY = (
    "while a config VERIFY_AND_SAVE saved waits for COMMIT, a DigestEntry written then: "
    "p4sim configures the saved config's digest (spec: later Writes refer to the new "
    "config), so the running pipeline sends none; PI also configures its target's learning, "
    "which the running pipeline uses, and sends them [PI; spec 14 SetForwardingPipelineConfig "
    f"(VERIFY_AND_SAVE); {PI}frontend/src/digest_mgr.cpp:877]"
)
MALFORMED_NOTES = ("unknown metadata id", "metadata missing", "metadata twice",
                   "metadata too wide")  # fmt: skip


def explain_stream(
    step: Step,
    ours: list[str],
    theirs: list[str],
    saved: bool = False,
    ack_timeout_ns: int | None = None,
) -> str | None:
    """The explanation of a difference in what the primary's stream brought, or None.
    `saved`: a config VERIFY_AND_SAVE saved waits for COMMIT on both; `ack_timeout_ns`:
    p4sim's DigestEntry's at the step (None: no digest configured)."""
    if saved and theirs == [line for line in ours if not line.startswith("digest ")]:
        return SAVED_CONFIG_DIGESTS
    if saved and ours == [line for line in theirs if not line.startswith("digest ")]:
        return SAVED_CONFIG_DIGEST_ENTRY
    if step.rpc == "PacketOut" and step.note in MALFORMED_NOTES:
        refused = [line for line in ours if line.startswith("error ")]
        if (
            refused
            and [line for line in ours if line not in refused]
            == [line for line in theirs if line.startswith(("digest ", "packet "))][
                : len(ours) - len(refused)
            ]
        ):
            return MALFORMED_PACKET_OUT
    if (
        step.rpc == "PacketOut"
        and step.note in SAME_DATA_NOTES
        and may_send_again(step.note, ack_timeout_ns)
        and sent_again(ours, theirs)
    ):
        return HELD_LONGER
    if step.rpc == "Arbitrate" and ours == ["arbitration OK"] and theirs == []:
        return SAME_ELECTION_ID
    if (
        step.rpc == "DigestListAck"
        and ours == ["error INVALID_ARGUMENT on digest_list_ack"]
        and theirs == []
    ):
        return UNKNOWN_DIGEST_ACK
    return None


# The two copies of SAME_DATA_BEFORE_ACK go out back to back, so only an ack
# timeout this short can have passed between them (rtgen writes 1 ms or 10 s).
RESEND_WINDOW_NS = 100_000_000


def may_send_again(note: str, ack_timeout_ns: int | None) -> bool:
    """Whether the spec lets a server send the step's digest data again: after the list's
    DigestListAck, or once the data is ack_timeout_ns old (spec 9.9 DigestEntry)."""
    if note == SAME_DATA_AFTER_ACK:
        return True
    return ack_timeout_ns is not None and ack_timeout_ns < RESEND_WINDOW_NS


def sent_again(ours: list[str], theirs: list[str]) -> bool:
    """Whether the two streams differ only in p4sim sending the step's one digest data more
    often than PI (never less, and nothing else)."""
    data = [line for line in ours if line.startswith("digest ")]
    held = [line for line in theirs if line.startswith("digest ")]
    return (
        len(set(data)) == 1
        and len(held) < len(data)
        and set(held) <= set(data)
        and [line for line in ours if line not in data]
        == [line for line in theirs if line not in held]
    )


COMPARED = ("code", "updates", "entities", "config", "stream")  # messages are shown, not compared


def differences(step: Step, ours: dict, theirs: dict) -> list[str]:
    """What differs between p4sim's outcome and BMv2's, in words."""
    if all(ours.get(k) == theirs.get(k) for k in COMPARED):
        return []
    lines = []
    if ours["code"] != theirs["code"]:
        lines.append(
            f"status p4sim {ours['code']} ({ours.get('message', '')[:150]}), "
            f"BMv2 {theirs['code']} ({theirs.get('message', '')[:150]})"
        )
    mine, pi = ours.get("updates") or [], theirs.get("updates") or []
    for i, (a, b) in enumerate(zip(mine, pi)):
        if a != b:
            lines.append(
                f"update {i}: p4sim {a} ({ours['messages'][i][:150]}), "
                f"BMv2 {b} ({theirs['messages'][i][:150]}) on "
                + text_format.MessageToString(step.request.updates[i], as_one_line=True)[:400]
            )
    if len(mine) != len(pi):
        lines.append(f"updates p4sim {mine}, BMv2 {pi}")
    a, b = ours.get("entities", []), theirs.get("entities", [])
    lines += [f"only p4sim reads {e}" for e in only_in(a, b)]
    lines += [f"only BMv2 reads {e}" for e in only_in(b, a)]
    if ours.get("config") != theirs.get("config"):
        lines.append(f"config p4sim {ours.get('config')}, BMv2 {theirs.get('config')}")
    if ours.get("stream") != theirs.get("stream"):
        lines.append(f"stream p4sim {ours.get('stream')}, BMv2 {theirs.get('stream')}")
    return lines or [f"p4sim {ours}, BMv2 {theirs}"]


LEAKED_GROUP = (
    "an ActionProfileGroup INSERT that PI refuses for its members (missing, weights) leaves "
    "the group behind (PI makes the group before it checks the members), so the states part "
    "here [PI; spec 12 Write RPC: a failed update changes nothing; "
    f"{PI}frontend/src/action_prof_mgr.cpp:437]"
)
#: PI's refusals of a group INSERT made before it makes the group (action_prof_mgr.cpp)
REFUSED_BEFORE_MAKING = ("max_size", "Duplicate group id", "mix action selector", "Invalid P4 id")


def leaked_group(step: Step, theirs: dict) -> int | None:
    """The first update of this Write that is a group INSERT PI refused after making the
    group (LEAKED_GROUP), or None."""
    if step.rpc != "Write":
        return None
    for i, (update, code, message) in enumerate(
        zip(step.request.updates, theirs.get("updates", []), theirs.get("messages", []))
    ):
        if (
            update.type == update.INSERT
            and update.entity.HasField("action_profile_group")
            and code not in ("OK", "UNKNOWN")
            and not any(piece in message for piece in REFUSED_BEFORE_MAKING)
        ):
            return i
    return None


def differing_updates(ours: dict, theirs: dict) -> list[int]:
    """The updates of a Write whose codes differ (every update when only one side failed
    some)."""
    mine, pi = ours.get("updates") or [], theirs.get("updates") or []
    if mine and pi:
        return [i for i, (a, b) in enumerate(zip(mine, pi)) if a != b]
    failed = mine or pi
    return [i for i, code in enumerate(failed) if code != "OK"]


RECONCILE_DROPS_PRE = (
    "PI's RECONCILE_AND_COMMIT keeps table entries, profiles, counters and meters but drops "
    "the multicast groups, clone sessions, default entries and DigestEntry configs set "
    "(its digest manager starts afresh with the P4Info), so the states part here [PI; spec "
    f"14 SetForwardingPipelineConfig RPC; {PI}frontend/src/device_mgr.cpp:3039, "
    "device_mgr.cpp:459, digest_mgr.cpp:786]"
)


def wrote_what_reconcile_drops(step: Step, ours: dict, theirs: dict) -> bool:
    """Whether both applied an update of this Write that PI's RECONCILE_AND_COMMIT loses: a
    PacketReplicationEngineEntry, a default entry or a DigestEntry (RECONCILE_DROPS_PRE)."""
    if step.rpc != "Write":
        return False
    n = len(step.request.updates)
    mine = ours.get("updates") or ["OK" if ours["code"] == "OK" else ""] * n
    pi = theirs.get("updates") or ["OK" if theirs["code"] == "OK" else ""] * n
    return any(
        a == b == "OK"
        and (
            u.entity.HasField("packet_replication_engine_entry")
            or u.entity.HasField("digest_entry")
            or (u.entity.HasField("table_entry") and u.entity.table_entry.is_default_action)
        )
        for a, b, u in zip(mine, pi, step.request.updates)
    )
