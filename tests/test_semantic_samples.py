"""SampleSet (validation, length normalisation, JSON), sample_answers through the real embedded backend,
and "missing is not confident" for every metric."""

from __future__ import annotations

import math

import pytest
from fakes import CannedLLM

from uncertainty_lab import registry
from uncertainty_lab.llm import CompletionCache, LLMUnavailableError, get_llm
from uncertainty_lab.semantic import MetricResult, SampleSet, as_sample_set, sample_answers

LN = math.log
# the built-in metrics by name (other tests register toy metrics in-process, so registry.names is not used)
BUILT_IN_METRICS = ["semantic_entropy", "discrete_semantic_entropy", "semantic_density", "num_semantic_sets",
                    "eigval_laplacian", "degree", "eccentricity", "lexical_similarity", "predictive_entropy",
                    "verbalized_confidence"]


def test_from_texts_and_length_normalised_logprobs():
    s = SampleSet.from_texts(["a b", "c", "d e f"], logprobs=[[LN(0.5), LN(0.5)], [LN(0.25)], [LN(0.5), LN(0.25), LN(0.125)]],
                             question="q")
    assert s.n == len(s) == 3 and s.question == "q" and s.has_logprobs
    # mean token logprob = log of the geometric-mean token probability = log p(s|x)^(1/L)
    assert s.length_normalised_logprobs == pytest.approx([LN(0.5), LN(0.25), LN(0.25)], abs=1e-12)
    assert s.sequence_logprobs == pytest.approx([LN(0.25), LN(0.25), LN(1 / 64)], abs=1e-12)


def test_logprobs_accept_token_objects_and_pairs():
    from uncertainty_lab.llm import TokenLogprob

    s = SampleSet.from_texts(["x", "y"], logprobs=[[TokenLogprob("x", -0.5)], [("y", -1.0), ("!", -2.0)]])
    assert s.logprobs == [[-0.5], [-1.0, -2.0]]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(texts="abc"), "list of strings"),
        (dict(texts=["a", 3]), r"texts\[1\] must be a string"),
        (dict(texts=["a", "b"], logprobs=[[-1.0]]), "one entry per text"),
        (dict(texts=["a"], logprobs=[[0.5]]), "log-probability <= 0"),
        (dict(texts=["a"], logprobs=[[float("nan")]]), "finite"),
        (dict(texts=["a"], greedy_logprobs=[-1.0]), "without a greedy answer"),
    ],
)
def test_bad_input_names_the_argument(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        SampleSet(**kwargs)


def test_missing_logprobs_are_reported_per_sample():
    s = SampleSet.from_texts(["a", "b"], logprobs=[[-1.0], None])
    assert not s.has_logprobs
    assert "samples [1]" in s.missing_logprobs_reason()
    assert math.isnan(s.length_normalised_logprobs[1])
    assert "no token logprobs" in SampleSet.from_texts(["a"]).missing_logprobs_reason()


def test_json_round_trip():
    s = SampleSet.from_texts(["Paris", "Lyon"], logprobs=[[-0.1, -0.2], [-1.5]], question="Capital?",
                             greedy="Paris", greedy_logprobs=[-0.05])
    s.meta["seed"] = 3
    back = SampleSet.from_json(s.to_json())
    assert back == s
    assert SampleSet.from_dict({"texts": ["x"]}) == SampleSet(["x"])


def test_as_sample_set():
    s = as_sample_set(["a", "b"])
    assert isinstance(s, SampleSet) and s.texts == ["a", "b"]
    assert as_sample_set(s) is s
    with pytest.raises(TypeError, match="not one string"):
        as_sample_set("ab")


@pytest.fixture
def llm(tmp_path):
    try:
        return get_llm("embedded", cache=CompletionCache(tmp_path / "c.sqlite"))
    except LLMUnavailableError as exc:  # the embedded model is a declared dependency; fail loudly
        pytest.fail(f"embedded backend unavailable: {exc}")


def test_sample_answers_embedded_is_seeded_and_has_logprobs(llm):
    q = "What is the capital of France? Answer in one word."
    a = sample_answers(llm, q, n=3, temperature=1.0, seed=7, max_tokens=8, greedy=True)
    b = sample_answers(llm, q, n=3, temperature=1.0, seed=7, max_tokens=8, greedy=True)
    assert a.texts == b.texts and a.greedy == b.greedy and a.n == 3
    assert a.has_logprobs and a.greedy_logprobs  # embedded gives logprobs when logprobs=None (auto)
    assert all(lp <= 0 for lp in a.length_normalised_logprobs)
    assert a.meta["backend"].startswith("embedded:") and a.meta["temperature"] == 1.0 and a.meta["seed"] == 7
    assert all(b.meta["cached"])  # the second run was served by the completion cache
    back = SampleSet.from_json(a.to_json())
    assert back.texts == a.texts and back.logprobs == a.logprobs
    # greedy is temperature 0: the same whatever the seed
    c = sample_answers(llm, q, n=1, temperature=1.0, seed=8, max_tokens=8, greedy=True)
    assert c.greedy == a.greedy


def test_sample_answers_rejects_bad_arguments():
    with pytest.raises(ValueError, match="question"):
        sample_answers(CannedLLM(lambda p: "x"), "  ", n=2)
    with pytest.raises(ValueError, match="n must be a positive integer"):
        sample_answers(CannedLLM(lambda p: "x"), "q", n=0)
    with pytest.raises(ValueError, match="on_error"):
        sample_answers(CannedLLM(lambda p: "x"), "q", on_error="ignore")


class _DownLLM:
    supports_logprobs = True
    label = "down:model"

    def complete(self, *a, **k):
        from uncertainty_lab.llm import LLMUnavailableError

        raise LLMUnavailableError("server down")


def test_backend_outage_gives_missing_not_confident():
    with pytest.raises(LLMUnavailableError):
        sample_answers(_DownLLM(), "q", n=5)
    s = sample_answers(_DownLLM(), "q", n=5, on_error="missing")
    assert s.n == 0 and "server down" in s.meta["error"]
    for name in BUILT_IN_METRICS:
        params = {"llm": CannedLLM(lambda p: "90")} if name == "verbalized_confidence" else {}
        r = registry.create("metrics", name, **params).score(s)
        assert isinstance(r, MetricResult) and r.missing, name
        assert math.isnan(r.uncertainty) and math.isnan(r.normalised_uncertainty)
        assert "server down" in r.details["missing"], (name, r.details)


@pytest.mark.parametrize("name", ["semantic_entropy", "discrete_semantic_entropy", "num_semantic_sets", "semantic_density",
                                  "eigval_laplacian", "degree", "eccentricity", "lexical_similarity"])
def test_one_sample_is_too_few(name):
    r = registry.create("metrics", name).score(SampleSet.from_texts(["Paris"], logprobs=[[-0.1]]))
    assert r.missing and "needs at least 2" in r.details["missing"]
    assert r.details["n_samples"] == 1


def test_metrics_needing_logprobs_say_so():
    s = SampleSet.from_texts(["a", "b", "a"])
    for name in ("semantic_entropy", "predictive_entropy"):
        r = registry.create("metrics", name).score(s)
        assert r.missing and "logprobs" in r.details["missing"]
