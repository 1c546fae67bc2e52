"""The testbed at 5G NR leg rates (`make bench-testbed`): a leg-rate sweep through the real
chain with TCP and ngtcp2, each component's CPU per frame, where each saturates, and the
machine's raw AF_PACKET limit (rawfwd.c). Run as root; see experiments/docs/testbed.md."""
