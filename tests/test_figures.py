"""The figures of notebooks 01 to 05 show their data: the checks of ``figure_checks`` (nothing outside its axes or
the figure, no legend over data, no series hidden under another) — first on small figures made good and bad on
purpose, then on every figure function those notebooks draw, fed small results built here (a cascade experiment
with a fake model and embedder, the search experiment with the oracle reader, orchestration runs with a scripted
model, short Hawkes runs)."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from fakes import ByQuestion, FakeLLM, HashEmbedder  # noqa: E402
from figure_checks import (  # noqa: E402
    figure_problems,
    hidden_series,
    legend_over_data,
    outside_axes,
    outside_figure,
    texts_outside_axes,
)

from uncertainty_lab.orchestration.scripted import ScriptedLLM  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# --- the checks, on figures made good and bad on purpose -------------------------------------------------------


def test_a_marker_on_the_axis_limit_is_outside_until_the_limits_are_padded():
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3], [0.0, 0.5, 1.0], "o", ms=8)
    ax.set_ylim(0, 1)
    assert len(outside_axes(fig)) == 1 and "2 point(s)" in outside_axes(fig)[0]  # y = 0 and y = 1, half hidden
    ax.set_ylim(-0.1, 1.1)
    assert outside_axes(fig) == []


def test_a_band_or_a_bar_past_the_limits_is_outside():
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3], [0.2, 0.3, 0.2])
    ax.fill_between([1, 2, 3], [-1.0, 0.1, 0.1], [0.4, 0.5, 1.5])
    ax.set_ylim(0, 0.6)
    assert any("FillBetween" in p for p in outside_axes(fig))
    fig, ax = plt.subplots()
    ax.barh([0, 1], [0.5, 1.2])
    ax.set_xlim(0, 1)
    assert any("bar" in p for p in outside_axes(fig))
    ax.set_xlim(0, 1.25)
    assert outside_axes(fig) == []


def test_a_label_running_past_the_axes_is_found():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], "o")
    ax.annotate("ρ=0.86", (0, 0), textcoords="offset points", xytext=(4, -14))
    assert [p for p in texts_outside_axes(fig) if "ρ=0.86" in p]
    ax.margins(0.3)
    assert texts_outside_axes(fig) == []


def test_a_legend_over_points_or_bars_is_found_and_one_outside_is_not():
    fig, ax = plt.subplots()
    ax.plot(np.linspace(0, 1, 11), np.full(11, 0.9), "o-", label="high")
    ax.plot(np.linspace(0, 1, 11), np.linspace(0, 1, 11), label="rising")
    ax.legend(loc="upper left")
    assert legend_over_data(fig)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))
    assert legend_over_data(fig) == []
    fig, ax = plt.subplots()
    ax.barh([0, 1, 2], [1.0, 1.0, 1.0], label="budget")
    ax.set_xlim(0, 1)
    ax.legend(loc="lower right")
    assert [p for p in legend_over_data(fig) if "bar" in p]


def test_a_legend_outside_the_figure_is_cut_off_unless_the_layout_makes_room():
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0, 1], [0, 1], label="a long label that needs room")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))
    assert outside_figure(fig)
    fig, ax = plt.subplots(figsize=(4, 3), layout="constrained")
    ax.plot([0, 1], [0, 1], label="a long label that needs room")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))
    assert outside_figure(fig) == []


def test_identical_series_and_a_reference_line_under_a_curve_are_hidden():
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3], [0.2, 0.5, 0.4], "o-", label="first")
    ax.plot([1, 2, 3], [0.2, 0.5, 0.4], "o-", label="second, the same values")
    assert [p for p in hidden_series(fig) if "'first'" in p]
    fig, ax = plt.subplots()
    ax.axhline(math.log(3), color="0.6", ls=":", label="ln 3")
    ax.plot([1, 2, 3, 4], [math.log(3)] * 4, "o-", label="exact judge")
    assert [p for p in hidden_series(fig) if "'ln 3'" in p]


def test_dodged_points_a_wide_band_and_dashed_lines_leave_every_series_visible():
    fig, ax = plt.subplots()
    ax.axhline(math.log(3), color="0.6", lw=9, alpha=0.35, label="ln 3 band")  # wider than what lies on it
    for i in range(3):
        ax.plot(np.arange(1, 5) + 0.1 * (i - 1), [math.log(3)] * 4, ls="none", marker="osD"[i], ms=6, label=f"{i}")
    ax.plot([1, 4], [0.5, 0.5], lw=2, label="solid")
    ax.plot([1, 4], [0.5, 0.5], lw=2, ls="--", label="dashed on top")  # gaps: the solid one shows through
    assert hidden_series(fig) == []


def test_a_good_figure_passes_every_check():
    fig, ax = plt.subplots(layout="constrained")
    ax.plot([1, 2, 3], [0.0, 0.5, 1.0], "o-", label="a")
    ax.set_ylim(-0.1, 1.1)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))
    assert figure_problems(fig) == []


# --- small results, built fast ---------------------------------------------------------------------------------

WORDS = ["launch", "crew", "anomaly", "splashdown", "budget", "orbit"]


class HeadlineLLM(FakeLLM):
    """Headlines from a few words, by the prompt's hash and the seed (a few repeat: copies)."""

    def text(self, h, seed, i):
        return f"Halyard {WORDS[(int(h[:4], 16) + seed + i) % len(WORDS)]} update {h[:2] if (seed + i) % 2 else ''}".strip()


