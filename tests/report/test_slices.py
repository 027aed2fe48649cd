"""Slice statistics and the mix score over runs built in memory: slices equal the leaderboard over
their documents alone, a constructed flip is found and a non-flip is not, the slices partition the
documents (hypothesis), and the mix score equals the pooled one at the benchmark's own mix and a
corpus resampled to the mix within its interval."""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oeb.errors import UsageError
from oeb.report import leaderboard
from oeb.report.leaderboard import latency
from oeb.report.mix import Mix, mix_from, mix_report, parse_mix
from oeb.report.runs import Run
from oeb.report.slices import groups, slice_report
from oeb.scoring import RESULTS
from oeb.traits import Traits, parse_buckets


def line(doc_id: str, accuracy: float | None) -> dict:
    if accuracy is None:
        return {"id": doc_id, "status": "failed", "row": {"suite": "s"}, "error": "SystemFailed"}
    counts = dict.fromkeys(RESULTS, 0) | {"matched": round(100 * accuracy), "misread": 100 - round(100 * accuracy)}
    return {"id": doc_id, "status": "scored", "row": {"suite": "s"}, "accuracy": accuracy, "total": 100, **counts}


def make_run(label: str, scores: dict[str, float | None], pages: dict[str, int] | None = None) -> Run:
    ids = list(scores)
    pages = pages or {doc_id: 1 + n % 4 for n, doc_id in enumerate(ids)}
    return Run(
        url=f"/runs/{label}",
        settings={"run": label, "system": label},
        lines=[line(doc_id, score) for doc_id, score in scores.items()],
        costs={"usd": {d: 0.01 * (1 + n % 3) for n, d in enumerate(ids)}, "credits": {}},
        documents={d: {"pages": pages[d]} for d in ids},
        label=label,
        wall_s={d: 1.0 + (n * 7 % 11) for n, d in enumerate(ids)},
    )


def make_traits(labels: dict[str, dict[str, str]]) -> Traits:
    names = tuple(dict.fromkeys(name for values in labels.values() for name in values))
    return Traits(labels, names, parse_buckets([]), ())


def two_kinds(n_short: int, n_long: int, short: tuple[float, float], long: tuple[float, float], noise: float):
    """Runs X and Y over short and long documents (pages 1 and 11+) with per-document noise."""
    rng = random.Random(7)
    ids = [f"s{i:03d}" for i in range(n_short)] + [f"l{i:03d}" for i in range(n_long)]
    kind = {d: "1" if d.startswith("s") else "11+" for d in ids}

    def score(mean: float) -> float:
        return min(1.0, max(0.0, mean + rng.uniform(-noise, noise)))

    x = {d: score(short[0] if kind[d] == "1" else long[0]) for d in ids}
    y = {d: score(short[1] if kind[d] == "1" else long[1]) for d in ids}
    traits = make_traits({d: {"pages": kind[d], "suite": "s"} for d in ids})
    return [make_run("X", x), make_run("Y", y)], traits


def test_a_flip_is_found_and_listed_first() -> None:
    runs, traits = two_kinds(30, 20, short=(0.95, 0.70), long=(0.50, 0.80), noise=0.05)
    result = slice_report(list(reversed(runs)), traits, ["pages"])
    assert result["leader"] == "X"  # pooled: X 0.77, Y 0.74
    (flip,) = result["flips"]
    assert flip["name"] == "pages=11+" and flip["leader"] == "X"
    (winner,) = flip["winners"]
    assert winner["system"] == "Y" and winner["ci95"][0] > 0 and winner["mean_diff"] == pytest.approx(0.30, abs=0.03)
    long = next(item for item in result["slices"] if item["name"] == "pages=11+")
    assert [row["rank"] for row in long["systems"]] == [2, 1]
    assert long["pairs"][0]["verdict"] == "better"


