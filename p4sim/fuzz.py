"""Fuzzers for p4sim's two inputs: P4 programs and P4Runtime requests (issue 10).

    python -m p4sim.fuzz p4 [--duration-s 30] [--seed 1]
    python -m p4sim.fuzz p4runtime [--duration-s 30] [--seed 1]

`p4` mutates the project's P4 programs (p4src/, the conformance programs in
p4sim/tests/stf/, and p4c's v1model samples when /opt/p4tools/p4c-testdata is present): token
deletion and duplication, truncation, random and non-UTF-8 bytes, absurd widths and sizes,
and preprocessor directives (#include names past NAME_MAX/PATH_MAX, of directories and
devices, broken quoting; #if/#ifdef/#elif/#undef/#define forms, well- and ill-formed).
Every mutant must compile or end in a `file:line:col: error:` with a real position (line and
column >= 1), within a per-mutant time limit. `p4runtime` starts the `p4sim` console script
and sends it malformed and mutated valid requests (huge values, huge reads, wrong roles,
random ids and enum values, stream messages): no UNKNOWN or INTERNAL from p4sim's own code,
every error trailer under 8 KiB, and at the end the server is alive, still forwarding
(PacketOut to the CPU port comes back as PacketIn) and its memory has stayed bounded.

Both are seeded and bounded in time; they print the inputs tried and the outcomes counted,
and exit 1 (listing the offending inputs) when a rule is broken. The tests in
p4sim/tests/test_fuzz_*.py run them in `make test`.
"""

from __future__ import annotations

import argparse
import collections
import random
import re
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

from dccommon.cliargs import MAX_UINT64, add_old_name, float_range, int_range
from p4sim.tool import run

ROOT = Path(__file__).resolve().parent.parent
P4C_SAMPLES = Path("/opt/p4tools/p4c-testdata/p4_16_samples")
POSITION = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): error: ", re.MULTILINE)
MUTANT_TIMEOUT_S = 20  # one mutant's compile (a hang is a failure)
MEMORY_LIMIT = 3 * 1024**3  # address space of the P4 fuzzer process (a MemoryError is a bug)


# ----------------------------------------------------------------------------- P4 programs
def p4_seeds() -> list[tuple[Path, Path]]:
    """(main file, file to mutate): every file of p4src/ through dc_splitter.p4, the
    conformance programs, p4c's v1model samples."""
    seeds = [(ROOT / "p4src" / "dc_splitter.p4", f) for f in sorted((ROOT / "p4src").rglob("*.p4"))]
    seeds += [(f, f) for f in sorted((ROOT / "p4sim" / "tests" / "stf").glob("*.p4"))]
    if P4C_SAMPLES.is_dir():
        for f in sorted(P4C_SAMPLES.glob("*.p4")):
            text = f.read_text(errors="replace")
            if "v1model.p4" in text and "#include" in text:
                seeds.append((f, f))
    return seeds


_TOKEN = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*|\d+|\S")
# What an #include may name by mistake: past NAME_MAX and PATH_MAX, no regular file, control
# characters, broken quoting.
_INCLUDES = [
    b'"' + b"i" * 300 + b'.p4"',
    b'"' + b"d/" * 2100 + b'x.p4"',
    b"<" + b"s" * 256 + b">",
    b'"/"',
    b'"/dev/null"',
    b'"/dev/zero"',
    b'"."',
    b'"p4src"',
    b'"nope.p4"',
    b'""',
    b"<>",
    b'"a\x1bb.p4"',
    b'"core.p4',
    b"core.p4",
    b'"../../../../etc/passwd"',
]
# Conditional and macro forms, well- and ill-formed.
_DIRECTIVES = [
    b"#if",
    b"#if 1",
    b"#if 0",
    b"#if (",
    b"#if 1 +",
    b"#if 1/0",
    b"#if defined(",
    b"#if defined(X) && !defined Y",
    b"#if 99999999999999999999999 * 99999999999999999999",
    b"#ifdef",
    b"#ifdef 1",
    b"#ifndef X Y",
    b"#elif 1",
    b"#else",
    b"#endif",
    b"#undef",
    b"#undef 1",
    b"#undef __LINE__",
    b"#define",
    b"#define 1 2",
    b"#define X(",
    b"#define X(a, a) a",
    b"#define X X",
    b"#define bit int",
    b"#define X(a) #a ## a",
    b"#line 0",
    b"#pragma once",
    b"#error stop here",
    b"#frobnicate",
    b"#",
]
_ABSURD = [b"999999999999", b"4294967296", b"0", b"-1", b"18446744073709551616", b"1" * 60]


