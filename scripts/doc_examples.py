"""Run every fenced command and Python example of the README and docs/ on the bundled sample
(`scripts/check_docs.py --examples`, part of `make test`).

A page's ```sh block is read command by command (continuation lines joined, `$ ` prompts and trailing
comments dropped); a ```python block runs as is, in one namespace per page that starts with
`prediction`, `gold` and `schema` (the bundled invoice example). Everything runs in a scratch folder
holding the repository's `oeb/`, `configs/` and `cluster/`, the invoice example as `pred.json`,
`gold.json` and `schema.json`, a sample PDF as `inv.pdf`, and `runs/` with two graded mock runs (made
once, shared by every page); `runs/A`, `runs/B`, ... and `runs/mock-<stamp>` name them, `/data/oebdata`
the sample. `oeb` commands run in this process (`oeb.cli.main`), so the whole check costs about the
two runs and a few seconds.

A command that cannot run here is skipped with its reason, printed: one that needs a vendor's key (a
config or a run of a vendor), a cluster, a container engine, S3 or the Hub, a server left running
(`oeb view` without `--export`), a make target, or a synopsis with placeholders (`RUN`, `[--flag]`,
`...`). A block can be skipped by hand with `<!-- check-docs: skip REASON -->` on the line above it.
A command fails when it exits other than 0 (3 for a gate: `--fail-if-worse`, `--fail-under`); a
Python block when it raises.

A page marked `<!-- check-docs: walk -->` is a walk whose steps build on each other with the shell's
own means (variables, loops, `$(...)`): each of its shell blocks runs whole through `bash -eu`, in
order, in a folder of the page's own (beside the scratch folder's `oeb/`), with `uv run oeb` as the
installed `oeb`; its blocks marked skip (a server left running) are left out.
"""

from __future__ import annotations

import contextlib
import glob
import io
import itertools
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")))
SHELL = ("sh", "bash", "shell", "console")
OFFLINE = ("mock", "replay")
GATES = ("--fail-if-worse", "--fail-under")
_FENCE = re.compile(r"^\s*```(\w*)\s*$")
_MARK = re.compile(r"<!--\s*check-docs:\s*skip\s+(.*?)\s*-->")
_WALK = re.compile(r"<!--\s*check-docs:\s*walk\s*-->")
_BASH_PRELUDE = 'uv() { if [ "$1" = run ]; then shift; "$@"; else command uv "$@"; fi; }\n'
"""`uv run oeb ...` in a walk: the `oeb` of this interpreter's environment, first on PATH."""
_PLACEHOLDER = re.compile(r"^(?:[A-Z][A-Z_]*|.*\b(?:ME|BUCKET|PYTHON|FOLDER)\b.*)$")
_RUN_OF = re.compile(r"runs/([a-z0-9-]+?)-(?:\d{8}-\d{6}-[0-9a-f]{4}|\*|\.\.\.)")
_EXAMPLE_RUN = re.compile(r"runs/mock-\d{8}-\d{6}-[0-9a-f]{4}|runs/mock-\*")
_OTHER_TOOLS = {
    "make": "a make target (CI and the benchmarks run them)",
    "docker": "needs a container engine",
    "podman": "needs a container engine",
    "ray": "needs a Ray cluster",
    "kubectl": "needs a Kubernetes cluster",
    "hf": "needs the Hugging Face Hub",
    "curl": "needs `oeb view` serving",
    "python": "serves until stopped",
    "uv": "a benchmark script (make check-docs checks its options)",
    "export": "sets the shell's environment",
    "rm": "needs a folder named by a placeholder",
    "case": "a shell example around a command that needs a key",
}


@dataclass(frozen=True)
class Example:
    """One command or Python block of a page, with why it is skipped (None: it runs)."""

    page: Path
    line: int
    kind: str
    text: str
    skip: str | None = None

    @property
    def where(self) -> str:
        page = self.page.relative_to(ROOT) if self.page.is_relative_to(ROOT) else self.page
        return f"{page}:{self.line}"


