"""Digests: which digest() calls reach the controller (as DigestList on the stream)."""

from __future__ import annotations

import grpc
from p4.v1 import p4data_pb2, p4runtime_pb2

from p4sim import model
from p4sim.p4runtime import codec
from p4sim.p4runtime.errors import (
    StatusError,
    invalid,
    not_found,
)
from p4sim.p4runtime.index import PipelineIndex

Update = p4runtime_pb2.Update


def write_digest(index: PipelineIndex, update_type: int, msg: p4runtime_pb2.DigestEntry):
    if not msg.digest_id:
        raise invalid("digest_id 0: a write needs one digest")
    if msg.digest_id not in index.digests:
        raise not_found(f"no digest with id {msg.digest_id} in the P4Info")
    name = index.digests[msg.digest_id].name
    exists = msg.digest_id in index.digest_configs
    if update_type == Update.INSERT and exists:
        raise StatusError(grpc.StatusCode.ALREADY_EXISTS, f"digest {name} is configured")
    if update_type in (Update.MODIFY, Update.DELETE) and not exists:
        raise not_found(f"digest {name} is not configured")
    if update_type == Update.DELETE:
        del index.digest_configs[msg.digest_id]
        return
    config = msg.config
    for field_name, value in (
        ("max_timeout_ns", config.max_timeout_ns),
        ("max_list_size", config.max_list_size),
        ("ack_timeout_ns", config.ack_timeout_ns),
    ):
        if value < 0:
            raise invalid(f"digest {name}: {field_name} {value} is negative; it takes 0 or more")
    if update_type == Update.MODIFY:
        # the same object: what digest_lists.py gathers and holds back for it stays
        index.digest_configs[msg.digest_id].CopyFrom(config)
    else:
        index.digest_configs[msg.digest_id] = p4runtime_pb2.DigestEntry.Config()
        index.digest_configs[msg.digest_id].CopyFrom(config)


def read_digests(index: PipelineIndex, msg: p4runtime_pb2.DigestEntry):
    if msg.digest_id and msg.digest_id not in index.digests:
        raise not_found(f"no digest with id {msg.digest_id} in the P4Info")
    if msg.digest_id and msg.digest_id not in index.digest_configs:
        # one digest named: NOT_FOUND when it is not configured, as for one multicast group
        # or clone session (replication.py); PI answers so too (digest_mgr.cpp:908)
        raise not_found(f"digest {index.digests[msg.digest_id].name} is not configured")
    ids = [msg.digest_id] if msg.digest_id else sorted(index.digest_configs)
    configs = [(i, index.digest_configs.get(i)) for i in ids]
    return [p4runtime_pb2.DigestEntry(digest_id=i, config=c) for i, c in configs if c is not None]


def digest_data(definition: model.DigestDef, values: list[int]) -> p4data_pb2.P4Data:
    """One digest() record as the P4Data struct (or tuple) P4Runtime sends in a DigestList."""
    data = p4data_pb2.P4Data()
    members = data.tuple if definition.is_tuple else data.struct
    members.SetInParent()
    for fld, value in zip(definition.fields, values):
        members.members.add(bitstring=codec.encode(value & ((1 << fld.bitwidth) - 1)))
    return data
