"""Action profile members and groups (spec "ActionProfileMember", "ActionProfileGroup")."""

from __future__ import annotations

from p4.v1 import p4runtime_pb2

from p4sim import model
from p4sim.p4runtime.errors import (
    invalid,
)
from p4sim.p4runtime.index import PipelineIndex
from p4sim.p4runtime.table_entries import decode_action, encode_action, no_watch

Update = p4runtime_pb2.Update


def write_profile_member(index, device, update_type, msg: p4runtime_pb2.ActionProfileMember):
    definition = index.profile(msg.action_profile_id)
    state = device.action_profiles[definition.name]
    if msg.member_id == 0:
        raise invalid("member_id must be non-zero")
    if update_type == Update.DELETE:  # only the ids count
        state.delete_member(msg.member_id)
        return
    tables = [index.tables[index.table_ids[t]] for t in definition.tables if t in index.table_ids]
    table = next((t for t in tables if msg.action.action_id in t.actions), None)
    if table is None:  # PI: "Invalid action for action profile"
        what = (
            index.actions[msg.action.action_id].definition.name
            if (msg.action.action_id in index.actions)
            else f"id {msg.action.action_id}"
        )
        raise invalid(
            f"action {what} is not an action of action profile {definition.name}'s tables"
        )
    action, args = decode_action(
        index, table, p4runtime_pb2.TableAction(action=msg.action), False, member=True
    )
    member = model.ProfileMember(msg.member_id, action, args)
    if update_type == Update.INSERT:
        state.insert_member(member)
    else:
        state.modify_member(member)


def write_profile_group(index, device, update_type, msg: p4runtime_pb2.ActionProfileGroup):
    definition = index.profile(msg.action_profile_id)
    state = device.action_profiles[definition.name]
    if msg.group_id == 0:
        raise invalid("group_id must be non-zero")
    if update_type == Update.DELETE:
        state.delete_group(msg.group_id)
        return
    members: dict[int, int] = {}
    for m in msg.members:
        no_watch(m, f"group {msg.group_id}, member {m.member_id}")
        if m.member_id in members:  # PI: "use weights instead"
            raise invalid(
                f"group {msg.group_id}: member {m.member_id} is listed twice (give it a weight)"
            )
        members[m.member_id] = m.weight
    group = model.ProfileGroup(msg.group_id, members, msg.max_size)
    if update_type == Update.INSERT:
        state.insert_group(group)
    else:
        state.modify_group(group)


def profiles_of(index: PipelineIndex, profile_id: int) -> list[tuple[int, model.ActionProfileDef]]:
    if profile_id:
        return [(profile_id, index.profile(profile_id))]
    return list(index.profiles.items())


def read_profile_members(index, device, msg: p4runtime_pb2.ActionProfileMember):
    for profile_id, definition in profiles_of(index, msg.action_profile_id):
        for m in list(device.action_profiles[definition.name].members()):
            if msg.member_id and m.member_id != msg.member_id:
                continue
            out = p4runtime_pb2.ActionProfileMember(
                action_profile_id=profile_id, member_id=m.member_id
            )
            encode_action(index, m.action, m.args, out)
            yield out


def read_profile_groups(index, device, msg: p4runtime_pb2.ActionProfileGroup):
    for profile_id, definition in profiles_of(index, msg.action_profile_id):
        for g in list(device.action_profiles[definition.name].groups()):
            if msg.group_id and g.group_id != msg.group_id:
                continue
            out = p4runtime_pb2.ActionProfileGroup(
                action_profile_id=profile_id, group_id=g.group_id, max_size=g.max_size
            )
            for member_id, weight in g.members.items():
                out.members.add(member_id=member_id, weight=weight)
            yield out