def test_a_non_flip_with_overlapping_intervals_is_not_one() -> None:
    runs, traits = two_kinds(30, 20, short=(0.95, 0.70), long=(0.55, 0.58), noise=0.4)
    result = slice_report(runs, traits, ["pages"])
    long = next(item for item in result["slices"] if item["name"] == "pages=11+")
    y, x = long["systems"][1], long["systems"][0]
    assert y["score"] > x["score"]  # Y scores higher on long documents, but within noise
    assert long["pairs"][0]["ci95"][0] < 0 < long["pairs"][0]["ci95"][1]
    assert result["flips"] == []


def test_a_slice_below_min_docs_is_shown_never_ranked_nor_a_flip() -> None:
    runs, traits = two_kinds(30, 6, short=(0.95, 0.70), long=(0.20, 0.90), noise=0.01)
    result = slice_report(runs, traits, ["pages"], min_docs=10)
    long = next(item for item in result["slices"] if item["name"] == "pages=11+")
    assert long["small"] and all(row["rank"] is None for row in long["systems"])
    assert result["flips"] == []
    assert slice_report(runs, traits, ["pages"], min_docs=5)["flips"]


def test_slice_scores_equal_the_leaderboard_over_each_slice_alone() -> None:
    runs, traits = two_kinds(25, 15, short=(0.9, 0.7), long=(0.5, 0.8), noise=0.2)
    failing = dict(zip(runs[1].doc_ids, [None, None, None] + [0.5] * 37, strict=True))
    runs.append(make_run("Z", failing))
    result = slice_report(runs, traits, ["pages"])
    for item in result["slices"]:
        chosen = set(item["doc_ids"])
        alone = [replace(run, lines=[ln for ln in run.lines if ln["id"] in chosen]) for run in runs]
        board = {row["system"]: row for row in leaderboard(alone)["rows"]}
        for row in item["systems"]:
            assert row["score"] == pytest.approx(board[row["system"]]["headline"], abs=1e-12)
            assert row["documents"] == board[row["system"]]["documents"] == len(chosen)
            if row["system"] != "Z":  # every document scored: the leaderboard's own interval
                assert row["ci95"] == pytest.approx(list(board[row["system"]]["ci95"]), abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from("xy")), min_size=1, max_size=60),
    st.sampled_from([["t1"], ["t2"], ["t1", "t2"], ["t2", "t1"]]),
)
def test_the_slices_of_a_trait_partition_the_documents(cells, by) -> None:
    ids = [f"d{n}" for n in range(len(cells))]
    traits = make_traits({d: {"t1": a, "t2": b} for d, (a, b) in zip(ids, cells, strict=True)})
    sliced = groups(traits, by, ids)
    members = [doc_id for _, docs in sliced for doc_id in docs]
    assert sorted(members) == sorted(ids) and len(members) == len(set(members))
    assert len({tuple(key.values()) for key, _ in sliced}) == len(sliced)


def test_the_mix_of_the_benchmark_itself_is_the_pooled_score() -> None:
    runs, traits = two_kinds(30, 20, short=(0.9, 0.7), long=(0.5, 0.8), noise=0.2)
    result = mix_report(runs, traits, mix_from(traits, ["pages"]))
    board = {row["system"]: row for row in leaderboard(runs)["rows"]}
    for row in result["systems"]:
        pooled = board[row["system"]]
        assert row["score"] == pytest.approx(pooled["headline"], abs=1e-12)
        assert row["ci"][0] < row["score"] < row["ci"][1]
        assert row["usd_per_1k_pages"] == pytest.approx(pooled["cost"]["usd"]["per_1k_pages"], rel=1e-12)
        run = next(run for run in runs if run.label == row["system"])
        assert row["latency_p95_s"] == pytest.approx(latency(run)["latency_p95_s"], rel=1e-12)
    assert [row["pooled_rank"] for row in result["systems"]] == [1, 2] and not result["mix"]["partial"]


