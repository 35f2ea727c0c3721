"""Notebook 02's explorer and helpers: ``run_panel`` with the real embedded model over the widget's ranges
(every selector, k at its minimum, middle and maximum, temperature at its minimum, middle and maximum, the
smallest step counts), the Algorithm 1 memory table, the widget and its Run button (embedded, a loopback
Ollama server, and a server that is down), the uncertainty rescoring and the fit pictures."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from fake_ollama import FakeOllama  # noqa: E402

from uncertainty_lab import registry  # noqa: E402
from uncertainty_lab.cascade import CascadeConfig, History, headline_prompt, simulate_cascade  # noqa: E402
from uncertainty_lab.cascade.experiment import prepare  # noqa: E402
from uncertainty_lab.embeddings import Embedder  # noqa: E402
from uncertainty_lab.hawkes import HawkesModel  # noqa: E402
from uncertainty_lab.llm import CompletionCache, get_llm  # noqa: E402
from uncertainty_lab.widgets import CascadeExplorer, cascade_explorer  # noqa: E402
from uncertainty_lab.widgets.cascade import (  # noqa: E402
    BACKENDS,
    RANGES,
    PanelResult,
    comparison_table,
    draw_panel,
    memory_table,
    plot_alpha,
    plot_beta_grid,
    prompt_text,
    run_panel,
    samples_table,
    steps_table,
    uncertainty_curve,
)

MAX_TOKENS = 8  # short texts keep the real model fast
SELECTORS = registry.names("memory_selectors")


@pytest.fixture(scope="module")
def setup():
    return prepare(CascadeConfig())


@pytest.fixture(scope="module")
def llm(tmp_path_factory):
    return get_llm("embedded", cache=CompletionCache(tmp_path_factory.mktemp("wcache") / "completions.sqlite"))


@pytest.fixture(scope="module")
def embedder():
    return Embedder()


def _grid(r, kind=int):
    mid = r.min + round((r.max - r.min) / 2 / r.step) * r.step
    return [kind(r.min), kind(mid), kind(r.max)]


def check_panel(result: PanelResult, selector: str, k: int, steps: int, temperature: float) -> None:
    """What every explorer run must satisfy, whatever the model wrote."""
    assert isinstance(result, PanelResult)
    run = result.run
    assert len(run) == steps and run.stop_reason == "steps"
    assert run.config["selector"]["name"] == selector and run.config["k"] == k
    assert run.config["temperature"] == temperature
    for t, s in enumerate(run.steps, start=1):
        if selector == "full_history":  # ignores k: every earlier event
            assert len(s.memory) == t
        elif selector == "none":
            assert s.memory == ()
        else:
            assert len(s.memory) <= k
        if s.memory:
            assert math.isclose(sum(m.weight for m in s.memory), 1.0)
            assert all(0 <= m.index < t and m.weight >= 0 for m in s.memory)
        if selector == "hawkes":  # at most one event per node, each node's latest
            assert len({m.node for m in s.memory}) == len(s.memory)
    # the step table: one row per step with the diagnostics
    assert [row["step"] for row in result.table] == list(range(1, steps + 1))
    assert result.table.columns == ["step", "t (h)", "node", "memory (node: weight)", "text", "S_t", "global drift",
                                    "local drift"]
    for row, s in zip(result.table, run.steps, strict=True):
        assert row["text"] == s.text and row["node"] == run.node_names[s.node]
        assert (row["memory (node: weight)"] == "(empty)") == (not s.memory)
        assert 0.0 <= row["global drift"] <= 2.0
        assert math.isnan(row["S_t"]) or -1.0 <= row["S_t"] <= 1.0
    sm = result.summary
    assert sm["selector"] == selector and sm["k"] == k and sm["steps"] == steps
    assert sm["memory_sizes"] == [len(s.memory) for s in run.steps]
    assert sm["trend"] in {"increasing", "decreasing", "flat", "undetermined"}
    assert 0.0 <= sm["copies"] <= 1.0
    assert "<table>" in result._repr_html_()


def test_run_panel_over_the_widget_ranges(setup, llm, embedder):
    ks = _grid(RANGES["k"])
    temps = _grid(RANGES["temperature"], float)
    steps_choices = [int(RANGES["steps"].min), int(RANGES["steps"].min) + 1]
    schedules = {}
    for i, selector in enumerate(SELECTORS):  # every selector; k and temperature cycle over min / mid / max
        k, temperature, steps = ks[i % 3], temps[(i + 1) % 3], steps_choices[i % 2]
        result = run_panel(setup, selector, k, steps, temperature, llm, max_tokens=MAX_TOKENS, embedder=embedder)
        check_panel(result, selector, k, steps, temperature)
        schedules.setdefault(steps, []).append((result.run.times.tolist(), result.run.nodes.tolist()))
    for runs in schedules.values():  # the same seed gives every selector the same schedule
        assert all(r == runs[0] for r in runs)
    # the extremes of k and temperature with the hawkes selector
    for k in (ks[0], ks[-1]):
        for temperature in (temps[0], temps[-1]):
            check_panel(run_panel(setup, "hawkes", k, 2, temperature, llm, max_tokens=MAX_TOKENS, embedder=embedder),
                        "hawkes", k, 2, temperature)


def test_run_panel_refuses_out_of_range_settings(setup, llm):
    for kwargs, match in (({"k": 0}, "k must be"), ({"k": 8}, "k must be"), ({"steps": 13}, "steps must be"),
                          ({"steps": 0}, "steps must be"), ({"temperature": 1.6}, "temperature must be"),
                          ({"k": 2.5}, "k must be"), ({"prompt": "x"}, "prompt must be")):
        with pytest.raises(ValueError, match=match):
            run_panel(setup, backend=llm, **kwargs)
    with pytest.raises(registry.UnknownPluginError, match="closest match: 'hawkes'"):
        run_panel(setup, "hawk", backend=llm)


def test_memory_table_explains_algorithm_1(setup, llm, embedder):
    result = run_panel(setup, "hawkes", 2, 4, 0.35, llm, max_tokens=MAX_TOKENS, embedder=embedder)
    run = result.run
    for t, s in enumerate(run.steps, start=1):
        table = memory_table(run, t, setup.model)
        assert [row["node j"] for row in table] == list(setup.nodes)
        chosen = [row for row in table if row["in S"]]
        assert len(chosen) == len(s.memory) <= 2
        assert {row["node j"] for row in chosen} == {run.node_names[m.node] for m in s.memory}
        if chosen:
            assert math.isclose(sum(row["weight w"] for row in chosen), 1.0, abs_tol=2e-3)
        assert all(row["weight w"] == 0.0 for row in table if not row["in S"])
        assert all(row["w_raw"] > 0 for row in chosen)
        # S = the most recent nodes with positive excitation, at most k of them
        ranked = sorted((row for row in table if row["recency rank"] != "—"), key=lambda r: r["recency rank"])
        expected = [row["node j"] for row in ranked if row["w_raw"] > 0][:2]
        assert [row["node j"] for row in sorted(chosen, key=lambda r: r["recency rank"])] == expected
        silent = [row for row in table if row["latest event"] == "—"]
        assert all(row["w_raw"] == 0 and not row["in S"] for row in silent)
        assert f"τ_t = {s.time:.1f} h" in table.title
    other = HawkesModel.exponential(setup.model.mu, np.eye(len(setup.nodes)) * 0.1, beta=setup.model.beta)
    multi = [t for t, s in enumerate(run.steps, start=1) if len(s.memory) > 1]
    if multi:  # a model with self-excitation only would remember the target's own event alone
        with pytest.raises(ValueError, match="pass the model the run was made with"):
            memory_table(run, multi[0], other)
    with pytest.raises(ValueError, match="step must be in 1..4"):
        memory_table(run, 5, setup.model)
    rec = run_panel(setup, "recency", 2, 2, 0.35, llm, max_tokens=MAX_TOKENS, embedder=embedder).run
    table = memory_table(rec, 2)
    assert [row["index"] for row in table] == [m.index for m in rec.steps[1].memory]
    assert math.isclose(sum(row["weight"] for row in table), 1.0, abs_tol=2e-3)


def test_prompt_text_is_what_the_model_saw(setup, llm, embedder):
    run = run_panel(setup, "hawkes", 3, 2, 0.35, llm, max_tokens=MAX_TOKENS, embedder=embedder).run
    messages = run.prompt(2)
    assert messages == headline_prompt(run.steps[1].time, run.steps[1].node, setup.node_specs[run.steps[1].node],
                                       list(run.steps[1].memory), History(setup.node_specs, run.events[:2]),
                                       setup.node_specs)
    text = prompt_text(messages)
    assert text.startswith("--- system ---\n") and "\n--- user ---\n" in text
    assert messages[1]["content"] in text


def test_explorer_widget_runs_and_compares(setup, llm, embedder, monkeypatch):
    ex = cascade_explorer(setup, max_tokens=MAX_TOKENS, embedder=embedder, steps=2)
    assert isinstance(ex, CascadeExplorer)
    assert list(ex.selector.options) == SELECTORS and ex.selector.value == "hawkes"
    assert ex.values == {"selector": "hawkes", "k": 3, "steps": 2, "temperature": 0.35, "backend": "embedded",
                         "seed": 0}
    for name, r in RANGES.items():
        assert (ex.sliders[name].min, ex.sliders[name].max) == (r.min, r.max)
    assert set(BACKENDS) <= set(ex.backend.options)
    ex._llms["embedded"] = llm  # the module's cached model
    ex.run_button.click()
    assert len(ex.results) == 1 and ex.image.value[:4] == b"\x89PNG"
    ex.selector.value = "recency"
    ex.sliders["k"].value = 1
    result = ex.run()
    check_panel(result, "recency", 1, 2, 0.35)
    assert len(ex.results) == 2
    assert "<td>recency</td>" in ex.compare_html.value and "<td>hawkes</td>" in ex.compare_html.value
    assert "memory sizes" in ex.status.value
    rows = comparison_table(ex.results)
    assert [row["selector"] for row in rows] == ["hawkes", "recency"]
    # a server that is down: a clear message, nothing lost
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")
    ex.backend.value = "ollama:qwen2.5:3b"
    assert ex.run() is None
    assert "LLMUnavailableError" in ex.status.value and len(ex.results) == 2
    with pytest.raises(ValueError, match="outside|must be"):
        cascade_explorer(setup, k=9)
    given = cascade_explorer(setup, llm=llm, steps=1, max_tokens=MAX_TOKENS, embedder=embedder)
    assert given.backend.value == "embedded" and given._llm("embedded") is llm


def test_explorer_with_a_loopback_ollama_server(setup, embedder, monkeypatch):
    with FakeOllama(models=["qwen2.5:3b"]) as server:
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        ex = CascadeExplorer(setup, backend="ollama:qwen2.5:3b", max_tokens=MAX_TOKENS, embedder=embedder, steps=1)
        result = ex.run()
        assert result is not None, ex.status.value
        assert result.summary["backend"].startswith("ollama:qwen2.5:3b")
        assert server.count("/api/chat") >= 1


def test_uncertainty_curve_rescoring(setup, llm):
    run = simulate_cascade(setup.seed_event, setup.model, "hawkes", llm, steps=2, k=3, seed=0,
                           node_specs=setup.node_specs, prompt_fn=headline_prompt, max_tokens=MAX_TOKENS,
                           samples_per_step=3, metric="num_semantic_sets", progress=False)
    curve = uncertainty_curve(run, "num_semantic_sets")
    assert np.array_equal(curve, run.uncertainty)
    ent = uncertainty_curve(run, {"name": "discrete_semantic_entropy", "judge": "exact"})
    assert ent.shape == (2,) and np.all((ent >= 0) & (ent <= math.log(3) + 1e-9))
    table = samples_table(run)
    assert table.columns == ["step", "node", "kept text", "sample 1", "sample 2", "sample 3", "uncertainty"]
    assert [row["sample 2"] for row in table] == [st.samples[1] for st in run.steps]
    assert np.all(np.isnan(uncertainty_curve(run_panel(setup, "none", 1, 1, 0.0, llm, max_tokens=MAX_TOKENS).run,
                                             "num_semantic_sets")))


def test_fit_pictures_and_panel_figure(setup, llm, embedder):
    fig, ax = plot_alpha(setup.model, setup.nodes)
    assert "source" in ax.get_ylabel() and "target" in ax.get_xlabel()
    assert [t.get_text() for t in ax.get_yticklabels()] == list(setup.nodes)
    assert "source → target" in ax.get_title()
    plt.close(fig)
    fig, ax = plot_beta_grid(setup.fit)
    n_points = sum(len(c.get_offsets()) for c in ax.collections if c.get_label().split()[0] in ("stable", "unstable:"))
    assert sum(len(c.get_offsets()) for c in ax.collections if c.get_label() == "chosen") == 1
    assert n_points == len(setup.fit.table) and ax.get_xscale() == "log"
    plt.close(fig)
    results = [run_panel(setup, s, 3, 2, 0.35, llm, max_tokens=MAX_TOKENS, embedder=embedder)
               for s in ("hawkes", "random")]
    fig = draw_panel(results)
    assert len(fig.axes) == 2
    for ax, labels in ((fig.axes[0], ["#1 hawkes, k=3, T=0.35", "#2 random, k=3, T=0.35"]),
                       (fig.axes[1], ["global drift (from the seed)", "local drift (from the memory)"])):
        assert [t.get_text() for t in ax.get_legend().get_texts() if t.get_text() != "late window"] == labels
        assert len(ax.lines) == 2 * len(labels)  # per curve: a translucent line and its (dodged) markers
    plt.close(fig)
    with pytest.raises(ValueError):
        draw_panel([])
    table = steps_table(results[0].run)  # without diagnostics: no metric columns
    assert table.columns == ["step", "t (h)", "node", "memory (node: weight)", "text"]