@pytest.fixture(scope="module")
def setup():
    from uncertainty_lab.cascade import CascadeConfig
    from uncertainty_lab.cascade.experiment import prepare

    return prepare(CascadeConfig())


def _cascade(setup, tmp_path_factory, **config):
    from uncertainty_lab.cascade.experiment import run_experiment

    base = {"selectors": ["hawkes", "recency", "random"], "ks": [3], "runs": 3, "steps": 5, "progress": False,
            "figure": False, "out_dir": str(tmp_path_factory.mktemp("cascade"))}
    return run_experiment({**base, **config}, llm=HeadlineLLM(), embedder=HashEmbedder(shift=1.5), setup=setup)


@pytest.fixture(scope="module")
def cascade(setup, tmp_path_factory):
    """Three selectors × 3 runs, with 3 alternative samples per step (exact judge: every sample its own class)."""
    return _cascade(setup, tmp_path_factory, samples_per_step=3,
                    metric={"name": "discrete_semantic_entropy", "judge": "exact"})


@pytest.fixture(scope="module")
def search_config(tmp_path_factory):
    return {"llm": "oracle", "policies": ["heuristic"], "beliefs": ["implicit", "predicate"],
            "gate_sets": [["fixed_budget"], ["exhaustion", "fixed_budget"],
                          ["belief_complete", "exhaustion", "fixed_budget"]],
            "limit": 6, "max_steps": 8, "seed": 0, "progress": False, "figure": False}


@pytest.fixture(scope="module")
def search(search_config, tmp_path_factory):
    """Notebook 05's comparison on 6 questions; belief_complete never fires with the implicit belief, so two
    conditions have the very same episodes (equal points)."""
    from uncertainty_lab.search.experiment import run_experiment

    return run_experiment({**search_config, "out_dir": str(tmp_path_factory.mktemp("search"))})


# --- notebook 02: the cascade ----------------------------------------------------------------------------------


def test_cascade_figure_shows_every_panel_whole(cascade):
    fig = cascade.figure()
    assert figure_problems(fig) == []
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[0].startswith("alignment S_t, k = 3") and titles[1].startswith("S_t − S_t(recency), k = 3")
    assert titles[2].startswith("drift per run") and titles[3].startswith("per-step uncertainty")


