"""Interop: p4sim's P4Runtime server driven by a third-party client, p4runtime-shell 0.0.6.

p4runtime-shell (p4lang) is what people poke BMv2 and Stratum with; it has its own
P4Runtime bindings (p4runtime 1.4.1, protobuf 3.20), so it lives in a venv of its own,
`build/p4rt-shell-venv`, made by `tools/setup_p4runtime_shell.sh` (idempotent, cached).

This file is both halves of the test:
- run by pytest (project venv): compile the programs with `p4sim compile`, start the
  `p4sim` console script on loopback with `--no-p4`, run this same file inside the shell's
  venv as the client, and check what it saw;
- run as a script (shell venv, stdlib + p4runtime_sh only): drive p4sim through
  p4runtime-shell's Python API and print every observation as one JSON document.

The client pushes `p4src/dc_splitter.p4` and exercises tables (exact, ternary with
priority, default entries), counters, multicast groups and clone sessions, then pushes
`p4sim/tests/p4/runtime_fwd.p4` (CPU port 64) for direct counters, PacketOut/PacketIn,
meters, digests and a backup client; a last shell connects without a config and finds the
P4Info and the entries. Expected values come from the P4Runtime spec, not from p4sim.

Run: .venv/bin/pytest -q p4sim/tests/test_runtime_interop.py
"""

from __future__ import annotations

import json
import queue
import sys
from pathlib import Path

# Only the standard library at module level: the client half runs in the shell's venv.

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DC_PROGRAM = ROOT / "p4src" / "dc_splitter.p4"
FWD_PROGRAM = HERE / "p4" / "runtime_fwd.p4"
SHELL_VENV = ROOT / "build" / "p4rt-shell-venv"
SETUP_SCRIPT = ROOT / "tools" / "setup_p4runtime_shell.sh"
CPU_PORT = 64

UE_TABLE = "DcIngress.ue_sessions.ue_sessions_v4"
L2_TABLE = "DcIngress.l2_forwarding.l2_forwards"


# ==========================================================================================
# Test half: runs under pytest in the project venv
# ==========================================================================================

