"""Match-action tables: entry validation, the match kinds, and lookup.

Lookup follows P4Runtime's rules (and BMv2's): in a table with a ternary, range or optional
key the matching entry with the highest priority wins (the first inserted among equals); in a
table whose only non-exact key is lpm the longest prefix wins. The front end gives a program's
own entries the priorities BMv2 matches them by (p4sim.frontend.program.bmv2_entries). Entries
are indexed by the values of their exact keys, so the splitter-style exact tables are one dict
lookup and mixed tables scan only the entries that share the exact part.
"""

from __future__ import annotations

from p4sim.model import (
    ConstViolation,
    EntryExists,
    EntryNotFound,
    FieldMatch,
    InvalidEntry,
    TableDef,
    TableEntry,
    TableFull,
)


class _Record:
    """A table entry plus its compiled form."""

    __slots__ = (
        "action_fn",
        "argv",
        "checks",
        "entry",
        "exact",
        "key",
        "meter_state",
        "rank",
        "register_cell",
        "target",
    )

    def __init__(self, entry, exact, checks, rank, action_fn, argv, key):
        self.entry = entry
        self.exact = exact  # tuple of the exact-key values
        self.checks = checks  # [(key position, lo_or_value, hi_or_mask, is_range)]
        self.rank = rank  # larger wins
        self.action_fn = action_fn
        self.argv = argv
        self.key = key  # identity of the entry: canonical match + priority
        self.meter_state = None  # direct meter buckets of this entry
        self.register_cell = None  # TNA DirectRegister: this entry's value (None: initial)
        self.target = None  # indirect tables: the action profile member or group


