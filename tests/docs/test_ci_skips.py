"""Under CI=true a `must_run` test (browser, full disk) that skips fails the run; locally it skips with
its reason (tests/fixtures/ci.py). Checked on a throwaway test file run by pytest in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).parents[1]
SAMPLE = """
import pytest

@pytest.mark.must_run
@pytest.mark.skipif(True, reason="no Chromium here")
def test_in_a_browser():
    pass

@pytest.mark.must_run
def test_on_a_full_disk():
    pytest.skip("cannot mount a tmpfs here")

@pytest.mark.skipif(True, reason="an ordinary skip")
def test_ordinary():
    pass
"""


@pytest.mark.parametrize(("ci", "expected"), [("true", "1 failed, 1 skipped, 1 error"), ("", "3 skipped")])
def test_a_must_run_test_that_skips_fails_only_under_ci(tmp_path: Path, ci: str, expected: str) -> None:
    (tmp_path / "test_sample.py").write_text(SAMPLE)
    command = [sys.executable, "-m", "pytest", "-p", "fixtures.ci", "-p", "no:cacheprovider", "-q", "-rA"]
    command += ["-o", "markers=must_run", "-o", "addopts=", "-n", "0", str(tmp_path)]
    env = os.environ | {"CI": ci, "PYTHONPATH": str(TESTS)}
    done = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert expected in done.stdout, done.stdout
    if ci:
        assert "skipped under CI=true, where this test must run: no Chromium here" in done.stdout
        assert "must run: cannot mount a tmpfs here" in done.stdout
