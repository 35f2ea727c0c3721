"""Memory selectors: Algorithm 1 (and its score-ranking variant) against a brute-force re-implementation that
rescans the whole history, the source → target convention, and the baselines."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fakes import FakeEmbedder
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from uncertainty_lab import registry
from uncertainty_lab.cascade import (
    CascadeError,
    Event,
    HawkesSelector,
    History,
    MemoryItem,
    NodeSpec,
    SemanticSelector,
    check_memory,
)
from uncertainty_lab.hawkes import HawkesModel


def brute_algorithm1(events, t, n_t, k, alpha, beta, ranking="recency", eps_raw=0.0, eps_norm=0.0):
    """Algorithm 1 straight from the paper, rescanning the full history: returns (raw, [(index, node, weight)])."""
    n = alpha.shape[0]
    raw = [0.0] * n
    latest = [None] * n  # None, never -1: -1 would silently index the last event
    for m, e in enumerate(events):
        if e.time < t:
            raw[e.node] += alpha[e.node, n_t] * math.exp(-beta * (t - e.time))
            if latest[e.node] is None or (e.time, m) > (events[latest[e.node]].time, latest[e.node]):
                latest[e.node] = m
    active = [j for j in range(n) if latest[j] is not None]
    recency = sorted(active, key=lambda j: (events[latest[j]].time, latest[j]), reverse=True)
    if ranking == "recency":
        chosen = [j for j in recency if raw[j] > 0][: min(k, len(active))]
    else:
        cand = [j for j in active if raw[j] > 0 and raw[j] > eps_raw]
        total = sum(raw[j] for j in cand)
        cand = [j for j in cand if raw[j] / total >= eps_norm] if total > 0 else []
        chosen = sorted(cand, key=lambda j: (-raw[j], recency.index(j)))[:k]
    z = sum(raw[j] for j in chosen)
    return raw, [(latest[j], j, raw[j] / z) for j in chosen]


history_strategy = st.integers(1, 5).flatmap(lambda n: st.tuples(
    st.just(n),
    st.lists(st.tuples(st.sampled_from([0.0, 0.0, 0.5, 1.0]) | st.floats(0, 4), st.integers(0, n - 1)),
             min_size=1, max_size=30),
    st.lists(st.sampled_from([0.0, 0.0, 0.1, 0.7, 1.3]), min_size=n * n, max_size=n * n),
    st.integers(0, n - 1),
))


def _build(n, steps, alpha_flat, beta):
    times = np.cumsum([d for d, _ in steps])
    events = [Event(float(t), j, f"text {m}") for m, (t, (_, j)) in enumerate(zip(times, steps, strict=True))]
    h = History(n, events)
    model = HawkesModel.exponential(np.full(n, 0.1), np.asarray(alpha_flat).reshape(n, n), beta)
    return events, h, model


@settings(max_examples=200, deadline=None)
@given(case=history_strategy, beta=st.floats(0.1, 3.0), k=st.integers(1, 7),
       gap=st.sampled_from([0.0, 0.0, 1e-3, 0.4, 3.0]))
def test_algorithm1_matches_brute_force(case, beta, k, gap):
    """Random histories with tied times, silent nodes, zero excitations, k above and below the active count,
    and t_next tied with the last event (events at exactly t_next are not 'before' it)."""
    n, steps, alpha_flat, target = case
    events, h, model = _build(n, steps, alpha_flat, beta)
    t = events[-1].time + gap
    raw, want = brute_algorithm1(events, t, target, k, model.alpha, beta)
    ex = HawkesSelector().explain(h, t, target, k, model)
    np.testing.assert_allclose(ex.raw, raw, rtol=1e-11, atol=0)  # incremental vs rescanned sums: ~1e-15 per step
    got = [(it.index, it.node, it.weight) for it in ex.items]
    assert [g[:2] for g in got] == [w[:2] for w in want]
    np.testing.assert_allclose([g[2] for g in got], [w[2] for w in want], rtol=1e-9)
    if got:
        assert math.isclose(sum(g[2] for g in got), 1.0, rel_tol=1e-12)
        assert len(got) <= min(k, n) and len({g[1] for g in got}) == len(got)  # at most one event per node


@settings(max_examples=200, deadline=None)
@given(case=history_strategy, beta=st.floats(0.1, 3.0), k=st.integers(1, 6),
       eps_raw=st.sampled_from([0.0, 1e-6, 1e-3]), eps_norm=st.sampled_from([0.0, 0.07, 0.13]))
def test_score_ranking_matches_brute_force(case, beta, k, eps_raw, eps_norm):
    n, steps, alpha_flat, target = case
    events, h, model = _build(n, steps, alpha_flat, beta)
    t = events[-1].time + 0.25
    raw, want = brute_algorithm1(events, t, target, k, model.alpha, beta, "score", eps_raw, eps_norm)
    # a near-tie in score or a share sitting on a threshold is decided by the last bit of a float: skip those
    pos = sorted(r for r in raw if r > 0)
    assume(all(b - a > 1e-9 * b for a, b in zip(pos, pos[1:], strict=False)))
    total = sum(r for r in raw if r > eps_raw)
    assume(all(abs(r - eps_raw) > 1e-9 * max(r, 1e-300) for r in pos))
    assume(total == 0 or all(abs(r / total - eps_norm) > 1e-9 for r in pos))
    sel = HawkesSelector(ranking="score", eps_raw=eps_raw, eps_norm=eps_norm)
    got = sel.select(h, t, target, k, model)
    assert [(g.index, g.node) for g in got] == [w[:2] for w in want]
    np.testing.assert_allclose([g.weight for g in got], [w[2] for w in want], rtol=1e-9)


def _hist(*events, n=3):
    return History([NodeSpec(f"n{i}", f"instruction {i}") for i in range(n)], [Event(*e) for e in events])


def test_seed_event_at_index_0_is_selectable_and_silent_nodes_are_none():
    model = HawkesModel.exponential([0.1, 0.1, 0.1], np.full((3, 3), 0.2), beta=1.0)
    h = _hist((0.0, 2, "seed"))
    ex = HawkesSelector().explain(h, 1.0, 0, 3, model)
    assert ex.items == (MemoryItem(0, 2, 1.0),)  # index 0 is a real event, not "no event"
    assert ex.latest == (None, None, 0)  # silent nodes are None, never -1 (which would index the last event)


def test_k_above_active_nodes_and_recency_ties():
    alpha = np.full((3, 3), 0.5)
    model = HawkesModel.exponential([0.1] * 3, alpha, beta=1.0)
    h = _hist((0.0, 0, "seed"), (2.0, 1, "b"), (2.0, 2, "c"))  # nodes 1 and 2 tie at t = 2
    items = HawkesSelector().select(h, 3.0, 0, 10, model)
    # the tie goes to the later-appended event; k = 10 > 3 active nodes gives all three
    assert [it.index for it in items] == [2, 1, 0]
    raw = [0.5 * math.exp(-3.0), 0.5 * math.exp(-1.0), 0.5 * math.exp(-1.0)]
    np.testing.assert_allclose([it.weight for it in items], np.array([raw[2], raw[1], raw[0]]) / sum(raw), rtol=1e-12)
    assert [it.index for it in HawkesSelector().select(h, 3.0, 0, 1, model)] == [2]


def test_each_node_contributes_its_latest_event_and_all_its_excitation():
    model = HawkesModel.exponential([0.1, 0.1], [[1.0, 0.0], [1.0, 0.0]], beta=0.5)
    h = _hist((0.0, 0, "a0"), (1.0, 0, "a1"), (1.5, 1, "b"), (2.0, 0, "a2"), n=2)
    ex = HawkesSelector().explain(h, 3.0, 0, 3, model)
    assert [it.index for it in ex.items] == [3, 2]  # node 0's latest (index 3) first, then node 1
    w0 = sum(math.exp(-0.5 * (3.0 - s)) for s in (0.0, 1.0, 2.0))
    w1 = math.exp(-0.5 * 1.5)
    assert ex.items[0].weight == pytest.approx(w0 / (w0 + w1), rel=1e-12)


def test_one_way_excitation_reads_alpha_source_target():
    """alpha[j, i] = from source j to target i. Node 0 excites node 1 and nothing excites node 0: the memory of
    a node-1 event holds node 0's event, the memory of a node-0 event is empty. A transposed α would swap them."""
    alpha = np.array([[0.0, 0.8], [0.0, 0.0]])
    model = HawkesModel.exponential([0.1, 0.1], alpha, beta=1.0)
    h = _hist((0.0, 0, "source"), (0.5, 1, "target"), n=2)
    into_target = HawkesSelector().select(h, 1.0, 1, 3, model)
    assert [(it.index, it.node) for it in into_target] == [(0, 0)]
    assert HawkesSelector().select(h, 1.0, 0, 3, model) == []  # empty memory: nothing excites node 0
    transposed = HawkesModel.exponential([0.1, 0.1], alpha.T, beta=1.0)
    assert HawkesSelector().select(h, 1.0, 1, 3, transposed) == []  # the transposed matrix gets it backwards
    assert [it.node for it in HawkesSelector().select(h, 1.0, 0, 3, transposed)] == [1]


