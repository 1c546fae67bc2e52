"""Benchmarks of the testbed and its stacks (run on an idle machine)."""
