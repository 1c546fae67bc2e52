"""p4sim's P4Runtime server: gRPC service, arbitration, entity translation, device config."""

from p4sim.p4runtime.server import P4RuntimeServer, P4RuntimeServicer

__all__ = ["P4RuntimeServer", "P4RuntimeServicer"]