def test_hawkes_selector_needs_a_model_and_a_valid_k():
    h = _hist((0.0, 0, "seed"))
    with pytest.raises(CascadeError, match="model="):
        HawkesSelector().select(h, 1.0, 0, 3)
    model = HawkesModel.exponential([0.1] * 3, np.full((3, 3), 0.1), beta=1.0)
    with pytest.raises(CascadeError, match="k"):
        HawkesSelector().select(h, 1.0, 0, 0, model)
    with pytest.raises(CascadeError, match="node_next"):
        HawkesSelector().select(h, 1.0, 3, 1, model)
    with pytest.raises(CascadeError, match="ranking"):
        HawkesSelector(ranking="latest")


def test_hawkes_selector_with_a_power_law_kernel_sums_over_history():
    model = HawkesModel([0.1, 0.1], [[0.2, 0.3], [0.1, 0.0]], "power_law")
    h = _hist((0.0, 0, "a"), (1.0, 1, "b"), (2.0, 0, "c"), n=2)
    ex = HawkesSelector().explain(h, 2.5, 1, 3, model)
    want = [0.3 * (model.kernel.value(2.5) + model.kernel.value(0.5)), 0.0]
    np.testing.assert_allclose(ex.raw, want, rtol=1e-12)
    assert [it.index for it in ex.items] == [2]


