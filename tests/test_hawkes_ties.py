"""An event stream carries its tie report, and every fit on a tied stream says so: the share tied and what was done,
no excitation from sources whose events all tie, and no arbitrary β when the likelihood is flat over the grid."""

import math

import numpy as np
import pytest

from uncertainty_lab.hawkes import EventStream, fit_hawkes

GRID = [0.5, 1.0, 2.0, 4.0]


def brute_loglik(stream: EventStream, mu, alpha, beta: float) -> float:
    """ℓ = Σ_m log λ_{n_m}(τ_m) − Σ_i ∫_0^T λ_i, λ_i(t) = μ_i + Σ_{τ_l < t} α_{n_l,i} e^{−β(t − τ_l)}, by a double
    loop over the events (independent of the package's recursions)."""
    t, n, T = stream.times.tolist(), stream.nodes.tolist(), stream.end_time
    ll = 0.0
    for m, (tm, i) in enumerate(zip(t, n, strict=True)):
        lam = mu[i] + sum(alpha[n[lx], i] * math.exp(-beta * (tm - t[lx])) for lx in range(m) if t[lx] < tm)
        ll += math.log(lam)
    for i in range(stream.n_nodes):
        ll -= mu[i] * (T - stream.start_time)
        ll -= sum(alpha[n[lx], i] * (1 - math.exp(-beta * (T - t[lx]))) / beta for lx in range(len(t)))
    return ll


@pytest.mark.parametrize("how", ["spread", "merge"])
def test_a_stream_whose_events_all_tie_has_no_timing_and_no_beta(how):
    stream = EventStream.from_arrays([5.0] * 7, [0, 0, 0, 1, 1, 1, 1], end_time=10.0, ties=how)
    ties = stream.ties
    assert (ties.how, ties.n_events, ties.n_tied, ties.events, ties.tied) == (how, 7, 7, (3, 4), (3, 4))
    assert ties.untimed and ties.untimed_nodes == (0, 1) and ties.share == 1.0
    assert (ties.n_moved, ties.n_dropped) == ((5, 0) if how == "spread" else (0, 5))
    with pytest.warns(UserWarning) as caught:
        fit = fit_hawkes(stream, beta_grid=GRID)
    assert len(caught) == 1 and fit.warnings == [str(caught[0].message)]
    (warning,) = fit.warnings
    assert "7 of 7 events (100%) tied" in warning and ("spread" if how == "spread" else "merged") in warning
    assert "no timing information" in warning and "β is undetermined" in warning
    assert fit.beta is None and not fit.beta_determined and fit.untimed_sources == (0, 1)
    assert not np.any(fit.alpha) and fit.model.spectral_radius() == 0.0
    assert not any(fit.table.column("selected")) and "undetermined" in fit.table.title
    assert "NOTE: β is undetermined" in repr(fit) and "no timing information: all 7 events" in repr(fit)
    # the flatness claim, by brute force: the same log-likelihood at every β of the grid
    lls = [brute_loglik(stream, c.model.mu, c.model.alpha, b) for b, c in zip(GRID, fit.candidates, strict=True)]
    assert np.ptp(lls) < 1e-9 and np.allclose(fit.table.column("loglik"), lls, rtol=1e-9)


def test_spread_ties_alone_make_excitation_that_the_flags_remove():
    """The same all-tied stream fitted as if its spread times were data: α > 0 and ρ(G) near 1 (the GDELT symptom),
    which is why the fit sets α = 0 for untimed sources; by brute force the spread stream's likelihood does vary
    with β once α may be > 0, so the flag, not the data, makes it flat."""
    spread = EventStream.from_arrays([5.0] * 8, [0] * 8, end_time=10.0, ties="spread")
    plain = EventStream(spread.times, spread.nodes, 1, 10.0)  # the same times with the tie record dropped
    free = fit_hawkes(plain, beta_grid=GRID)
    assert free.warnings == [] and free.model.spectral_radius() > 0.8  # the spacing reads as self-excitation
    free_lls = [brute_loglik(plain, c.model.mu, c.model.alpha, b) for b, c in zip(GRID, free.candidates, strict=True)]
    assert np.ptp(free_lls) > 1e-3
    with pytest.warns(UserWarning, match="8 of 8 events"):
        flagged = fit_hawkes(spread, beta_grid=GRID)
    assert flagged.alpha[0, 0] == 0.0 and flagged.beta is None


