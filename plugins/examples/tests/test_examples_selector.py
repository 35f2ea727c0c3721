"""hawkes_semantic against hand-computed cases (a fake embedder: no model download, no torch)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from uncertainty_lab.cascade import CascadeError, Event, HawkesSelector, History, NodeSpec, check_memory
from uncertainty_lab.hawkes import HawkesModel

from ul_examples.selectors import HawkesSemanticSelector


class FakeEmbedder:
    """encode(texts) -> the vectors of a lookup table (the selector normalises them)."""

    def __init__(self, table):
        self.table, self.calls = table, 0

    def encode(self, texts):
        self.calls += 1
        return np.array([self.table[t] for t in texts], dtype=float)


TABLE = {"likes cats": [1, 0, 0], "seed": [0.6, 0.8, 0], "about cats": [1, 0, 0], "about money": [0, 1, 0],
         "b": [0, 0, 1], "c": [0, 0, 1]}


def _case():
    """Three nodes; e^{−β u} = 2^{−u}; α[:, 0] = (0.8, 0.8, 0.2). At t = 3 for target node 0:
    w^raw = (0.8/8, 0.8/4, 0.2/2) = (0.1, 0.2, 0.1) -> Hawkes shares h = (0.25, 0.5, 0.25);
    cos to node 0's instruction "likes cats" = (0.6, 1, 0) -> similarity shares s = (0.375, 0.625, 0)."""
    specs = [NodeSpec("a", "likes cats"), NodeSpec("b", "b"), NodeSpec("c", "c")]
    history = History(specs, [Event(0.0, 0, "seed"), Event(1.0, 1, "about cats"), Event(2.0, 2, "about money")])
    alpha = np.array([[0.8, 0.1, 0.1], [0.8, 0.1, 0.1], [0.2, 0.1, 0.1]])
    return history, HawkesModel.exponential([0.1, 0.1, 0.1], alpha, beta=math.log(2.0))


def test_explain_matches_the_hand_computed_shares_and_scores():
    history, model = _case()
    ex = HawkesSemanticSelector(lam=0.5, embedder=FakeEmbedder(TABLE)).explain(history, 3.0, 0, 2, model)
    np.testing.assert_allclose(ex.raw, [0.1, 0.2, 0.1])
    np.testing.assert_allclose(ex.hawkes_share, [0.25, 0.5, 0.25])
    np.testing.assert_allclose(ex.similarity, [0.6, 1.0, 0.0])
    np.testing.assert_allclose(ex.similarity_share, [0.375, 0.625, 0.0])
    np.testing.assert_allclose(ex.score, [0.3125, 0.5625, 0.125])  # ½ h + ½ s
    assert ex.selected == (1, 0) and ex.latest == (0, 1, 2)


def test_select_mixes_hawkes_and_similarity_with_lambda():
    history, model = _case()
    items = HawkesSemanticSelector(lam=0.5, embedder=FakeEmbedder(TABLE)).select(history, 3.0, 0, 2, model=model)
    assert [(i.index, i.node) for i in items] == [(1, 1), (0, 0)]
    assert [i.weight for i in items] == pytest.approx([0.5625 / 0.875, 0.3125 / 0.875])
    assert check_memory(items, history, 3.0) == items  # what the cascade loop checks
    # λ = 1: similarity alone; node 2 (similarity 0) gets score 0 and is never remembered
    sem = HawkesSemanticSelector(lam=1.0, embedder=FakeEmbedder(TABLE)).select(history, 3.0, 0, 3, model=model)
    assert [(i.node, i.weight) for i in sem] == [(1, pytest.approx(0.625)), (0, pytest.approx(0.375))]
    # query="seed": cos to "seed" = (1, 0.6, 0.8) -> shares (1, 0.6, 0.8) / 2.4
    by_seed = HawkesSemanticSelector(lam=1.0, query="seed", embedder=FakeEmbedder(TABLE)).select(history, 3.0, 0, 3,
                                                                                                 model=model)
    assert [(i.node, i.weight) for i in by_seed] == [(0, pytest.approx(1 / 2.4)), (2, pytest.approx(0.8 / 2.4)),
                                                     (1, pytest.approx(0.6 / 2.4))]


def test_lambda_zero_is_the_core_hawkes_selector_with_score_ranking_and_needs_no_embedder():
    history, model = _case()
    embedder = FakeEmbedder(TABLE)
    ours = HawkesSemanticSelector(lam=0.0, embedder=embedder).select(history, 3.0, 0, 2, model=model)
    core = HawkesSelector(ranking="score", eps_raw=0.0, eps_norm=0.0).select(history, 3.0, 0, 2, model=model)
    assert ours == core
    # by hand: node 1 (share 0.5), then the 0.25 tie goes to the more recent node 2; weights 0.2/0.3, 0.1/0.3
    assert [(i.node, i.weight) for i in ours] == [(1, pytest.approx(2 / 3)), (2, pytest.approx(1 / 3))]
    assert embedder.calls == 0


def test_empty_and_bad_input():
    history, model = _case()
    assert HawkesSemanticSelector(embedder=FakeEmbedder(TABLE)).select(History(3, []), 1.0, 0, 2, model=model) == []
    with pytest.raises(CascadeError, match="model"):
        HawkesSemanticSelector(embedder=FakeEmbedder(TABLE)).select(history, 3.0, 0, 2)
    with pytest.raises(CascadeError, match="node_specs"):
        bare = History(3, [Event(0.0, 0, "seed")])
        HawkesSemanticSelector(embedder=FakeEmbedder(TABLE)).select(bare, 1.0, 0, 2, model=model)
    with pytest.raises(CascadeError, match="lam"):
        HawkesSemanticSelector(lam=1.5)