def mutate_p4(data: bytes, rnd: random.Random) -> tuple[str, bytes]:
    """One mutation of P4 source bytes: (kind, mutant)."""
    tokens = [m.span() for m in _TOKEN.finditer(data)] or [(0, 0)]
    kind = rnd.choice(
        ["delete", "duplicate", "truncate", "random bytes", "non-utf8", "width", "size", "nest"]
        + ["include", "directive"]
    )
    if kind in ("include", "directive"):
        return kind, _mutate_directive(kind, data, rnd)
    a, b = rnd.choice(tokens)
    if kind == "delete":
        n = rnd.randint(1, 5)
        end = tokens[min(tokens.index((a, b)) + n - 1, len(tokens) - 1)][1]
        return kind, data[:a] + data[end:]
    if kind == "duplicate":
        return kind, data[:b] + b" " + data[a:b] + data[b:]
    if kind == "truncate":
        return kind, data[: rnd.randrange(len(data) + 1)]
    if kind == "random bytes":
        at = rnd.randrange(len(data) + 1)
        return kind, data[:at] + rnd.randbytes(rnd.randint(1, 16)) + data[at:]
    if kind == "non-utf8":
        at = rnd.randrange(len(data) + 1)
        bad = rnd.choice([b"\xff", b"\xe9", b"\xc3", b"\x80\x81", b"\xff\xfe", b"\x00"])
        if rnd.random() < 0.1:  # the whole file in another encoding
            return kind, data.decode("utf-8", "replace").encode(rnd.choice(["utf-16", "utf-32"]))
        return kind, data[:at] + bad + data[at:]
    if kind == "width":  # bit<8> -> bit<999999999999>, 8w1 -> 99999999w1
        widths = [m.span(1) for m in re.finditer(rb"(?:bit|int|varbit)\s*<\s*(\d+)", data)]
        widths += [m.span(1) for m in re.finditer(rb"\b(\d+)[wWsS]\d", data)]
        if widths:
            a, b = rnd.choice(widths)
    elif kind == "size":  # counter(512, ...), size = 1024, h_t[4]
        sizes = [m.span(1) for m in re.finditer(rb"\(\s*(\d+)\s*[,)]", data)]
        sizes += [m.span(1) for m in re.finditer(rb"size\s*=\s*(\d+)", data)]
        sizes += [m.span(1) for m in re.finditer(rb"\[\s*(\d+)\s*\]", data)]
        if sizes:
            a, b = rnd.choice(sizes)
    else:  # nest: an expression in hundreds of parentheses or operators
        depth = rnd.choice([50, 199, 250, 3000])
        wrap = rnd.choice([(b"(", b")"), (b"-", b""), (b"~(", b")")])
        numbers = [m.span() for m in re.finditer(rb"\b\d+\b", data)] or [(a, b)]
        a, b = rnd.choice(numbers)
        return kind, data[:a] + wrap[0] * depth + data[a:b] + wrap[1] * depth + data[b:]
    return kind, data[:a] + rnd.choice(_ABSURD) + data[b:]


def _mutate_directive(kind: str, data: bytes, rnd: random.Random) -> bytes:
    """Replace an #include's name, or insert / replace a preprocessor directive line."""
    lines = data.split(b"\n")
    if kind == "include":
        includes = [i for i, line in enumerate(lines) if line.lstrip().startswith(b"#include")]
        new = b"#include " + rnd.choice(_INCLUDES)
        if includes and rnd.random() < 0.7:
            lines[rnd.choice(includes)] = new
        else:
            lines.insert(rnd.randrange(len(lines) + 1), new)
        return b"\n".join(lines)
    directives = [i for i, line in enumerate(lines) if line.lstrip().startswith(b"#")]
    new = rnd.choice(_DIRECTIVES)
    if directives and rnd.random() < 0.5:
        lines[rnd.choice(directives)] = new
    else:
        lines.insert(rnd.randrange(len(lines) + 1), new)
    return b"\n".join(lines)


