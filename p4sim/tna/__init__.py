"""The Tofino Native Architecture (TNA, tna.p4) on top of the p4sim engine."""

from p4sim.tna.device import TnaDevice

__all__ = ["TnaDevice"]
