"""The house's docs point at real things: every relative link of a *.md resolves, every
`make X` a doc or `make help` shows is a target of the Makefile or a part.mk, every path of
this repository a doc names in backticks or in a command exists, every `python -m` module of
ours a doc runs exists, every `--option` a command of ours is shown with is one that
tool takes, and the code maps that go module by module name every module of their folder. (Whether the behaviour a doc describes is still true is for a reader; these
drift silently when code moves.)

    .venv/bin/python -m pytest -q experiments/tests/test_exp_docs.py
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import subprocess
from pathlib import Path

from controlplane.cli import build_parser as dcctl_parser
from experiments.cli import build_parser as dcexp_parser
from p4sim.cli import build_compile_parser, build_run_parser

ROOT = Path(__file__).resolve().parents[2]
SKIP_DIRS = {".venv", "build", "results", ".git", ".toolchain", "node_modules"}
# What CHANGELOG.md names is history: a file it mentions may have moved since.
HISTORY = {ROOT / "CHANGELOG.md"}
# Top-level folders of this repository: a backticked path starting with one is ours.
REPO_DIRS = ("p4src", "p4sim", "controlplane", "ptf-tests", "hostagents", "experiments")
REPO_DIRS += ("clib", "dccommon", "tools", "docs")

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
INLINE = re.compile(r"`([^`\n]+)`")
# `make X` as a command: at the start, after a shell separator, sudo or nice; VAR=value
# assignments may come between make and the target.
MAKE_CMD = re.compile(
    r"(?:^|[;&|(]\s*|sudo\s+|nice -n \d+\s+)make\s+(?:[A-Z_0-9]+=\S*\s+)*([a-z][\w.-]*)"
)
REPO_PATH = re.compile(rf"^(?:{'|'.join(map(re.escape, REPO_DIRS))})/[\w./*-]+$")
TARGET_LINE = re.compile(r"^([\w.%/ -]+?)\s*::?(?!=)", re.MULTILINE)
# A command of ours in a doc: the tool's name (after a path such as .venv/bin/ or
# build/linkem/, or sudo), then its arguments. The C tools' options are checked against their
# option tables' source; pdcp-agent's own options follow DPDK EAL's, after `--`.
TOOL_CMD = re.compile(r"(?:^|[\s/;&|(])(dcctl|dcexp|p4sim|linkem|pdcp-agent|pktgen)\s(.*)")
OPTION = re.compile(r"(?<![\w-])(--[a-z][\w-]*)")
# `python -m MODULE` of one of our packages
PYTHON_MODULE = re.compile(
    r"python3?\s+-m\s+((?:p4sim|controlplane|experiments|hostagents|dccommon)[\w.]*)"
)
# README code maps that list a folder's source files one by one: a new file goes in them.
CODE_MAPS = {
    "experiments/README.md": ("experiments/run/*.py", "experiments/analysis/*.py"),
    "controlplane/README.md": ("controlplane/*.py", "controlplane/policies/*.py"),
    "dccommon/README.md": ("dccommon/*.py",),
    "hostagents/README.md": ("hostagents/agent/*.c", "hostagents/pdcp/*.c", "hostagents/*.py"),
    "experiments/linkem/README.md": ("experiments/linkem/src/*.[ch]",),
    "p4src/README.md": ("p4src/include/*.p4",),
}
C_OPTIONS = {
    "linkem": ["experiments/linkem/src/options.c", "experiments/linkem/src/main.c"],
    "pdcp-agent": ["hostagents/agent/options.c"],
    "pktgen": ["clib/pktgen/pktgen.c"],
}


def markdown_files() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*.md") if not SKIP_DIRS & set(p.relative_to(ROOT).parts))


def make_targets() -> set[str]:
    """Every explicit target of the Makefile and the part.mk fragments it includes."""
    makefiles = [ROOT / "Makefile", *ROOT.glob("**/part.mk")]
    targets = set()
    for mk in makefiles:
        if SKIP_DIRS & set(mk.relative_to(ROOT).parts):
            continue
        for line in TARGET_LINE.findall(mk.read_text()):
            targets.update(line.split())
    return targets


def commands(text: str) -> list[str]:
    """The lines of fenced blocks (comments cut, a line ending in a backslash joined with the
    next) and the inline code spans outside them."""
    fenced, pending = [], ""
    for block in FENCE.findall(text):
        for line in block.splitlines():
            line = pending + line.split("#")[0]
            pending = line.rstrip()[:-1] + " " if line.rstrip().endswith("\\") else ""
            if not pending:
                fenced.append(line)
    return fenced + INLINE.findall(FENCE.sub("", text))


def parser_options(parser: argparse.ArgumentParser) -> set[str]:
    """The option strings of `parser` and of all its subcommands."""
    found = set()
    for action in parser._actions:
        found.update(action.option_strings)
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found |= parser_options(sub)
    return found


def tool_options() -> dict[str, object]:
    """Per tool, a test of whether it takes an option."""
    python = {
        "dcctl": parser_options(dcctl_parser()),
        "dcexp": parser_options(dcexp_parser()),
        "p4sim": parser_options(build_run_parser()) | parser_options(build_compile_parser()),
    }
    checks = {tool: opts.__contains__ for tool, opts in python.items()}
    for tool, files in C_OPTIONS.items():
        source = "".join((ROOT / f).read_text() for f in files)
        checks[tool] = lambda opt, source=source: f'"{opt[2:]}"' in source
    return checks


def help_lines() -> list[str]:
    return subprocess.run(
        ["make", "-s", "--no-print-directory", "help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()


def test_relative_links_resolve():
    broken = []
    for md in markdown_files():
        for target in LINK.findall(md.read_text()):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue  # a URL, a mail address, an anchor of the same page
            if not (md.parent / target.split("#")[0]).exists():
                broken.append(f"{md.relative_to(ROOT)}: {target}")
    assert not broken, "links to nothing:\n" + "\n".join(broken)


def test_make_commands_name_real_targets():
    targets = make_targets()
    assert {"build", "test", "demo", "experiments-test"} <= targets  # the scan itself works
    unknown = []
    for md in markdown_files():
        for snippet in commands(md.read_text()):
            for target in MAKE_CMD.findall(snippet.strip()):
                if target not in targets:
                    unknown.append(f"{md.relative_to(ROOT)}: make {target}")
    assert not unknown, "no such make target:\n" + "\n".join(unknown)


def test_make_help_names_real_targets_one_line_each():
    targets, lines = make_targets(), help_lines()
    named = [MAKE_CMD.findall(line.strip())[:1] for line in lines if line.startswith("make ")]
    assert len(named) >= 10 and all(named), lines  # every entry line names its target
    unknown = [t for (t,) in named if t not in targets]
    assert not unknown, f"make help names no such target: {unknown}"
    assert all(len(line) <= 100 for line in lines), "make help: one short line per target"
    # the top README's table of make targets and `make help` tell the same
    readme = (ROOT / "README.md").read_text()
    table = [t for row in readme.splitlines() if row.startswith("| `make ") for t in
             MAKE_CMD.findall(" ".join(INLINE.findall(row.split("|")[1])))]  # fmt: skip
    said = "\n".join(lines)
    assert table and not [t for t in table if f"make {t}" not in said], table


def test_repository_paths_in_docs_exist():
    missing = []
    for md in markdown_files():
        if md in HISTORY:
            continue
        # from the root, or from the doc's part (a part's README says `docs/x.md`)
        bases = [d for d in md.parents if d == ROOT or ROOT in d.parents]
        text = md.read_text()
        spans = INLINE.findall(FENCE.sub("", text))
        # and the repository paths inside commands (a program, a scenario it reads)
        fenced = commands(text)
        words = [w.rstrip(".,:;") for cmd in fenced for w in re.findall(r"[\w./*-]+", cmd)]
        for span in dict.fromkeys(spans + words):
            if REPO_PATH.match(span) and not any(
                any(base.glob(span.rstrip("/"))) for base in bases
            ):
                missing.append(f"{md.relative_to(ROOT)}: {span}")
    assert not missing, "paths that do not exist:\n" + "\n".join(missing)


def test_our_commands_in_docs_take_the_options_shown():
    takes = tool_options()
    unknown, checked = [], 0
    for md in markdown_files():
        if md in HISTORY:
            continue
        for cmd in commands(md.read_text()):
            if not (found := TOOL_CMD.search(cmd)):
                continue
            tool, args = found.groups()
            if tool == "pdcp-agent":
                args = args.partition(" -- ")[2]
            for option in OPTION.findall(args):
                checked += 1
                if not takes[tool](option):
                    unknown.append(f"{md.relative_to(ROOT)}: {tool} {option}")
    assert checked > 100, checked  # the scan itself finds the docs' commands
    assert not unknown, "options the tool does not take:\n" + "\n".join(unknown)


def test_python_modules_in_docs_exist():
    missing, checked = [], 0
    for md in markdown_files():
        if md in HISTORY:
            continue
        for cmd in commands(md.read_text()):
            for module in PYTHON_MODULE.findall(cmd):
                checked += 1
                if importlib.util.find_spec(module) is None:
                    missing.append(f"{md.relative_to(ROOT)}: python -m {module}")
    assert checked > 10, checked  # the scan itself finds them
    assert not missing, "no such module:\n" + "\n".join(missing)


def modules_not_in_map(readme: str, pattern: str) -> list[str]:
    """The files matching `pattern` whose name `readme` gives nowhere in backticks (`x`,
    `x.py`, `dir/x.c`, `dir/x.[ch]`)."""
    named = {
        Path(word).name.split(".")[0]
        for span in INLINE.findall(readme)
        for word in re.findall(r"[\w./]+", span)
    }
    return [
        str(path.relative_to(ROOT))
        for path in sorted(ROOT.glob(pattern))
        if path.stem not in ("__init__", "__main__") and path.stem not in named
    ]


def test_code_maps_name_every_module_of_their_folders():
    missing = []
    for readme, patterns in CODE_MAPS.items():
        text = (ROOT / readme).read_text()
        for pattern in patterns:
            assert any(ROOT.glob(pattern)), pattern  # the map's folder is still there
            missing += [f"{readme}: {m}" for m in modules_not_in_map(text, pattern)]
    assert not missing, "files the code map does not name:\n" + "\n".join(missing)


def test_the_checks_catch_what_they_look_for():
    text = "```\nsudo make no-such-target  # and `make build` in a comment\n```\n`make demo`"
    assert [MAKE_CMD.findall(s.strip()) for s in commands(text) if MAKE_CMD.search(s)] == [
        ["no-such-target"],
        ["demo"],
    ]
    joined = commands("```\ndcctl --grpc-addr A \\\n    user add 10.0.0.9 --frobnicate\n```\n")
    assert [TOOL_CMD.search(c).group(1) for c in joined if TOOL_CMD.search(c)] == ["dcctl"]
    assert "--frobnicate" in next(c for c in joined if "dcctl" in c)
    takes = tool_options()
    assert takes["dcctl"]("--grpc-addr") and not takes["dcctl"]("--frobnicate")
    assert takes["linkem"]("--feedback") and not takes["linkem"]("--frobnicate")
    assert PYTHON_MODULE.findall("sudo .venv/bin/python -m experiments.ratebench --rates 20") == [
        "experiments.ratebench"
    ]
    assert importlib.util.find_spec("experiments.no_such_tool") is None
    assert REPO_PATH.match("experiments/run/testbed.py")
    assert not REPO_PATH.match("backends/bmv2/bmv2stf.py")  # another project's path
    assert "experiments/run/tc.py" in modules_not_in_map("`links.py`", "experiments/run/*.py")
    src = "experiments/linkem/src/*.[ch]"
    assert "experiments/linkem/src/link.h" not in modules_not_in_map("`src/link.[ch]`", src)
    assert "experiments/linkem/src/io.c" in modules_not_in_map("`src/link.[ch]`", src)