def test_the_uncertainty_panel_keeps_equal_curves_visible(cascade):
    """Every sample is its own class under the exact judge: all three curves sit at ln 3, dodged sideways."""
    assert all(np.allclose(c, math.log(3)) for sel, k in cascade.conditions
               for c in cascade.curves("uncertainty", sel, k))
    assert hidden_series(cascade.figure()) == []


def test_cascade_figure_of_one_run_and_of_one_selector(setup, tmp_path_factory):
    one_run = _cascade(setup, tmp_path_factory, selectors=["hawkes", "recency"], runs=1, steps=3)
    fig = one_run.figure()
    assert figure_problems(fig) == [] and len(fig.axes) == 3
    assert "one run: no interval" in " ".join(t.get_text() for t in fig.axes[1].get_legend().get_texts())
    alone = _cascade(setup, tmp_path_factory, selectors=["hawkes"], runs=2, steps=3, ks=[1, 3])
    fig = alone.figure()
    assert figure_problems(fig) == [] and [ax.get_title()[:13] for ax in fig.axes] == [
        "alignment S_t", "alignment S_t", "drift per run"]


def test_notebook_02_fit_pictures_and_uncertainty_curves(setup):
    from uncertainty_lab.widgets.cascade import draw_uncertainty_curves, plot_alpha, plot_beta_grid

    fig, (ax_beta, ax_alpha) = plt.subplots(1, 2, figsize=(13, 4.8), constrained_layout=True)
    plot_beta_grid(setup.fit, ax=ax_beta)
    plot_alpha(setup.model, setup.nodes, ax=ax_alpha)
    assert figure_problems(fig) == []
    assert figure_problems(plot_beta_grid(setup.fit)[0]) == []
    ln3 = math.log(3)
    curves = {"exact judge": [ln3] * 4, "embedding judge, cosine ≥ 0.85": [ln3, ln3, ln3, 0.64],
              "embedding judge, cosine ≥ 0.70": [ln3, 0.64, 0.0, 0.0]}
    fig, ax = draw_uncertainty_curves(curves, m=3)
    assert figure_problems(fig) == []
    assert ax.get_legend().get_texts()[0].get_text().startswith("ln 3 = 1.10")


def test_notebook_02_explorer_panel(setup):
    from uncertainty_lab.widgets.cascade import draw_panel, run_panel

    results = [run_panel(setup, s, 3, 4, 0.35, HeadlineLLM(), embedder=HashEmbedder(shift=1.5)) for s in ("hawkes", "hawkes")]
    assert np.array_equal(results[0].diagnostics.curves["alignment"].values,
                          results[1].diagnostics.curves["alignment"].values, equal_nan=True)
    assert figure_problems(draw_panel(results)) == []  # the same run twice: both still visible


# --- notebook 05: the search comparison ------------------------------------------------------------------------


def test_search_figures_show_equal_conditions_side_by_side(search):
    rows = {r["condition"]: r for r in search.summary_rows()}
    twin = "heuristic · implicit · belief_complete+exhaustion+fixed_budget"
    assert rows[twin]["context_tokens"]["mean"] == rows["heuristic · implicit · exhaustion+fixed_budget"][
        "context_tokens"]["mean"]
    for fig in (search.figure(), search.draw_tokens_accuracy(tokens="context_tokens"),
                search.draw_tokens_accuracy(tokens="model_tokens"), search.draw_stop_reasons()):
        assert figure_problems(fig) == []


def test_search_figure_names_its_panels_the_experiment_and_the_model(search):
    fig = search.figure()
    titles = [ax.get_title() for ax in fig.get_axes() if ax.get_title()]
    assert len(titles) == len(set(titles)) == 3  # context tokens, model tokens, stop reasons
    assert "CGDP search lab" in fig._suptitle.get_text() and search.llm_label in fig._suptitle.get_text()


