"""Reading a JSON-lines file that a process of ours writes as it runs (pdcp-agent's and
linkem's stats, a flow endpoint's progress, the control daemon's decisions).

Such a file may be read while a line is being written, or after a kill cut its last line
short: a line that does not parse is passed over, never an error.
"""

from __future__ import annotations

import json
from pathlib import Path


def read_json_lines(path: Path) -> list[dict]:
    """Every complete record of `path`, in order; none when the file does not exist (yet)."""
    try:
        text = path.read_text(errors="replace")
    except FileNotFoundError:
        return []
    records = []
    for line in text.splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:  # being written, or cut short by a kill
            continue
    return records
