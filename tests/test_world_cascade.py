"""Cascade worlds (uncertainty_lab/worlds/cascade.py) against theory, and the cascade lab on them: counts vs the
stationary rates, immigrant share vs 1 − ρ, topic inheritance vs the mutation rate, the world as a model, the
ancestor posterior against brute-force enumeration, α recovered, and the shipped worlds' verdicts."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

from uncertainty_lab.cascade.comparisons import paired_difference, verdict
from uncertainty_lab.cascade.experiment import run_experiment
from uncertainty_lab.cascade.prompt import build_prompt, headline_prompt
from uncertainty_lab.cascade.truth import alpha_recovery, ancestor_probabilities
from uncertainty_lab.contracts.memory import Event, History, MemoryItem, NodeSpec
from uncertainty_lab.hawkes import HawkesModel
from uncertainty_lab.worlds import WorldError, load_world
from uncertainty_lab.worlds.cascade import load_world_cascade
from uncertainty_lab.worlds.cascade_topics import TOPIC_BANK, headline, topic_of


class WordEmbedder:
    """Bag of words hashed into 256 dimensions: texts sharing words point the same way (a stand-in for the
    sentence encoder that needs no model; the worlds' topics share no word, so it separates them too)."""

    name = "bag-of-words"

    def encode(self, texts):
        out = np.zeros((len(texts), 256))
        for i, t in enumerate(texts):
            for w in re.findall(r"[a-z]+", t.lower()):
                out[i, hash(w) % 256] += 1.0
        return out


@pytest.fixture(scope="module")
def excitation():
    return load_world("excitation")


def test_event_counts_match_the_stationary_rates(excitation):
    """N(T) per node ≈ Λ T with Λ = (I − Gᵀ)⁻¹ μ: within 4 sd of the asymptotic count covariance T·C (HawkesModel's
    formula, computed independently of the world's simulation); the start-up deficit (a process starting empty)
    is about ΣΛ·ρ/((1 − ρ)β) ≈ 10 events, far inside 4 sd."""
    w = excitation
    h = w.history
    model = HawkesModel.exponential(w.mu, w.alpha, w.beta)
    np.testing.assert_allclose(model.stationary_rates(), w.stationary_rates)
    counts = np.bincount(h.nodes, minlength=len(w.nodes))
    sd = np.sqrt(np.diag(model.asymptotic_count_covariance()) * w.horizon)
    assert np.all(np.abs(counts - w.stationary_rates * w.horizon) < 4 * sd), (counts, w.stationary_rates * w.horizon)
    assert np.all(np.diff(h.times) >= 0) and h.times[-1] <= w.horizon


def test_immigrant_share_is_one_minus_rho_and_topics_inherit_at_one_minus_m(excitation):
    """Immigrants ~ Poisson(Σμ T) (within 4 sd); with equal row sums of G the share is 1 − ρ (0.30): within 0.04
    (4 sd of a share over ~1500 events, sd ≈ √(0.3·0.7/1500)·√(1/(1−ρ)) ≈ 0.02 with clustering). Children keep their
    parent's topic with probability 1 − m exactly: within 4 binomial sd."""
    w, h = excitation, excitation.history
    assert np.allclose(w.G.sum(axis=1), w.spectral_radius)
    assert w.immigrant_share == pytest.approx(1 - w.spectral_radius)
    n_imm = int(np.sum(h.parents < 0))
    lam = w.mu.sum() * w.horizon
    assert abs(n_imm - lam) < 4 * np.sqrt(lam)
    assert abs(h.immigrant_share - (1 - w.spectral_radius)) < 0.04
    kids = int(np.sum(h.parents >= 0))
    p = 1 - w.mutation
    assert abs(h.inheritance_rate - p) < 4 * np.sqrt(p * (1 - p) / kids)
    # parents come before their children, at a node the truth lets excite the child's node
    k = np.flatnonzero(h.parents >= 0)
    assert np.all(h.parents[k] < k) and np.all(w.alpha[h.nodes[h.parents[k]], h.nodes[k]] > 0)


def test_poisson_world_has_only_immigrants_at_the_same_rates():
    w = load_world("poisson")
    h = w.history
    assert h.immigrant_share == 1.0 and w.spectral_radius == 0.0
    np.testing.assert_allclose(w.stationary_rates, load_world("excitation").stationary_rates)


def test_topics_are_read_back_from_their_own_words():
    rng = np.random.default_rng(0)
    for name in TOPIC_BANK:
        for _ in range(20):
            assert topic_of(headline(name, rng)) == name
    assert topic_of("Nothing of this world") is None


def _prompt(template, world, node, tau, items):
    specs = [NodeSpec(n, f"write for {n}") for n in world.nodes]
    events = [Event(t, world.nodes.index(n), text) for n, t, text in items]
    hist = History(specs, events)
    memory = [MemoryItem(i, e.node, 1 / len(events)) for i, e in enumerate(events)]
    i = world.nodes.index(node)
    return template(tau, i, specs[i], memory, hist, specs)


def test_the_world_as_a_model_draws_the_parent_with_the_true_weights(excitation):
    """One memory item (science desk, lag 0) for a business_finance event: the world takes it as the parent with
    probability P = (α + ε)/(α + ε + μ) (α = 0.5, ε = distraction, μ = 0.1), else an immigrant; the text keeps the
    item's topic (comet) with probability 1 − m, and an immigrant draws one of business's two home topics (comet,
    glacier) uniformly: P(comet) = P·(1 − m) + (1 − P)/2. Checked over 4000 seeds, within 4 binomial sd."""
    w = excitation
    item = ("specialist_science_tech", 10.0, "Comet watchers track debris tails")
    msgs = _prompt(build_prompt, w, "business_finance", 10.0, [item])
    same = np.mean([topic_of(w.respond(msgs, np.random.default_rng(s), temperature=0.3, max_tokens=10)) == "comet"
                    for s in range(4000)])
    assert w.home[w.nodes.index("business_finance")] == ("comet", "glacier")
    p_parent = (0.5 + w.distraction) / (0.5 + w.distraction + 0.1)
    expected = p_parent * (1 - w.mutation) + (1 - p_parent) * 0.5
    assert abs(same - expected) < 4 * np.sqrt(expected * (1 - expected) / 4000)
    # the headline template (no item times) is read too, and a prompt that is no cascade prompt is refused
    text = w.respond(_prompt(headline_prompt, w, "local_tv", 3.0, [("general_news", 2.0, "Harbour pilots moor "
                                                                  "tankers by the pier")]), np.random.default_rng(1),
                     temperature=0.3, max_tokens=10)
    assert topic_of(text) in w.home[0]
    with pytest.raises(WorldError, match="cascade lab's prompts"):
        w.respond([{"role": "user", "content": "What is 2 + 2?"}], np.random.default_rng(0), temperature=0.3,
                  max_tokens=5)


def test_ancestor_probabilities_match_enumeration_of_parent_trees():
    """A[t, j] against brute force: every assignment of parents (or none) to events 1..3, weighted by the product
    of the per-event posteriors, summing the weight of trees where j is on t's chain of parents."""
    rng = np.random.default_rng(3)
    times, nodes = np.array([0.0, 0.4, 0.9, 1.7]), np.array([0, 1, 0, 1])
    mu, alpha, beta = np.array([0.3, 0.2]), rng.uniform(0.1, 0.8, (2, 2)), 1.3
    A = ancestor_probabilities(times, nodes, mu, alpha, beta)

    def post(k):
        w = alpha[nodes[:k], nodes[k]] * np.exp(-beta * (times[k] - times[:k]))
        return np.append(w, mu[nodes[k]]) / (w.sum() + mu[nodes[k]])  # last entry: immigrant

    brute = np.zeros((4, 4))
    for choice in itertools.product(*[range(k + 1) for k in range(1, 4)]):
        parents = {k: (c if c < k else None) for k, c in zip(range(1, 4), choice, strict=True)}
        weight = np.prod([post(k)[choice[k - 1]] for k in range(1, 4)])
        for t in range(1, 4):
            p = parents.get(t)
            while p is not None:
                brute[t, p] += weight
                p = parents.get(p)
    np.testing.assert_allclose(A, brute, atol=1e-12)


def test_alpha_recovery_of_the_truth_itself_is_exact(excitation):
    w = excitation
    rec = alpha_recovery(HawkesModel.exponential(w.mu, w.alpha, w.beta), w.truth, list(w.nodes))
    assert rec["alpha_error"] == 0 and rec["G_error"] == 0 and rec["mu_error"] == 0
    assert rec["rho"] == pytest.approx(0.7)
    with pytest.raises(ValueError, match="give the world"):
        load_world_cascade()


SCORE = {"name": "hawkes", "ranking": "score", "label": "hawkes_score"}


def _run(world, tmp_path, selectors, **kw):
    return run_experiment(f"examples/worlds/cascade_{world}.toml", embedder=WordEmbedder(), out_dir=str(tmp_path / world),
                          save=False, selectors=selectors, **kw)


def test_shipped_worlds_give_the_theory_s_verdicts(tmp_path):
    """With the shipped configs (fixed seeds; the paper's penalised fit, L1 with η of least BIC on the training events):

    - `excitation`: every α̂ > 0 is a true excitation, and the paper's Algorithm 1 (`hawkes`) and the score-ranking
      variant both beat recency in memory precision and late-stage alignment, 95% intervals above 0;
    - `poisson`: the fit is the truth, α̂ = 0, so Algorithm 1 shows an empty memory at every step (precision
      undefined; recency's is 0: no event has a parent). Recency and random do not differ (the placebo). An empty
      memory writes *better* late alignment than recency's items here: the world takes a shown item that caused
      nothing as parent with weight ε (0.15 per item against μ_n), and a foreign newsroom's item brings a foreign topic."""
    exc = _run("excitation", tmp_path, ["hawkes", SCORE, "recency"])
    fit, truth = exc.setup.fit, exc.setup.truth
    assert fit.penalty == "l1" and fit.eta_path is not None and np.all(np.asarray(truth["alpha"])[fit.alpha > 0] > 0)
    for sel in ("hawkes", "hawkes_score"):
        for name, late in (("memory_precision", False), ("alignment", True)):
            iv = paired_difference(exc, sel, "recency", 3, name=name, late=late)
            assert verdict(iv) == "higher", (sel, name, iv)
    report = exc.report()
    assert "world:excitation" in report and "α recovered" in report and "memory precision" in report
    assert "l1 penalty η = " in report and "least BIC" in report
    table = exc.to_dict()
    assert table["truth"]["recovery"]["alpha_error"] < 1.0 and all(
        0 <= r["memory_precision"] <= 1 for r in table["runs"] if not np.isnan(r["memory_precision"]))
    with pytest.warns(UserWarning, match="β is undetermined"):  # α̂ = 0 at every β: the data hold no decay
        poi = _run("poisson", tmp_path, ["hawkes", "recency", "random"])  # hawkes_score: empty as hawkes
    assert not np.any(poi.setup.fit.alpha)
    rows = {r["selector"]: r for r in poi.rows()}
    assert rows["hawkes"]["memory_empty"] == 1.0  # so is the score variant's: it ranks the same α̂ = 0
    assert {r["memory_precision"] for r in poi.run_rows() if r["selector"] in ("recency", "random")} == {0.0}
    assert verdict(paired_difference(poi, "random", "recency", 3, late=True)) == "within noise"
    assert verdict(paired_difference(poi, "hawkes", "recency", 3, late=True)) == "higher"
