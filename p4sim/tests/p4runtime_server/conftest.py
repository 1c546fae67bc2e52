"""Fixtures of the P4Runtime server tests: a server with the fake engine on an ephemeral
port, and a client that is primary with the fake pipeline set."""

from __future__ import annotations

import pytest
from google.rpc import code_pb2

from p4sim.io import InProcessPorts
from p4sim.p4runtime import P4RuntimeServer
from p4sim.switch import Switch
from p4sim.tests.p4runtime_server.fakes import CPU_PORT, Client, fake_compiler


@pytest.fixture
def server():
    ports = InProcessPorts([0, 1, 2])
    switch = Switch(ports, cpu_port=CPU_PORT)
    switch.start()
    srv = P4RuntimeServer(switch, "127.0.0.1:0", device_id=0, compiler=fake_compiler)
    srv.start()
    srv.ports = ports
    srv.switch = switch
    yield srv
    srv.stop()
    switch.close()


@pytest.fixture
def client(server):
    c = Client(server.address, election_id=10)
    assert c.arbitrate().status.code == code_pb2.OK
    c.set_pipeline()
    yield c
    c.close()
