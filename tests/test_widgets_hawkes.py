"""The self-excitation explorer of notebook 01: the drawing function over every slider's min/mid/max (stable,
critical and explosive settings), the exact expected count it draws against, and the widget wiring."""

from __future__ import annotations

import itertools
import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from scipy.integrate import quad  # noqa: E402

from uncertainty_lab.hawkes import HawkesModel, simulate  # noqa: E402
from uncertainty_lab.widgets import (  # noqa: E402
    UnivariateExplorer,
    draw_univariate,
    univariate_explorer,
)
from uncertainty_lab.widgets.hawkes import (  # noqa: E402
    MAX_EVENTS,
    RANGES,
    expected_count,
    stability,
    status_html,
)

T = 100.0
GRID = [(r.min, r.mid, r.max) for r in RANGES.values()]
SETTINGS = list(itertools.product(*GRID))  # 27 (mu, alpha, beta): Poisson, stable, critical, explosive


def rug_count(ax) -> int:
    """Events drawn as ticks ('|' markers) under the intensity curve."""
    return sum(len(line.get_xdata()) for line in ax.get_lines() if line.get_marker() == "|")


def test_ranges_cover_every_regime():
    (mu_lo, mu_mid, mu_hi), (a_lo, a_mid, a_hi), (b_lo, b_mid, b_hi) = GRID
    assert a_lo == 0.0  # a Poisson process is on the sliders
    assert a_hi / b_lo > 1  # so is an explosive one
    assert a_mid / b_mid < 1 < a_mid / b_lo
    assert a_hi / b_hi == 1.0  # and the critical boundary
    for r in RANGES.values():  # every tested value lies on the slider's grid
        for v in (r.min, r.mid, r.max, r.value):
            assert r.min <= v <= r.max
            assert abs((v - r.min) / r.step - round((v - r.min) / r.step)) < 1e-9


@pytest.mark.parametrize(("mu", "alpha", "beta"), SETTINGS)
def test_draw_univariate_over_slider_ranges(mu, alpha, beta):
    fig, s = draw_univariate(mu, alpha, beta, T=T, seed=1)
    try:
        n = alpha / beta
        assert s["branching_ratio"] == pytest.approx(n, rel=1e-12)
        assert s["label"] == ("stable" if n < 1 else "explosive")
        assert s["stable"] is (n < 1)
        assert (s["mu"], s["alpha"], s["beta"], s["T"], s["seed"]) == (mu, alpha, beta, T, 1)

        # the event count: bounded, and the run stops at T unless the cap stopped it first
        assert 0 <= s["n_events"] <= MAX_EVENTS
        if s["capped"]:
            assert s["n_events"] == MAX_EVENTS and s["end_time"] < T
        else:
            assert s["end_time"] == T
        assert s["expected_events"] == pytest.approx(expected_count(mu, alpha, beta, T))
        if s["expected_events"] > 10 * MAX_EVENTS:  # far beyond the cap: the run must have been stopped
            assert s["capped"]
        if n < 1 and not s["capped"]:
            # Hawkes counts are over-dispersed: sd(N(T)) ≈ sqrt(μT/(1 − n)³) (Poisson when n = 0)
            sd = math.sqrt(mu * T / (1 - n) ** 3)
            assert abs(s["n_events"] - s["expected_events"]) < 5 * sd + 5, s
            assert s["stationary_rate"] == pytest.approx(mu / (1 - n))
        else:
            assert s["stationary_rate"] == math.inf
        if alpha == 0:  # Poisson: the intensity never leaves μ
            assert s["max_intensity"] == pytest.approx(mu)
            assert s["expected_events"] == pytest.approx(mu * T)
        if s["label"] == "explosive" and alpha / beta > 1.5:
            assert s["capped"], "an explosive setting on the sliders should hit the cap on [0, 100]"

        # the picture shows exactly these events and this intensity
        ax_lam, ax_n = fig.axes[0], fig.axes[1]
        assert len(fig.axes) == 2
        assert rug_count(ax_lam) == s["n_events"]
        curve = ax_lam.get_lines()[0]
        assert np.max(curve.get_ydata()) == pytest.approx(s["max_intensity"], rel=1e-9)
        assert np.min(curve.get_ydata()) >= mu - 1e-12
        assert s["label"] in ax_lam.get_title() and f"n = α/β = {n:.3g}" in ax_lam.get_title()
        assert ax_n.get_lines()[0].get_ydata()[-1] == s["n_events"]
        assert ax_n.get_yscale() == ("log" if s["label"] == "explosive" and s["n_events"] else "linear")
    finally:
        plt.close(fig)