# --- baselines ------------------------------------------------------------------------------------------


def _six():
    return _hist(*[(float(i), i % 3, f"e{i}") for i in range(6)])


def test_recency_full_history_and_none():
    h = _six()
    rec = registry.create("memory_selectors", "recency").select(h, 5.5, 0, 3)
    assert [it.index for it in rec] == [5, 4, 3] and all(it.weight == pytest.approx(1 / 3) for it in rec)
    assert [it.index for it in registry.create("memory_selectors", "recency").select(h, 5.0, 0, 3)] == [4, 3, 2]
    full = registry.create("memory_selectors", "full_history").select(h, 6.0, 0, 2)
    assert [it.index for it in full] == [5, 4, 3, 2, 1, 0] and sum(it.weight for it in full) == pytest.approx(1.0)
    assert registry.create("memory_selectors", "none").select(h, 6.0, 0, 3) == []
    assert [it.node for it in rec] == [h[it.index].node for it in rec]


def test_random_is_seeded_uniform_and_needs_rng():
    h = _six()
    sel = registry.create("memory_selectors", "random")
    a = sel.select(h, 6.0, 0, 3, rng=np.random.default_rng(4))
    b = sel.select(h, 6.0, 0, 3, rng=np.random.default_rng(4))
    assert a == b and len({it.index for it in a}) == 3 and [it.index for it in a] == sorted((it.index for it in a), reverse=True)
    assert sel.select(h, 6.0, 0, 10, rng=1) and len(sel.select(h, 6.0, 0, 10, rng=1)) == 6
    counts = np.zeros(6)
    for s in range(3000):
        for it in sel.select(h, 6.0, 0, 2, rng=np.random.default_rng(s)):
            counts[it.index] += 1
    # each index is chosen with probability 1/3: 1000 ± 3·sqrt(3000·(1/3)(2/3)) ≈ 1000 ± 77
    assert np.all(np.abs(counts - 1000) < 80), counts
    with pytest.raises(CascadeError, match="rng="):
        sel.select(h, 6.0, 0, 3)


