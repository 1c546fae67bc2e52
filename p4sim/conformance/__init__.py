"""Differential conformance: p4c's STF tests run on BMv2 and on p4sim by one runner.

`python -m p4sim.conformance DIR_OR_FILES...` (see `p4sim.conformance.differential`).
"""
