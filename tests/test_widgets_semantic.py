"""Notebook 03's playground and helpers: ``run_playground`` with the real embedded model over the widget's
parameter ranges (n min/max, temperature min/mid/max, each offline judge, metric subsets), the widget and its
Run button, the entropy-range table against hand-listed partitions, and the calibration helpers."""

from __future__ import annotations

import html
import itertools
import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from fakes import CannedLLM  # noqa: E402

from uncertainty_lab import registry  # noqa: E402
from uncertainty_lab.datasets.qa import QAItem  # noqa: E402
from uncertainty_lab.llm import get_llm  # noqa: E402
from uncertainty_lab.semantic import cluster, entropy_of_partition  # noqa: E402
from uncertainty_lab.widgets import PlaygroundResult, SemanticPlayground, run_playground, semantic_playground  # noqa: E402
from uncertainty_lab.widgets.semantic import DEFAULT_METRICS, RANGES  # noqa: E402
from uncertainty_lab.widgets.semantic_analysis import (  # noqa: E402
    auroc_table,
    calibration_run,
    draw_entropy_range,
    entropy_range_table,
)
from uncertainty_lab.widgets.semantic_metrics import (  # noqa: E402
    MODEL_CALLING_METRICS,
    OFFLINE_JUDGES,
    compare_metrics,
    make_judge,
    make_metrics,
    metrics_table,
    samples_table,
)

QUESTION = "What is the capital city of Australia?"
MAX_TOKENS = 16  # short answers keep the real model fast
ENTROPIES = {"discrete_semantic_entropy", "semantic_entropy"}


@pytest.fixture(scope="module")
def llm():
    return get_llm("embedded")


def check_result(result: PlaygroundResult, n: int, metrics, judge: str, clustering: str = "greedy",
                 judge_obj=None) -> None:
    """What every playground result must satisfy, whatever the model said (``judge_obj``: the judge as
    configured, when not the named one with its defaults)."""
    assert isinstance(result, PlaygroundResult)
    s = result.samples
    assert s.n == n and len(s.texts) == n and s.question == QUESTION
    # the clustering is a partition of all the samples, labels numbered by first appearance
    c = result.clustering
    assert c.method == clustering and len(c.labels) == n
    members = sorted(i for group in c.clusters for i in group)
    assert members == list(range(n))
    assert all(group for group in c.clusters)
    assert list(dict.fromkeys(c.labels)) == list(range(c.n_clusters))
    assert c.partition() == cluster(s.texts, judge_obj or judge, QUESTION, clustering).partition()
    for i, j in itertools.product(range(n), repeat=2):  # identical texts are never split
        if s.texts[i] == s.texts[j]:
            assert c.labels[i] == c.labels[j]
    # one table row per chosen metric, in order, values in range
    labels = list(metrics)
    assert [row["metric"] for row in result.table] == labels
    assert list(result.results) == labels
    for row in result.table:
        r = result.results[row["metric"]]
        if r.missing:
            assert math.isnan(row["confidence"]) and row["note"].startswith("missing: ")
            continue
        assert 0.0 <= row["confidence"] <= 1.0
        assert 0.0 <= row["normalised"] <= 1.0
        assert row["uncertainty"] >= 0.0
        assert row["confidence"] == pytest.approx(r.confidence, abs=1e-4)
        if row["metric"] in ENTROPIES:
            assert r.uncertainty <= math.log(n) + 1e-9
            assert r.normalised_uncertainty == pytest.approx(r.uncertainty / math.log(n), abs=1e-12)
    # metrics judged with the same judge and method agree with the shown clustering
    if "discrete_semantic_entropy" in result.results:
        h = result.results["discrete_semantic_entropy"]
        assert h.uncertainty == pytest.approx(entropy_of_partition(c.sizes), abs=1e-12)
        assert h.details["clustering"] == clustering
    if "num_semantic_sets" in result.results:
        assert result.results["num_semantic_sets"].uncertainty == c.n_clusters
    # the renderings hold every sample and class
    assert len(result.samples_table()) == n
    assert len(result.clusters_text()) == c.n_clusters
    page = result._repr_html_()
    assert "<table>" in page and "meaning class" in page


