"""Shared by every pytest suite: when BMv2 was left out (SKIP_BMV2=1), the run ends saying so."""

from controlplane import bmv2


def pytest_terminal_summary(terminalreporter):
    note = bmv2.skipped_note()
    if note:
        terminalreporter.write_line(note, red=True, bold=True)