def examples(page: Path) -> Iterator[Example]:
    """The page's shell commands and Python blocks, in order (a walk's shell blocks whole, as `bash`)."""
    text = page.read_text(encoding="utf-8")
    walk = bool(_WALK.search(text))
    lines = text.splitlines()
    number = 0
    while number < len(lines):
        fence = _FENCE.match(lines[number])
        if not fence:
            number += 1
            continue
        start, kind = number, fence.group(1)
        number += 1
        body: list[tuple[int, str]] = []
        while number < len(lines) and not _FENCE.match(lines[number]):
            body.append((number + 1, lines[number]))
            number += 1
        number += 1
        marked = _MARK.search(lines[start - 1]) if start else None
        skip = marked.group(1) if marked else None
        if kind == "python":
            yield Example(page, start + 2, "python", "\n".join(text for _, text in body), skip)
        elif kind in SHELL and walk:
            yield Example(page, start + 2, "bash", "\n".join(text for _, text in body), skip)
        elif kind in SHELL:
            for line, command in _commands(body):
                yield Example(page, line, "sh", command, skip)


def _commands(body: list[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """Each command of a shell block: continuations joined, a `$ ` prompt and comments dropped."""
    pending: list[str] = []
    first = 0
    until = None
    for line, text in body:
        text = text.strip()
        if until is not None:  # a here-document's lines belong to its command
            until = None if text == until else until
            continue
        heredoc = re.search(r"<<-?\s*['\"]?(\w+)['\"]?", text)
        if heredoc and not pending:
            until = heredoc.group(1)
            yield line, f"heredoc {text}"
            continue
        if not pending:
            first = line
            text = text.removeprefix("$ ")
        if text.endswith("\\"):
            pending.append(text[:-1])
            continue
        command = " ".join([*pending, text]).strip()
        pending = []
        try:
            words = shlex.split(command, comments=True)
        except ValueError:
            words = command.split()
        if words:
            yield first, shlex.join(words) if "|" not in command else command.split(" #")[0].strip()


class Sandbox:
    """The scratch folder every example runs in, and the runs it holds."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        for name in ("configs", "cluster"):
            (folder / name).symlink_to(ROOT / name)
        # oeb/ as the repository has it, but for the mock's simulated latency: 0 instead of 0.2 s a
        # document, which would only make each run of the sample wait 1.5 s
        for child in (ROOT / "oeb").iterdir():
            if child.name != "examples":
                (folder / "oeb").mkdir(exist_ok=True)
                (folder / "oeb" / child.name).symlink_to(child)
        (folder / "oeb" / "examples").mkdir()
        for child in (ROOT / "oeb" / "examples").iterdir():
            if child.name != "mock.yaml":
                (folder / "oeb" / "examples" / child.name).symlink_to(child)
        mock = (ROOT / "oeb" / "examples" / "mock.yaml").read_text()
        (folder / "oeb" / "examples" / "mock.yaml").write_text(mock.replace("latency: 0.2", "latency: 0.0"))
        invoice = ROOT / "oeb" / "examples" / "invoice"
        for name in ("pred", "gold", "schema"):
            shutil.copy(invoice / f"{name}.json", folder / f"{name}.json")
        shutil.copy(sorted((ROOT / "oeb" / "data" / "sample" / "pdfs").glob("*.pdf"))[0], folder / "inv.pdf")
        self._runs: list[str] = []

    @property
    def runs(self) -> list[str]:
        """Two graded runs of the mock on the sample (seeds 0 and 1), made when first named."""
        if not self._runs:
            self._runs = [self._run([]), self._run(["--set", "system.mock.seed=1"])]
        return self._runs

    def _run(self, sets: list[str]) -> str:
        before = set(glob.glob("runs/*/", root_dir=self.folder))
        code, _, err = self.oeb(["run", "--config", "oeb/examples/mock.yaml", *sets, "--out", "runs", "-y"])
        if code != 0:
            raise SystemExit(f"doc_examples: the sample run failed ({code}): {err.strip().splitlines()[-1:]}")
        [made] = set(glob.glob("runs/*/", root_dir=self.folder)) - before
        return made.rstrip("/")

    def oeb(self, argv: list[str]) -> tuple[int, str, str]:
        """`oeb ARGV` in this process, in the folder: exit code, stdout, stderr."""
        from oeb.cli import main

        out, err = io.StringIO(), io.StringIO()
        with _inside(self.folder), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exit_:  # argparse
                code = exit_.code if isinstance(exit_.code, int) else 2
        return code, out.getvalue(), err.getvalue()

    def substitute(self, command: str) -> str:
        """The example's names of runs and of the dataset, as the sandbox has them."""
        command = re.sub(r"^uv run oeb\b", "oeb", command.replace("/data/oebdata", "oeb/data/sample"))
        letters = re.compile(r"runs/[A-Ea-e](?=[\s/]|$)")
        if not (letters.search(command) or _EXAMPLE_RUN.search(command) or "runs/*" in command):
            return command
        named = iter(self.runs * 3)
        command = letters.sub(lambda _: next(named), command)
        return _EXAMPLE_RUN.sub(self.runs[0], command)

    def systems_of(self, words: list[str]) -> list[str]:
        """The systems a command's configs (`--config F`) and `--system` name."""
        found = []
        for flag, value in itertools.pairwise(words):
            if flag == "--system":
                found.append(value)
            elif flag == "--config":
                path = self.folder / value
                try:
                    tree = yaml.safe_load(path.read_text()) if path.is_file() else None
                except (OSError, yaml.YAMLError):
                    tree = None
                system = tree.get("system") if isinstance(tree, dict) else None
                found += list(system) if isinstance(system, dict) else [Path(value).stem]
        return found


@contextlib.contextmanager
def _inside(folder: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def _key_of(system: str) -> str:
    from oeb.systems.registry import adapter_class

    try:
        keys = adapter_class(system).keys
    except Exception:
        return "a vendor's key"
    return " or ".join(keys) if keys else "a vendor's key"


def skip_reason(command: str, sandbox: Sandbox) -> str | None:
    """Why a command cannot run here, or None."""
    words = command.split()
    while words and re.match(r"^[A-Z_]+=", words[0]):
        words = words[1:]
    if not words:
        return "no command"
    if words[0] == "heredoc":
        return "a shell here-document (it writes a file for the commands after it)"
    if words[0] == "for":
        return "a shell loop"
    if words[0] != "oeb":
        return _OTHER_TOOLS.get(words[0], f"not an oeb command ({words[0]})")
    if "s3://" in command or "hf://" in command:
        return "needs S3 or the Hub (the tests cover both with moto and a fake hub)"
    holes = [w for w in words[1:] if _PLACEHOLDER.match(w.strip("'\"")) or "[" in w.strip("*") or w == "..."]
    holes += [w for w in words if "<" in w or w.startswith("[") or w.endswith("]") or w == "|"]
    if holes or "..." in command or "mine/" in command:
        return f"a synopsis with placeholders ({' '.join(dict.fromkeys(holes)) or 'mine/ or ...'})"
    runs = [m.group(1) for m in _RUN_OF.finditer(command) if m.group(1) not in OFFLINE]
    if runs:
        return f"names a run of {runs[0]}, made with {_key_of(runs[0])}"
    vendors = [s for s in sandbox.systems_of(words) if s not in OFFLINE]
    if vendors:
        return f"needs {_key_of(vendors[0])} ({vendors[0]})"
    try:
        plain = shlex.split(command)
    except ValueError:
        plain = words
    outside = [w for w in plain if w.startswith("/")]
    if outside:
        return f"names {outside[0]} outside the scratch folder (a skipped command before it makes it)"
    if words[1] == "view" and "--export" not in words:
        return "serves until Ctrl-C (tests/view opens it in Chromium)"
    if words[1] == "grade" and "--stop-workers" in words:
        return "needs a running Ray"
    return None


def run_command(command: str, sandbox: Sandbox) -> str | None:
    """Run one oeb command; None when it did what it should, else what went wrong."""
    words = shlex.split(command)
    env = {}
    while words and re.match(r"^[A-Z_]+=", words[0]):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    target = None
    if ">" in words:
        at = words.index(">")
        words, target = words[:at], words[at + 1]
    argv = []
    for word in words[1:]:
        hits = sorted(glob.glob(word, root_dir=sandbox.folder)) if any(c in word for c in "*?") else []
        argv += hits or [word]
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        code, out, err = sandbox.oeb(argv)
    finally:
        for name, value in saved.items():
            os.environ.pop(name, None) if value is None else os.environ.__setitem__(name, value)
    if target:
        (sandbox.folder / target).write_text(out)
    allowed = (0, 3) if any(gate in words for gate in GATES) else (0,)
    if code in allowed:
        return None
    last = (err.strip().splitlines() or ["(nothing on stderr)"])[-1]
    return f"exit {code}: {last}"


def run_bash(text: str, page: Path, sandbox: Sandbox) -> str | None:
    """One block of a walk through bash, in the page's own folder; None when it exits 0."""
    folder = sandbox.folder / "walks" / page.stem
    if not folder.exists():
        folder.mkdir(parents=True)
        for name in ("oeb", "configs"):
            (folder / name).symlink_to(sandbox.folder / name)
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    try:
        done = subprocess.run(
            ["bash", "-eu", "-c", _BASH_PRELUDE + text],
            cwd=folder,
            env={**os.environ, "PATH": path},
            capture_output=True,
            text=True,
            timeout=600,
        )
    except subprocess.TimeoutExpired:
        return "still running after 600 s"
    if done.returncode == 0:
        return None
    last = (done.stderr.strip().splitlines() or ["(nothing on stderr)"])[-1]
    return f"exit {done.returncode}: {last}"


def run_python(text: str, namespace: dict[str, Any], sandbox: Sandbox) -> str | None:
    """Run one Python block in the page's namespace; None, or the error it raised."""
    if "s3://" in text or "hf://" in text:
        return None
    out = io.StringIO()
    with _inside(sandbox.folder), contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            exec(compile(text, "<example>", "exec"), namespace)  # the docs' own examples
        except Exception as error:
            return f"{type(error).__name__}: {error}"
    return None


def python_skip(text: str) -> str | None:
    """Why a Python block cannot run here, or None."""
    if "s3://" in text or "hf://" in text:
        return "needs S3 or the Hub"
    vendors = re.findall(r"get\(\"([a-z0-9-]+)\"", text)
    vendors = [name for name in vendors if name not in OFFLINE]
    return f"needs {_key_of(vendors[0])} ({vendors[0]})" if vendors else None


def _prelude(page: Path) -> dict[str, Any]:
    """A fresh module per page (a dataclass needs its module in sys.modules) holding the example's
    `prediction`, `gold` and `schema`."""
    import json
    import types

    invoice = ROOT / "oeb" / "examples" / "invoice"
    loaded = {name: json.loads((invoice / f"{name}.json").read_text()) for name in ("pred", "gold", "schema")}
    module = types.ModuleType(f"doc_example_{re.sub(r'\W', '_', page.stem)}")
    sys.modules[module.__name__] = module
    module.__dict__.update(prediction=loaded["pred"], gold=loaded["gold"], schema=loaded["schema"])
    return module.__dict__


def check(pages: tuple[Path, ...] = PAGES, *, verbose: bool = False) -> int:
    """Run every example of the pages; print the failures (and with `verbose` the skipped ones)."""
    began = time.monotonic()
    ran, skipped, failed = 0, 0, []
    with tempfile.TemporaryDirectory(prefix="oeb-docs-") as scratch:
        os.environ.pop("OEB_RAY_ADDRESS", None)
        sandbox = Sandbox(Path(scratch))
        for page in pages:
            namespace = _prelude(page)
            for example in examples(page):
                if example.kind == "python":
                    reason = example.skip or python_skip(example.text)
                    problem = None if reason else run_python(example.text, namespace, sandbox)
                elif example.kind == "bash":
                    reason = example.skip
                    problem = None if reason else run_bash(example.text, page, sandbox)
                else:
                    command = sandbox.substitute(example.text)
                    reason = example.skip or skip_reason(command, sandbox)
                    problem = None if reason else run_command(command, sandbox)
                if reason:
                    skipped += 1
                    if verbose:
                        print(f"skipped {example.where}: {example.text[:80]} ({reason})")
                    continue
                ran += 1
                if verbose:
                    print(f"ran {example.where} at {time.monotonic() - began:.1f} s: {example.text[:80]}")
                if problem:
                    failed.append(f"{example.where}: {example.text[:100]}: {problem}")
    for line in failed:
        print(line, file=sys.stderr)
    seconds = time.monotonic() - began
    print(
        f"doc_examples: {ran} examples ran ({len(failed)} failed), {skipped} skipped with a reason "
        f"(--verbose lists them), {seconds:.1f} s"
    )
    return 1 if failed else 0