def test_semantic_retrieves_by_instruction_or_seed():
    table = {
        "seed": [1, 0, 0], "about rockets": [0, 1, 0], "about money": [0, 0, 1],
        "rockets again": [0, 0.8, 0.6], "mixed": [0.6, 0.8, 0], "instruction 0": [0, 1, 0],
    }
    h = _hist((0.0, 0, "seed"), (1.0, 1, "about rockets"), (2.0, 2, "about money"), (3.0, 1, "rockets again"),
              (4.0, 2, "mixed"))
    emb = FakeEmbedder(table, normalise=False)  # float64 rows as given: the weights are checked to 1e-12
    sel = SemanticSelector(embedder=emb)
    got = sel.select(h, 5.0, 0, 3)
    # similarity to "instruction 0" = [0,1,0]: about rockets 1.0, rockets again 0.8, mixed 0.8 (tie → recent first)
    assert [it.index for it in got] == [1, 4, 3]
    np.testing.assert_allclose([it.weight for it in got], np.array([1.0, 0.8, 0.8]) / 2.6, rtol=1e-12)
    by_seed = SemanticSelector(query="seed", embedder=emb).select(h, 5.0, 0, 2)
    assert [it.index for it in by_seed] == [0, 4]
    # every similarity <= 0 after clipping: uniform weights
    neg = SemanticSelector(query="seed", embedder=emb).select(h, 5.0, 0, 5)
    assert len(neg) == 5 and sum(it.weight for it in neg) == pytest.approx(1.0)
    with pytest.raises(CascadeError, match="node_specs"):
        SemanticSelector(embedder=emb).select(History(3, [Event(0.0, 0, "seed")]), 1.0, 0, 1)
    all_neg = _hist((0.0, 0, "seed"), (1.0, 1, "about money"))
    negative = FakeEmbedder({**table, "seed": [0, -1, 0], "about money": [0, 0, 1]}, normalise=False)
    w = SemanticSelector(embedder=negative).select(all_neg, 2.0, 0, 2)
    assert [it.weight for it in w] == [0.5, 0.5]


def test_registry_lists_all_selectors_with_parameters():
    assert set(registry.names("memory_selectors")) >= {"hawkes", "recency", "random", "full_history", "none", "semantic"}
    sel = registry.create("memory_selectors", "hawkes", ranking="score", eps_norm=0.1)
    assert (sel.ranking, sel.eps_norm) == ("score", 0.1)
    info = {p.name: p for p in next(i for i in registry.describe("memory_selectors") if i.name == "hawkes").parameters}
    assert info["ranking"].choices == ("recency", "score") and info["ranking"].default == "recency"
    sem = next(i for i in registry.describe("memory_selectors") if i.name == "semantic")
    assert [p.name for p in sem.parameters] == ["query"]


def test_check_memory_rejects_bad_answers():
    h = _six()
    with pytest.raises(CascadeError, match="None"):
        check_memory(None, h, 6.0)
    with pytest.raises(CascadeError, match="sum to"):
        check_memory([MemoryItem(0, 0, 0.5)], h, 6.0)
    with pytest.raises(CascadeError, match="index"):
        check_memory([MemoryItem(-1, 0, 1.0)], h, 6.0)
    with pytest.raises(CascadeError, match="not before"):
        check_memory([MemoryItem(5, 2, 1.0)], h, 5.0)
    with pytest.raises(CascadeError, match="says node 1"):
        check_memory([MemoryItem(0, 1, 1.0)], h, 6.0)
    assert check_memory([MemoryItem(0, 0, 1.0)], h, 6.0) == [MemoryItem(0, 0, 1.0)]
