"""A second P4Runtime server on a port that is already taken must refuse to start.

grpc binds with SO_REUSEPORT by default; without turning that off, two switches on one port
would both run and clients would be spread over them at random."""

from __future__ import annotations

import pytest

from p4sim.io import InProcessPorts
from p4sim.p4runtime import P4RuntimeServer
from p4sim.switch import Switch


def test_second_server_on_a_taken_port_is_refused():
    switch = Switch(InProcessPorts([0, 1]))
    switch.start()
    first = P4RuntimeServer(switch, "127.0.0.1:0")
    first.start()
    try:
        with pytest.raises(OSError, match=r"cannot listen on 127\.0\.0\.1:\d+"):
            P4RuntimeServer(switch, first.address)
    finally:
        first.stop()
        switch.close()
