"""The Dockerfile: hadolint clean, and built the way README's `## Container and cluster` says."""

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from dockerfile_parse import DockerfileParser

from .common import CLUSTER, ROOT

HADOLINT = Path(sys.executable).parent / "hadolint"


@pytest.fixture(scope="module")
def instructions() -> list[dict]:
    parser = DockerfileParser(path=str(ROOT / "Dockerfile"))
    return [instruction for instruction in parser.structure if instruction["instruction"] != "COMMENT"]


def stages(instructions: list[dict]) -> list[list[dict]]:
    out: list[list[dict]] = []
    for instruction in instructions:
        if instruction["instruction"] == "FROM":
            out.append([])
        if out:
            out[-1].append(instruction)
    return out


def values(stage: list[dict], name: str) -> list[str]:
    return [instruction["value"] for instruction in stage if instruction["instruction"] == name]


def test_hadolint_passes():
    result = subprocess.run([HADOLINT, str(ROOT / "Dockerfile")], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_base_image_is_an_argument(instructions):
    assert instructions[0]["instruction"] == "ARG"
    assert instructions[0]["value"] == "BASE_IMAGE=python:3.12-slim"
    froms = [instruction["value"] for instruction in instructions if instruction["instruction"] == "FROM"]
    assert froms == ["${BASE_IMAGE} AS build", "${BASE_IMAGE}"]


def test_build_stage_installs_the_lock_dependencies_first(instructions):
    build = stages(instructions)[0]
    steps = [(instruction["instruction"], instruction["value"]) for instruction in build]
    runs = values(build, "RUN")
    assert re.fullmatch(r"python3 -m pip install --no-cache-dir uv==[0-9.]+", runs[0])
    deps = next(i for i, (kind, value) in enumerate(steps) if "--no-install-project" in value)
    code = steps.index(("COPY", "oeb ./oeb"))
    lock = next(i for i, (kind, value) in enumerate(steps) if kind == "COPY" and "uv.lock" in value)
    assert lock < deps < code < len(steps) - 1
    syncs = [shlex.split(part) for command in runs[1:] for part in command.split("&&") if "uv sync" in part]
    assert len(syncs) == 2
    for words in syncs:
        assert words[:2] == ["uv", "sync"] and {"--frozen", "--no-dev", "--no-default-groups"} <= set(words)


def test_runtime_stage_is_small_non_root_and_runs_oeb(instructions):
    runtime = stages(instructions)[-1]
    assert values(runtime, "COPY")[0] == "--from=build /app /app"
    assert not any("uv " in run or "pip " in run for run in values(runtime, "RUN"))  # no installer left
    assert all("rm -rf /var/lib/apt/lists/*" in run for run in values(runtime, "RUN") if "apt-get" in run)
    (user,) = values(runtime, "USER")
    assert user.split(":")[0] not in ("0", "root")
    assert values(runtime, "ENTRYPOINT") == ['["oeb"]']
    env = " ".join(values(runtime, "ENV"))
    assert "PATH=/app/.venv/bin:$PATH" in env


def test_no_secret_is_baked_in(instructions):
    for instruction in instructions:
        if instruction["instruction"] in ("ENV", "ARG", "LABEL"):
            assert not re.search(r"(KEY|TOKEN|SECRET|PASSWORD)\w*=", instruction["value"], re.I), instruction


def test_dockerignore_keeps_the_context_small_and_secret_free():
    ignored = set((ROOT / ".dockerignore").read_text().split())
    assert {".git", ".venv", "**/__pycache__", "tests", "runs", ".env"} <= ignored


@pytest.mark.parametrize(
    "path",
    [ROOT / "Dockerfile", ROOT / ".dockerignore", *sorted(p for p in CLUSTER.rglob("*") if p.is_file())],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_no_key_or_machine_path_in_committed_configs(path):
    text = path.read_text(encoding="utf-8")
    assert not re.search(r"\b(sk-[A-Za-z0-9]{8,}|AKIA[0-9A-Z]{16})", text)
    assert not re.search(r"(API_KEY|SECRET_ACCESS_KEY|TOKEN)\s*[:=]\s*['\"]?[A-Za-z0-9/+]{8,}", text)
    assert not re.search(r"/(root|work)/|\.pyenv", text)  # /home/ubuntu in aws.yaml is its ssh_user's home