if __name__ != "__main__":
    import subprocess

    import pytest

    from dccommon.ports import free_port
    from dccommon.processes import stop_process

    P4SIM = str(Path(sys.executable).parent / "p4sim")

    def _run(args: list[str], timeout: float) -> subprocess.CompletedProcess:
        proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout, check=False)
        assert proc.returncode == 0, f"{args[0]} failed:\n{proc.stdout}\n{proc.stderr}"
        return proc

    @pytest.fixture(scope="module", params=["interp", "native"])
    def seen(tmp_path_factory, request) -> dict:
        """Everything the p4runtime-shell client observed, from one p4sim run per engine."""
        out = tmp_path_factory.mktemp("interop")
        _run(["bash", str(SETUP_SCRIPT)], timeout=600)  # cached after the first run
        files = []
        for name, program in (("dc", DC_PROGRAM), ("fwd", FWD_PROGRAM)):
            p4info, config = out / f"{name}.p4info.txt", out / f"{name}.p4sim.json"
            _run([P4SIM, "compile", str(program), "--p4runtime-files", str(p4info),
                  "-o", str(config)], timeout=120)  # fmt: skip
            files += [str(p4info), str(config)]
        addr = f"127.0.0.1:{free_port()}"
        log = (out / "p4sim.log").open("w")
        switch = subprocess.Popen(
            [P4SIM, "--no-p4", "--cpu-port", str(CPU_PORT), "--grpc-server-addr", addr,
             "--engine", request.param],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        try:
            import grpc

            with grpc.insecure_channel(addr) as channel:
                grpc.channel_ready_future(channel).result(timeout=60)
            client = subprocess.run(
                [str(SHELL_VENV / "bin" / "python"), str(Path(__file__)), addr, *files],
                capture_output=True, text=True, timeout=120, check=False, cwd=out,
            )  # fmt: skip
            assert switch.poll() is None, "p4sim exited:\n" + (out / "p4sim.log").read_text()
            assert client.returncode == 0, (
                f"p4runtime-shell client failed:\n{client.stderr}\n"
                + (out / "p4sim.log").read_text()
            )
            # the shell prints notices ("You are not the primary client") before the JSON
            return json.loads(client.stdout.strip().splitlines()[-1])
        finally:
            stop_process(switch)
            log.close()

    # -- what the spec says the client must see ------------------------------------------

    def test_capabilities_reports_a_v1_api_version(seen):
        assert seen["api_version"].split(".")[0] == "1"

    def test_exact_entry_insert_modify_delete_round_trip(seen):
        ue = {"1": ["exact", "0a000001"]}  # 10.0.0.1, canonical bytestrings in reads
        split = {"1": "03", "2": "01020304", "3": "04", "4": "02", "5": "01", "6": "02"}
        assert seen["ue_after_insert"] == [
            {"match": ue, "priority": 0, "is_default": False, "counter": None,
             "action": "DcIngress.ue_sessions.split_dc", "params": split}
        ]  # fmt: skip
        modified = {"match": ue, "priority": 0, "is_default": False, "counter": None,
                    "action": "DcIngress.ue_sessions.forward_sc", "params": {"1": "03", "2": "05"}}  # fmt: skip
        assert seen["ue_after_modify"] == [modified]
        assert seen["ue_read_by_key"] == [modified]
        assert seen["ue_read_absent_key"] == []
        assert seen["ue_after_delete"] == []

    def test_write_errors_arrive_per_update(seen):
        # p4runtime-shell decodes grpc-status-details-bin into one p4.Error per update
        assert seen["ue_duplicate_insert"] == ["ALREADY_EXISTS"]
        assert seen["ue_delete_absent"] == ["NOT_FOUND"]
        assert seen["l2_insert_without_priority"] == ["INVALID_ARGUMENT"]
        assert seen["ue_default_modify"] == ["PERMISSION_DENIED"]  # const default_action
        assert seen["mcast_duplicate_insert"] == ["ALREADY_EXISTS"]
        assert seen["mcast_delete_absent"] == ["NOT_FOUND"]

    def test_ternary_entry_keeps_priority_and_mask(seen):
        assert seen["l2_entries"] == [
            {"match": {"1": ["exact", "01"], "2": ["ternary", "0800", "ffff"]},
             "priority": 10, "is_default": False, "counter": None,
             "action": "DcIngress.l2_forwarding.forward", "params": {"1": "02"}}
        ]  # fmt: skip

    def test_default_entry_read_and_wildcard_read(seen):
        assert seen["ue_default"] == [
            {"match": {}, "priority": 0, "is_default": True, "counter": None,
             "action": "DcIngress.ue_sessions.miss", "params": {}}
        ]  # fmt: skip
        # table_id 0: the entries of every table (ue_sessions_v4 and l2_forwards), no defaults
        ue_id, l2_id = 41121370, 45603902  # dc_splitter's P4Info ids
        assert sorted(seen["all_tables"]) == sorted([ue_id, l2_id])

    def test_indirect_counter_read_modify_and_bounds(seen):
        assert seen["counter_before"] == [[7, 0, 0]]
        assert seen["counter_after"] == [[7, 5, 600]]
        assert seen["counter_all_cells"] == 512  # index unset: every cell
        assert seen["counter_out_of_range"] == "OUT_OF_RANGE"

    def test_multicast_groups_and_clone_sessions(seen):
        assert seen["mcast_after_insert"] == [[[1, 1], [2, 1]]]
        assert seen["mcast_after_modify"] == [[[1, 1], [2, 1], [3, 2]]]
        assert seen["mcast_after_delete"] == []
        assert seen["clone_sessions"] == [[5, 128, [[3, 0]]]]

    def test_second_pipeline_replaces_the_first(seen):
        assert seen["fwd_tables"] == ["FwdIngress.acl", "FwdIngress.ipv4_lpm", "FwdIngress.l2_fwd"]

    def test_direct_counter_in_table_reads_only_when_asked(seen):
        entry = {"match": {"1": ["exact", "020000000002"]}, "priority": 0, "is_default": False,
                 "action": "FwdIngress.forward", "params": {"1": "01"}}  # fmt: skip
        assert seen["l2_fwd_with_counter"] == [{**entry, "counter": [7, 700]}]
        assert seen["l2_fwd_without_counter"] == [{**entry, "counter": None}]
        assert seen["direct_counter"] == [[7, 700]]

    def test_packet_out_to_cpu_port_comes_back_as_packet_in(seen):
        frame = bytes.fromhex("02000000000a" "020000000001" "88b5") + b"interop" * 8
        # packet_in_t is {bit<9> ingress_port; bit<7> _pad}: the first 16 bits of the frame
        # as it left on port 64 (the pipeline removed packet_out and sent the Ethernet frame)
        first16 = int.from_bytes(frame[:2], "big")
        assert seen["packet_in"] == [
            {"payload": frame[2:].hex(),
             "metadata": {"1": format(first16 >> 7, "02x"), "2": format(first16 & 0x7F, "02x")}}
        ]  # fmt: skip
        # the CPU port's rx counter saw the frame with its 2-byte packet_out header
        assert seen["rx_counter_cpu"] == [[1, len(frame) + 2]]

    def test_a_shell_without_config_gets_the_p4info_and_the_state(seen):
        assert seen["reconnect_tables"] == seen["fwd_tables"]
        assert [e["match"] for e in seen["reconnect_entries"]] == [{"1": ["exact", "020000000002"]}]

    def test_meter_and_digest_configuration(seen):
        assert seen["meter"] == [[3, 100, 10, 200, 20]]
        assert seen["meter_cir_above_pir"] == ["INVALID_ARGUMENT"]
        assert seen["digests"] == [[seen["digest_id"], 1]]

    def test_backup_client_reads_but_cannot_write(seen):
        assert seen["backup_write"] == "PERMISSION_DENIED"
        assert seen["backup_read"] == 1


# ==========================================================================================
# Client half: runs inside build/p4rt-shell-venv
# ==========================================================================================


def _match(entry) -> dict:
    """The match of a p4runtime-shell TableEntry as {field: [kind, hex values...]}."""
    out = {}
    for fm in entry.msg().match:
        kind = fm.WhichOneof("field_match_type")
        value = getattr(fm, kind)
        if kind == "lpm":
            out[str(fm.field_id)] = [kind, value.value.hex(), value.prefix_len]
        elif kind == "ternary":
            out[str(fm.field_id)] = [kind, value.value.hex(), value.mask.hex()]
        elif kind == "range":
            out[str(fm.field_id)] = [kind, value.low.hex(), value.high.hex()]
        else:
            out[str(fm.field_id)] = [kind, value.value.hex()]
    return out


def _entry(entry) -> dict:
    msg = entry.msg()
    action = msg.action.action
    return {
        "match": _match(entry),
        "priority": msg.priority,
        "is_default": msg.is_default_action,
        "action": entry.action.action_name if entry.action is not None else None,
        "params": {str(p.param_id): p.value.hex() for p in action.params},
        "counter": (
            [msg.counter_data.packet_count, msg.counter_data.byte_count]
            if msg.HasField("counter_data")
            else None
        ),
    }


def _error(call) -> list[str] | str | None:
    """Run `call`; the per-update codes of a failed Write, the RPC code of another failure,
    None on success."""
    import grpc
    from google.rpc import code_pb2
    from p4runtime_sh.p4runtime import P4RuntimeException, P4RuntimeWriteException

    try:
        call()
    except P4RuntimeWriteException as exc:
        return [code_pb2.Code.Name(e.canonical_code) for _, e in exc.errors]
    except P4RuntimeException as exc:
        return exc.grpc_error.code().name
    except grpc.RpcError as exc:  # write_update re-raises codes other than UNKNOWN as is
        return exc.code().name
    return None


def _pre(entry):
    """The MulticastGroupEntry or CloneSessionEntry inside a shell PRE entity."""
    msg = entry.msg()
    return getattr(msg, msg.WhichOneof("type"))


def _replicas(entry) -> list[list[int]]:
    return sorted([r.egress_port, r.instance] for r in _pre(entry).replicas)


def client_dc_splitter(sh, addr: str, p4info: str, config: str, obs: dict) -> None:
    sh.setup(
        device_id=0,
        grpc_addr=addr,
        election_id=(0, 1),
        config=sh.FwdPipeConfig(p4info, config),
        verbose=False,
    )
    try:
        obs["api_version"] = sh.APIVersion()

        def ue_entry(action: str, **params):
            te = sh.TableEntry(UE_TABLE)(action=action)
            te.match["ue_addr"] = "10.0.0.1"
            for name, value in params.items():
                te.action[name] = value
            return te

        split = {
            "user_idx": "3", "session": "0x01020304", "batch": "4", "leg_a_count": "2",
            "leg_a_port": "1", "leg_b_port": "2",
        }  # fmt: skip
        ue_entry("DcIngress.ue_sessions.split_dc", **split).insert()
        obs["ue_after_insert"] = [_entry(e) for e in sh.TableEntry(UE_TABLE).read()]
        obs["ue_duplicate_insert"] = _error(
            ue_entry("DcIngress.ue_sessions.split_dc", **split).insert
        )
        ue_entry("DcIngress.ue_sessions.forward_sc", user_idx="3", port="5").modify()
        obs["ue_after_modify"] = [_entry(e) for e in sh.TableEntry(UE_TABLE).read()]
        # one entry by its key (a read with a match is not a wildcard)
        one = sh.TableEntry(UE_TABLE)
        one.match["ue_addr"] = "10.0.0.1"
        obs["ue_read_by_key"] = [_entry(e) for e in one.read()]
        absent = sh.TableEntry(UE_TABLE)
        absent.match["ue_addr"] = "10.9.9.9"
        obs["ue_read_absent_key"] = [_entry(e) for e in absent.read()]

        l2 = sh.TableEntry(L2_TABLE)(action="DcIngress.l2_forwarding.forward")
        l2.match["ingress_port"] = "1"
        l2.match["ether_type"] = "0x0800&&&0xffff"
        l2.priority = 10
        l2.action["port"] = "2"
        l2.insert()
        obs["l2_entries"] = [_entry(e) for e in sh.TableEntry(L2_TABLE).read()]
        no_priority = sh.TableEntry(L2_TABLE)(action="DcIngress.l2_forwarding.drop")
        no_priority.match["ingress_port"] = "2"
        obs["l2_insert_without_priority"] = _error(no_priority.insert)

        # default entries: read with is_default_action; the program's are const
        obs["ue_default"] = [_entry(e) for e in sh.TableEntry(UE_TABLE)(is_default=True).read()]
        obs["ue_default_modify"] = _error(
            sh.TableEntry(UE_TABLE)(is_default=True, action="DcIngress.ue_sessions.miss").modify
        )
        # a wildcard read over every table returns the entries, not the default entries
        obs["all_tables"] = _read_all_tables(sh)

        counter = sh.CounterEntry("DcIngress.port_rx_counter")
        counter.index = 7
        obs["counter_before"] = [
            [c.msg().index.index, c.msg().data.packet_count, c.msg().data.byte_count]
            for c in counter.read()
        ]
        counter.data.packet_count = 5
        counter.data.byte_count = 600
        counter.modify()
        readback = sh.CounterEntry("DcIngress.port_rx_counter")
        readback.index = 7
        obs["counter_after"] = [
            [c.msg().index.index, c.msg().data.packet_count, c.msg().data.byte_count]
            for c in readback.read()
        ]
        obs["counter_all_cells"] = len(list(sh.CounterEntry("DcIngress.port_rx_counter").read()))
        big = sh.CounterEntry("DcIngress.port_rx_counter")
        big.index = 512
        obs["counter_out_of_range"] = _error(lambda: list(big.read()))

        group = sh.MulticastGroupEntry(1).add(1, 1).add(2, 1)
        group.insert()
        obs["mcast_after_insert"] = [_replicas(g) for g in sh.MulticastGroupEntry(1).read()]
        sh.MulticastGroupEntry(1).add(1, 1).add(2, 1).add(3, 2).modify()
        obs["mcast_after_modify"] = [_replicas(g) for g in sh.MulticastGroupEntry(1).read()]
        obs["mcast_duplicate_insert"] = _error(sh.MulticastGroupEntry(1).add(4, 1).insert)
        sh.MulticastGroupEntry(1).delete()
        obs["mcast_after_delete"] = [_replicas(g) for g in sh.MulticastGroupEntry().read()]
        obs["mcast_delete_absent"] = _error(sh.MulticastGroupEntry(1).delete)

        session = sh.CloneSessionEntry(5).add(3, 0)
        session.packet_length_bytes = 128
        session.insert()
        obs["clone_sessions"] = [
            [_pre(s).session_id, _pre(s).packet_length_bytes, _replicas(s)]
            for s in sh.CloneSessionEntry(5).read()
        ]

        ue_entry("DcIngress.ue_sessions.forward_sc", user_idx="3", port="5").delete()
        obs["ue_after_delete"] = [_entry(e) for e in sh.TableEntry(UE_TABLE).read()]
        obs["ue_delete_absent"] = _error(
            ue_entry("DcIngress.ue_sessions.forward_sc", user_idx="3", port="5").delete
        )
    finally:
        sh.teardown()


def _read_all_tables(sh) -> list[int]:
    """A Read whose TableEntry has table_id 0: every entry of every table (spec 11.1)."""
    from p4.v1 import p4runtime_pb2

    entity = p4runtime_pb2.Entity()
    entity.table_entry.SetInParent()
    ids = []
    for response in sh.client.read_one(entity):
        ids.extend(e.table_entry.table_id for e in response.entities)
    return ids


def client_packet_io(sh, addr: str, p4info: str, config: str, obs: dict) -> None:
    from p4.v1 import p4runtime_pb2
    from p4runtime_sh.p4runtime import P4RuntimeClient, P4RuntimeException

    sh.setup(
        device_id=0,
        grpc_addr=addr,
        election_id=(0, 2),  # above the first client's (0, 1): the highest seen
        config=sh.FwdPipeConfig(p4info, config),
        verbose=False,
    )
    try:
        # the new pipeline replaced the old one, with none of its state
        obs["fwd_tables"] = sorted(t.preamble.name for t in sh.context.p4info.tables)

        fwd = sh.TableEntry("FwdIngress.l2_fwd")(action="FwdIngress.forward")
        fwd.match["dst_mac"] = "02:00:00:00:00:02"
        fwd.action["port"] = "1"
        fwd.counter_data.packet_count = 7
        fwd.counter_data.byte_count = 700
        fwd.insert()
        with_counter = sh.TableEntry("FwdIngress.l2_fwd")
        with_counter.counter_data  # noqa: B018 - asking for counter_data in the read
        obs["l2_fwd_with_counter"] = [_entry(e) for e in with_counter.read()]
        obs["l2_fwd_without_counter"] = [
            _entry(e) for e in sh.TableEntry("FwdIngress.l2_fwd").read()
        ]
        direct = sh.DirectCounterEntry("FwdIngress.l2_counter")
        direct.table_entry.match["dst_mac"] = "02:00:00:00:00:02"
        obs["direct_counter"] = [
            [d.msg().data.packet_count, d.msg().data.byte_count] for d in direct.read()
        ]

        # PacketOut to the CPU port: the program strips packet_out and sends the frame to
        # port 64, which p4sim hands back as PacketIn (packet_in = the first 16 bits)
        frame = bytes.fromhex("02000000000a" "020000000001" "88b5") + b"interop" * 8
        packet_in = sh.PacketIn()
        sh.PacketOut(frame, egress_port=str(CPU_PORT), _pad="0").send()
        # sniff(timeout) collects for a fixed window, which a loaded machine may outlast:
        # wait for the first PacketIn, then look a moment longer for any more
        received = []
        try:
            received.append(packet_in.packet_in_queue.get(timeout=60))
            received += packet_in.sniff(timeout=1)
        except queue.Empty:
            pass
        obs["packet_in"] = [
            {
                "payload": m.packet.payload.hex(),
                "metadata": {str(md.metadata_id): md.value.hex() for md in m.packet.metadata},
            }
            for m in received
        ]
        rx = sh.CounterEntry("FwdIngress.rx_port_counter")
        rx.index = CPU_PORT
        obs["rx_counter_cpu"] = [
            [c.msg().data.packet_count, c.msg().data.byte_count] for c in rx.read()
        ]

        meter = sh.MeterEntry("FwdIngress.rx_meter")
        meter.index = 3
        meter.config.cir, meter.config.cburst = 100, 10
        meter.config.pir, meter.config.pburst = 200, 20
        meter.modify()
        readback = sh.MeterEntry("FwdIngress.rx_meter")
        readback.index = 3
        obs["meter"] = [
            [m.msg().index.index, m.msg().config.cir, m.msg().config.cburst,
             m.msg().config.pir, m.msg().config.pburst]
            for m in readback.read()
        ]  # fmt: skip
        bad_meter = sh.MeterEntry("FwdIngress.rx_meter")
        bad_meter.index = 3
        bad_meter.config.cir, bad_meter.config.pir = 300, 200
        obs["meter_cir_above_pir"] = _error(bad_meter.modify)

        digest = sh.DigestEntry("mac_learn_t")
        digest.max_list_size = 1
        digest.insert()
        obs["digests"] = [
            [d.msg().digest_id, d.msg().config.max_list_size]
            for d in sh.DigestEntry("mac_learn_t").read()
        ]
        obs["digest_id"] = digest.id

        # a second client with a lower election id is a backup: reads work, writes do not
        backup = P4RuntimeClient(0, addr, (0, 1))
        try:
            update = p4runtime_pb2.Update(type=p4runtime_pb2.Update.DELETE)
            update.entity.table_entry.CopyFrom(fwd.msg())
            # not the primary: the whole RPC is PERMISSION_DENIED (spec 5.3, as BMv2 does)
            obs["backup_write"] = _error(lambda: backup.write_update(update))
            entity = p4runtime_pb2.Entity()
            entity.table_entry.table_id = fwd.id
            try:
                obs["backup_read"] = sum(len(r.entities) for r in backup.read_one(entity))
            except P4RuntimeException as exc:
                obs["backup_read"] = exc.grpc_error.code().name
        finally:
            backup.tear_down()
    finally:
        sh.teardown()


def client_reconnect(sh, addr: str, obs: dict) -> None:
    """A shell started without a config (`p4runtime-sh --grpc-addr ...`): it takes the
    P4Info from the server; the state written by the previous session is still there."""
    sh.setup(device_id=0, grpc_addr=addr, election_id=(0, 3), verbose=False)
    try:
        obs["reconnect_tables"] = sorted(t.preamble.name for t in sh.context.p4info.tables)
        obs["reconnect_entries"] = [_entry(e) for e in sh.TableEntry("FwdIngress.l2_fwd").read()]
    finally:
        sh.teardown()


def client_main(argv: list[str]) -> int:
    addr, dc_p4info, dc_config, fwd_p4info, fwd_config = argv
    import logging

    from p4runtime_sh import shell as sh

    logging.basicConfig(level=logging.WARNING)
    obs: dict = {}
    client_dc_splitter(sh, addr, dc_p4info, dc_config, obs)
    client_packet_io(sh, addr, fwd_p4info, fwd_config, obs)
    client_reconnect(sh, addr, obs)
    print(json.dumps(obs))
    return 0


if __name__ == "__main__":
    sys.exit(client_main(sys.argv[1:]))