class Table:
    """Runtime state of one table; implements `p4sim.model.TableState`."""

    def __init__(self, definition: TableDef, key_widths: list[int], actions: dict):
        self.definition = definition
        self.widths = key_widths
        self.actions = actions  # name -> ActionDef
        self.bound: dict = {}  # name -> compiled action fn(f, argv); filled by the compiler
        self.exact_pos = [i for i, k in enumerate(definition.keys) if k.match_kind == "exact"]
        self.other_pos = [i for i, k in enumerate(definition.keys) if k.match_kind != "exact"]
        self.by_priority = definition.needs_priority
        self.records: dict = {}  # key -> _Record
        self.index: dict = {}  # exact tuple -> list[_Record] sorted by rank
        self.const_records: list[_Record] = []
        self.refs = {r.name: r for r in definition.actions}
        # Tables whose only non-exact key is one lpm key (routing tables) get a per-prefix-
        # length hash index, rebuilt lazily after a change: lookup cost is the number of
        # distinct prefix lengths, not the number of entries.
        self.lpm_pos = (
            self.other_pos[0]
            if (len(self.other_pos) == 1 and definition.keys[self.other_pos[0]].match_kind == "lpm")
            else None
        )
        self._lpm_index: dict | None = None
        self._default_entry: TableEntry | None = None
        self._default_bound = None
        # `implementation =`: the engine's ActionProfile (set by the runtime); entries then
        # name a member, a group or a one-shot action set instead of an action.
        self.profile = None

    # -- validation -------------------------------------------------------------------
    def _check_action(self, action: str, args: dict, default: bool) -> list[int]:
        if action not in self.refs:
            allowed = ", ".join(self.refs)
            raise InvalidEntry(
                f"action {action} is not an action of table {self.definition.name} (allowed: {allowed})"
            )
        scope = self.refs[action].scope
        if default and scope == "TABLE_ONLY":
            raise InvalidEntry(
                f"action {action} is @tableonly in table {self.definition.name}: not allowed as default action"
            )
        if not default and scope == "DEFAULT_ONLY":
            raise InvalidEntry(
                f"action {action} is @defaultonly in table {self.definition.name}: not allowed in entries"
            )
        adef = self.actions[action]
        names = {p.name for p in adef.params}
        extra = set(args) - names
        if extra:
            raise InvalidEntry(f"action {action} has no parameter(s) {', '.join(sorted(extra))}")
        argv = []
        for p in adef.params:
            if p.name not in args:
                raise InvalidEntry(f"action {action}: missing parameter {p.name}")
            v = args[p.name]
            if not 0 <= v < (1 << p.bitwidth):
                raise InvalidEntry(
                    f"action {action}: value {v} of parameter {p.name} does not fit in {p.bitwidth} bits"
                )
            argv.append(v)
        return argv

    def check_member_action(self, action: str, args: dict) -> list[int]:
        """An action profile member's action, checked as an entry's action of this table."""
        return self._check_action(action, args, default=False)

    def _check_target(self, entry: TableEntry) -> None:
        """The entry of an indirect table names exactly one member, group or action set;
        that of a direct table an action."""
        d, p = self.definition, self.profile
        given = [
            what
            for what, v in (
                ("member", entry.member_id),
                ("group", entry.group_id),
                ("action set", entry.action_set),
            )
            if v is not None
        ]
        if p is None:
            if given:
                raise InvalidEntry(
                    f"table {d.name} has no action profile: an entry names an action, not a "
                    f"{given[0]}"
                )
            return
        if entry.action or len(given) != 1:
            raise InvalidEntry(
                f"table {d.name} is implemented by action profile {p.definition.name}: an "
                f"entry names one member, group or action set, not an action"
            )
        # an unknown member or group: NOT_FOUND (spec "Action Specification": "a member or
        # group id which has not been inserted ... NOT_FOUND"; PI says INVALID_ARGUMENT)
        if entry.member_id is not None:
            if not p.has_member(entry.member_id):
                raise EntryNotFound(
                    f"table {d.name}: action profile {p.definition.name} has no member "
                    f"{entry.member_id}"
                )
        elif not p.definition.with_selector:
            raise InvalidEntry(
                f"action profile {p.definition.name} of table {d.name} has no selector: "
                f"entries name members only"
            )
        elif entry.group_id is not None and not p.has_group(entry.group_id):
            raise EntryNotFound(
                f"table {d.name}: action profile {p.definition.name} has no group "
                f"{entry.group_id}"
            )

    def _attach(self, rec: _Record) -> None:
        """Point an indirect entry at its member or group (one-shot: a new group)."""
        e, p = rec.entry, self.profile
        if e.member_id is not None:
            rec.target = p.member(e.member_id)
        elif e.group_id is not None:
            rec.target = p.group(e.group_id)
        else:
            rec.target = p.oneshot_group(e.action_set, self)
        rec.target.refs += 1

    def _detach(self, rec: _Record) -> None:
        t = rec.target
        if t is None:
            return
        t.refs -= 1
        if getattr(t, "action_set", None) is not None:
            self.profile.release_oneshot(t)
        rec.target = None

    def _compile(self, entry: TableEntry, with_action: bool = True) -> _Record:
        d = self.definition
        names = {k.name for k in d.keys}
        unknown = set(entry.match) - names
        if unknown:
            raise InvalidEntry(
                f"table {d.name} has no key field(s) {', '.join(sorted(unknown))} (keys: {', '.join(names)})"
            )
        if self.by_priority:
            if entry.priority <= 0 and not entry.is_const:
                raise InvalidEntry(
                    f"table {d.name} has ternary/range/optional keys: entries need a priority > 0"
                )
        elif entry.priority != 0 and not entry.is_const:
            raise InvalidEntry(
                f"table {d.name} has no ternary/range/optional key: priority must be 0"
            )
        exact, checks, canon = [], [], []
        prefix = 0
        for i, k in enumerate(d.keys):
            w = self.widths[i]
            full = (1 << w) - 1
            fm = entry.match.get(k.name)
            if fm is not None and fm.kind != k.match_kind:
                raise InvalidEntry(
                    f"key {k.name} of table {d.name} is {k.match_kind}, got a {fm.kind} match"
                )
            if k.match_kind == "exact":
                if fm is None:
                    raise InvalidEntry(f"exact key {k.name} of table {d.name} cannot be omitted")
                self._fits(k.name, fm.value, w)
                exact.append(fm.value)
                canon.append(fm.value)
                continue
            if fm is None:
                canon.append(None)
                continue
            if k.match_kind in ("ternary", "optional") or k.match_kind == "lpm":
                if k.match_kind == "lpm":
                    plen = fm.prefix_len if fm.prefix_len is not None else w
                    if not 0 <= plen <= w:
                        raise InvalidEntry(
                            f"prefix length {plen} of key {k.name} is outside 0..{w}"
                        )
                    mask = (full << (w - plen)) & full
                    prefix = plen
                elif k.match_kind == "ternary":
                    mask = full if fm.mask is None else fm.mask
                    self._fits(k.name + " mask", mask, w)
                else:
                    mask = full
                self._fits(k.name, fm.value, w)
                if fm.value & ~mask:
                    raise InvalidEntry(
                        f"key {k.name}: value {fm.value:#x} has bits outside its mask/prefix {mask:#x}"
                    )
                if mask:
                    checks.append((i, fm.value, mask, False))
                canon.append((fm.value, mask))
            else:  # range
                lo = 0 if fm.low is None else fm.low
                hi = full if fm.high is None else fm.high
                self._fits(k.name + " low", lo, w)
                self._fits(k.name + " high", hi, w)
                if lo > hi:
                    raise InvalidEntry(f"range key {k.name}: low {lo} is greater than high {hi}")
                if (lo, hi) != (0, full):
                    checks.append((i, lo, hi, True))
                canon.append((lo, hi))
        argv = []
        if with_action:
            self._check_target(entry)
            if self.profile is None:
                argv = self._check_action(entry.action, entry.args, default=False)
        rank = entry.priority if self.by_priority else prefix
        key = (tuple(canon), entry.priority if self.by_priority else 0)
        return _Record(entry, tuple(exact), checks, rank, self.bound.get(entry.action), argv, key)

    @staticmethod
    def _fits(name: str, v: int, w: int) -> None:
        if not 0 <= v < (1 << w):
            raise InvalidEntry(f"value {v} of key {name} does not fit in {w} bits")

    # -- TableState -------------------------------------------------------------------
    def insert(self, entry: TableEntry) -> None:
        if self.definition.const_entries is not None and not entry.is_const:
            raise ConstViolation(
                f"table {self.definition.name} has const entries and cannot be changed"
            )
        rec = self._compile(entry)
        if rec.key in self.records:
            raise EntryExists(
                f"table {self.definition.name} already has an entry with this match key"
            )
        if len(self.records) >= self.definition.size:
            raise TableFull(
                f"table {self.definition.name} is full ({self.definition.size} entries)"
            )
        if self.profile is not None:
            self._attach(rec)
        self.records[rec.key] = rec
        self._lpm_index = None
        bucket = self.index.setdefault(rec.exact, [])
        bucket.append(rec)
        bucket.sort(key=lambda r: -r.rank)  # stable: equal ranks keep insertion order

    def _find_record(self, entry: TableEntry) -> _Record:
        # Only match and priority identify an entry: the action is not looked at.
        key = self._compile(entry, with_action=False).key
        rec = self.records.get(key)
        if rec is None:
            raise EntryNotFound(f"table {self.definition.name} has no entry with this match key")
        return rec

    def _refuse_const(self, rec: _Record, done: str) -> None:
        """An entry declared `const` (P4_16 1.2.4) is never changed or deleted."""
        if rec.entry.is_const:
            raise ConstViolation(
                f"table {self.definition.name}: this entry is declared const and cannot be {done}"
            )

    def modify(self, entry: TableEntry) -> None:
        if self.definition.const_entries is not None:
            raise ConstViolation(
                f"table {self.definition.name} has const entries and cannot be changed"
            )
        rec = self._find_record(entry)
        self._refuse_const(rec, "changed")
        self._check_target(entry)
        if self.profile is not None:
            new = _Record(entry, rec.exact, rec.checks, rec.rank, None, [], rec.key)
            self._attach(new)  # before letting go of the old target: it may fail
            self._detach(rec)
            rec.target = new.target
        argv = (
            []
            if self.profile is not None
            else self._check_action(entry.action, entry.args, default=False)
        )
        old = rec.entry
        entry.packets, entry.bytes = old.packets, old.bytes
        rec.entry = entry
        rec.argv = argv
        rec.action_fn = self.bound.get(entry.action)

    def delete(self, entry: TableEntry) -> None:
        if self.definition.const_entries is not None:
            raise ConstViolation(
                f"table {self.definition.name} has const entries and cannot be changed"
            )
        rec = self._find_record(entry)
        self._refuse_const(rec, "deleted")
        self._detach(rec)
        del self.records[rec.key]
        self._lpm_index = None
        bucket = self.index[rec.exact]
        bucket.remove(rec)
        if not bucket:
            del self.index[rec.exact]

    def find(self, match: dict[str, FieldMatch], priority: int) -> TableEntry | None:
        try:
            return self._find_record(TableEntry(match, "", {}, priority)).entry
        except (EntryNotFound, InvalidEntry):
            return None

    def entries(self) -> list[TableEntry]:
        return [r.entry for r in self.records.values()]

    def default_entry(self) -> TableEntry:
        return self._default_entry

    def set_default(self, action: str, args: dict[str, int], initial: bool = False) -> None:
        if self.definition.const_default_action and not initial:
            raise ConstViolation(f"table {self.definition.name} has a const default action")
        if self.profile is not None and not initial:
            raise InvalidEntry(
                f"table {self.definition.name} is implemented by an action profile: its "
                f"default action cannot be set (BMv2 runs no action on a miss)"
            )
        if initial and action == "NoAction" and action not in self.refs:
            argv = []  # the implicit default of a table without default_action (P4_16 spec)
        else:
            argv = self._check_action(action, args, default=True)
        self._default_entry = TableEntry({}, action, dict(args))
        self._default_bound = (self.bound.get(action), argv)

    def reset_default(self) -> None:
        d = self.definition
        self.set_default(d.default_action, d.default_args, initial=True)

    def clear(self) -> None:
        for key, rec in list(self.records.items()):
            if not rec.entry.is_const:
                self.delete(rec.entry)
        self.reset_default()

    def load_const_entries(self) -> None:
        # The front end gives each entry its priority and lists them in BMv2's order
        # (p4sim.frontend.program.bmv2_entries): among equal priorities the first wins.
        for ce in self.definition.const_entries or []:
            entry = TableEntry(ce.match, ce.action, dict(ce.args), ce.priority, is_const=True)
            rec = self._compile(entry)
            if rec.key in self.records:
                continue  # a later duplicate of an earlier const entry can never match
            self.records[rec.key] = rec
            self.index.setdefault(rec.exact, []).append(rec)
        self._lpm_index = None
        for bucket in self.index.values():
            bucket.sort(key=lambda r: -r.rank)

    def load_initial_entries(self) -> None:
        """Non-const `entries`: inserted as ordinary entries, in BMv2's order with the
        front end's priorities, as const entries are. One marked `const` (P4_16 1.2.4) stays
        put: the control plane may change its direct counter or meter only."""
        for ce in self.definition.initial_entries:
            entry = TableEntry(
                ce.match, ce.action, dict(ce.args), ce.priority, is_const=ce.is_const
            )
            if self._compile(entry).key not in self.records:
                self.insert(entry)

    def rebind(self) -> None:
        """Attach compiled actions (called once the compiler has built them)."""
        for rec in self.records.values():
            rec.action_fn = self.bound.get(rec.entry.action)
        if self._default_entry is not None:
            self._default_bound = (
                self.bound.get(self._default_entry.action),
                self._default_bound[1],
            )

    # -- data path --------------------------------------------------------------------
    def _build_lpm_index(self) -> dict:
        index: dict = {}
        for exact, bucket in self.index.items():
            levels: dict = {}
            for rec in bucket:  # sorted by prefix length, longest first
                mask = rec.checks[0][2] if rec.checks else 0
                value = rec.checks[0][1] if rec.checks else 0
                levels.setdefault(mask, {}).setdefault(value, rec)
            index[exact] = sorted(levels.items(), key=lambda kv: -kv[0].bit_count())
        self._lpm_index = index
        return index

    def lookup(self, keyvals: list):
        """The winning record for these key values, or None (miss)."""
        if self.lpm_pos is not None:
            index = self._lpm_index
            if index is None:
                index = self._build_lpm_index()
            levels = index.get(tuple(keyvals[i] for i in self.exact_pos) if self.exact_pos else ())
            if levels is None:
                return None
            x = keyvals[self.lpm_pos]
            for mask, entries in levels:
                rec = entries.get(x & mask)
                if rec is not None:
                    return rec
            return None
        if self.exact_pos:
            bucket = self.index.get(tuple(keyvals[i] for i in self.exact_pos))
            if bucket is None:
                return None
        else:
            bucket = self.index.get((), ())
        for rec in bucket:
            for i, a, b, is_range in rec.checks:
                x = keyvals[i]
                if is_range:
                    if not a <= x <= b:
                        break
                elif x & b != a:
                    break
            else:
                return rec
        return None