def test_search_figure_with_every_answer_wrong(search_config, tmp_path_factory):
    """One step is too few for any multi-hop question: every point lies on exact match = 0, whole."""
    from uncertainty_lab.search.experiment import run_experiment

    none_right = run_experiment({**search_config, "max_steps": 1, "out_dir": str(tmp_path_factory.mktemp("s0"))})
    assert all(r["exact_match"]["rate"] == 0 for r in none_right.summary_rows())
    assert figure_problems(none_right.draw_tokens_accuracy(tokens="model_tokens")) == []
    assert figure_problems(none_right.figure()) == []


def test_notebook_05_gate_trace():
    from uncertainty_lab.datasets.search import load_search_questions
    from uncertainty_lab.search import SearchEnvironment, run_episode
    from uncertainty_lab.search.oracle import OracleReader
    from uncertainty_lab.widgets.search import draw_gate_trace

    q = next(q for q in load_search_questions() if q.id == "q003")
    episode = run_episode(q, SearchEnvironment(), llm=OracleReader(), policy="heuristic", belief="predicate",
                          gates=["exhaustion", "fixed_budget"], max_steps=8, seed=0)
    assert figure_problems(draw_gate_trace(episode)) == []


# --- notebook 03: the reach of the entropy ---------------------------------------------------------------------


def test_notebook_03_entropy_range():
    from uncertainty_lab.widgets.semantic_analysis import HASSUM_TAU_E, NORMALISED_TAU_E, draw_entropy_range

    fig, _ = draw_entropy_range((3, 5, 10), threshold=HASSUM_TAU_E, normalised_threshold=NORMALISED_TAU_E)
    assert figure_problems(fig) == []


def test_notebook_03_reliability_diagram_shows_bins_at_accuracy_0_and_1_whole():
    """Ten answers in five bins, two of them all wrong and three all right: every dot and count shows whole, and
    the legend (under the axes) covers no bar — the low-confidence bin is right, where a legend used to sit."""
    from uncertainty_lab.semantic.calibration import reliability_diagram

    confidence = [0.05, 0.1, 0.3, 0.35, 0.55, 0.62, 0.8, 0.9, 0.97, 1.0]
    correct = [True, True, False, False, True, False, True, True, True, True]
    fig = reliability_diagram(confidence, correct, n_bins=5)
    assert sorted(fig.axes[0].lines[0].get_ydata()) == [0, 0, 1, 1, 1]
    assert figure_problems(fig) == []
    rng = np.random.default_rng(0)
    c = rng.random(200)
    assert figure_problems(reliability_diagram(c, rng.random(200) < c, n_bins=10, strategy="equal_mass")) == []


# --- notebook 04: orchestration --------------------------------------------------------------------------------

#: question → its five round-1 samples; gold is always Canberra. The exact judge ignores case and punctuation
#: while the hash embedder does not, so "one meaning, spread out" (SE 0, SD low) occurs too.
SIGNALS = {
    "clean right": ["Canberra"] * 5,  # SE 0, SD 1
    "clean wrong": ["Sydney"] * 5,  # SE 0, SD 1: an error every sample shares
    "one meaning, spread, right": ["Canberra", "canberra", "CANBERRA.", "Canberra!", "the Canberra"],
    "one meaning, spread, wrong": ["Sydney", "sydney", "SYDNEY.", "Sydney!", "the Sydney"],
    "split wrong": ["Perth", "Sydney", "Darwin", "Hobart", "Canberra"],  # SE 1
    "three-two right": ["Canberra", "Canberra", "Perth", "Perth", "Canberra"],
}


