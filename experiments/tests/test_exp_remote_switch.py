"""`--target remote:FILE.yaml` (root): a P4Runtime switch dcexp neither starts nor stops.

The test starts its own "remote" switch: p4sim in the root namespace with a device id and
port numbers of its own (not DESIGN.md's 0/1/2), its ports veths whose other ends play the
host's interfaces cabled to it; once running dc_splitter.p4 (dcexp checks the installed
pipeline) and once empty (`--no-p4`; the file's `pipeline:` is pushed, `make build`'s
build/p4/dc_splitter.*). dcexp borrows the interfaces into the run's namespaces, drives the
switch with the controller and gives everything back: the switch keeps running with empty
tables, the interfaces come back to the root namespace with their MTU.
"""

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from controlplane.splitter import Splitter
from dccommon.ports import free_port
from dccommon.processes import stop_process
from experiments.analysis import metrics
from experiments.run.netns import unique_prefix, veth_pair
from experiments.run.parts import BUILD
from experiments.run.switches import P4_PROGRAM
from experiments.run.testbed import leftovers

pytestmark = pytest.mark.netns
if os.geteuid() != 0:
    raise RuntimeError("the remote-switch test builds testbeds: it needs root")

DCEXP = str(Path(sys.executable).parent / "dcexp")
P4SIM = str(Path(sys.executable).parent / "p4sim")
PORTS = {"server": 4, "leg_a": 6, "leg_b": 5}  # the switch's own numbering
DEVICE_ID, ELECTION_ID = 7, 5
SPLIT = (3, 1)


def mtu(ifname: str) -> int:
    return int(Path("/sys/class/net", ifname, "mtu").read_text())


@pytest.fixture(scope="module", params=["installed", "pushed"])
def remote_switch(request, tmp_path_factory):
    """p4sim on veths `<t>sw*` whose peers `<t>h*` stay in the root namespace."""
    tmp = tmp_path_factory.mktemp("remote")
    t = unique_prefix("rs")
    host_if = {role: f"{t}h{i}" for i, role in enumerate(PORTS)}
    made, proc = [], None
    try:
        for i, role in enumerate(PORTS):
            veth_pair(f"{t}sw{i}", None, host_if[role], None, mtu=1600)
            made.append(f"{t}sw{i}")
            # the host's side at 1500: dcexp raises the legs' MTU and must restore it
            subprocess.run(["ip", "link", "set", host_if[role], "mtu", "1500"], check=True)
        addr = f"127.0.0.1:{free_port()}"
        program = [str(P4_PROGRAM)] if request.param == "installed" else ["--no-p4"]
        argv = [P4SIM, *program, "--engine", "native", "--log-level", "warn"]
        argv += ["--device-id", str(DEVICE_ID), "--grpc-server-addr", addr]
        for i, role in enumerate(PORTS):
            argv += ["-i", f"{PORTS[role]}@{t}sw{i}"]
        with open(tmp / "switch.log", "w") as log:  # the child keeps its own descriptor
            proc = subprocess.Popen(
                argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, (tmp / "switch.log").read_text()
            assert time.monotonic() < deadline, "the remote switch did not come up"
            try:
                with socket.create_connection(addr.split(":"), timeout=1):
                    break
            except OSError:
                time.sleep(0.3)
        spec = {
            "address": addr,
            "device_id": DEVICE_ID,
            "election_id": ELECTION_ID,
            "ports": PORTS,
            "interfaces": host_if,
        }
        if request.param == "pushed":
            spec["pipeline"] = {
                "p4info": str(BUILD / "p4" / "dc_splitter.p4info.txtpb"),
                "device_config": str(BUILD / "p4" / "dc_splitter.p4sim.json"),
            }
        path = tmp / "switch.yaml"
        path.write_text(yaml.safe_dump(spec))
        yield path, spec, proc
    finally:
        if proc is not None:
            stop_process(proc)
        for ifname in made:  # deleting one end removes its peer
            subprocess.run(["ip", "link", "del", ifname], capture_output=True, check=False)


def test_a_study_drives_the_remote_switch_and_gives_it_back(remote_switch, tmp_path):
    path, spec, proc = remote_switch
    study = {
        "name": "remote",
        "links": {"both": {"rate_mbit": 20, "delay_ms": 5}},
        "dc": {"batch": 8, "ratio": f"{SPLIT[0]}:{SPLIT[1]}"},
        "flows": [{"kind": "ngtcp2", "cc": "cubic", "size_mb": 2, "client": "dc"}],
        "repetitions": 2,  # the second run finds the switch as the first left it
    }
    scenario = tmp_path / "remote.yaml"
    scenario.write_text(yaml.safe_dump(study))
    out = tmp_path / "out"
    got = subprocess.run(
        [DCEXP, "run", str(scenario), "--out", str(out), "--target", f"remote:{path}"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert got.returncode == 0, got.stderr
    manifests = metrics.load_manifests(out)
    assert [m["status"] for m in manifests] == ["ok", "ok"]
    for m in manifests:
        assert m["target"] == "remote" and m["switch"]["address"] == spec["address"]
        flow = next(iter(m["flows"].values()))
        assert flow["complete"] and flow["intact"], flow
        sw = json.loads((out / "runs" / m["run_id"] / "logs" / "switch_stats.json").read_text())
        a, b = sw["ports"]["leg_a"]["tx_packets"], sw["ports"]["leg_b"]["tx_packets"]
        assert a + b > 1000, "the download did not cross the remote switch's legs"
        assert a / (a + b) == pytest.approx(SPLIT[0] / sum(SPLIT), abs=0.03)
        assert leftovers(m["prefix"]) == []
    # given back: the switch runs on with empty tables, the interfaces are home with their MTU
    assert proc.poll() is None, "dcexp must never stop a remote switch"
    with Splitter.connect(spec["address"], DEVICE_ID, ELECTION_ID + 1) as sw:
        assert sw.users() == [] and sw.held_state() == []
    for role, ifname in spec["interfaces"].items():
        assert mtu(ifname) == 1500, f"{role}: {ifname} is not back with its MTU"


def test_a_missing_cabled_interface_is_refused_before_any_run(remote_switch, tmp_path):
    _, spec, _ = remote_switch
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        yaml.safe_dump({**spec, "interfaces": {**spec["interfaces"], "leg_b": "nosuch0"}})
    )
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        yaml.safe_dump(
            {"name": "s", "links": {"both": {"rate_mbit": 20}}, "flows": [{"size_mb": 1}]}
        )
    )
    got = subprocess.run(
        [DCEXP, "run", str(scenario), "--out", str(tmp_path / "o"), "--target", f"remote:{bad}"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert got.returncode == 1
    assert f"interfaces.leg_b nosuch0 (cabled to the switch of {bad}) is not on this host" in (
        got.stderr
    )
    assert not list((tmp_path / "o").glob("runs/*"))