def test_ranges_are_sane():
    assert RANGES["n"].min == 2  # one sample has no spread; metrics need two
    assert RANGES["n"].max == 10
    assert RANGES["temperature"].min == 0.0 and RANGES["temperature"].max == 2.0
    for r in RANGES.values():
        for v in (r.min, r.mid, r.max, r.value):
            assert r.min <= v <= r.max
            assert abs((v - r.min) / r.step - round((v - r.min) / r.step)) < 1e-9


@pytest.mark.parametrize("judge", OFFLINE_JUDGES)
@pytest.mark.parametrize("temperature", [RANGES["temperature"].min, RANGES["temperature"].mid,
                                         RANGES["temperature"].max])
@pytest.mark.parametrize("n", [RANGES["n"].min, RANGES["n"].max])
def test_run_playground_over_ranges(llm, n, temperature, judge):
    result = run_playground(llm, QUESTION, n=n, temperature=temperature, judge=judge, metrics=DEFAULT_METRICS,
                            seed=1, max_tokens=MAX_TOKENS)
    check_result(result, n, DEFAULT_METRICS, judge)
    assert result.judge == judge
    assert result.settings["temperature"] == temperature
    assert result.samples.meta["temperature"] == temperature
    assert result.samples.has_logprobs  # the embedded model gives them, so no metric here is missing
    assert not any(r.missing for r in result.results.values())
    if temperature == 0.0:  # the most likely answer every time: one meaning, certainty by construction
        assert len(set(result.samples.texts)) == 1
        assert result.clustering.n_clusters == 1
        assert result.results["discrete_semantic_entropy"].confidence == 1.0
        assert result.results["semantic_density"].confidence == pytest.approx(1.0)


@pytest.mark.parametrize("metrics", [
    ("discrete_semantic_entropy",),
    ("semantic_density", "lexical_similarity"),
    tuple(registry.names("metrics")),  # every metric, the model-calling one included
], ids=["one", "two", "all"])
@pytest.mark.parametrize("judge", OFFLINE_JUDGES)
def test_run_playground_metric_subsets(llm, metrics, judge):
    result = run_playground(llm, QUESTION, n=3, temperature=1.0, judge=judge, metrics=metrics, seed=2,
                            max_tokens=MAX_TOKENS)
    check_result(result, 3, metrics, judge)
    for name in metrics:
        if name in MODEL_CALLING_METRICS:  # a readable number, or a missing value that says why
            r = result.results[name]
            assert r.missing or 0.0 <= r.confidence <= 1.0
            assert "raw" in r.details
        elif name in ("degree", "eccentricity", "eigval_laplacian", "discrete_semantic_entropy"):
            assert result.results[name].details["judge"] == judge


def test_run_playground_transitive_and_judge_params(llm):
    result = run_playground(llm, QUESTION, n=4, temperature=1.2, judge="embedding", seed=3, max_tokens=MAX_TOKENS,
                            clustering="transitive", judge_params={"threshold": 0.99},
                            metrics=("discrete_semantic_entropy", "num_semantic_sets"))
    strict_judge = make_judge("embedding", {"threshold": 0.99})
    check_result(result, 4, ("discrete_semantic_entropy", "num_semantic_sets"), "embedding", "transitive",
                 judge_obj=strict_judge)
    strict = cluster(result.samples.texts, strict_judge, QUESTION, "transitive")
    default = cluster(result.samples.texts, "embedding", QUESTION, "transitive")
    assert strict.n_clusters > default.n_clusters  # the threshold reached the judge
    loose = cluster(result.samples.texts, make_judge("embedding", {"threshold": 0.0}), QUESTION, "transitive")
    assert loose.n_clusters == 1 <= strict.n_clusters


def test_run_playground_is_reproducible(llm):
    a = run_playground(llm, QUESTION, n=3, seed=5, max_tokens=MAX_TOKENS)
    b = run_playground(llm, QUESTION, n=3, seed=5, max_tokens=MAX_TOKENS)
    assert a.samples.texts == b.samples.texts
    assert a.table.to_dicts() == b.table.to_dicts()


