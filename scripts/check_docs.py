"""Check that the figures pages name only what their scripts have, and that no page names a path of
one machine: `make check-docs` (part of `make style`).

    uv run python scripts/check_docs.py                     # the default pages (below)
    uv run python scripts/check_docs.py docs/other.md       # other pages

A figure is only as good as the command beside it, and a command naming an option or an input the
script no longer has reproduces nothing. Every command on these pages that runs a benchmark script,
directly (`scripts/bench_scorer.py --only codes-3000`, `uv run python scripts/...`) or through its make
target (`make bench-scorer ARGS="..."`, `make bench-scale SCALE_FLAGS="..."`, the targets read from the
Makefile), is checked: each `--option` must be one the script's `--help` lists, and each input given
to an option with choices one of them, and each input given to `--only`, like each input a page
names in backticks (`codes-3000`, a size of a shape bench_scorer.py has), one its `--list` lists.

A command in the docs must run on a fresh clone as written, so no page (docs/, README.md,
CONTRIBUTING.md, CHANGELOG.md, the Makefile's comments) may name an absolute path that exists on one
machine only: a home or workspace folder (`/home/...`, `/Users/...`, `/root/...`, `/work/...`,
`/mnt/...`, a Windows `C:\\Users\\...`) or a system temporary folder of one user (`/var/folders/...`).
`/tmp/...` and placeholders such as `/data/oebdata` or `PYTHON` are fine: they say where to put
something, on any machine.

Exit status 1 with one line per problem (file, line, what is wrong, what exists).
"""

from __future__ import annotations

import argparse
import functools
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = (*sorted((ROOT / "docs" / "performance").glob("*.md")), ROOT / "CHANGELOG.md")
"""The figures pages: every benchmark command on them is checked against its script."""
EVERY_PAGE = (*sorted((ROOT / "docs").rglob("*.md")), *(ROOT / name for name in ("README.md", "CONTRIBUTING.md")))
"""The pages checked for paths of one machine (with `PAGES` and the Makefile)."""
_MACHINE_PATH = re.compile(
    r"(?<![\w.:/~$-])(?:/(?:home|Users|root|work|mnt|media|private/var/folders|var/folders)/[^\s`'\"()\[\]<>|,;]*"
    r"|[A-Za-z]:\\(?:Users|Documents and Settings)\\[^\s`'\"]*)"
)
"""An absolute path only one machine has: under a home, workspace or mount folder, or a user's temp folder."""
_DIRECT = re.compile(r"scripts/(\w+\.py)((?:[ \t]+[^`#\n|]*)?)")
_MAKE = re.compile(r"make ([\w-]+)((?:[ \t]+[A-Z_]+=(?:\"[^\"]*\"|'[^']*'|[^\s`]+))*)")
_INPUT = re.compile(r"`([a-z]+(?:-[a-z]+)*-\d+(?:x\d+)?)`")
"""A generated input as the scorer pages name one: `codes-3000`, `ledger-nested-1000`, `invoices-200x10`."""


@functools.cache
def make_targets() -> dict[str, tuple[str, str | None]]:
    """Each Makefile target that runs a script: (the script, the variable its flags come in)."""
    targets, current = {}, None
    for line in (ROOT / "Makefile").read_text().splitlines():
        header = re.match(r"^([\w-]+):", line)
        if header:
            current = header.group(1)
        elif line.startswith("\t") and current:
            run = re.search(r"python scripts/(\w+\.py)(?:.*?\$\((\w+)\))?", line)
            if run and current not in targets:
                targets[current] = (run.group(1), run.group(2))
    return targets


@functools.cache
def options(script: str) -> frozenset[str]:
    """The options the script's `--help` lists (its argparse parser, as a user sees it)."""
    help_text = _run(script, "--help")
    return frozenset(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", help_text))


@functools.cache
def choices(script: str) -> dict[str, frozenset[str]]:
    """The values each option with choices takes, as its `--help` usage shows them (`--only {a,b}`)."""
    found = re.findall(r"(--[a-z][a-z0-9-]*) \{([^}]*)\}", _run(script, "--help"))
    return {flag: frozenset(values.split(",")) for flag, values in found}


@functools.cache
def inputs(script: str) -> frozenset[str]:
    """The inputs the script's `--list` names (the first word of each line); none without `--list`."""
    if "--list" not in options(script):
        return frozenset()
    return frozenset(line.split()[0] for line in _run(script, "--list").splitlines() if line.strip())


def _run(script: str, flag: str) -> str:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / script), flag], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"check_docs: scripts/{script} {flag} failed:\n{done.stderr[-1000:]}")
    return done.stdout


