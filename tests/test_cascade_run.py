"""The generation loop (run.py): JSONL streaming, resume after an interruption, reload, validation, the per-step
uncertainty curve — with a fake language model for the bookkeeping and the real embedded model end to end."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np
import pytest
from fakes import Counting, FakeLLM

from uncertainty_lab import registry
from uncertainty_lab.cascade import (
    CascadeError,
    CascadeResumeError,
    CascadeRun,
    Event,
    HawkesSelector,
    NodeSpec,
    build_prompt,
    simulate_cascade,
)
from uncertainty_lab.hawkes import HawkesModel, UnstableModelError
from uncertainty_lab.llm import Completion, CompletionCache, get_llm

SPECS = [
    NodeSpec("local_tv", "Write one short local TV news headline."),
    NodeSpec("business_finance", "Write one business news headline about costs or contracts."),
    NodeSpec("specialist_science_tech", "Write one technical science headline."),
]
SEED = Event(0.0, 2, "Lunar flyby crew completes final rehearsal before launch")
MODEL = HawkesModel.exponential([0.05, 0.04, 0.03], [[0.2, 0.1, 0.0], [0.0, 0.15, 0.1], [0.3, 0.2, 0.25]], beta=0.5)


def run(llm=None, **kw):
    args = dict(seed_event=SEED, hawkes_model=MODEL, selector="hawkes", llm=llm or FakeLLM(), steps=8, k=2, seed=7,
                node_specs=SPECS, progress=False)
    args.update(kw)
    return simulate_cascade(**args)


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_streams_each_step_and_reloads_into_the_same_object(tmp_path):
    out = tmp_path / "run.jsonl"
    seen = []

    class Watching(FakeLLM):
        def complete(self, messages, **kw):  # when step t is generated, steps 1..t-1 are already on disk
            seen.append(sum(1 for r in _lines(out) if r["type"] == "step"))
            return super().complete(messages, **kw)

    r = run(Watching(), out=out)
    assert seen == list(range(8))
    recs = _lines(out)
    assert [x["type"] for x in recs] == ["header"] + ["step"] * 8 + ["end"]
    assert recs[0]["config"]["selector"] == {"name": "hawkes", "params": {"ranking": "recency", "eps_raw": 1e-6, "eps_norm": 0.05}}
    assert recs[-1] == {"type": "end", "reason": "steps", "n_steps": 8}
    assert r.stop_reason == "steps" and len(r) == 8 and r.events[0] == SEED
    times = r.times
    assert np.all(np.diff(times) > 0)
    for t, s in enumerate(r.steps, start=1):
        assert s.text == s.text.strip() and s.text.startswith("item ")
        assert all(0 <= m.index < t and times[m.index] < s.time for m in s.memory)
        assert len(s.memory) <= 2 and (not s.memory or math.isclose(sum(m.weight for m in s.memory), 1.0))
        assert r.prompt(t)  # rebuilt with the default template; matches the stored hash
    loaded = CascadeRun.load(out)
    assert loaded.steps == r.steps and loaded.events == r.events and loaded.config == r.config
    assert loaded.stop_reason == "steps" and loaded.node_specs == tuple(SPECS)
    with pytest.raises(CascadeError, match="another prompt_fn"):
        loaded.prompt(3, prompt_fn=lambda *a: [{"role": "user", "content": "x"}])


def test_memory_matches_algorithm1_on_the_run_history():
    r = run(steps=10)
    for t, s in enumerate(r.steps, start=1):
        h = r.history
        prefix = type(h)(SPECS, r.events[:t])
        assert list(s.memory) == HawkesSelector().select(prefix, s.time, s.node, 2, MODEL)
    assert any(s.memory for s in r.steps)


def test_interrupt_then_resume_equals_uninterrupted(tmp_path):
    full = run(out=tmp_path / "full.jsonl")
    out = tmp_path / "cut.jsonl"
    with pytest.raises(RuntimeError, match="simulated"):
        run(Counting(FakeLLM(), fail_after=2), out=out)
    partial = CascadeRun.load(out)
    assert len(partial) == 2 and partial.stop_reason is None
    with open(out, "a") as f:  # a line the crash cut short
        f.write('{"type": "step", "step": 3, "ti')
    llm = FakeLLM()
    resumed = run(llm, out=out)
    assert len(llm.calls) == 6  # only steps 3..8 were generated
    assert [s.to_record() for s in resumed.steps] == [s.to_record() for s in full.steps]
    assert CascadeRun.load(out).steps == full.steps
    # resuming a finished run generates nothing
    again = FakeLLM()
    assert run(again, out=out).steps == full.steps and again.calls == []


def test_resume_checks_the_configuration_and_can_extend(tmp_path):
    out = tmp_path / "r.jsonl"
    run(steps=3, out=out)
    with pytest.raises(CascadeResumeError, match="k: file 2 vs now 3"):
        run(steps=3, k=3, out=out)
    with pytest.raises(CascadeResumeError, match="selector"):
        run(steps=3, selector="recency", out=out)
    with pytest.raises(CascadeResumeError, match="more than steps=2"):
        run(steps=2, out=out)
    extended = run(steps=5, out=out)
    assert [s.to_record() for s in extended.steps] == [s.to_record() for s in run(steps=5).steps]
    assert CascadeRun.load(out).stop_reason == "steps" and len(CascadeRun.load(out)) == 5
    fresh = run(steps=2, k=3, out=out, resume=False)  # resume=False overwrites
    assert len(CascadeRun.load(out)) == 2 and CascadeRun.load(out).config["k"] == 3 and len(fresh) == 2


def test_same_seed_same_run_other_seed_other_run():
    a, b, c = run(), run(), run(seed=8)
    assert a.steps == b.steps
    assert [(s.time, s.node) for s in a.steps] != [(s.time, s.node) for s in c.steps]


@pytest.mark.parametrize("name", ["recency", "random", "full_history", "none"])
def test_baseline_selectors_in_the_loop(name):
    r = run(selector=name, steps=5, k=2)
    sizes = [len(s.memory) for s in r.steps]
    want = {"recency": [1, 2, 2, 2, 2], "random": [1, 2, 2, 2, 2], "full_history": [1, 2, 3, 4, 5], "none": [0] * 5}
    assert sizes == want[name]
    if name == "none":
        assert all("weight" not in r.prompt(t)[1]["content"] for t in range(1, 6))


def test_horizon_stops_the_run(tmp_path):
    out = tmp_path / "h.jsonl"
    r = run(horizon=0.5, steps=50, out=out)
    assert r.stop_reason == "horizon" and all(s.time <= 0.5 for s in r.steps) and len(r) < 50
    assert _lines(out)[-1]["reason"] == "horizon"
    llm = FakeLLM()
    assert run(llm, horizon=0.5, steps=50, out=out).steps == r.steps and llm.calls == []


def test_bad_inputs_get_clear_errors():
    unstable = HawkesModel.exponential([0.1] * 3, np.full((3, 3), 0.5), beta=1.0)
    with pytest.raises(UnstableModelError, match="unstable"):
        run(hawkes_model=unstable)
    with pytest.raises(CascadeError, match="k must be an integer >= 1"):
        run(k=0)
    with pytest.raises(CascadeError, match="steps must be an integer >= 0"):
        run(steps=-1)
    with pytest.raises(CascadeError, match="node_specs has 2 nodes"):
        run(node_specs=SPECS[:2])
    with pytest.raises(CascadeError, match="metric="):
        run(samples_per_step=2)
    with pytest.raises(CascadeError, match="seed_event"):
        run(seed_event=(0.0, 0, "x"))
    with pytest.raises(CascadeError, match="top_p"):
        run(top_p=0.0)
    with pytest.raises(registry.UnknownPluginError, match="hawkes"):
        run(selector="hawkse")
    with pytest.raises(CascadeError, match="llm must be"):
        run(llm=object())
    assert len(run(steps=0)) == 0 and run(steps=0).stop_reason == "steps"


class DistinctFraction:
    """(#distinct texts − 1)/(n − 1): 0 when all samples agree."""

    name = "test_distinct_fraction"

    def score(self, samples):
        texts = samples.texts if hasattr(samples, "texts") else list(samples)
        u = (len(set(texts)) - 1) / max(len(texts) - 1, 1)

        @dataclass
        class R:
            uncertainty: float
            confidence: float

        return R(u, 1.0 - u)


@pytest.fixture
def distinct_metric():
    """Registers DistinctFraction as the metric 'test_distinct_fraction' for one test only."""
    registry.register("metrics", "test_distinct_fraction")(DistinctFraction)
    yield "test_distinct_fraction"
    registry.unregister("metrics", "test_distinct_fraction")


def test_samples_per_step_gives_an_uncertainty_curve(tmp_path, distinct_metric):
    llm = FakeLLM()
    r = run(llm, steps=4, samples_per_step=3, metric=distinct_metric, sample_temperature=0.9,
            out=tmp_path / "u.jsonl")
    assert r.uncertainty.shape == (4,) and np.all(np.isfinite(r.uncertainty))
    for s in r.steps:
        assert len(s.samples) == 3
        assert s.uncertainty == pytest.approx(DistinctFraction().score(list(s.samples)).uncertainty)
        assert s.metric["metric"] == "test_distinct_fraction" and s.confidence == pytest.approx(1 - s.uncertainty)
    assert [c[1:3] for c in llm.calls] == [(1, 0.35), (3, 0.9)] * 4
    assert np.array_equal(CascadeRun.load(tmp_path / "u.jsonl").uncertainty, r.uncertainty)
    assert np.all(np.isnan(run(steps=2).uncertainty))
    by_instance = run(steps=4, samples_per_step=3, metric=DistinctFraction(), sample_temperature=0.9)
    assert np.array_equal(by_instance.uncertainty, r.uncertainty)


def test_alternative_samples_carry_logprobs_when_the_backend_has_them(distinct_metric):
    from uncertainty_lab.llm import TokenLogprob

    seen = []

    class WithLogprobs(FakeLLM):
        supports_logprobs = True

        def complete(self, messages, *, n=1, logprobs=False, **kw):
            out = super().complete(messages, n=n, **kw)
            if logprobs:
                out = [Completion(c.text, "stop", "fake", "echo-1", c.seed, c.index,
                                  (TokenLogprob("item", -0.5), TokenLogprob(" x", -0.25))) for c in out]
            return out

    class Spy(DistinctFraction):
        def score(self, samples):
            seen.append(samples)
            return super().score(samples)

    run(WithLogprobs(), steps=2, samples_per_step=2, metric=Spy())
    assert len(seen) == 2 and all(s.logprobs == [[-0.5, -0.25]] * 2 for s in seen)
    assert all(s.question.startswith("New event: node") for s in seen)  # the prompt is the question


def test_end_to_end_with_the_embedded_model(tmp_path):
    """Three steps with SmolLM2-135M (≤ 12 new tokens), streamed, interrupted at step 3, resumed, reloaded. The
    runs share one completion cache, as a notebook would: the resumed step can only be a cache hit — and so equal
    the uninterrupted text — if its draws, memory and prompt are identical, which the prompt hashes check directly.
    (The embedded backend's text for a given prompt and seed can depend on the request before it, through
    llama.cpp's prompt-prefix reuse, so two uncached runs are not compared here.)"""
    kw = dict(steps=3, k=3, max_tokens=12, seed=3)
    cache = CompletionCache(tmp_path / "c.sqlite")
    full = run(get_llm("embedded", cache=cache), out=tmp_path / "full.jsonl", **kw)
    assert len(full) == 3 and all(isinstance(s.text, str) for s in full.steps)
    assert full.config["llm"]["backend"] == "embedded" and full.config["llm"]["model"].startswith("SmolLM2")
    out = tmp_path / "cut.jsonl"
    with pytest.raises(RuntimeError, match="simulated"):
        run(Counting(get_llm("embedded", cache=cache), fail_after=2), out=out, **kw)
    assert len(CascadeRun.load(out)) == 2 and CascadeRun.load(out).stop_reason is None
    resumed = run(get_llm("embedded", cache=cache), out=out, **kw)
    assert [(s.time, s.node, s.memory, s.prompt_hash, s.llm_seed) for s in resumed.steps] == [
        (s.time, s.node, s.memory, s.prompt_hash, s.llm_seed) for s in full.steps]
    assert [s.to_record() for s in resumed.steps] == [s.to_record() for s in full.steps]
    reloaded = CascadeRun.load(out)
    assert reloaded.events == full.events and reloaded.stop_reason == "steps"
    last = full.steps[-1]
    assert full.prompt(3) == build_prompt(last.time, last.node, SPECS[last.node], list(last.memory),
                                          type(full.history)(SPECS, full.events[:3]), tuple(SPECS))
