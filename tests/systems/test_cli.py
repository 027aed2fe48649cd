"""`oeb systems` and `oeb predict` through the real command line, and a shipped config run as a new
user would first run it: without its key, against a vendor fake that must see no request."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from oeb import cli
from oeb.dataset import SAMPLE_DATASET
from oeb.run.plan.config import init_text
from systems.conftest import PDF
from systems.fake_vendor import FakeVendor, Reply

CONFIGS = sorted((Path(__file__).parents[2] / "configs").glob("*.yaml"))


@pytest.fixture(autouse=True)
def _only_these_verbs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The other verbs belong to other layers; these tests do not depend on them."""
    monkeypatch.setattr(cli, "VERBS", ("systems", "predict"))


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "pdfs").mkdir()
    (tmp_path / "gold").mkdir()
    (tmp_path / "pdfs" / "inv_1.pdf").write_bytes(PDF)
    (tmp_path / "gold" / "inv_1.json").write_text(json.dumps({"capex": 5}))
    schema = {"type": "object", "properties": {"capex": {"type": "number", "default": 0}}}
    (tmp_path / "schema.json").write_text(json.dumps(schema))
    return {"doc": tmp_path / "pdfs" / "inv_1.pdf", "schema": tmp_path / "schema.json", "dir": tmp_path}


def predict(files: dict[str, Path], *extra: str, system: str = "mock") -> list[str]:
    return ["predict", "--system", system, "--doc", str(files["doc"]), "--schema", str(files["schema"]), *extra]


def test_systems_lists_every_system_with_offline_ones_labelled(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["systems"]) == 0
    out = capsys.readouterr()
    lines = out.out.splitlines()
    assert [line.split()[0] for line in lines[:8]] == sorted(line.split()[0] for line in lines[:8])
    assert any(line.startswith("mock") and "OFFLINE" in line for line in lines)
    assert lines[-3:] == ["openai/gpt-5.6-sol", "anthropic/claude-opus-5", "google/gemini-3.7-flash"]
    assert "any OpenRouter" in out.err


def test_systems_shows_options_defaults_and_the_key(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["systems", "openai/gpt-5.6-sol"]) == 0
    out = capsys.readouterr().out
    assert "max_output_tokens" in out and "None" in out and "\nmodel " not in out
    assert "export OPENROUTER_API_KEY" in out and "OPENAI_API_KEY" in out
    assert "choices: openrouter, openai, anthropic, google" in out and "ANTHROPIC_API_KEY" in out
    options = {line.split()[0]: line.split()[1] for line in out.splitlines()[1:12]}
    assert {k: options[k] for k in ("batch", "batch_discount", "poll_max", "usd_per_mtok_in")} == {
        "batch": "False", "batch_discount": "0.5", "poll_max": "300.0", "usd_per_mtok_in": "None"}  # fmt: skip
    assert options["temperature"] == "None"  # the provider's default: not sent
    written = init_text("anthropic/claude-opus-5")  # what oeb init prints
    assert "provider: openrouter" in written and "batch: false" in written and "poll_max: 300.0" in written
    cli.main(["systems", "datalab"])
    assert "'balanced'" in capsys.readouterr().out


