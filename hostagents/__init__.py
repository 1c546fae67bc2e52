"""pdcp-agent's Python side: how the testbed, the tests and the bench start it."""