@pytest.mark.parametrize(("kwargs", "named"), [
    ({"question": "  "}, "question"),
    ({"n": 1}, "n"),
    ({"n": 11}, "n"),
    ({"n": 2.5}, "n"),
    ({"temperature": 2.5}, "temperature"),
    ({"temperature": -0.1}, "temperature"),
    ({"max_tokens": 4}, "max_tokens"),
    ({"clustering": "single_link"}, "clustering"),
    ({"metrics": ()}, "metrics"),
    ({"metrics": "semantic_density"}, "metrics"),
])
def test_run_playground_bad_input_names_the_argument(kwargs, named):
    llm = CannedLLM(lambda prompt: "never asked")
    args = {"question": QUESTION, "n": 3, "temperature": 1.0, **kwargs}
    with pytest.raises((ValueError, TypeError), match=named):
        run_playground(llm, **args)
    assert llm.prompts == []  # nothing was sampled before the check


def test_unknown_metric_and_judge_list_what_exists():
    llm = CannedLLM(lambda prompt: "x")
    with pytest.raises(registry.UnknownPluginError, match="semantic_density"):
        run_playground(llm, QUESTION, metrics=("semantic_densty",))
    with pytest.raises(registry.UnknownPluginError, match="embedding"):
        run_playground(llm, QUESTION, judge="embeding")


def test_model_calling_plugins_get_the_running_model():
    llm = CannedLLM(lambda prompt: "entailment" if "entail" in prompt else "85")
    judge = make_judge("llm_entailment", llm=llm)
    assert judge.llm is llm
    other = CannedLLM(lambda prompt: "neutral")
    assert make_judge("llm_entailment", {"llm": other}, llm=llm).llm is other
    metrics = make_metrics(["verbalized_confidence", "discrete_semantic_entropy"], judge=judge, llm=llm)
    assert metrics["verbalized_confidence"].llm is llm
    assert metrics["discrete_semantic_entropy"]._judge is judge
    result = run_playground(llm, QUESTION, n=2, judge="llm_entailment",
                            metrics=("discrete_semantic_entropy", "verbalized_confidence"))
    assert result.results["verbalized_confidence"].confidence == pytest.approx(0.85)
    assert result.clustering.n_clusters == 1  # canned samples are identical


def test_widget_builds_with_controls_from_ranges(llm):
    w = semantic_playground(llm, n=2, max_tokens=MAX_TOKENS, seed=1)
    assert isinstance(w, SemanticPlayground)
    for name, r in RANGES.items():
        s = w.sliders[name]
        assert (s.min, s.max, s.step) == pytest.approx((r.min, r.max, r.step))
    assert w.sliders["n"].value == 2 and w.sliders["max_tokens"].value == MAX_TOKENS
    assert set(OFFLINE_JUDGES) <= set(w.judge.dropdown.options)
    assert w.judge.name == "embedding" and "threshold" in w.judge.controls  # the judge's own parameters
    assert list(w.metrics.options) == registry.names("metrics")
    assert tuple(w.metrics.value) == DEFAULT_METRICS
    v = w.values
    assert v["n"] == 2 and v["judge"] == "embedding" and v["judge_params"]["threshold"] == 0.85
    with pytest.raises(ValueError, match=r"temperature must be a number in \[0, 2\], got 3.0"):
        semantic_playground(llm, temperature=3.0)
    with pytest.raises(ValueError, match=r"n must be an integer in \[2, 10\], got 2.5"):
        semantic_playground(llm, n=2.5)  # an n slider holds integers: 2.5 is refused, not truncated
    with pytest.raises(ValueError, match="unknown control"):
        semantic_playground(llm, colour="red")


@pytest.mark.parametrize("judge", OFFLINE_JUDGES)
def test_run_button_handler(llm, judge):
    w = semantic_playground(llm, n=3, max_tokens=MAX_TOKENS, seed=4)
    w.judge.name = judge
    w.metrics.value = ("discrete_semantic_entropy", "semantic_density")
    w.sliders["temperature"].value = 0.7
    w._on_run(w.run_button)  # what a click calls
    assert w.result is not None
    check_result(w.result, 3, ("discrete_semantic_entropy", "semantic_density"), judge)
    assert w.result.settings["temperature"] == 0.7
    direct = run_playground(llm, QUESTION, n=3, temperature=0.7, judge=judge,
                            metrics=("discrete_semantic_entropy", "semantic_density"), seed=4, max_tokens=MAX_TOKENS)
    assert direct.samples.texts == w.result.samples.texts
    assert direct.table.to_dicts() == w.result.table.to_dicts()
    assert "3 samples" in w.status.value and judge in w.status.value
    (shown,) = w.output.outputs  # the samples, classes and metric table, as HTML
    page = shown["data"]["text/html"]
    assert page.count("<table>") == 2 and "discrete_semantic_entropy" in page
    assert all(html.escape(" ".join(t.split())) in page for t in direct.samples.texts)
    w.run_button.click()  # the registered handler itself
    assert w.result.samples.texts == direct.samples.texts
    assert len(w.output.outputs) == 1  # a rerun replaces the output


