"""p4sim's device config: what `ForwardingPipelineConfig.p4_device_config` carries for p4sim.

A UTF-8 JSON document:

    {"p4sim_device_config": 1,
     "program": "<the preprocessed P4 source, with # line markers>",
     "file": "<the original main file name, for error messages>"}

The program is preprocessed (includes and -D defines already applied), so the target needs
nothing but this document. `p4sim compile -o OUT.p4sim.json` writes it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

FORMAT_KEY = "p4sim_device_config"
FORMAT_VERSION = 1


class DeviceConfigError(ValueError):
    """The bytes are not a p4sim device config; the message says what is wrong."""


@dataclass(frozen=True)
class DeviceConfig:
    program: str
    file: str

    def encode(self) -> bytes:
        doc = {FORMAT_KEY: FORMAT_VERSION, "program": self.program, "file": self.file}
        return json.dumps(doc, indent=1).encode()


def decode(data: bytes) -> DeviceConfig:
    if not data:
        raise DeviceConfigError(
            "p4_device_config is empty; p4sim needs a JSON document "
            f'{{"{FORMAT_KEY}": {FORMAT_VERSION}, "program": ..., "file": ...}}'
            " (write one with `p4sim compile PROGRAM.p4 -o OUT.json`)"
        )
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        reason = "nested too deeply" if isinstance(exc, RecursionError) else exc
        raise DeviceConfigError(
            f"p4_device_config is not a p4sim JSON device config ({reason}); "
            "BMv2 JSON or other targets' configs do not work with p4sim"
        ) from None
    if not isinstance(doc, dict) or FORMAT_KEY not in doc:
        raise DeviceConfigError(
            f'p4_device_config lacks the "{FORMAT_KEY}" key: not a p4sim '
            "device config (a BMv2 JSON perhaps?)"
        )
    if doc[FORMAT_KEY] != FORMAT_VERSION:
        raise DeviceConfigError(
            f"p4sim device config version {doc[FORMAT_KEY]!r} is not "
            f"supported (only {FORMAT_VERSION})"
        )
    program, file = doc.get("program"), doc.get("file", "program.p4")
    if not isinstance(program, str) or not isinstance(file, str):
        raise DeviceConfigError('p4sim device config: "program" and "file" must be strings')
    return DeviceConfig(program=program, file=file)
