"""Hostile run configs and `--set`s: unknown keys, wrong types, non-finite numbers, files that are not
YAML, nesting 10,000 levels deep and YAML alias bombs.

`oeb run` and `oeb resume` refuse each one while planning, before Ray starts or any call is made, with
one line naming the key (or the file) and the fix, a non-zero exit and no traceback; the run folders
already saved stay byte for byte as they were.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from oeb.dataset import SAMPLE_DATASET
from oeb.errors import OebError
from oeb.run import engine
from oeb.run.plan.config import check_tree, init_tree, load_config, to_yaml
from reliability.conftest import assert_refused, oeb_cli, snapshot

DEEP = "[" * 10_000 + "]" * 10_000
BOMB = "".join(
    f"b{n}: &b{n} [{', '.join([f'*b{n - 1}'] * 10) if n else 'x'}]\n" for n in range(9)
)  # b8 expands to 10^8 values


def config_text(**values: str) -> str:
    """The mock config on the sample, with top-level keys given as YAML text (`timeout=".inf"`)."""
    tree = {key: value for key, value in init_tree("mock", SAMPLE_DATASET).items() if key not in values}
    return to_yaml(tree) + "".join(f"{key}: {value}\n" for key, value in values.items())


BROKEN_FILES = {
    "unknown top-level key": (config_text(timeuot="5"), ("timeuot is not a key a config has; did you mean timeout?",)),
    "unknown row key": (config_text(rows="{sample: 0, limit: 0, only: null, first: 3}"), ("rows.first",)),
    "timeout a string": (config_text(timeout="soon"), ("timeout must be a number, not 'soon'",)),
    "timeout infinite": (config_text(timeout=".inf"), ("timeout must be a finite number, not inf",)),
    "timeout NaN": (config_text(timeout=".nan"), ("timeout must be a finite number, not nan",)),
    "timeout past a float": (config_text(timeout="1" + "0" * 400), ("timeout must be a finite number, not 1000",)),
    "a system name with a line break": (config_text(system='{"mo\\nck": {}}'), ("system.'mo\\nck': unknown",)),
    "workers a float": (config_text(workers="2.5"), ("workers must be an integer, not 2.5",)),
    "rows a list": (config_text(rows="[1]"), ("rows must be a mapping of sample, limit, only",)),
    "system a number": (config_text(system="3"), ("system is one system and its options",)),
    "not YAML": ("dataset: [unclosed\n", ("is not YAML",)),
    "not a mapping": ("- dataset\n- manifest\n", ("a config is a mapping of dataset, manifest",)),
    "empty": ("", ("a config is a mapping of dataset",)),
    "a Python object tag": ("dataset: !!python/object/apply:os.system [ls]\n", ("is not YAML", "constructor")),
    "nested 10,000 deep": (f"dataset: {DEEP}\n", ("is not YAML", "nests more than 100 levels deep")),
    "a key with a line break": (
        config_text(scorers='{"field\\nmatching": {}}').replace("scorers:\n  field_matching: {}\n", ""),
        ("'scorers.field\\nmatching' is not a scorer",),
    ),
    "an alias bomb": (BOMB + config_text(timeout="*b8"), ("is not YAML", "100,000 values", "write the values out")),
}
BAD_SETS = {
    "no '='": (["rows"], ("--set 'rows': write path=value",)),
    "no such key": (["rows.sampel=3"], ("did you mean rows.sample?",)),
    "not YAML": (["timeout=[1"], ("--set 'timeout=[1': the value is not YAML",)),
    "nested 10,000 deep": ([f"timeout={DEEP}"], ("the value is not YAML", "nests more than 100 levels deep")),
    "a wrong type": (["workers=many"], ("workers must be an integer, not 'many'",)),
    "infinite": (["ray.rate_limit.requests_per_second=.inf"], ("requests_per_second must be a finite number",)),
}


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    """A runs folder holding one launched run with a saved record and prediction."""
    config = tmp_path / "mock.yaml"
    config.write_text(config_text())
    plan = engine.plan_run(load_config(str(config)), str(tmp_path / "runs"))
    plan.folder.write_config(plan.config.plain())
    plan.folder.write_settings(plan.settings)
    doc_id = plan.rows[0].doc_id
    record = {"id": doc_id, "output": {"total": 1}, "error": None}
    Path(plan.folder.url, "records").mkdir()
    Path(plan.folder.url, "records", f"{doc_id}.json").write_text(json.dumps(record))
    Path(plan.folder.url, "predictions").mkdir()
    Path(plan.folder.url, "predictions", f"{doc_id}.json").write_text(json.dumps(record["output"]))
    return tmp_path / "runs"


def the_run(runs: Path) -> str:
    [folder] = runs.iterdir()
    return str(folder)


@pytest.mark.parametrize(("text", "says"), BROKEN_FILES.values(), ids=BROKEN_FILES.keys())
def test_a_broken_config_file_is_refused(capsys, runs: Path, tmp_path: Path, text: str, says: tuple[str, ...]) -> None:
    config = tmp_path / "broken.yaml"
    config.write_text(text)
    before = snapshot(runs)
    started = time.monotonic()
    assert_refused(oeb_cli(capsys, "run", "--config", str(config), "--out", str(runs), "-y"), str(config), *says)
    assert time.monotonic() - started < 10  # an alias bomb is refused, not expanded
    assert snapshot(runs) == before


@pytest.mark.parametrize(("text", "says"), BROKEN_FILES.values(), ids=BROKEN_FILES.keys())
def test_resume_refuses_a_run_whose_config_was_broken(capsys, runs: Path, text: str, says: tuple[str, ...]) -> None:
    folder = the_run(runs)
    Path(folder, "config.yaml").write_text(text)
    before = snapshot(runs)
    assert_refused(oeb_cli(capsys, "resume", folder, "-y"), "config.yaml", *says)
    assert snapshot(runs) == before


@pytest.mark.parametrize(("sets", "says"), BAD_SETS.values(), ids=BAD_SETS.keys())
def test_a_bad_set_is_refused_by_run_and_resume(capsys, runs: Path, sets: list[str], says: tuple[str, ...]) -> None:
    config = Path(the_run(runs), "config.yaml")
    flags = [part for assignment in sets for part in ("--set", assignment)]
    before = snapshot(runs)
    assert_refused(oeb_cli(capsys, "run", "--config", str(config), *flags, "--out", str(runs), "-y"), *says)
    assert_refused(oeb_cli(capsys, "resume", the_run(runs), *flags, "-y"), *says)
    assert snapshot(runs) == before


@pytest.mark.parametrize(
    ("path", "says"),
    [("nothing.yaml", ("no config at", "oeb init SYSTEM > config.yaml")), (".", ("no config at",))],
)
def test_a_config_that_is_not_a_file_is_refused(capsys, tmp_path: Path, path: str, says: tuple[str, ...]) -> None:
    assert_refused(oeb_cli(capsys, "run", "--config", str(tmp_path / path), "--out", str(tmp_path), "-y"), *says)


def test_a_config_that_is_not_utf8_is_refused(capsys, tmp_path: Path) -> None:
    config = tmp_path / "binary.yaml"
    config.write_bytes(b"\xff\xfe\x00d")
    assert_refused(oeb_cli(capsys, "run", "--config", str(config), "-y"), "is not UTF-8 text", "a config is UTF-8 YAML")


def test_aliases_that_expand_modestly_are_still_accepted(tmp_path: Path) -> None:
    config = tmp_path / "aliases.yaml"
    ray = "{address: null, actors: *w, rate_limit: {requests_per_second: null, max_in_flight: 0}}"
    config.write_text(config_text(workers="&w 2", ray=ray))
    assert load_config(str(config)).actors() == 2


@pytest.mark.parametrize("path", [("system", "mock", "seed"), ("system", "mock"), ("timeout",), ("rows", "only")])
def test_a_value_nested_deeper_than_pythons_stack_is_refused_in_one_line(path: tuple[str, ...]) -> None:
    """A config built in Python (no YAML reader's depth limit in between): 800 levels of nesting."""
    value: object = 1
    for _ in range(400):
        value = {"a": [value]}
    tree = init_tree("mock", SAMPLE_DATASET)
    node = tree
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(OebError) as refused:
        check_tree(tree, "built.yaml")
    assert "\n" not in str(refused.value)