def test_run_button_shows_errors_instead_of_raising(llm):
    w = semantic_playground(llm, n=2, max_tokens=MAX_TOKENS)
    w.question.value = ""
    assert w.run() is None and w.result is None
    assert "question" in w.status.value and "ValueError" in w.status.value
    w.question.value = QUESTION
    w.judge.name = "nli_cross_encoder"  # offered, but needs a local NLI model folder
    w._on_run(w.run_button)
    assert w.result is None and "model" in w.status.value
    w.judge.name = "exact"
    w.metrics.value = ()
    w._on_run(w.run_button)
    assert w.result is None and "metrics" in w.status.value
    w.metrics.value = ("num_semantic_sets",)
    w._on_run(w.run_button)
    assert w.result is not None and w.result.judge == "exact"


def test_samples_and_metrics_tables():
    texts = ["Canberra.", "canberra", "Sydney"]
    t = samples_table(texts, {"exact": cluster(texts, "exact")})
    assert t.columns == ["#", "answer", "class (exact)"]
    assert [row["class (exact)"] for row in t] == [0, 0, 1]
    with pytest.raises(ValueError, match="labels"):
        samples_table(texts, {"exact": cluster(texts[:2], "exact")})
    results = {name: registry.create("metrics", name, judge="exact").score(texts)
               for name in ("discrete_semantic_entropy", "num_semantic_sets")}
    table = metrics_table(results)
    assert [row["metric"] for row in table] == list(results)
    assert table[0]["uncertainty"] == pytest.approx(entropy_of_partition([2, 1]), abs=1e-4)
    assert table[1]["uncertainty"] == 2 and "2 class(es), exact judge" in table[1]["note"]
    missing = registry.create("metrics", "semantic_entropy", judge="exact").score(texts)
    row = metrics_table({"se": missing})[0]
    assert math.isnan(row["confidence"]) and "logprobs" in row["note"]


def test_compare_metrics_rows_columns_and_values():
    sets = {"same": ["No."] * 4, "split": ["Yes.", "No.", "Yes.", "No."]}
    metrics = {"SE": registry.create("metrics", "discrete_semantic_entropy", judge="exact"), "sets": "num_semantic_sets"}
    t = compare_metrics(sets, metrics, value={"SE": "uncertainty"})
    assert t.columns == ["set", "n", "SE", "sets"]
    assert [row["set"] for row in t] == ["same", "split"]
    assert t[0]["SE"] == 0.0 and t[1]["SE"] == pytest.approx(math.log(2), abs=1e-4)
    assert t[0]["sets"] == 1.0 and t[1]["sets"] == pytest.approx(2 / 3, abs=1e-4)  # 1 - (K - 1)/(n - 1)
    with pytest.raises(ValueError, match="value"):
        compare_metrics(sets, metrics, value="probability")


def test_entropy_range_table_matches_hand_listed_partitions():
    t = entropy_range_table((3, 5, 10), threshold=1.65, normalised_threshold=0.5)
    rows = {row["n"]: row for row in t}
    # n = 5: {0, 0.500, 0.673, 0.950, 1.055, 1.332, 1.609} (HASSUM §6): 1.65 never fires
    assert rows[5]["partitions"] == 7 and rows[5]["distinct values"] == 7
    assert rows[5]["fires at H > 1.65"] == 0 and rows[5]["first raw firing"] == "never"
    assert rows[3]["fires at H > 1.65"] == 0
    assert rows[10]["partitions"] == 42 and rows[10]["fires at H > 1.65"] > 0
    # normalised 0.5 at n = 5 fires on 3+1+1 (0.590), 2+2+1, 2+1+1+1, 1+1+1+1+1, not on 3+2 (0.418)
    assert rows[5]["fires at H/ln n > 0.5"] == 4 and rows[5]["first normalised firing"] == "3+1+1"
    assert rows[3]["fires at H/ln n > 0.5"] == 2 and rows[3]["first normalised firing"] == "2+1"
    assert rows[5]["ln n"] == pytest.approx(math.log(5))
    with pytest.raises(ValueError, match="n must be"):
        entropy_range_table((1,))


