"""`oeb init`, the config and `--set`, the plan's checks and the run-folder refusals: everything a
run decides before Ray starts, each refusal one line naming the key and the fix, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from oeb.cli import main
from oeb.dataset import SAMPLE_DATASET, open_dataset
from oeb.errors import ConfigError, ResumeMismatch, SelectionError
from oeb.run import engine
from oeb.run.plan.config import Rows, SpendLimit, init_tree, load_config, to_yaml
from oeb.run.plan.selection import select

CONFIGS = Path(__file__).parents[2] / "configs"
EXAMPLE = Path(__file__).parents[2] / "oeb" / "examples" / "mock.yaml"


def _oeb(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "mock.yaml"
    path.write_text(to_yaml(init_tree("mock", SAMPLE_DATASET)))
    return path


def test_init_writes_the_shipped_configs_format(capsys) -> None:
    code, out, _ = _oeb(capsys, "init", "reducto")
    shipped = yaml.safe_load((CONFIGS / "reducto.yaml").read_text())
    assert code == 0 and yaml.safe_load(out) == shipped
    assert "api_version: '2026-02-09'" in _oeb(capsys, "init", "extend")[1]


def test_init_refuses_an_unknown_system(capsys) -> None:
    code, _, err = _oeb(capsys, "init", "nosuch")
    assert code == 1 and "unknown system 'nosuch'" in err and "\n" not in err.strip()


def test_the_example_config_is_a_complete_mock_config() -> None:
    config = load_config(str(EXAMPLE))
    assert (config.system, config.actors(), config.ray.requests_per_second) == ("mock", 2, 10.0)


@pytest.mark.parametrize(
    ("sets", "says"),
    [
        (["rows.sampel=3"], "no key rows.sampel; did you mean rows.sample?"),
        (["system.mock.nosuch=1"], "system.mock has calls_log, cite, cite_wrong, confidence, fabricated, gold,"),
        (["rows.only.x=1"], "rows.only has nothing"),
        (["rows"], "write path=value, e.g. rows.sample=5"),
        (["timeout=abc"], "timeout must be a number, not 'abc'"),
        (["timeout=-5"], "timeout must be greater than 0"),
        (["timeout=1e-9"], "timeout must be a number, not '1e-9'"),
        (["workers=2.5"], "workers must be an integer, not 2.5"),
        (["rows.sample=true"], "rows.sample must be an integer, not True"),
        (["rows.only=receipt"], "rows.only must be a list of ids or null, not 'receipt'"),
        (["manifest=123"], "manifest must be a string, not 123 (YAML read it as an integer; quote it)"),
        (["system={}"], "system is one system and its options"),
        (["scorers={}"], "scorers needs at least one entry"),
        (["scorers.field_matching=[{}, {}]"], "names one results folder twice"),
        (["ray.rate_limit.max_in_flight=-1"], "ray.rate_limit.max_in_flight must be 0 or more"),
        (["budget.usd=-5"], "budget.usd must be 0 or more (or null: no limit), not -5"),
        (["budget.credits=lots"], "budget.credits must be a number or null, not 'lots'"),
        (["budget.usd=.nan"], "budget.usd must be a finite number, not nan"),
        (["budget={eur: 5}"], "budget.eur is not a unit a budget has; the units are usd, credits"),
        (["budget={usdd: 5}"], "budget.usdd is not a unit a budget has; did you mean budget.usd?"),
        (["scorers={field_match: {}}"], "scorers.field_match is not a scorer; did you mean field_matching?"),
        (["budget=50"], "budget must be a mapping such as {usd: 50, credits: null}, not 50"),
        (
            ["ray.actors=x", "timeout=0"],
            "has 2 problems:\n  timeout must be greater than 0, not 0\n  ray.actors must be an integer, not 'x'",
        ),
    ],
)
def test_a_bad_set_or_value_is_refused_naming_the_key(config: Path, sets: list[str], says: str) -> None:
    with pytest.raises(ConfigError) as refused:
        load_config(str(config), sets)
    assert says in str(refused.value)


def test_init_explains_the_budget_and_the_concurrency_rule(capsys) -> None:
    out = _oeb(capsys, "init", "mock")[1]
    lines = out.splitlines()
    assert lines[lines.index("budget:") - 1].startswith("#") and "usd: null" in out
    assert "ray.rate_limit.max_in_flight when above 0, else workers when above 0" in out


def test_a_budget_is_set_per_unit_and_a_config_without_one_has_no_limit(config: Path, tmp_path: Path) -> None:
    assert load_config(str(config), ["budget.usd=50"]).budget == SpendLimit(usd=50.0)
    assert load_config(str(config), ["budget.credits=1000"]).plain()["budget"] == {"usd": None, "credits": 1000.0}
    tree = init_tree("mock", SAMPLE_DATASET)
    tree["budget"] = {"credits": 20}
    del tree["ray"]
    (tmp_path / "old.yaml").write_text(to_yaml(tree))
    assert load_config(str(tmp_path / "old.yaml"), ["budget.usd=3"]).budget == SpendLimit(3.0, 20.0)
    del tree["budget"]
    (tmp_path / "old.yaml").write_text(to_yaml(tree))
    assert not load_config(str(tmp_path / "old.yaml")).budget
    tree["budget"] = None
    (tmp_path / "old.yaml").write_text(to_yaml(tree))
    assert load_config(str(tmp_path / "old.yaml"), ["budget.credits=5"]).budget == SpendLimit(credits=5.0)


@pytest.mark.parametrize(
    ("sets", "expected"),
    [
        ([], (5, "ray.rate_limit.max_in_flight")),
        (["ray.rate_limit.max_in_flight=8"], (8, "ray.rate_limit.max_in_flight")),  # not the default 5 of mock
        (["ray.rate_limit.max_in_flight=0", "workers=2"], (2, "workers")),
        (["ray.rate_limit.max_in_flight=3", "workers=9"], (3, "ray.rate_limit.max_in_flight")),
        (["ray.rate_limit.max_in_flight=0"], (5, "the default of mock")),
    ],
)
def test_one_key_decides_the_documents_in_flight(config: Path, sets: list[str], expected: tuple[int, str]) -> None:
    loaded = load_config(str(config), sets)
    assert loaded.concurrency() == expected and loaded.in_flight() == expected[0]


def test_set_values_are_yaml_and_keys_may_hold_dots(tmp_path: Path) -> None:
    path = tmp_path / "llm.yaml"
    path.write_text(to_yaml(init_tree("openai/gpt-5.6-sol")))
    config = load_config(str(path), ["system.openai/gpt-5.6-sol.attempts=2", "timeout=60", "rows.only=[a, b]"])
    assert (config.adapter.attempts, config.timeout, config.rows.only) == (2, 60.0, ("a", "b"))


def test_a_config_written_for_the_reference_gets_the_ray_defaults(tmp_path: Path) -> None:
    tree = init_tree("mock", SAMPLE_DATASET)
    del tree["ray"]
    (tmp_path / "c.yaml").write_text(to_yaml(tree))
    config = load_config(str(tmp_path / "c.yaml"))
    assert (config.ray.address, config.in_flight(), config.actors()) == (None, 5, 5)


@pytest.mark.parametrize(
    ("rows", "expected", "recorded"),
    [
        (Rows(sample=3), [0, 4, 8], {"sample": 3}),
        (Rows(limit=2), [0, 1], {"limit": 2}),
        (Rows(sample=50), list(range(12)), {}),
        (Rows(only=("short__invoice_4418", "short__invoice_4417")), [0, 1], {}),
    ],
)
def test_rows_are_selected_in_manifest_order(rows: Rows, expected: list[int], recorded: dict) -> None:
    dataset = open_dataset(SAMPLE_DATASET)
    selected, choice = select(dataset.rows, rows)
    assert [dataset.rows.index(row) for row in selected] == expected
    if rows.only is None:
        assert choice == recorded
    else:
        assert choice == {"only": sorted(rows.only)}


@pytest.mark.parametrize(
    ("rows", "says"),
    [
        (Rows(sample=2, limit=1), "give one of them"),
        (Rows(only=("short__invoice_4417", "nosuch")), "1 row that the dataset does not have (nosuch)"),
        (Rows(only=()), "no rows selected"),
    ],
)
def test_a_bad_selection_is_refused(rows: Rows, says: str) -> None:
    with pytest.raises(SelectionError) as refused:
        select(open_dataset(SAMPLE_DATASET).rows, rows)
    assert says in str(refused.value)


def test_a_plan_that_fails_writes_nothing(capsys, config: Path, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    code, _, err = _oeb(capsys, "run", "--config", str(config), "--set", "rows.only=[nosuch]", "--out", str(out))
    assert code == 1 and "rows.only asks for 1 row" in err and not out.exists()
    tree = init_tree("datalab", SAMPLE_DATASET)
    (tmp_path / "d.yaml").write_text(to_yaml(tree))
    code, _, err = _oeb(capsys, "run", "--config", str(tmp_path / "d.yaml"), "--out", str(out))
    assert code == 1 and "DATALAB_API_KEY" in err and not out.exists()


def test_the_plan_names_the_system_documents_concurrency_limit_and_folder(config: Path, tmp_path: Path) -> None:
    plan = engine.plan_run(load_config(str(config), ["rows.limit=2"]), str(tmp_path))
    first, second, estimate = plan.lines()
    assert first.endswith("2 rows (limit 2), graded by field_matching")
    assert f"{tmp_path}/mock-" in second and "new run, 2 documents to predict with mock" in second
    in_flight = "5 in flight (set by ray.rate_limit.max_in_flight) on 5 actors, at most 2 starts/s, in this process"
    assert in_flight in second
    assert estimate.startswith("  estimate: about $0.00 for 2 documents")


def _launched(config: Path, tmp_path: Path) -> engine.Plan:
    """A run folder as a launch leaves it before predicting (config.yaml and settings.json)."""
    plan = engine.plan_run(load_config(str(config)), str(tmp_path))
    plan.folder.write_config(plan.config.plain())
    plan.folder.write_settings(plan.settings)
    return plan


@pytest.mark.parametrize(
    ("sets", "differs"),
    [(["rows.limit=2"], "other rows"), (["system.mock.seed=1"], "other options")],
)
def test_resume_refuses_another_question(config: Path, tmp_path: Path, sets: list[str], differs: str) -> None:
    plan = _launched(config, tmp_path)
    with pytest.raises(ResumeMismatch, match=differs):
        engine.plan_resume(plan.folder.url, sets)
    assert engine.plan_resume(plan.folder.url, ["timeout=60", "workers=1"]).settings["timeout_s"] == 60.0


def test_resume_takes_an_option_added_since_the_folder_was_written_at_its_default(config: Path, tmp_path: Path) -> None:
    plan = _launched(config, tmp_path)
    older = {**plan.settings, "options": {k: v for k, v in plan.settings["options"].items() if k != "cite"}}
    plan.folder.write_settings(older)  # the mock's `cite` option came later
    assert engine.plan_resume(plan.folder.url).settings["options"]["cite"] is False
    plan.folder.write_settings({**older, "options": {**older["options"], "cite": True}})  # not the default
    with pytest.raises(ResumeMismatch, match="other options"):
        engine.plan_resume(plan.folder.url)


def test_resume_and_grade_refuse_folders_that_are_not_runs(capsys, config: Path, tmp_path: Path) -> None:
    code, _, err = _oeb(capsys, "resume", str(tmp_path / "nothing"))
    assert code == 1 and "has no config.yaml" in err
    plan = _launched(config, tmp_path)
    Path(plan.folder.url, "settings.json").write_text("{broken")
    code, _, err = _oeb(capsys, "resume", plan.folder.url)
    assert code == 1 and "settings.json is not JSON" in err
    code, _, err = _oeb(capsys, "grade", str(tmp_path / "nothing"))
    assert code == 1 and "no folder at" in err
    code, _, err = _oeb(capsys, "grade", plan.folder.url)
    assert code == 1 and "settings.json is not JSON" in err.splitlines()[-1]
    plan.folder.write_settings(plan.settings)
    code, _, err = _oeb(capsys, "grade", plan.folder.url)  # a run nothing was predicted in
    assert code == 1 and "never predicted" in err and "grade with --partial" in err.splitlines()[-1]
    (Path(plan.folder.url) / "predictions").mkdir()
    code, _, err = _oeb(capsys, "grade", str(Path(plan.folder.url) / "predictions"))
    assert code == 1 and "give its parent" in err


def test_a_config_with_five_problems_prints_five_lines(tmp_path: Path, capsys) -> None:
    """Every problem at once, one line each: typos at every level with the key they meant, a bad value,
    an unknown option of the system (with its nearest) and a value of the wrong kind."""
    tree = init_tree("mock", SAMPLE_DATASET)
    tree["datset"] = tree.pop("dataset")
    tree["rows"]["limt"] = tree["rows"].pop("limit")
    tree["timeout"] = -1
    tree["ray"]["rate_limit"]["max_in_flite"] = tree["ray"]["rate_limit"].pop("max_in_flight")
    tree["system"]["mock"] |= {"seeds": 1, "latency": "slow"}
    (tmp_path / "bad.yaml").write_text(to_yaml(tree))
    code, _, err = _oeb(capsys, "run", "--config", str(tmp_path / "bad.yaml"), "--out", str(tmp_path / "runs"))
    lines = err.splitlines()
    assert code == 1 and lines[0] == f"oeb run: {tmp_path / 'bad.yaml'} has 6 problems:"
    assert [line.strip() for line in lines[1:]] == [
        "datset is not a key a config has; did you mean dataset?",
        "rows.limt is not a key a config has; did you mean rows.limit?",
        "ray.rate_limit.max_in_flite is not a key a config has; did you mean ray.rate_limit.max_in_flight?",
        "timeout must be greater than 0, not -1",
        "system.mock: mock has no option 'seeds' (did you mean 'seed'?); its options are: gold, seed, misread, "
        "unfound, fabricated, invented_item, invented_field, latency, rate_limit, retry_after, server_error, "
        "timeout, malformed, usd, cite, cite_wrong, confidence, calls_log",
        "system.mock: option 'latency' of mock takes float, not 'slow' (str)",
    ]
    assert not (tmp_path / "runs").exists()


def test_an_unknown_system_gets_the_nearest_name(config: Path, capsys) -> None:
    code, _, err = _oeb(capsys, "run", "--config", str(config), "--set", "system={mokc: {}}", "--out", "runs")
    assert code == 1 and "system.mokc: unknown system 'mokc'; did you mean 'mock'?" in err and err.count("\n") == 1


def test_a_minimal_config_names_what_it_lacks_once(tmp_path: Path, capsys) -> None:
    (tmp_path / "min.yaml").write_text(f"dataset: {SAMPLE_DATASET}\nsystem:\n  mock: {{}}\n")
    code, _, err = _oeb(capsys, "run", "--config", str(tmp_path / "min.yaml"), "--out", str(tmp_path / "runs"))
    assert code == 1 and err.count("\n") == 1 and err.count("missing") == 1
    assert "manifest, scorers, rows, timeout and workers are missing; a config gives every key" in err


def test_init_fills_options_and_asks_for_a_required_one(capsys, tmp_path: Path) -> None:
    code, _, err = _oeb(capsys, "init", "replay")
    assert code == 1 and err.strip().endswith("give it: oeb init replay --option source=VALUE")
    code, out, _ = _oeb(capsys, "init", "replay", "--option", "source=runs/a/predictions", "--dataset", "d")
    assert code == 0 and yaml.safe_load(out)["system"] == {"replay": {"source": "runs/a/predictions"}}
    code, out, _ = _oeb(capsys, "init", "mock", "--option", "seed=7", "--option", "misread=0.5")
    mock = yaml.safe_load(out)["system"]["mock"]
    assert code == 0 and (mock["seed"], mock["misread"], mock["latency"]) == (7, 0.5, 0.0)
    code, _, err = _oeb(capsys, "init", "mock", "--option", "sed=7")
    assert code == 1 and "did you mean 'seed'?" in err and err.count("\n") == 1