def test_the_mix_score_is_a_corpus_resampled_to_the_mix_within_its_interval() -> None:
    runs, traits = two_kinds(40, 40, short=(0.9, 0.6), long=(0.4, 0.7), noise=0.3)
    mix = Mix(("pages",), ((("1",), 0.8), (("11+",), 0.2)))
    result = mix_report(runs, traits, mix)
    by_kind = {kind: [d for d in runs[0].doc_ids if traits.values[d]["pages"] == kind] for kind in ("1", "11+")}
    rng = np.random.default_rng(3)
    corpus = [*rng.choice(by_kind["1"], 4000), *rng.choice(by_kind["11+"], 1000)]  # 80 % / 20 %
    for row in result["systems"]:
        scores = {ln["id"]: ln["accuracy"] for ln in next(r for r in runs if r.label == row["system"]).lines}
        resampled = float(np.mean([scores[d] for d in corpus]))
        assert row["ci"][0] <= resampled <= row["ci"][1]
        assert resampled == pytest.approx(row["score"], abs=0.02)
    assert [row["system"] for row in result["systems"]] == ["X", "Y"]  # X leads on short documents


def test_a_mix_stratum_without_documents_is_named_and_the_score_partial() -> None:
    runs, traits = two_kinds(30, 20, short=(0.9, 0.7), long=(0.5, 0.8), noise=0.1)
    result = mix_report(runs, traits, parse_mix({"pages": {"1": 0.5, "4-10": 0.5}}, traits, "mix.yaml"))
    assert result["mix"]["partial"] and result["mix"]["missing"] == ["pages=4-10"]
    assert result["mix"]["covered_share"] == 0.5
    short = slice_report(runs, traits, ["pages"])["slices"][0]
    at_mix = {row["system"]: row["score"] for row in result["systems"]}
    assert at_mix == pytest.approx({row["system"]: row["score"] for row in short["systems"]}, abs=1e-12)


def test_crossed_mixes() -> None:
    _, traits = two_kinds(4, 4, short=(0.9, 0.7), long=(0.5, 0.8), noise=0.1)
    crossed = parse_mix({"pages": {"1": 0.5, "11+": 0.5}, "suite": {"s": 1}}, traits, "m")
    assert crossed.traits == ("pages", "suite") and dict(crossed.strata) == {("1", "s"): 0.5, ("11+", "s"): 0.5}
    listed = parse_mix(
        {"strata": [{"pages": 1, "suite": "s", "share": 0.25}, {"pages": "11+", "suite": "s", "share": 0.75}]},
        traits,
        "m",
    )
    assert dict(listed.strata) == {("1", "s"): 0.25, ("11+", "s"): 0.75}


@pytest.mark.parametrize(
    ("tree", "said"),
    [
        ({"pages": {"1": -0.2, "11+": 1.2}}, "negative"),
        ({"pages": {"1": 0.5, "11+": 0.4}}, "sum to 0.9, not 1"),
        ({"colour": {"red": 1}}, "no trait 'colour'; the traits are pages, suite"),
        ({"text_layer": {"scaned": 1}}, "text_layer has no value 'scaned'"),
        ({"pages": {"5": 1}}, "pages has no value '5'"),
        ({"suite": {"nope": 1}}, "suite has no value 'nope'"),
        ({"pages": {"1": "half", "11+": 0.5}}, "not a number"),
        ({"strata": [{"pages": "1", "share": 0.5}, {"pages": "1", "share": 0.5}]}, "given twice"),
        (["pages"], "a mix is a mapping"),
    ],
)
def test_bad_mixes_are_refused_in_one_line(tree, said) -> None:
    _, traits = two_kinds(4, 4, short=(0.9, 0.7), long=(0.5, 0.8), noise=0.1)
    traits = Traits(traits.values, (*traits.names, "text_layer"), traits.edges, ())
    with pytest.raises(UsageError, match=said):
        parse_mix(tree, traits, "mix.yaml")
