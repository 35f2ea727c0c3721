"""Greedy representative clustering (Kuhn et al.) vs transitive closure, on hand-made judges."""

from __future__ import annotations

import numpy as np
import pytest
from fakes import PairSetJudge, TableNLIJudge, TableSimilarityJudge

from uncertainty_lab.semantic import (
    ExactJudge,
    cluster,
    compare_clusterings,
    greedy_clusters,
    similarity_matrix,
    transitive_clusters,
)


def test_exact_judge_clusters_and_labels_by_first_appearance():
    c = cluster(["Paris", "Rome", "paris.", "The Paris", "Lyon", "rome"], "exact")
    assert c.labels == (0, 1, 0, 0, 2, 1)
    assert c.clusters == [[0, 2, 3], [1, 5], [4]] and c.sizes == [3, 2, 1] and c.n_clusters == 3
    assert transitive_clusters(c.texts, "exact").partition() == c.partition()


def test_non_transitive_judge_greedy_and_closure_differ():
    # A ~ B and B ~ C, but not A ~ C: a chain of paraphrases that drifts in meaning
    judge = PairSetJudge([("A", "B"), ("B", "C")])
    g = greedy_clusters(["A", "B", "C"], judge)
    t = transitive_clusters(["A", "B", "C"], judge)
    assert g.clusters == [[0, 1], [2]]  # C is compared with the representative A only
    assert t.clusters == [[0, 1, 2]]  # the closure chains A - B - C
    cmp = compare_clusterings(["A", "B", "C"], judge)
    assert cmp.differ
    assert cmp.nontransitive_triples == (("A", "B", "C"),)
    assert cmp.split_by_greedy == (("B", "C"),) and cmp.joined_by_greedy == ()
    assert "not transitive" in cmp.summary()
    # greedy depends on the order: with B first, B represents everything and the partitions agree
    g2 = greedy_clusters(["B", "A", "C"], judge)
    assert g2.clusters == [[0, 1, 2]] and not compare_clusterings(["B", "A", "C"], judge).differ


def test_greedy_can_join_answers_the_judge_calls_different():
    # A ~ B, A ~ C, B !~ C: greedy puts B and C with representative A
    judge = PairSetJudge([("A", "B"), ("A", "C")])
    cmp = compare_clusterings(["A", "B", "C"], judge)
    assert cmp.greedy.clusters == [[0, 1, 2]] and cmp.joined_by_greedy == (("B", "C"),)
    assert not cmp.differ  # the closure joins them too


def test_greedy_compares_with_representatives_only_and_stops_at_the_first_match():
    # lazy judge (llm-like): count the directed questions asked
    table = {(a, b): "entailment" for a in "AB" for b in "AB"}

    class LazyTableJudge(TableNLIJudge):
        batch_all_pairs = False

    judge = LazyTableJudge(table=table)
    c = greedy_clusters(["A", "B", "X", "Y"], judge)
    assert c.clusters == [[0, 1], [2], [3]]
    # B vs A; X vs A; Y vs A and Y vs X: 4 pairs, both directions each
    assert len(judge.asked) == 8 and c.n_judged == 4


def test_both_directions_are_required_by_the_strict_relation():
    judge = TableNLIJudge(table={("A", "B"): "entailment", ("B", "A"): "neutral"})
    assert greedy_clusters(["A", "B"], judge).n_clusters == 2
    judge = TableNLIJudge(table={("A", "B"): "entailment", ("B", "A"): "neutral"}, relation="either_direction")
    assert greedy_clusters(["A", "B"], judge).n_clusters == 1


def test_minimal_student_judge_is_asked_both_ways():
    class OneWay:
        def equivalent(self, question, a, b):
            return (a, b) == ("A", "B")  # says yes only in one direction

    assert cluster(["A", "B"], OneWay()).n_clusters == 2
    judge = PairSetJudge([("A", "B")])
    assert cluster(["A", "B", "A"], judge).clusters == [[0, 1, 2]]


def test_identical_texts_always_share_a_class_and_are_not_sent_to_the_judge():
    judge = TableNLIJudge(default="contradiction")  # even a judge that says everything contradicts
    c = greedy_clusters(["x", "y", "x", "x"], judge)
    assert c.clusters == [[0, 2, 3], [1]]
    assert all(p != h for p, h in judge.asked)


def test_bad_method_and_texts():
    with pytest.raises(ValueError, match="method must be one of"):
        cluster(["a"], "exact", method="kmeans")
    with pytest.raises(TypeError, match="not one string"):
        cluster("abc", "exact")


def test_similarity_matrix_from_nli_probabilities_by_hand():
    p_ab, p_ba = (0.1, 0.3, 0.6), (0.2, 0.6, 0.2)
    judge = TableNLIJudge(table={("a", "b"): p_ab, ("b", "a"): p_ba})
    w = similarity_matrix(judge, ["a", "b", "a"], affinity="entail")
    s = (0.6 + 0.2) / 2  # p_entail averaged over both directions
    np.testing.assert_allclose(w, [[1, s, 1], [s, 1, s], [1, s, 1]])
    w = similarity_matrix(judge, ["a", "b"], affinity="contra")
    s = ((1 - 0.1) + (1 - 0.2)) / 2
    np.testing.assert_allclose(w, [[1, s], [s, 1]])


def test_similarity_matrix_from_similarity_and_exact_judges():
    judge = TableSimilarityJudge(table={frozenset("ab"): 0.7, frozenset("ac"): 0.1, frozenset("bc"): 0.4})
    np.testing.assert_allclose(similarity_matrix(judge, ["a", "b", "c"]), [[1, 0.7, 0.1], [0.7, 1, 0.4], [0.1, 0.4, 1]])
    np.testing.assert_allclose(similarity_matrix(ExactJudge(), ["Paris", "Rome", "paris"]), [[1, 0, 1], [0, 1, 0], [1, 0, 1]])
    with pytest.raises(ValueError, match="affinity"):
        similarity_matrix(ExactJudge(), ["a"], affinity="both")
