"""Action profiles and action selectors (v1model's `implementation` of a table), as BMv2 runs them.

An indirect table's entry holds a member id or a group id instead of an action. A member is
an action with its arguments; a group is a set of members, of which a selector picks one per
packet: BMv2 (`ActionProfile::choose_from_group`, `GroupMgr::get_from_hash`) hashes the
selector keys with the selector's algorithm (the keys packed as for `hash()`, fields of
invalid headers left out), truncates the hash to 32 bits and takes member number
`hash % size` of the group, the group's members ordered by their BMv2 member handle.

Handles are what makes the choice reproducible against BMv2, so they are allocated as BMv2
allocates them (the lowest free handle of the profile) and as p4lang/PI's P4Runtime server
asks for them (`proto/frontend/src/action_prof_mgr.cpp`): one handle per member when it is
inserted; a member of weight w in a group gets w handles (PI makes w-1 copies of the member
when a group first needs them and deletes the copies no group needs any more), so it is w
times as likely to be chosen. Group handles do not influence the choice and are not kept.
"""

from __future__ import annotations

from p4sim.model import (
    ActionProfileDef,
    EntryExists,
    EntryNotFound,
    InUse,
    InvalidEntry,
    ProfileGroup,
    ProfileMember,
    TableFull,
)

HASH_MASK = 0xFFFFFFFF  # BMv2's hash_t is a 32-bit unsigned int


class Member:
    __slots__ = ("argv", "handles", "info", "refs")

    def __init__(self, info: ProfileMember, argv: list[int], handle: int):
        self.info = info
        self.argv = argv
        self.handles = [handle]  # handles[0] is the member itself, the rest weight copies
        self.refs = 0  # table entries naming this member directly


class Group:
    __slots__ = ("action_set", "info", "refs", "slots")

    def __init__(self, info: ProfileGroup):
        self.info = info
        self.action_set = None  # [(action, args, weight)] of a one-shot group
        self.refs = 0  # table entries naming this group
        self.slots: list[tuple[int, Member]] = []  # (handle, member) sorted by handle


