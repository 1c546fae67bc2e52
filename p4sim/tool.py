"""The command-line rules p4sim's tools follow (`python -m p4sim.coverage`, `.conformance`,
`.rejects`, `.fuzz`, `.stf`, `.bench`; the project's rules are in docs/cli.md):

- an error is one line `PROG: error: ...` on stderr (raise `ToolError` from the tool);
- exit codes: 0 ok, 1 failure, 2 usage or input error, 130 interrupted (Ctrl-C);
- `--json` prints the results as JSON to stdout (the report then goes to stderr); the old
  form `--json FILE` still writes the file for one release and says so on stderr.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from dccommon.cliargs import MAX_UINT64, InputFileError, check_output_file, int_range

log = logging.getLogger("p4sim.tool")

JSON_TO_STDOUT = "-"
JOBS = int_range(1, 64, "jobs")  # -j of the tools that run p4c or BMv2 at once


class ToolError(Exception):
    """Stops a tool with one error line; `exit_code` 2 for bad input, 1 for a failure."""

    def __init__(self, message: str, exit_code: int = 1):
        super().__init__(message)
        self.exit_code = exit_code


def run(prog: str, main, argv: list[str] | None = None) -> int:
    """`main(argv)` under the rules above; the value for sys.exit."""
    logging.basicConfig(level=logging.WARNING, format=f"{prog}: %(levelname)s: %(message)s")
    try:
        return main(argv)
    except ToolError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130


def _json_file(text: str) -> str:
    """The deprecated `--json FILE`, checked before the work (a coverage or differential run
    takes minutes): its folder must exist and be writable."""
    if text != JSON_TO_STDOUT:
        try:
            check_output_file(text)
        except InputFileError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def add_seed_option(parser: argparse.ArgumentParser, of: str) -> None:
    """`--seed` (default 1) of the seeded conformance tools: the seed of `of`."""
    parser.add_argument(
        "--seed",
        type=int_range(0, MAX_UINT64, "seed"),
        default=1,
        help=f"seed of {of} (default: 1)",
    )


def add_program_run_options(parser: argparse.ArgumentParser, kept: str) -> None:
    """`-j/--jobs`, `--keep DIR` (`kept` goes there) and `-v/--verbose` of the conformance
    tools that run each program on BMv2 and on p4sim (differential, pktdiff, progdiff)."""
    parser.add_argument(
        "-j", "--jobs", type=JOBS, default=2, help="programs run at once (default: 2)"
    )
    parser.add_argument("--keep", type=Path, metavar="DIR", help=f"keep {kept} under DIR")
    parser.add_argument("-v", "--verbose", action="store_true", help="details for every program")


def add_json_option(parser: argparse.ArgumentParser, what: str) -> None:
    """`--json`: print `what` as JSON to stdout (and the report to stderr)."""
    parser.add_argument(
        "--json",
        nargs="?",
        const=JSON_TO_STDOUT,
        type=_json_file,
        metavar="FILE",
        help=f"print {what} as JSON to stdout (the report goes to stderr); "
        "--json FILE, deprecated, writes them to FILE",
    )


def report_stream(json_arg: str | None):
    """Where the human-readable report goes: stderr when the JSON takes stdout."""
    return sys.stderr if json_arg == JSON_TO_STDOUT else sys.stdout


def write_json(prog: str, value, json_arg: str | None) -> None:
    """The results as `--json` asks: to stdout, or to the file of the deprecated form."""
    if json_arg is None:
        return
    text = json.dumps(value, indent=1) + "\n"
    if json_arg == JSON_TO_STDOUT:
        sys.stdout.write(text)
        return
    print(
        f"{prog}: warning: --json FILE is deprecated; use --json (stdout) > {json_arg}",
        file=sys.stderr,
    )
    try:
        Path(json_arg).write_text(text)
    except OSError as exc:
        raise ToolError(f"cannot write {json_arg}: {exc.strerror}") from None