def test_systems_reducto_lists_each_option_with_its_default_and_the_key(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["systems", "reducto"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("Reducto deep extract")
    defaults = {line.split()[0]: line.split()[1] for line in lines[1:7]}
    assert defaults == {
        "deep_extract_model": "'v2'",
        "system_prompt": "''",
        "agentic_table_mode": "'max'",
        "poll_interval": "5",
        "citations": "False",
        "base_url": "'https://platform.reducto.ai'",
    }
    assert "choices: default, max" in lines[3]
    assert lines[-1] == "reducto needs an API key: export REDUCTO_API_KEY=<key>"


@pytest.mark.parametrize("config", CONFIGS, ids=lambda path: path.stem)
def test_a_shipped_config_without_its_key_is_refused_before_any_call(
    config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli, "VERBS", ("run",))
    [(system, options)] = yaml.safe_load(config.read_text())["system"].items()
    [address] = options.keys() & {"base_url", "endpoint"}
    out = tmp_path / "runs"
    with FakeVendor() as fake:
        sets = ["--set", f"dataset={SAMPLE_DATASET}", "--set", f"system.{system}.{address}={fake.url}"]
        code = cli.main(["run", "--config", str(config), *sets, "--out", str(out), "-y"])
    err = capsys.readouterr().err
    variable = {"azure-cu": "AZURE_CU_KEY", "llamaextract": "LLAMA_CLOUD_API_KEY"}.get(
        system, "OPENROUTER_API_KEY" if "/" in system else f"{system.upper()}_API_KEY"
    )
    assert code == 1
    assert err.startswith("oeb run: ") and err.count("\n") == 1
    assert err.endswith(f" needs the environment variable {variable}: export it and run again\n")
    assert fake.requests == []
    assert not out.exists()


def test_predict_prints_the_record_and_exits_0(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(predict(files, "--options", '{"mock": {"usd": 0.5}}')) == 0
    record = json.loads(capsys.readouterr().out)
    assert (record["output"], record["timeout_s"], record["cost"]["usd"]) == ({"capex": 5}, 1800, 0.5)
    sent = record["sent"]["properties"]["capex"]
    assert "default" not in sent and "positive magnitude" in sent["description"]  # the conventions applied


def test_predict_of_a_job_vendor_submits_then_collects_in_one_go(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], fake: FakeVendor, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("REDUCTO_API_KEY", "sk-cli-0123456789")
    fake.on("POST", "/upload", Reply(200, {"file_id": "reducto://f1"}))
    fake.on("POST", "/extract_async", Reply(200, {"job_id": "j1"}))
    done = {"status": "Completed", "result": {"usage": {"credits": 3}, "result": {"capex": 5}}}
    fake.on("GET", "/job/j1", Reply(200, {"status": "Pending", "result": None}), Reply(200, done))
    options = json.dumps({"base_url": fake.url, "poll_interval": 0.01})
    assert cli.main(predict(files, "--options", options, system="reducto")) == 0
    record = json.loads(capsys.readouterr().out)
    assert (record["output"], record["job_id"], record["cost"]["credits"]) == ({"capex": 5}, "j1", 3)
    assert len(fake.sent("POST", "/extract_async")) == 1 and len(fake.sent("GET", "/job/j1")) == 2


def test_predict_exits_1_when_the_record_holds_an_error(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    options = files["dir"] / "options.json"
    options.write_text('{"malformed": 1.0}')
    assert cli.main(predict(files, "--options", str(options), "--timeout", "30")) == 1
    record = json.loads(capsys.readouterr().out)
    assert (record["error"]["type"], record["timeout_s"]) == ("Unreadable", 30.0)


@pytest.mark.parametrize(
    ("extra", "message", "code"),
    [
        (["--options", '{"datalab": {"mode": "accurate"}}'], "for datalab, but this command runs mock", 1),
        (["--options", '{"mock": "x"}'], "one object under the system's name", 1),
        (["--options", '{"mock": {}, "seed": 1}'], "give only mock's options", 1),
        (["--options", "[1]"], "[1]: no such file", 1),
        (["--options", "{not json"], "not JSON", 1),
        (["--options", '{"sead": 1}'], "did you mean 'seed'", 1),
        (["--timeout", "0"], "positive", 2),
    ],
)
def test_predict_refuses_bad_arguments_on_one_line(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], extra: list[str], message: str, code: int
) -> None:
    assert cli.main(predict(files, *extra)) == code
    err = capsys.readouterr().err
    assert err.startswith("oeb predict: ") and message in err and err.count("\n") == 1


def test_predict_refuses_a_missing_document_and_a_missing_key(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    files["doc"].unlink()
    assert cli.main(predict(files)) == 1
    assert "--doc" in capsys.readouterr().err
    files["doc"].write_bytes(PDF)
    monkeypatch.delenv("DATALAB_API_KEY", raising=False)
    assert cli.main(predict(files, system="datalab")) == 1
    assert "export it" in capsys.readouterr().err


def test_predict_of_an_unknown_system_is_one_line(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(predict(files, system="nosuch")) == 1
    assert "unknown system 'nosuch'" in capsys.readouterr().err
