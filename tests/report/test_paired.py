"""The paired statistics of `oeb compare`: properties (identical runs, swapped runs, a constant shift)
and the done-when check on runs graded by the scorer: a 2%-noise run told from a 15%-noise run, two
identical runs called "no difference"."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from conftest import write_run
from hypothesis import given, settings
from hypothesis import strategies as st
from synthetic import SCHEMA, noisy, true_gold, write_dataset

from oeb.cli import main
from oeb.report.paired import (
    EXACT_UP_TO,
    RESAMPLES,
    _blocks,
    bootstrap_means,
    paired_stats,
    sign_flip_p,
    verdict,
    worse_beyond,
)
from oeb.report.tables import signed_points

accuracies = st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=120)
pairs = accuracies.flatmap(
    lambda a: st.tuples(st.just(a), st.lists(st.floats(0, 1, allow_nan=False), min_size=len(a), max_size=len(a)))
)


def _stats(a: list[float], b: list[float]) -> dict:
    return paired_stats(np.array(b) - np.array(a))


@settings(max_examples=60, deadline=None)
@given(accuracies)
def test_identical_runs_differ_by_nothing_with_p_1(a) -> None:
    stats = _stats(a, a)
    assert (stats["mean_diff"], stats["ci95"], stats["p_value"]) == (0.0, [0.0, 0.0], 1.0)
    assert verdict(stats) == "no difference"


@settings(max_examples=60, deadline=None)
@given(pairs)
def test_swapping_a_and_b_negates_the_difference_and_mirrors_the_interval(pair) -> None:
    a, b = pair
    forward, backward = _stats(a, b), _stats(b, a)
    assert backward["mean_diff"] == -forward["mean_diff"]
    assert backward["ci95"] == pytest.approx([-forward["ci95"][1], -forward["ci95"][0]], abs=1e-12)
    assert backward["p_value"] == forward["p_value"]
    assert {verdict(forward), verdict(backward)} in ({"no difference"}, {"better", "worse"})


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 0.5, allow_nan=False), min_size=10, max_size=120), st.floats(0.01, 0.5))
def test_a_constant_shift_is_detected(a, shift) -> None:
    b = [value + shift for value in a]
    better, worse = _stats(a, b), _stats(b, a)
    assert better["mean_diff"] == pytest.approx(shift) and better["ci95"][0] > 0
    assert better["p_value"] < 0.01 and worse["p_value"] == better["p_value"]
    assert (verdict(better), verdict(worse)) == ("better", "worse")


def test_the_p_value_is_exact_for_few_documents_and_counted_for_many() -> None:
    assert sign_flip_p(np.full(3, 0.2)) == 2 / 8  # every one of the 8 sign patterns enumerated
    assert sign_flip_p(np.full(EXACT_UP_TO, 0.2)) == 2 / 2**EXACT_UP_TO
    assert sign_flip_p(np.full(EXACT_UP_TO + 1, 0.2)) == 1 / (1 + RESAMPLES)  # never 0
    many = np.random.default_rng(3).normal(0, 0.1, 1_000)
    assert len(list(_blocks(len(many)))) > 1 and len(bootstrap_means(many)) == RESAMPLES  # drawn in blocks, all
    assert paired_stats(many) == paired_stats(many)  # seeded


@pytest.fixture(scope="module")
def noise_runs(tmp_path_factory) -> dict[str, str]:
    """Runs graded by the scorer on 40 synthetic invoices: 2% and 15% of values misread, and a copy."""
    folder = tmp_path_factory.mktemp("noise")
    rng = random.Random(11)
    golds = {f"inv_{n:02d}": true_gold(rng, n) for n in range(40)}
    dataset = write_dataset(folder / "data", golds)
    runs = {}
    for name, misread, seed in (("two", 0.02, 1), ("fifteen", 0.15, 2), ("two_again", 0.02, 1)):
        noise = random.Random(seed)
        answers = {doc_id: noisy(gold, name, noise, misread) for doc_id, gold in golds.items()}
        runs[name] = write_run(
            str(folder), name, answers, dataset, golds=golds, schema=SCHEMA, suites=dict.fromkeys(golds, "invoices")
        )
    return runs


def test_compare_tells_a_2_percent_noise_run_from_a_15_percent_one(noise_runs, capsys) -> None:
    assert main(["compare", noise_runs["two"], noise_runs["fifteen"], "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    paired = result["paired"]
    print(f"\n2% vs 15% noise: {paired['mean_diff']:+.4f}, CI {paired['ci95']}, p {paired['p_value']:.2g}")
    assert paired["p_value"] < 0.05 and paired["verdict"] == "worse" and paired["documents"] == 40
    assert paired["mean_diff"] == pytest.approx(result["b"]["headline"] - result["a"]["headline"])
    assert paired["per_suite"]["invoices"]["mean_diff"] == pytest.approx(paired["mean_diff"])
    capsys.readouterr()
    assert main(["compare", noise_runs["two"], noise_runs["fifteen"], "--fail-if-worse"]) == 3
    error = capsys.readouterr().err
    assert error.startswith("oeb compare: fifteen is worse than two: accuracy -") and error.count("\n") == 1
    assert error.rstrip().endswith("entirely below 0.00, p = 0.0001")
    margin = -paired["ci95"][1] + 0.01  # a margin larger than how far the interval's top is below 0
    assert main(["compare", noise_runs["two"], noise_runs["fifteen"], "--fail-if-worse", f"{margin:.4f}"]) == 0
    assert main(["compare", noise_runs["fifteen"], noise_runs["two"], "--fail-if-worse"]) == 0


def test_compare_calls_two_identical_runs_no_difference(noise_runs, capsys) -> None:
    assert main(["compare", noise_runs["two"], noise_runs["two_again"], "--format", "json"]) == 0
    paired = json.loads(capsys.readouterr().out)["paired"]
    assert (paired["mean_diff"], paired["ci95"], paired["p_value"], paired["verdict"]) == (
        0.0,
        [0.0, 0.0],
        1.0,
        "no difference",
    )
    assert main(["compare", noise_runs["two"], noise_runs["two_again"], "--fail-if-worse"]) == 0


def test_two_documents_both_worse_are_no_difference_at_p_one_half() -> None:
    """The bootstrap interval of two negative differences lies below 0, but the sign-flip test gives
    p = 0.5: not evidence, so neither the verdict nor the gate calls it worse."""
    stats = paired_stats(np.array([-0.1, -0.2]))
    assert stats["ci95"][1] < 0 and stats["p_value"] == 0.5
    assert verdict(stats) == "no difference"
    assert not worse_beyond(stats, 0.0)


def test_a_difference_that_rounds_to_zero_has_no_minus_sign() -> None:
    assert [signed_points(v) for v in (-0.00001, 0.0, 0.00001, -0.0123, None)] == ["0.00", "0.00", "0.00", "-1.23", "–"]