@pytest.fixture(scope="module")
def signal_run():
    """24 questions, four of each kind: eight share the clean corner (0, 1), four of them wrong."""
    from uncertainty_lab.orchestration import Coordinator, default_workers

    metrics = {"entropy": "discrete_semantic_entropy", "density": {"name": "semantic_density", "embedder": HashEmbedder(shift=1.5)}}
    coord = Coordinator(default_workers(ByQuestion(script={**SIGNALS, "": ["Hobart"]}), max_tokens=8), "none", metrics, n_samples=5, judge="exact")
    items = [{"id": f"q{i}", "question": f"{q} #{i}", "answers": ["Canberra"], "category": "factual"}
             for i, q in enumerate([q for _ in range(4) for q in SIGNALS])]
    return coord.run_benchmark(items, None, progress=False)


def _drawn_points(fig) -> np.ndarray:
    return np.vstack([c.get_offsets() for c in fig.axes[0].collections if len(c.get_offsets())])


@pytest.mark.parametrize("policy", [None, "entropy_only", "density_only"])
def test_notebook_04_signal_map_shows_every_question_on_its_side_of_the_thresholds(signal_run, policy):
    from uncertainty_lab.orchestration.figures import draw_signal_map
    from uncertainty_lab.orchestration.record import gate_of

    fig = draw_signal_map(signal_run, policy)
    assert figure_problems(fig) == []
    points = _drawn_points(fig)
    assert len(points) == 24  # every question drawn, none on top of another (the clean corner holds eight)
    gaps = np.hypot(*(points[:, None] - points[None]).transpose(2, 0, 1)) + np.eye(24)
    assert gaps.min() >= 0.029
    gate = gate_of(signal_run, policy)
    values = [(t.first_signals.entropy, t.first_signals.density) for t in signal_run.traces]
    right = signal_run.first_correct
    drawn = np.vstack([points[: right.sum()], points[right.sum():]])  # right ones first, then wrong ones
    order = np.concatenate([np.flatnonzero(right), np.flatnonzero(~right)])
    for (x, y), i in zip(drawn, order, strict=True):  # a dodge never carries a point across a threshold
        se, sd = values[i]
        assert (x > gate.entropy_threshold) == (se > gate.entropy_threshold)
        assert (y < gate.density_threshold) == (sd < gate.density_threshold)


def test_notebook_04_concern_region_is_shaded_visibly(signal_run):
    """The concern region is one opaque patch, far enough from white to see (the old 8% red was not)."""
    from matplotlib.colors import to_rgba
    from matplotlib.patches import Polygon

    from uncertainty_lab.orchestration.figures import draw_signal_map

    ax = draw_signal_map(signal_run).axes[0]
    (region,) = [p for p in ax.patches if isinstance(p, Polygon)]
    r, g, b, a = to_rgba(region.get_facecolor())
    seen = a * np.array([r, g, b]) + (1 - a)  # over a white page
    assert (1 - seen).max() >= 0.25
    assert region.get_label().startswith("concern (both): SE > τ_E or SD < τ_D")


def test_notebook_04_gate_explorer_draws_a_clean_map(signal_run):
    from uncertainty_lab.orchestration.figures import draw_signal_map
    from uncertainty_lab.widgets.orchestration import gate_policy

    for gates, tau_e, tau_d in [("entropy and density", 0.3, 0.95), ("density only", 0.5, 0.65),
                                ("entropy only", 0.95, 0.8)]:
        fig = draw_signal_map(signal_run, gate_policy(gates, tau_e, tau_d))
        assert figure_problems(fig) == [] and len(_drawn_points(fig)) == 24


def _scripted_result(tmp_path_factory, script, ids, name):
    from uncertainty_lab.orchestration import run_experiment

    config = {"ids": ids, "judge": "exact", "n_samples": 3, "max_tokens": 8, "progress": False, "figure": False,
              "metrics": {"entropy": "discrete_semantic_entropy", "density": "num_semantic_sets"}}
    return run_experiment({**config, "llm": ScriptedLLM(script=script), "out_dir": str(tmp_path_factory.mktemp(name))},
                          save=False)