def classify_compile(main: Path, include_dir: Path) -> tuple[str, str]:
    """("ok" | "error" | "FAIL ...", detail) for one compile of `main` in this process."""
    from p4sim import frontend
    from p4sim.errors import CompileTimeout, P4Error, time_limit

    try:
        with time_limit(MUTANT_TIMEOUT_S):
            frontend.compile_file(main, include_dirs=(include_dir,))
        return "ok", ""
    except P4Error as exc:
        text = str(exc)
        m = POSITION.match(text)
        if not m or int(m["line"]) < 1 or int(m["col"]) < 1:
            return "FAIL error without a real position", text[:300]
        if frontend.INTERNAL_ERROR in text:
            return "FAIL internal error", text[:300]
        return "error", text.splitlines()[0][:300]
    except CompileTimeout:
        return f"FAIL no answer in {MUTANT_TIMEOUT_S} s", ""
    except BaseException as exc:  # noqa: BLE001 - the fuzzer's whole point
        return f"FAIL {type(exc).__name__}", repr(exc)[:300]


def fuzz_p4(seconds: float, seed: int) -> int:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    rnd = random.Random(seed)
    seeds = p4_seeds()
    outcomes: collections.Counter = collections.Counter()
    kinds: collections.Counter = collections.Counter()
    failures = []
    deadline = time.monotonic() + seconds
    with tempfile.TemporaryDirectory(prefix="p4fuzz-") as tmp:
        work = Path(tmp)
        shutil.copytree(ROOT / "p4src", work / "p4src")
        tried = 0
        while time.monotonic() < deadline:
            main, victim = rnd.choice(seeds)
            if victim.is_relative_to(ROOT / "p4src"):
                main_copy = work / main.relative_to(ROOT)
                target = work / victim.relative_to(ROOT)
            else:
                main_copy = target = work / "single" / victim.name
                target.parent.mkdir(exist_ok=True)
            original = victim.read_bytes()
            kind, mutant = mutate_p4(original, rnd)
            target.write_bytes(mutant)
            outcome, detail = classify_compile(main_copy, victim.parent)
            target.write_bytes(original)
            tried += 1
            kinds[kind] += 1
            outcomes[outcome] += 1
            if outcome.startswith("FAIL"):
                keep = work.parent / f"p4fuzz-mutant-{seed}-{tried}-{victim.name}"
                keep.write_bytes(mutant)
                failures.append(f"{outcome}: {kind} of {victim} (kept as {keep}): {detail}")
    print(
        f"P4 mutation fuzzer (seed {seed}, {seconds:.0f} s): {tried} mutants of {len(seeds)} programs"
    )
    print("  mutations: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    print("  outcomes:  " + ", ".join(f"{k} {n}" for k, n in sorted(outcomes.items())))
    for f in failures:
        print("  " + f)
    return 1 if failures else 0


# ----------------------------------------------------------------------------- P4Runtime
def fuzz_p4runtime(seconds: float, seed: int) -> int:
    from p4sim.p4runtime.fuzz import RuntimeFuzzer

    return RuntimeFuzzer(seed).run(seconds)


PROG = "python -m p4sim.fuzz"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("target", choices=["p4", "p4runtime"])
    duration = p.add_argument(
        "--duration-s",
        type=float_range(0, 86400, "duration", low_open=True),
        default=30.0,
        help="time budget in seconds",
    )
    add_old_name(p, "--seconds", duration)
    p.add_argument("--seed", type=int_range(0, MAX_UINT64, "seed"), default=1)
    args = p.parse_args(argv)
    if args.target == "p4":
        return fuzz_p4(args.duration_s, args.seed)
    return fuzz_p4runtime(args.duration_s, args.seed)


if __name__ == "__main__":
    sys.exit(run(PROG, main))
