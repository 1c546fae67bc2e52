"""The packet replication engine: multicast groups and clone sessions."""

from __future__ import annotations

import grpc
from p4.v1 import p4runtime_pb2

from p4sim import model
from p4sim.p4runtime import codec
from p4sim.p4runtime.errors import (
    StatusError,
    invalid,
    not_found,
    out_of_range,
    unimplemented,
)

Update = p4runtime_pb2.Update


V1MODEL_PORT_BITS = 9  # standard_metadata's egress_spec/egress_port are bit<9>


def _replicas(replicas, what: str, cpu_port: int | None) -> list[model.Replica]:
    out, seen = [], set()
    for r in replicas:
        kind = r.WhichOneof("port_kind")
        if kind == "port":
            port = codec.decode(r.port, 32, f"{what}: replica port")
        else:
            port = r.egress_port
        if port >> V1MODEL_PORT_BITS and port != cpu_port:
            raise invalid(
                f"{what}: replica port {port} cannot exist: v1model ports are "
                f"{V1MODEL_PORT_BITS} bits (0..511)"
                + (f"; the CPU port is {cpu_port}" if cpu_port is not None else "")
            )
        if r.backup_replicas:
            raise unimplemented(f"{what}: backup_replicas are not supported by p4sim")
        if (port, r.instance) in seen:
            raise invalid(f"{what}: replica (port {port}, instance {r.instance}) given twice")
        seen.add((port, r.instance))
        out.append(model.Replica(egress_port=port, instance=r.instance))
    return out


def write_pre(
    device: model.Device, update_type: int, msg: p4runtime_pb2.PacketReplicationEngineEntry
) -> None:
    pre = device.pre
    kind = msg.WhichOneof("type")
    if kind == "multicast_group_entry":
        group = msg.multicast_group_entry
        gid = group.multicast_group_id
        what = f"multicast group {gid}"
        if gid == 0:
            raise invalid("multicast_group_id 0 is not a group (v1model: 0 = no multicast)")
        if gid > model.MAX_PRE_ID:
            raise out_of_range(
                f"multicast_group_id {gid} is out of range 1..{model.MAX_PRE_ID} (as BMv2's "
                f"P4Runtime server: the ids above are reserved for clone sessions)"
            )
        exists = gid in pre.multicast_groups
        if update_type == Update.INSERT:
            if exists:
                raise StatusError(grpc.StatusCode.ALREADY_EXISTS, f"{what} already exists")
            pre.multicast_groups[gid] = _replicas(group.replicas, what, device.cpu_port)
        elif update_type == Update.MODIFY:
            if not exists:
                raise not_found(f"{what} does not exist")
            pre.multicast_groups[gid] = _replicas(group.replicas, what, device.cpu_port)
        elif update_type == Update.DELETE:
            if not exists:
                raise not_found(f"{what} does not exist")
            del pre.multicast_groups[gid]
        else:
            raise invalid("update type must be INSERT, MODIFY or DELETE")
    elif kind == "clone_session_entry":
        session = msg.clone_session_entry
        sid = session.session_id
        what = f"clone session {sid}"
        if not 1 <= sid <= model.MAX_PRE_ID:
            raise invalid(
                f"clone session id {sid} is out of range 1..{model.MAX_PRE_ID} "
                f"(BMv2's mirroring sessions; 0 is reserved)"
            )
        exists = sid in pre.clone_sessions
        if update_type == Update.DELETE:
            if not exists:
                raise not_found(f"{what} does not exist")
            del pre.clone_sessions[sid]
            return
        if update_type == Update.INSERT and exists:
            raise StatusError(grpc.StatusCode.ALREADY_EXISTS, f"{what} already exists")
        if update_type == Update.MODIFY and not exists:
            raise not_found(f"{what} does not exist")
        if update_type not in (Update.INSERT, Update.MODIFY):
            raise invalid("update type must be INSERT, MODIFY or DELETE")
        if session.packet_length_bytes < 0:  # int32 in the proto; a length is not negative
            raise invalid(
                f"{what}: packet_length_bytes {session.packet_length_bytes} is negative "
                "(0: no truncation, N > 0: clones cut to N bytes)"
            )
        pre.clone_sessions[sid] = model.CloneSession(
            replicas=_replicas(session.replicas, what, device.cpu_port),
            class_of_service=session.class_of_service,
            packet_length_bytes=session.packet_length_bytes,
        )
    else:
        raise invalid(
            "PacketReplicationEngineEntry needs a multicast_group_entry or a " "clone_session_entry"
        )


def _encode_replicas(replicas: list[model.Replica], out) -> None:
    for r in replicas:
        out.add(egress_port=r.egress_port, instance=r.instance)


def read_pre(device: model.Device, msg: p4runtime_pb2.PacketReplicationEngineEntry):
    pre = device.pre
    kind = msg.WhichOneof("type")
    out = []
    if kind == "multicast_group_entry":
        gid = msg.multicast_group_entry.multicast_group_id
        if gid and gid not in pre.multicast_groups:
            raise not_found(f"multicast group {gid} does not exist")
        groups = [
            (g, pre.multicast_groups[g]) for g in ([gid] if gid else sorted(pre.multicast_groups))
        ]
        for g, replicas in groups:
            item = p4runtime_pb2.PacketReplicationEngineEntry()
            item.multicast_group_entry.multicast_group_id = g
            _encode_replicas(replicas, item.multicast_group_entry.replicas)
            out.append(item)
    elif kind == "clone_session_entry":
        sid = msg.clone_session_entry.session_id
        if sid and sid not in pre.clone_sessions:
            raise not_found(f"clone session {sid} does not exist")
        sessions = [
            (s, pre.clone_sessions[s]) for s in ([sid] if sid else sorted(pre.clone_sessions))
        ]
        for s, session in sessions:
            item = p4runtime_pb2.PacketReplicationEngineEntry()
            entry = item.clone_session_entry
            entry.session_id = s
            entry.class_of_service = session.class_of_service
            entry.packet_length_bytes = session.packet_length_bytes
            _encode_replicas(session.replicas, entry.replicas)
            out.append(item)
    else:
        raise invalid(
            "PacketReplicationEngineEntry read needs a multicast_group_entry or a "
            "clone_session_entry"
        )
    return out