class ActionProfile:
    """Runtime state of one action profile or selector; implements
    `p4sim.model.ActionProfileState`. `tables` are the engine tables it implements (for
    validating a member's action against their action lists)."""

    def __init__(self, definition: ActionProfileDef, tables: list):
        self.definition = definition
        self.tables = tables
        self._members: dict[int, Member] = {}
        self._groups: dict[int, Group] = {}
        self._oneshots: set[Group] = set()
        # called after a change entries may see (a member's action, a group's members, a
        # one-shot group released): the native engine mirrors the profile into C
        self.listeners: list = []
        self._used_handles: set[int] = set()
        self._next_free = 0  # every handle below it is in use

    # -- handles (BMv2's HandleMgr: lowest free first) --------------------------------
    def _take_handle(self) -> int:
        h = self._next_free
        self._used_handles.add(h)
        while self._next_free in self._used_handles:
            self._next_free += 1
        return h

    def _release_handle(self, h: int) -> None:
        self._used_handles.discard(h)
        self._next_free = min(self._next_free, h)

    # -- members ----------------------------------------------------------------------
    def _argv(self, member: ProfileMember) -> list[int]:
        if not self.tables:
            raise InvalidEntry(f"action profile {self.definition.name} implements no table")
        last = None
        for table in self.tables:
            if member.action in table.refs:
                return table.check_member_action(member.action, member.args)
            last = table
        allowed = ", ".join(dict.fromkeys(a for t in self.tables for a in t.refs))
        raise InvalidEntry(
            f"action {member.action} is not an action of action profile "
            f"{self.definition.name} (the actions of {last.definition.name}: {allowed})"
        )

    def insert_member(self, member: ProfileMember) -> None:
        self._mode(oneshot=False)
        if member.member_id in self._members:
            raise EntryExists(
                f"action profile {self.definition.name} already has member {member.member_id}"
            )
        argv = self._argv(member)
        if len(self._used_handles) >= self.definition.size:
            raise TableFull(
                f"action profile {self.definition.name} is full "
                f"({self.definition.size} members, weight copies included)"
            )
        self._members[member.member_id] = Member(member, argv, self._take_handle())

    def modify_member(self, member: ProfileMember) -> None:
        m = self.member(member.member_id)
        m.argv = self._argv(member)
        m.info = member
        self._changed()

    def delete_member(self, member_id: int) -> None:
        m = self.member(member_id)
        users = [g.info.group_id for g in self._groups.values() if member_id in g.info.members]
        if users or m.refs:
            what = (
                f"group(s) {', '.join(map(str, users))}" if users else f"{m.refs} table entry(ies)"
            )
            raise InUse(
                f"member {member_id} of action profile {self.definition.name} is still used by {what}"
            )
        for h in m.handles:
            self._release_handle(h)
        del self._members[member_id]

    def member(self, member_id: int) -> Member:
        m = self._members.get(member_id)
        if m is None:
            raise EntryNotFound(f"action profile {self.definition.name} has no member {member_id}")
        return m

    def has_member(self, member_id: int) -> bool:
        return member_id in self._members

    def has_group(self, group_id: int) -> bool:
        return group_id in self._groups

    def members(self) -> list[ProfileMember]:
        return [m.info for m in self._members.values()]

    # -- groups -----------------------------------------------------------------------
    def _check_group(self, group: ProfileGroup, old: ProfileGroup | None) -> None:
        d = self.definition
        if not d.with_selector:
            raise InvalidEntry(
                f"action profile {d.name} has no selector: it has members but no groups"
            )
        if group.max_size < 0:
            raise InvalidEntry(f"group max_size {group.max_size} is negative")
        if d.max_group_size and group.max_size > d.max_group_size:
            raise InvalidEntry(
                f"group max_size {group.max_size} exceeds the max_group_size "
                f"{d.max_group_size} of action profile {d.name}"
            )
        if old is not None and group.max_size and group.max_size != old.max_size:
            raise InvalidEntry(
                f"group {group.group_id}: max_size cannot change after the group is created "
                f"({old.max_size})"
            )
        self._check_weights(group.members.values(), f"group {group.group_id}")
        limit = (old.max_size if old is not None else group.max_size) or d.max_group_size
        size, what = self._size(group.members.values())
        if limit and size > limit:
            raise TableFull(
                f"group {group.group_id}: {what} ({size}) exceeds its maximum size {limit}"
            )
        for member_id in group.members:
            self.member(member_id)
        copies = 0
        for member_id, weight in group.members.items():
            have = len(self.member(member_id).handles)
            copies += max(0, weight - have)
        if len(self._used_handles) + copies > d.size:
            raise TableFull(
                f"action profile {d.name} is full ({d.size} members, weight copies included)"
            )

    def _check_weights(self, weights, what: str) -> None:
        d = self.definition
        for w in weights:
            if w <= 0:
                raise InvalidEntry(f"{what}: weight {w} must be a positive integer")
            if d.size_semantics == "sum_of_members" and 0 < d.max_member_weight < w:
                raise InvalidEntry(
                    f"{what}: weight {w} exceeds the max_member_weight {d.max_member_weight} "
                    f"of action profile {d.name}"
                )

    def _size(self, weights) -> tuple[int, str]:
        """A group's size as the selector counts it (P4Info selector_size_semantics)."""
        weights = list(weights)
        if self.definition.size_semantics == "sum_of_members":
            return len(weights), "its number of members"
        return sum(weights), "the sum of its member weights"

    def _set_members(self, g: Group, members: dict[int, int]) -> None:
        g.info.members = dict(members)
        for member_id, weight in sorted(members.items()):  # PI walks a map by member id
            m = self._members[member_id]
            while len(m.handles) < weight:
                m.handles.append(self._take_handle())
        self._purge_copies()
        g.slots = sorted(
            (h, m)
            for member_id, weight in members.items()
            for m in (self._members[member_id],)
            for h in m.handles[:weight]
        )
        for other in self._groups.values():  # copies purged may be in no other group
            if other is not g:
                other.slots = [(h, m) for h, m in other.slots if h in self._used_handles]

    def _purge_copies(self) -> None:
        need: dict[int, int] = {}
        for g in self._groups.values():
            for member_id, weight in g.info.members.items():
                need[member_id] = max(need.get(member_id, 1), weight)
        for member_id, m in self._members.items():
            keep = need.get(member_id, 1)
            while len(m.handles) > keep:
                self._release_handle(m.handles.pop())

    def insert_group(self, group: ProfileGroup) -> None:
        self._mode(oneshot=False)
        if group.group_id in self._groups:
            raise EntryExists(
                f"action profile {self.definition.name} already has group {group.group_id}"
            )
        self._check_group(group, None)
        g = Group(ProfileGroup(group.group_id, {}, group.max_size))
        self._groups[group.group_id] = g
        self._set_members(g, group.members)

    def modify_group(self, group: ProfileGroup) -> None:
        g = self.group(group.group_id)
        self._check_group(group, g.info)
        self._set_members(g, group.members)
        self._changed()

    def delete_group(self, group_id: int) -> None:
        g = self.group(group_id)
        if g.refs:
            raise InUse(
                f"group {group_id} of action profile {self.definition.name} is still used "
                f"by {g.refs} table entry(ies)"
            )
        del self._groups[group_id]
        self._purge_copies()
        self._changed()

    def group(self, group_id: int) -> Group:
        g = self._groups.get(group_id)
        if g is None:
            raise EntryNotFound(f"action profile {self.definition.name} has no group {group_id}")
        return g

    def groups(self) -> list[ProfileGroup]:
        return [g.info for g in self._groups.values()]

    # -- one-shot action sets (a group made for one table entry) --------------------
    def _mode(self, oneshot: bool) -> None:
        """PI keeps a profile programmed either with members and groups or with one-shot
        action sets; mixing them while the other kind exists is INVALID_ARGUMENT."""
        other = (self._members or self._groups) if oneshot else self._oneshots
        if other:
            raise InvalidEntry(
                f"action profile {self.definition.name} is programmed with "
                f"{'members and groups' if oneshot else 'one-shot action sets'}: the two "
                f"programming modes cannot be mixed"
            )

    def oneshot_group(self, actions: list[tuple[str, dict[str, int], int]], table) -> Group:
        """A group of fresh members for one entry's action set: each action gets `weight`
        handles, in the order given (as PI creates them)."""
        d = self.definition
        if not d.with_selector:
            raise InvalidEntry(f"action profile {d.name} has no selector: no action sets")
        self._mode(oneshot=True)
        if not actions:
            raise InvalidEntry("an empty action set (no action_profile_actions)")
        self._check_weights((w for _, _, w in actions), "action set")
        checked = [
            (ProfileMember(0, action, dict(args)), table.check_member_action(action, args), w)
            for action, args, w in actions
        ]
        size, what = self._size(w for _, _, w in checked)
        if d.max_group_size and size > d.max_group_size:  # spec: INVALID_ARGUMENT here
            raise InvalidEntry(
                f"action set: {what} ({size}) exceeds the max_group_size "
                f"{d.max_group_size} of action profile {d.name}"
            )
        total = sum(w for _, _, w in checked)
        if len(self._used_handles) + total > d.size:
            raise TableFull(f"action profile {d.name} is full ({d.size} members)")
        g = Group(ProfileGroup(0, {}))
        for info, argv, weight in checked:
            for _ in range(weight):
                h = self._take_handle()
                g.slots.append((h, Member(info, argv, h)))
        g.slots.sort(key=lambda s: s[0])
        g.action_set = actions
        self._oneshots.add(g)
        return g

    def release_oneshot(self, g: Group) -> None:
        for h, _ in g.slots:
            self._release_handle(h)
        self._oneshots.discard(g)
        self._changed()

    def _changed(self) -> None:
        for listener in self.listeners:
            listener()

    def clear(self) -> None:
        self._members.clear()
        self._groups.clear()
        self._oneshots.clear()
        self._used_handles.clear()
        self._next_free = 0

    # -- data path --------------------------------------------------------------------
    @staticmethod
    def choose(g: Group, h: int) -> Member | None:
        """The member BMv2 picks from group `g` for hash `h`; None for an empty group."""
        slots = g.slots
        if not slots:
            return None
        return slots[(h & HASH_MASK) % len(slots)][1]
