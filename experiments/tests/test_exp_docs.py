"""The house's docs point at real things: every relative link of a *.md resolves, every
`make X` a doc shows is a target of the Makefile or a part.mk, and every path of this
repository a doc names in backticks exists. (Whether the behaviour a doc describes is
still true is for a reader; these three drift silently when code moves.)

    .venv/bin/python -m pytest -q experiments/tests/test_exp_docs.py
"""

from __future__ import annotations

import re
from pathlib import Path

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
    """The lines of fenced blocks (comments cut) and the inline code spans outside them."""
    fenced = [line.split("#")[0] for block in FENCE.findall(text) for line in block.splitlines()]
    return fenced + INLINE.findall(FENCE.sub("", text))


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


def test_repository_paths_in_docs_exist():
    missing = []
    for md in markdown_files():
        if md in HISTORY:
            continue
        # from the root, or from the doc's part (a part's README says `docs/x.md`)
        bases = [d for d in md.parents if d == ROOT or ROOT in d.parents]
        for span in INLINE.findall(FENCE.sub("", md.read_text())):
            if REPO_PATH.match(span) and not any(
                any(base.glob(span.rstrip("/"))) for base in bases
            ):
                missing.append(f"{md.relative_to(ROOT)}: {span}")
    assert not missing, "paths that do not exist:\n" + "\n".join(missing)


def test_the_checks_catch_what_they_look_for():
    text = "```\nsudo make no-such-target  # and `make build` in a comment\n```\n`make demo`"
    assert [MAKE_CMD.findall(s.strip()) for s in commands(text) if MAKE_CMD.search(s)] == [
        ["no-such-target"],
        ["demo"],
    ]
    assert REPO_PATH.match("experiments/run/testbed.py")
    assert not REPO_PATH.match("backends/bmv2/bmv2stf.py")  # another project's path