def test_one_node_whose_events_all_tie_sends_no_excitation():
    rng = np.random.default_rng(0)
    t1 = np.sort(rng.uniform(0, 50, 40))
    times = np.concatenate([[20.0] * 5, t1])
    nodes = np.array([0] * 5 + [1] * 40)
    order = np.argsort(times, kind="stable")
    stream = EventStream.from_arrays(times[order], nodes[order], n_nodes=2, end_time=50.0, ties="spread",
                                     node_names=["burst", "steady"])
    ties = stream.ties
    assert ties.untimed_nodes == (0,) and not ties.untimed and ties.tied == (5, 0) and ties.events == (5, 40)
    with pytest.warns(UserWarning, match=r"5 of 45 events \(11%\) tied") as caught:
        fit = fit_hawkes(stream, beta_grid=GRID)
    assert len(caught) == 1 and "Node(s) burst have all their events at one time" in fit.warnings[0]
    assert fit.untimed_sources == (0,) and np.all(fit.alpha[0] == 0.0)
    assert "every event of burst is at one time" in fit.timing_note
    # the other source is still fitted: its column is free, and the candidates' likelihoods match brute force
    for b, c in zip(GRID, fit.candidates, strict=True):
        assert c.log_likelihood == pytest.approx(brute_loglik(stream, c.model.mu, c.model.alpha, b), rel=1e-9)


def test_partial_ties_are_counted_per_node_and_kept_by_derived_streams():
    times = [1.0, 1.0, 1.0, 2.0, 3.0, 3.0, 4.0, 6.0]
    nodes = [0, 0, 1, 1, 0, 1, 1, 0]
    stream = EventStream.from_arrays(times, nodes, end_time=8.0, ties="spread")
    ties = stream.ties
    assert (ties.events, ties.tied, ties.times, ties.n_moved) == ((4, 4), (2, 0), (3, 4), 1)
    assert ties.untimed_nodes == () and ties.reason == "EventStream.from_arrays(ties='spread')"
    early, late = stream.split(2.5)
    assert early.ties.tied == (2, 0) and late.ties.n_tied == 0 and early.ties.how == "spread"
    assert stream.append(7.0, 1).ties.events == (4, 5)
    with pytest.warns(UserWarning, match=r"2 of 8 events \(25%\) tied .*spread \(1 moved\)") as caught:
        fit = fit_hawkes(stream, beta_grid=GRID)
    assert len(caught) == 1 and fit.ties == ties and fit.untimed_sources == ()
    merged = EventStream.from_arrays(times, nodes, end_time=8.0, ties="merge")
    assert merged.n_events == 7 and (merged.ties.events, merged.ties.tied, merged.ties.n_dropped) == ((4, 4), (2, 0), 1)


def test_a_stream_without_ties_fits_as_before_and_a_flat_grid_is_still_undetermined():
    stream = EventStream.from_arrays([0.5, 1.7, 3.1, 4.4], [0, 1, 0, 1], end_time=5.0)
    assert stream.ties.how == "none" and stream.ties.n_tied == 0 and "no ties" in stream.ties.summary()
    with pytest.warns(UserWarning, match="β is undetermined: α̂ = 0 at every β"):
        fit = fit_hawkes(stream, beta_grid=[50.0, 100.0])  # decays far too fast to link any two events
    assert fit.beta is None and fit.model.beta in (50.0, 100.0) and fit.untimed_sources == ()
    assert fit_hawkes(stream, beta=1.0).beta == 1.0  # one fixed β is the caller's, never "undetermined"


def test_the_beta_grid_plot_says_when_beta_is_undetermined():
    import matplotlib

    matplotlib.use("Agg")
    from uncertainty_lab.widgets.cascade_views import plot_beta_grid

    with pytest.warns(UserWarning):
        fit = fit_hawkes(EventStream.from_arrays([5.0] * 4, [0, 0, 1, 1], end_time=9.0, ties="merge"), beta_grid=GRID)
    _, ax = plot_beta_grid(fit)
    assert ax.get_title().startswith("β undetermined") and "chosen" not in ax.get_legend_handles_labels()[1]


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
@pytest.mark.parametrize("how", ["spread", "merge"])
def test_the_tie_record_survives_a_file(tmp_path, fmt, how):
    stream = EventStream.from_arrays([1.0, 1.0, 1.0, 2.0, 3.0, 3.0], [0, 0, 1, 1, 0, 0], end_time=5.0, ties=how,
                                     node_names=["a", "b"])
    path = getattr(stream, f"to_{fmt}")(tmp_path / f"s.{fmt}")
    back = getattr(EventStream, f"from_{fmt}")(path)
    assert back == stream and back.ties == stream.ties and back.ties.how == how
    assert f"tied={stream.ties.n_tied}/{stream.ties.n_events} ({how})" in repr(back)
    plain = EventStream.from_arrays([0.5, 1.5], [0, 1], end_time=2.0)
    again = getattr(EventStream, f"from_{fmt}")(getattr(plain, f"to_{fmt}")(tmp_path / f"p.{fmt}"))
    assert again.ties.how == "none" and "tie" not in path.with_name(f"p.{fmt}").read_text(encoding="utf-8")