def test_notebook_04_policy_figure_with_accuracy_0_and_1_and_two_models(tmp_path_factory):
    """One model right on every question, another wrong on every one (dots on 0 and 1, whole), and the gated
    policies paying for re-prompts; with two models the legend sits under both panels."""
    from uncertainty_lab.orchestration import OrchestrationResult

    ids = ["factual-001", "ambiguous-001"]
    right = _scripted_result(tmp_path_factory, {"*": ["Canberra"]}, ids[:1], "right")
    assert figure_problems(right.figure()) == []
    wrong = _scripted_result(tmp_path_factory, {"direct:ask": ["Sydney", "Perth", "Darwin"], "*": ["Sydney"]},
                             ids[:1], "wrong")
    both = OrchestrationResult(config=right.config, runs={
        **right.runs, **{("scripted:other", p): run for (_, p), run in wrong.runs.items()}})
    accuracy = {(r["model"], r["policy"]): r["accuracy"] for r in both.summary_rows()}
    assert set(accuracy.values()) == {0.0, 1.0}
    fig = both.figure()
    assert figure_problems(fig) == [] and len(fig.legends) == 1
    calls = [t.get_text() for t in fig.axes[1].texts]
    assert "3.0" in calls and "6.0" in calls  # the cost written on each bar


# --- notebook 01: Hawkes processes -----------------------------------------------------------------------------


@pytest.mark.parametrize("mu, alpha, beta", [(0.5, 0.0, 1.0), (0.5, 0.8, 1.0), (0.5, 1.5, 1.0), (1.0, 3.0, 1.0),
                                             (1.9, 4.0, 4.0), (0.1, 0.0, 0.2)])
def test_notebook_01_self_excitation(mu, alpha, beta):
    """Poisson (λ = μ = the stationary mean), stable, critical and explosive settings; both panels."""
    from uncertainty_lab.widgets import draw_univariate

    fig, _ = draw_univariate(mu, alpha, beta, T=100, seed=1)
    assert figure_problems(fig) == []


def test_notebook_01_three_settings_side_by_side():
    from uncertainty_lab.widgets import draw_univariate

    fig, axes = plt.subplots(3, 1, figsize=(9, 8.5), constrained_layout=True)
    for ax, (mu, alpha, beta) in zip(axes, [(0.5, 0.0, 1.0), (0.5, 0.8, 1.0), (0.5, 1.5, 1.0)], strict=True):
        draw_univariate(mu, alpha, beta, T=100, seed=1, ax=ax)
    assert figure_problems(fig) == []


def test_notebook_01_news_outlets():
    from uncertainty_lab.hawkes import HawkesModel, plot_branching_matrix, plot_intensity, plot_qq, simulate

    names = ["local_tv", "mass_market", "specialist_science_tech", "business_finance", "general_news"]
    alpha = np.zeros((5, 5))
    alpha[2, [4, 1, 3, 2]] = [0.40, 0.30, 0.10, 0.20]
    alpha[4, [0, 1, 4]] = [0.25, 0.20, 0.20]
    alpha[3, [4, 3]] = [0.15, 0.30]
    alpha[1, [0, 1]] = [0.10, 0.30]
    alpha[0, [4, 0]] = [0.05, 0.20]
    truth = HawkesModel.exponential([0.10, 0.15, 0.05, 0.08, 0.12], alpha, beta=1.0)
    news = simulate(truth, T=1500, seed=3, node_names=names)
    assert figure_problems(plot_branching_matrix(truth, node_names=names)[0]) == []
    assert figure_problems(plot_intensity(truth, news, nodes=[2, 4, 1], t_range=(0, 72))[0]) == []
    poisson = HawkesModel.exponential(news.rates, np.zeros((5, 5)), beta=1.0)
    fig, axes = plt.subplots(1, 2, figsize=(11, 5), constrained_layout=True)
    plot_qq(truth, news, ax=axes[0], node_names=names)
    plot_qq(poisson, news, ax=axes[1], node_names=names)
    assert figure_problems(fig) == []