def test_same_seed_same_path_other_seed_other_path():
    a = draw_univariate(0.5, 0.8, 1.0, T=T, seed=3)
    b = draw_univariate(0.5, 0.8, 1.0, T=T, seed=3)
    c = draw_univariate(0.5, 0.8, 1.0, T=T, seed=4)
    xs = [fig.axes[1].get_lines()[0].get_xdata() for fig, _ in (a, b, c)]
    assert a[1] == b[1] and np.array_equal(xs[0], xs[1])
    assert not np.array_equal(xs[0], xs[2])
    for fig, _ in (a, b, c):
        plt.close(fig)


def test_draw_on_given_axes():
    fig, ax = plt.subplots()
    out, s = draw_univariate(0.5, 0.8, 1.0, T=50, seed=0, ax=ax)
    assert out is fig and len(fig.axes) == 1 and rug_count(ax) == s["n_events"]
    plt.close(fig)
    fig, axes = plt.subplots(2, 1)
    out, s = draw_univariate(0.5, 0.8, 1.0, T=50, seed=0, ax=axes)
    assert out is fig and axes[1].get_lines()[0].get_ydata()[-1] == s["n_events"]
    plt.close(fig)


def test_a_smaller_cap_is_respected():
    fig, s = draw_univariate(1.0, 3.0, 1.0, T=T, seed=0, max_events=300)
    assert s["capped"] and s["n_events"] == 300 and s["end_time"] < T
    assert "cap of 300 events" in fig.axes[0].get_title()
    plt.close(fig)


@pytest.mark.parametrize(("kwargs", "word"), [
    ({"mu": -0.1}, "mu"), ({"alpha": -1}, "alpha"), ({"beta": 0}, "beta"), ({"T": float("nan")}, "T"),
    ({"mu": "x"}, "mu"),
])
def test_bad_arguments_name_the_argument(kwargs, word):
    args = {"mu": 0.5, "alpha": 0.5, "beta": 1.0, "T": 10.0, **kwargs}
    with pytest.raises(ValueError, match=word):
        draw_univariate(**args)


def test_stability_label():
    assert stability(0.8, 1.0) == (0.8, "stable")
    assert stability(0.0, 0.2) == (0.0, "stable")
    assert stability(2.1, 2.1) == (1.0, "explosive")  # critical counts as not stable
    assert stability(4.0, 0.2) == (20.0, "explosive")


@pytest.mark.parametrize(("mu", "alpha", "beta"), [
    (0.5, 0.8, 1.0), (1.0, 0.0, 2.0), (0.3, 2.0, 2.0), (0.3, 2.0, 2.0 + 1e-7), (0.2, 3.0, 2.0), (1.0, 4.0, 0.2),
])
def test_expected_count_integrates_the_mean_intensity(mu, alpha, beta):
    """E[N(t)] = ∫_0^t m, with m(t) = E λ(t) solving m' = βμ − (β − α) m, m(0) = μ (Euler-free check)."""
    x = beta - alpha

    def m(u):
        return mu + mu * alpha * (u if x == 0 else -math.expm1(-x * u) / x)

    for t in (0.0, 0.5, 3.0, 10.0):
        want = quad(m, 0, t, epsabs=0, epsrel=1e-11)[0] if t else 0.0
        assert expected_count(mu, alpha, beta, t) == pytest.approx(want, rel=1e-7, abs=1e-12)
    grid = np.array([0.5, 3.0])
    assert np.allclose(expected_count(mu, alpha, beta, grid), [expected_count(mu, alpha, beta, t) for t in grid])
    assert expected_count(1.0, 4.0, 0.2, 1e4) == math.inf  # overflow is inf, never nan


