"""The v1model architecture (BMv2 simple_switch semantics) on top of the p4sim engine."""

from p4sim.v1model.device import V1ModelDevice

__all__ = ["V1ModelDevice"]