def test_draw_entropy_range():
    fig, table = draw_entropy_range((3, 5, 10))
    try:
        ax_raw, ax_norm = fig.axes[:2]
        assert len(table) == 3
        assert any(abs(line.get_ydata()[0] - 1.65) < 1e-12 for line in ax_raw.get_lines()
                   if len(set(line.get_ydata())) == 1)
        dots = [line for line in ax_norm.get_lines() if line.get_marker() == "o"]
        values = np.concatenate([line.get_ydata() for line in dots])
        assert values.min() >= 0.0 and values.max() == pytest.approx(1.0)
    finally:
        plt.close(fig)


def test_calibration_run_and_auroc_table():
    items = [QAItem(id=f"q{i}", category="factual", question=f"Question {i}?", answers=(gold,))
             for i, gold in enumerate(["blue", "red", "green", "blue"])]
    replies = {"Question 0?": "blue", "Question 1?": "red", "Question 2?": "blue", "Question 3?": "blue"}
    llm = CannedLLM(lambda prompt: replies[prompt])
    run = calibration_run(llm, items, ["discrete_semantic_entropy", "semantic_entropy"], n=2, judge="exact",
                          progress=False)
    assert run.correct.tolist() == [True, True, False, True]
    assert len(run.samples) == 4 and all(s.n == 2 for s in run.samples)
    assert np.isnan(run.confidence("semantic_entropy")).all()  # no logprobs: missing, never confident
    assert run.confidence("discrete_semantic_entropy").tolist() == [1.0] * 4
    t = auroc_table(run, n_boot=200)
    by = {row["metric"]: row for row in t}
    # 3 right answers and 1 wrong: too few of each for an AUROC, and the note says so
    dse = by["discrete_semantic_entropy"]
    assert math.isnan(dse["AUROC"]) and (dse["used"], dse["right"], dse["wrong"]) == (4, 3, 1)
    assert dse["note"] == "not given: 3 right answers and 1 wrong one; at least 10 of each are needed"
    assert math.isnan(by["semantic_entropy"]["AUROC"]) and "missing for every question" in by["semantic_entropy"]["note"]
    assert by["semantic_entropy"]["missing"] == 4
    assert "stratified percentile bootstrap, 200 resamples, seed 0" in t.title
    assert len(run.table()) == 4
    all_right = calibration_run(llm, items[:2], ["discrete_semantic_entropy"], n=2, judge="exact", progress=False)
    assert "2 right answers and 0 wrong ones" in auroc_table(all_right, n_boot=50)[0]["note"]
    # ten right and ten wrong: the value (constant confidence: chance), its interval and the counts
    many = [QAItem(id=f"m{i}", category="factual", question=f"Many {i}?", answers=("blue" if i < 10 else "red",))
            for i in range(20)]
    twenty = calibration_run(CannedLLM(lambda prompt: "blue"), many, ["discrete_semantic_entropy"], n=2,
                             judge="exact", progress=False)
    row = auroc_table(twenty, n_boot=100, seed=1)[0]
    assert (row["AUROC"], row["low"], row["high"], row["used"], row["right"], row["wrong"]) == (0.5, 0.5, 0.5, 20, 10, 10)
    with pytest.raises(ValueError, match="n must be"):
        calibration_run(llm, items, ["discrete_semantic_entropy"], n=1)
    with pytest.raises(ValueError, match="items"):
        calibration_run(llm, [], ["discrete_semantic_entropy"])


def test_moved_helpers_stay_importable_from_widgets_semantic():
    """The helpers that moved to semantic_metrics and semantic_analysis keep their old import path until 0.3."""
    from uncertainty_lab.widgets import semantic, semantic_analysis, semantic_metrics

    for module in (semantic_metrics, semantic_analysis):
        for name in module.__all__:
            if name != "rounded":
                assert getattr(semantic, name) is getattr(module, name), name