def test_expected_count_matches_simulation():
    """The mean count of many simulated runs started empty agrees with E[N(t)] (transient included)."""
    model = HawkesModel.exponential([0.5], [[0.8]], 1.0)
    counts = np.array([simulate(model, T=20.0, seed=k).n_events for k in range(400)])
    want = expected_count(0.5, 0.8, 1.0, 20.0)
    assert want < 0.5 * 20 / (1 - 0.8)  # the transient matters: below the stationary μT/(1 − n)
    assert abs(counts.mean() - want) < 4 * counts.std() / math.sqrt(counts.size)


def test_status_html():
    _, s = draw_univariate(0.5, 0.8, 1.0, T=20, seed=0)
    text = status_html(s)
    assert "n = α/β = 0.8" in text and "stable" in text and "explosive" not in text
    assert f"{s['n_events']} events" in text
    _, s = draw_univariate(0.5, 2.0, 0.5, T=T, seed=0)
    text = status_html(s)
    assert "explosive" in text and "capped" in text and "n = α/β = 4" in text
    _, s = draw_univariate(0.1, 1.0, 1.0, T=10, seed=0)
    assert "critical" in status_html(s)
    plt.close("all")


def test_explorer_widget_redraws_on_every_slider():
    before = set(plt.get_fignums())
    w = univariate_explorer(T=50, seed=2)
    assert isinstance(w, UnivariateExplorer)
    for name, r in RANGES.items():
        slider = w.sliders[name]
        assert (slider.min, slider.max, slider.step, slider.value) == (r.min, r.max, r.step, r.value)
        assert not slider.continuous_update  # redraw on release, not on every pixel
    assert w.summary["label"] == "stable" and w.summary["T"] == 50 and w.summary["seed"] == 2
    assert "stable" in w.status.value
    assert w.image.format == "png" and bytes(w.image.value).startswith(b"\x89PNG")  # the drawing, as widget state
    assert w.image in w.children and w.status in w.children
    first_png = bytes(w.image.value)

    w.sliders["alpha"].value = RANGES["alpha"].max
    w.sliders["beta"].value = RANGES["beta"].min
    assert w.summary["branching_ratio"] == pytest.approx(RANGES["alpha"].max / RANGES["beta"].min)
    assert w.summary["label"] == "explosive" and w.summary["capped"]
    assert "explosive" in w.status.value
    assert bytes(w.image.value).startswith(b"\x89PNG") and bytes(w.image.value) != first_png

    w.sliders["alpha"].value = 0.0
    w.sliders["mu"].value = RANGES["mu"].max
    assert w.summary["label"] == "stable" and w.summary["alpha"] == 0.0 and w.summary["mu"] == RANGES["mu"].max
    w.seed.value = 7
    same = draw_univariate(RANGES["mu"].max, 0.0, RANGES["beta"].min, T=50, seed=7)
    plt.close(same[0])
    assert w.summary == same[1]  # the widget draws exactly what the function draws
    assert w.redraw() is w.summary
    assert set(plt.get_fignums()) == before  # every redraw closed its figure


def test_explorer_starting_values_are_checked():
    w = univariate_explorer(T=20, alpha=1.5, beta=1.0)
    assert w.values == {"mu": RANGES["mu"].value, "alpha": 1.5, "beta": 1.0}
    assert w.summary["label"] == "explosive"
    with pytest.raises(ValueError, match=r"alpha must be a number in \[0, 4\], got 99.0"):
        univariate_explorer(alpha=99.0)
    with pytest.raises(ValueError, match="mu must be a number"):
        univariate_explorer(mu="fast")
    with pytest.raises(ValueError, match="gamma"):
        univariate_explorer(gamma=1.0)
    plt.close("all")


def test_slider_range_check_and_its_old_import_path():
    from uncertainty_lab.widgets.controls import SliderRange
    from uncertainty_lab.widgets.hawkes import SliderRange as OldPath

    assert OldPath is SliderRange  # other widget modules import it from widgets.hawkes
    r = SliderRange(1, 7, 1, 3)
    assert r.mid == 4
    r.check("k", 7, int)
    r.check("k", 2.0, int)
    for bad in (8, 0.5, 2.5, True, "3", None):
        with pytest.raises(ValueError, match=r"k must be an integer in \[1, 7\]"):
            r.check("k", bad, int)