def commands(text: str) -> Iterator[tuple[int, str, list[str]]]:
    """(line number, script, words) of every benchmark command in a page."""
    for number, line in enumerate(text.splitlines(), start=1):
        for found in _DIRECT.finditer(line):
            yield number, found.group(1), _words(found.group(2))
        for found in _MAKE.finditer(line):
            target = make_targets().get(found.group(1))
            if target is None:
                continue
            script, variable = target
            words: list[str] = []
            for assignment in _words(found.group(2)):
                name, _, value = assignment.partition("=")
                if name == variable:
                    words += _words(value)
            yield number, script, words


def _words(text: str) -> list[str]:
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    return [word.strip("[]") for word in words]


def problems(page: Path) -> Iterator[str]:
    """One line per option or input a page names that its script does not have."""
    text = page.read_text()
    where = page.relative_to(ROOT) if page.is_relative_to(ROOT) else page
    for number, script, words in commands(text):
        if not (ROOT / "scripts" / script).is_file():
            yield f"{where}:{number}: scripts/{script} does not exist"
            continue
        known, giving = options(script), None
        for word in words:
            if word.startswith("--"):
                flag = word.split("=", 1)[0]
                giving = flag
                if flag not in known:
                    yield f"{where}:{number}: {flag} is not an option of scripts/{script} ({', '.join(sorted(known))})"
            elif giving in choices(script) and word not in choices(script)[giving]:
                allowed = ", ".join(sorted(choices(script)[giving]))
                yield f"{where}:{number}: {giving} {word} is not a choice of scripts/{script} ({allowed})"
            elif giving == "--only" and giving not in choices(script) and word not in inputs(script):
                yield f"{where}:{number}: {word} is not an input of scripts/{script} (see its --list)"
    known = inputs("bench_scorer.py")
    shapes = {_shape(name) for name in known}
    for number, line in enumerate(text.splitlines(), start=1):
        for name in _INPUT.findall(line):
            if _shape(name) in shapes and name not in known:
                yield f"{where}:{number}: `{name}` is not an input of scripts/bench_scorer.py (see its --list)"


def machine_paths(page: Path) -> Iterator[str]:
    """One line per absolute path of one machine the page names (a command must run on a fresh clone)."""
    where = page.relative_to(ROOT) if page.is_relative_to(ROOT) else page
    for number, line in enumerate(page.read_text().splitlines(), start=1):
        for found in _MACHINE_PATH.finditer(line):
            path = found.group(0).rstrip(".:")
            yield (
                f"{where}:{number}: {path} is a path of one machine; write a placeholder (PYTHON, DIR) or a path "
                "relative to the checkout, so the command runs on a fresh clone"
            )


def _shape(name: str) -> str:
    """`codes-nested` of `codes-nested-3000`: a size of a shape the benchmark has is checked, not `utf-8`."""
    return re.sub(r"-\d+(?:x\d+)?$", "", name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("pages", nargs="*", type=Path, help="pages to check (default: the figures pages)")
    parser.add_argument(
        "--examples",
        action="store_true",
        help="run every fenced command and Python example of the README and docs/ (or of the pages given) "
        "on the bundled sample instead (scripts/doc_examples.py)",
    )
    parser.add_argument("--verbose", action="store_true", help="--examples: list the skipped ones and why")
    args = parser.parse_args(argv)
    if args.examples:
        import doc_examples  # beside this script

        pages = tuple(page.resolve() for page in args.pages) or doc_examples.PAGES
        return doc_examples.check(pages, verbose=args.verbose)
    figures = [page.resolve() for page in args.pages] or list(PAGES)
    every = figures if args.pages else sorted({*EVERY_PAGE, *PAGES, ROOT / "Makefile"})
    found = [line for page in figures for line in problems(page)]
    found += [line for page in every for line in machine_paths(page)]
    for line in found:
        print(line, file=sys.stderr)
    if not found:
        print(
            f"check_docs: every command on {len(figures)} pages names existing options and inputs; "
            f"no path of one machine on {len(every)} pages"
        )
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
