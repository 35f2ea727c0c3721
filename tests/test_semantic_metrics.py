"""Every metric: hand-computed cases, extremes, invariance to sample order, and independent re-computations
(brute-force semantic density, direct numpy for the graph metrics, hand-computed ROUGE-L).

Tolerances: exact arithmetic on a handful of floats agrees to ~1e-12, so 1e-9 is used; values that pass
through float32 embeddings (FakeEmbedder / MiniLM rows) are compared to 1e-6; eigen-decompositions of
well-conditioned 3x3..6x6 matrices to 1e-9.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from fakes import CannedLLM, FakeEmbedder, TableNLIJudge, TableSimilarityJudge, unit
from hypothesis import given, settings
from hypothesis import strategies as st

from uncertainty_lab import registry
from uncertainty_lab.parameters import ParameterError
from uncertainty_lab.semantic import (
    ExactJudge,
    MetricResult,
    SampleSet,
    SemanticDensity,
    entropy_of_partition,
    max_entropy,
    partitions,
    partitions_above,
    reachable_entropies,
    rouge_l,
    score_all,
)
from uncertainty_lab.semantic.graph import degree_uncertainty, eccentricity_uncertainty, eigval_uncertainty
from uncertainty_lab.semantic.lexical import lcs_length, tokens
from uncertainty_lab.semantic.verbalized import parse_confidence

LN = math.log
TOL = 1e-9


def metric(name, **params):
    return registry.create("metrics", name, **params)


# ---------------------------------------------------------------------------------------------------
# reachable entropies


def test_reachable_entropies_for_five_samples():
    values = reachable_entropies(5)
    assert [p for p, _ in values] == [(5,), (4, 1), (3, 2), (3, 1, 1), (2, 2, 1), (2, 1, 1, 1), (1, 1, 1, 1, 1)]
    assert [round(h, 3) for _, h in values] == [0.0, 0.500, 0.673, 0.950, 1.055, 1.332, 1.609]
    assert values[-1][1] == pytest.approx(LN(5), abs=TOL)
    assert max_entropy(5) == pytest.approx(LN(5), abs=TOL)
    assert max_entropy(5) < 1.65  # HASSUM's default threshold can never fire with 5 samples
    assert partitions_above(1.65, 5) == []
    assert [p for p, _ in partitions_above(1.1, 5)] == [(2, 1, 1, 1), (1, 1, 1, 1, 1)]
    assert [p for p, _ in partitions_above(1.0, 5)] == [(2, 2, 1), (2, 1, 1, 1), (1, 1, 1, 1, 1)]


def test_partition_counts_and_bad_n():
    assert [len(list(partitions(n))) for n in range(1, 11)] == [1, 2, 3, 5, 7, 11, 15, 22, 30, 42]
    assert entropy_of_partition([2, 2]) == pytest.approx(LN(2), abs=TOL)
    with pytest.raises(ValueError):
        list(partitions(0))
    with pytest.raises(ValueError, match="too many partitions"):
        reachable_entropies(100)


# ---------------------------------------------------------------------------------------------------
# entropy family


def test_discrete_semantic_entropy_by_hand():
    r = metric("discrete_semantic_entropy").score(["Paris", "paris", "Rome", "Lyon"])
    h = -(0.5 * LN(0.5) + 2 * 0.25 * LN(0.25))  # = 1.5 ln 2
    assert r.uncertainty == pytest.approx(h, abs=TOL)
    assert r.normalised_uncertainty == pytest.approx(h / LN(4), abs=TOL)
    assert r.normalised_uncertainty == pytest.approx(0.75, abs=TOL)
    assert r.confidence == pytest.approx(0.25, abs=TOL)
    assert r.details["clusters"] == [[0, 1], [2], [3]] and r.details["cluster_probabilities"] == [0.5, 0.25, 0.25]


def test_semantic_entropy_weighted_by_hand():
    s = SampleSet.from_texts(
        ["Paris", "paris!", "Rome"],
        logprobs=[[LN(0.5), LN(0.5)], [LN(0.5)], [LN(0.25)] * 3],  # geometric-mean token probs 0.5, 0.5, 0.25
    )
    r = metric("semantic_entropy").score(s)
    p = np.array([1.0, 0.25]) / 1.25  # p(Paris) = 0.5 + 0.5, p(Rome) = 0.25, renormalised
    h = float(-(p * np.log(p)).sum())
    assert r.uncertainty == pytest.approx(h, abs=TOL) and r.uncertainty == pytest.approx(0.5004024, abs=1e-6)
    assert r.details["cluster_probabilities"] == pytest.approx(p.tolist(), abs=TOL)
    assert r.confidence == pytest.approx(1 - h / LN(3), abs=TOL)
    assert "renormalised" in r.details["normalisation"]


@settings(max_examples=40, deadline=None, derandomize=True)
@given(labels=st.lists(st.integers(0, 3), min_size=2, max_size=8), logp=st.floats(-3.0, -0.01),
       lengths=st.lists(st.integers(1, 5), min_size=8, max_size=8))
def test_weighted_equals_discrete_when_sequence_probabilities_are_equal(labels, logp, lengths):
    texts = [f"answer {k}" for k in labels]
    s = SampleSet.from_texts(texts, logprobs=[[logp] * lengths[i] for i in range(len(texts))])  # equal means, any length
    weighted = metric("semantic_entropy").score(s)
    discrete = metric("discrete_semantic_entropy").score(s)
    assert weighted.uncertainty == pytest.approx(discrete.uncertainty, abs=1e-9)


def test_num_semantic_sets_by_hand():
    r = metric("num_semantic_sets").score(["a", "b", "a", "c", "b"])
    assert r.uncertainty == 3 and r.normalised_uncertainty == pytest.approx(0.5) and r.confidence == pytest.approx(0.5)


def test_predictive_entropy_by_hand():
    s = SampleSet.from_texts(["x y", "z"], logprobs=[[LN(0.5), LN(0.5)], [LN(0.25)]])
    r = metric("predictive_entropy").score(s)
    assert r.uncertainty == pytest.approx(-(LN(0.5) + LN(0.25)) / 2, abs=TOL)  # 1.5 ln 2
    assert r.confidence == pytest.approx(2**-1.5, abs=TOL)
    r = metric("predictive_entropy", length_normalised=False).score(s)
    assert r.uncertainty == pytest.approx(LN(4), abs=TOL) and r.confidence == pytest.approx(0.25, abs=TOL)


# ---------------------------------------------------------------------------------------------------
# lexical similarity


def test_rouge_l_by_hand():
    assert tokens("Café, 2 cups!") == ["cafe", "2", "cups"]
    assert lcs_length("a b c d".split(), "b d e".split()) == 2
    assert rouge_l("the cat sat on the mat", "the cat is on the mat") == pytest.approx(5 / 6, abs=TOL)
    # LCS "b d" = 2: P = 2/3, R = 2/4, F = 2PR/(P+R) = 4/7
    assert rouge_l("a b c d", "b d e") == pytest.approx(4 / 7, abs=TOL)
    assert rouge_l("a b c d", "b d e") == rouge_l("b d e", "a b c d")
    assert rouge_l("Paris", "paris.") == 1.0 and rouge_l("", "x") == 0.0 and rouge_l("x y", "z") == 0.0


def _lcs_by_table(a, b):
    """The textbook O(|a|·|b|) dynamic programme."""
    t = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a, 1):
        for j, y in enumerate(b, 1):
            t[i][j] = t[i - 1][j - 1] + 1 if x == y else max(t[i - 1][j], t[i][j - 1])
    return t[-1][-1]


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from("abcd"), max_size=70), st.lists(st.sampled_from("abcde"), max_size=70))
def test_bit_parallel_lcs_equals_the_dynamic_programme(a, b):
    assert lcs_length(a, b) == _lcs_by_table(a, b) == lcs_length(b, a)


def test_lexical_similarity_by_hand():
    r = metric("lexical_similarity").score(["a b c d", "b d e", "a b c d"])
    mean = (4 / 7 + 1.0 + 4 / 7) / 3
    assert r.confidence == pytest.approx(mean, abs=TOL) and r.uncertainty == pytest.approx(1 - mean, abs=TOL)


# ---------------------------------------------------------------------------------------------------
# graph metrics vs direct numpy on a hand-made similarity matrix

W3 = {frozenset("ab"): 0.8, frozenset("ac"): 0.1, frozenset("bc"): 0.2}
W3_MATRIX = np.array([[1, 0.8, 0.1], [0.8, 1, 0.2], [0.1, 0.2, 1]])


def _numpy_graph(w, threshold=0.9):
    m = len(w)
    d = np.diag(w.sum(axis=1))
    d_inv_sqrt = np.linalg.inv(np.sqrt(d))
    lap = np.eye(m) - d_inv_sqrt @ w @ d_inv_sqrt
    lam = np.real(np.linalg.eig(lap)[0])
    u_eig = sum(max(0.0, 1 - x) for x in lam)
    u_deg = np.trace(m * np.eye(m) - d) / m**2
    vals, vecs = np.linalg.eigh(lap)
    v = vecs[:, vals < threshold]
    u_ecc = math.sqrt(sum(np.sum((v[j] - v.mean(axis=0)) ** 2) for j in range(m)))
    return u_eig, u_deg, u_ecc


def test_graph_metrics_match_direct_numpy():
    judge = TableSimilarityJudge(table=W3)
    u_eig, u_deg, u_ecc = _numpy_graph(W3_MATRIX)
    r = metric("eigval_laplacian", judge=judge).score(["a", "b", "c"])
    assert r.uncertainty == pytest.approx(u_eig, abs=TOL)
    assert r.normalised_uncertainty == pytest.approx((u_eig - 1) / 2, abs=TOL)
    np.testing.assert_allclose(r.details["similarity"], W3_MATRIX)
    r = metric("degree", judge=judge).score(["a", "b", "c"])
    assert r.uncertainty == pytest.approx(u_deg, abs=TOL)
    assert r.uncertainty == pytest.approx((3 * 3 - (1.9 + 2.0 + 1.3)) / 9, abs=TOL)  # trace(mI - D)/m² by hand
    assert r.details["sample_confidences"] == pytest.approx([1.9 / 3, 2.0 / 3, 1.3 / 3], abs=TOL)
    r = metric("eccentricity", judge=judge).score(["a", "b", "c"])
    assert r.uncertainty == pytest.approx(u_ecc, abs=TOL)
    assert r.normalised_uncertainty == pytest.approx(u_ecc / math.sqrt(2), abs=TOL)


def test_graph_metric_helpers_on_a_random_matrix():
    rng = np.random.default_rng(3)
    a = rng.uniform(0, 1, (6, 6))
    w = (a + a.T) / 2
    np.fill_diagonal(w, 1.0)
    u_eig, u_deg, u_ecc = _numpy_graph(w, threshold=0.7)
    assert eigval_uncertainty(w)[0] == pytest.approx(u_eig, abs=TOL)
    assert degree_uncertainty(w)[0] == pytest.approx(u_deg, abs=TOL)
    assert eccentricity_uncertainty(w, 0.7)[0] == pytest.approx(u_ecc, abs=TOL)
    with pytest.raises(ValueError, match="symmetric"):
        eigval_uncertainty(w + np.triu(np.ones((6, 6)), 1))


def test_graph_metrics_with_nli_judge_use_entailment_probabilities():
    p_ab, p_ba = (0.1, 0.3, 0.6), (0.2, 0.6, 0.2)
    judge = TableNLIJudge(table={("a", "b"): p_ab, ("b", "a"): p_ba})
    s = 0.4
    w = np.array([[1, s], [s, 1]])
    r = metric("degree", judge=judge).score(["a", "b"])
    assert r.uncertainty == pytest.approx(degree_uncertainty(w)[0], abs=TOL)
    assert r.uncertainty == pytest.approx((4 - 2.8) / 4, abs=TOL)
    r = metric("degree", judge=judge, affinity="contra").score(["a", "b"])
    s = 0.85
    assert r.uncertainty == pytest.approx(degree_uncertainty(np.array([[1, s], [s, 1]]))[0], abs=TOL)


# ---------------------------------------------------------------------------------------------------
# extremes: all the same -> no uncertainty, confidence 1; all different -> the maximum

CLUSTER_AND_GRAPH = ["discrete_semantic_entropy", "semantic_entropy", "num_semantic_sets", "eigval_laplacian", "degree",
                     "eccentricity"]


@pytest.mark.parametrize("name", CLUSTER_AND_GRAPH + ["lexical_similarity"])
def test_all_the_same(name):
    s = SampleSet.from_texts(["Paris"] * 5, logprobs=[[-0.3, -0.1]] * 5)
    r = metric(name).score(s)
    assert r.confidence == pytest.approx(1.0, abs=TOL) and r.normalised_uncertainty == pytest.approx(0.0, abs=TOL)
    expected_u = {"eigval_laplacian": 1.0, "num_semantic_sets": 1.0}.get(name, 0.0)
    assert r.uncertainty == pytest.approx(expected_u, abs=TOL)


@pytest.mark.parametrize("name", CLUSTER_AND_GRAPH + ["lexical_similarity"])
def test_all_different(name):
    n = 5
    # equal sequence probabilities: the weighted entropy reaches ln n only when no class carries more mass
    s = SampleSet.from_texts(["Paris", "Rome", "Lyon", "Nice", "Oslo"], logprobs=[[-0.3]] * 5)
    r = metric(name).score(s)
    assert r.confidence == pytest.approx(0.0, abs=TOL) and r.normalised_uncertainty == pytest.approx(1.0, abs=TOL)
    expected_u = {"discrete_semantic_entropy": LN(n), "semantic_entropy": LN(n), "num_semantic_sets": n,
                  "eigval_laplacian": n, "degree": (n - 1) / n, "eccentricity": math.sqrt(n - 1),
                  "lexical_similarity": 1.0}[name]
    assert r.uncertainty == pytest.approx(expected_u, abs=TOL)


def test_weighted_entropy_of_distinct_answers_with_unequal_probabilities_is_below_ln_n():
    s = SampleSet.from_texts(["Paris", "Rome", "Lyon"], logprobs=[[LN(0.6)], [LN(0.3)], [LN(0.1)]])
    r = metric("semantic_entropy").score(s)
    assert r.uncertainty == pytest.approx(-(0.6 * LN(0.6) + 0.3 * LN(0.3) + 0.1 * LN(0.1)), abs=TOL)
    assert r.uncertainty < LN(3)


def test_eccentricity_of_a_partition_is_sqrt_k_minus_1():
    # with a 0/1 equivalence graph the kept eigenspace is spanned by the class indicators
    r = metric("eccentricity").score(["a", "a", "a", "b", "c"])
    assert r.uncertainty == pytest.approx(math.sqrt(2), abs=TOL) and r.details["n_eigenvectors"] == 3


# ---------------------------------------------------------------------------------------------------
# semantic density

NLI_TABLE = {
    ("T", "X"): (0.2, 0.4, 0.4), ("X", "T"): (0.0, 0.2, 0.8),
    ("T", "Y"): (0.7, 0.2, 0.1), ("Y", "T"): (0.9, 0.1, 0.0),
    ("G", "T"): (0.0, 0.1, 0.9), ("T", "G"): (0.1, 0.1, 0.8),
    ("G", "X"): (0.3, 0.3, 0.4), ("X", "G"): (0.2, 0.5, 0.3),
    ("G", "Y"): (0.8, 0.2, 0.0), ("Y", "G"): (0.6, 0.4, 0.0),
}


def test_semantic_density_nli_by_hand():
    judge = TableNLIJudge(table=NLI_TABLE)
    r = metric("semantic_density", judge=judge, weighting="uniform").score(["T", "X"])
    # d(T, X) = ½[(0.2 + ½·0.4) + (0 + ½·0.2)] = 0.25 -> K = 0.75; K(T, T) = 1
    assert r.details["variant"] == "nli" and r.details["target"] == "T" and r.details["target_source"] == "sample 0"
    assert r.details["kernel"] == pytest.approx([1.0, 0.75], abs=TOL)
    assert r.confidence == pytest.approx(0.875, abs=TOL) and r.uncertainty == pytest.approx(0.125, abs=TOL)


def _brute_force_density(table, target, refs, weights):
    num = den = 0.0
    for text, w in zip(refs, weights, strict=True):
        if text == target:
            k = 1.0
        else:
            f, b = table[(target, text)], table[(text, target)]
            d = 0.5 * ((f[0] + 0.5 * f[1]) + (b[0] + 0.5 * b[1]))
            k = (1 - d) if math.sqrt(d) <= 1 else 0.0
        num += w * k
        den += w
    return num / den


def test_semantic_density_nli_matches_brute_force_with_greedy_target_and_likelihood_weights():
    judge = TableNLIJudge(table=NLI_TABLE)
    lp = {"T": [-0.2, -0.4], "X": [-1.0], "Y": [-0.5, -0.5, -2.0], "G": [-0.1]}
    texts = ["T", "X", "Y", "X", "T"]
    s = SampleSet.from_texts(texts, logprobs=[lp[t] for t in texts], greedy="G", greedy_logprobs=lp["G"])
    r = metric("semantic_density", judge=judge).score(s)
    refs = ["T", "X", "Y", "G"]  # unique references, the greedy target among them
    expected = _brute_force_density(NLI_TABLE, "G", refs, [math.exp(np.mean(lp[t])) for t in refs])
    assert r.details["weighting"] == "likelihood" and r.details["target_source"] == "greedy"
    assert r.confidence == pytest.approx(expected, abs=TOL)
    # with duplicates counted, the brute force over all five samples plus the target
    r = metric("semantic_density", judge=judge, unique_references=False).score(s)
    refs = [*texts, "G"]
    assert r.confidence == pytest.approx(_brute_force_density(NLI_TABLE, "G", refs, [math.exp(np.mean(lp[t])) for t in refs]), abs=TOL)
    # an explicit sample index as target
    r = metric("semantic_density", judge=judge, target=2, weighting="uniform").score(s)
    assert r.details["target"] == "Y"


def test_semantic_density_weighting_needs_logprobs():
    judge = TableNLIJudge(table=NLI_TABLE)
    r = metric("semantic_density", judge=judge, weighting="likelihood").score(["T", "X"])
    assert r.missing and "logprobs" in r.details["missing"]
    r = metric("semantic_density", judge=judge).score(["T", "X"])  # auto -> uniform, and says so
    assert r.details["weighting"] == "uniform" and r.confidence == pytest.approx(0.875, abs=TOL)


EMB = FakeEmbedder({"T": unit(0), "X": unit(60), "Y": unit(30), "Z": unit(180)})
COS = {("T", "X"): 0.5, ("T", "Y"): math.cos(math.radians(30)), ("X", "Y"): math.cos(math.radians(30)),
       ("T", "Z"): -1.0, ("X", "Z"): -0.5, ("Y", "Z"): -math.cos(math.radians(30))}


def _cos(a, b):
    return 1.0 if a == b else COS.get((a, b), COS.get((b, a)))


def test_semantic_density_embedding_variants_by_hand():
    texts = ["T", "X", "Y"]
    # response-specific, target = sample 0, h = 1: K = max(0, 2 cos - 1)
    r = SemanticDensity(variant="embedding_response", weighting="uniform", embedder=EMB).score(texts)
    k = [1.0, max(0, 2 * 0.5 - 1), 2 * math.cos(math.radians(30)) - 1]
    assert r.details["variant"] == "embedding_response"
    assert r.details["kernel"] == pytest.approx(k, abs=1e-6) and r.confidence == pytest.approx(np.mean(k), abs=1e-6)
    # bandwidth h = 2: K = max(0, 1 - (2 - 2 cos)/4)
    r = SemanticDensity(variant="embedding_response", weighting="uniform", embedder=EMB, bandwidth=2.0).score(texts)
    assert r.details["kernel"] == pytest.approx([1 - (2 - 2 * _cos("T", t)) / 4 for t in texts], abs=1e-6)
    # HASSUM Eq. 2: mean over all N² ordered pairs, diagonal included
    kk = [[max(0.0, 2 * _cos(a, b) - 1) for b in texts] for a in texts]
    r = SemanticDensity(variant="embedding_set", embedder=EMB).score(texts)
    assert r.details["variant"] == "embedding_set"
    assert r.confidence == pytest.approx(np.sum(kk) / 9, abs=1e-6) and r.confidence >= 1 / 3
    r = SemanticDensity(variant="embedding_set", embedder=EMB, include_diagonal=False).score(texts)
    assert r.confidence == pytest.approx((np.sum(kk) - 3) / 6, abs=1e-6)
    # mean cosine (clamped): not a kernel density
    r = SemanticDensity(variant="mean_cosine", embedder=EMB).score(texts)
    assert r.confidence == pytest.approx((0.5 + 2 * math.cos(math.radians(30))) / 3, abs=1e-6)
    assert SemanticDensity(variant="mean_cosine", embedder=EMB).score(["T", "Z"]).confidence == 0.0


def test_semantic_density_variant_choice_follows_the_judge():
    assert SemanticDensity(judge="exact", embedder=EMB)._variant == "embedding_response"
    assert SemanticDensity(judge=TableNLIJudge(table={}))._variant == "nli"
    with pytest.raises(ValueError, match="needs a judge with NLI probabilities"):
        SemanticDensity(judge="exact", variant="nli")
    with pytest.raises(ValueError, match="target=7"):
        SemanticDensity(embedder=EMB, target=7).score(["T", "X"])
    with pytest.raises(ParameterError):
        metric("semantic_density", variant="kde")


def test_semantic_density_extremes_and_the_real_embedder():
    judge = TableNLIJudge(table={}, default="contradiction")
    assert metric("semantic_density", judge=judge).score(["T"] * 4).confidence == 1.0
    # every other answer contradicts the target: only the target's own kernel (1) counts
    r = metric("semantic_density", judge=judge, weighting="uniform").score(["T", "X", "Y", "Z"])
    assert r.confidence == pytest.approx(0.25, abs=TOL)
    # the embedding variant through all-MiniLM-L6-v2: paraphrases denser than unrelated answers
    close = metric("semantic_density", variant="embedding_set").score(
        ["Paris is the capital of France.", "The capital of France is Paris.", "France's capital city is Paris."])
    far = metric("semantic_density", variant="embedding_set").score(
        ["Paris is the capital of France.", "Bananas are yellow.", "The stock market fell today."])
    assert close.confidence > 0.7 > 0.4 > far.confidence >= 1 / 3 - 1e-6


# ---------------------------------------------------------------------------------------------------
# verbalized confidence


@pytest.mark.parametrize("reply, value", [
    ("85", 85.0), ("I'd say 85%.", 85.0), ("Confidence: 0.9", 90.0), ("17/20", 85.0), ("7 out of 10", 70.0),
    ("100", 100.0), ("0", 0.0), ("about 62.5 percent", 62.5), ("150", None), ("very sure", None), ("", None),
])
def test_parse_confidence(reply, value):
    assert parse_confidence(reply) == value


def test_verbalized_confidence_with_a_canned_model():
    llm = CannedLLM(lambda p: "I am 80% sure.")
    s = SampleSet.from_texts(["Rome", "Paris"], question="Capital of France?", greedy="Paris")
    r = metric("verbalized_confidence", llm=llm).score(s)
    assert r.confidence == pytest.approx(0.8) and r.uncertainty == pytest.approx(0.2)
    assert r.details["target"] == "Paris" and r.details["target_source"] == "greedy"
    assert "Proposed answer: Paris" in llm.prompts[0] and "Capital of France?" in llm.prompts[0]
    r = metric("verbalized_confidence", llm=CannedLLM(lambda p: "Hard to say!")).score(s)
    assert r.missing and r.details["raw"] == "Hard to say!" and "no readable" in r.details["missing"]
    r = metric("verbalized_confidence", llm=llm).score(["Rome"])
    assert r.details["target_source"] == "sample 0"


# ---------------------------------------------------------------------------------------------------
# invariance to sample order


ALPHABET = ["Paris", "paris.", "Rome", "Lyon", "The Paris"]


@settings(max_examples=25, deadline=None, derandomize=True)
@given(st.lists(st.integers(0, len(ALPHABET) - 1), min_size=2, max_size=7), st.randoms(use_true_random=False))
def test_metrics_are_invariant_to_sample_order(idx, rnd):
    texts = [ALPHABET[i] for i in idx]
    lps = [[-0.1 * (i + 1), -0.05] for i in idx]
    order = list(range(len(texts)))
    rnd.shuffle(order)
    emb = FakeEmbedder({t: unit(17 * k) for k, t in enumerate(ALPHABET)})
    a = SampleSet.from_texts(texts, logprobs=lps, greedy="Paris", greedy_logprobs=[-0.1, -0.05])
    b = SampleSet.from_texts([texts[i] for i in order], logprobs=[lps[i] for i in order], greedy="Paris",
                             greedy_logprobs=[-0.1, -0.05])
    metrics = [metric(n) for n in CLUSTER_AND_GRAPH + ["lexical_similarity", "predictive_entropy"]]
    metrics += [SemanticDensity(variant=v, embedder=emb) for v in ("embedding_response", "embedding_set", "mean_cosine")]
    metrics.append(SemanticDensity(judge=TableNLIJudge(table={}, default=(0.2, 0.3, 0.5))))
    for m in metrics:
        ra, rb = m.score(a), m.score(b)
        assert ra.uncertainty == pytest.approx(rb.uncertainty, abs=1e-9), m.name
        assert ra.confidence == pytest.approx(rb.confidence, abs=1e-9), m.name


# ---------------------------------------------------------------------------------------------------
# result object and score_all


def test_metric_result_and_score_all():
    results = score_all(["Paris", "paris", "Rome"], ["discrete_semantic_entropy", "num_semantic_sets", "lexical_similarity"],
                        judge=ExactJudge())
    assert set(results) == {"discrete_semantic_entropy", "num_semantic_sets", "lexical_similarity"}
    r = results["num_semantic_sets"]
    assert isinstance(r, MetricResult) and not r.missing and r.to_dict()["uncertainty"] == 2
    assert "num_semantic_sets" in repr(r)
    for name in CLUSTER_AND_GRAPH + ["lexical_similarity", "predictive_entropy", "semantic_density"]:
        res = metric(name).score(SampleSet.from_texts(["a b", "a c", "d"], logprobs=[[-0.1], [-0.2], [-0.3]]))
        assert 0.0 <= res.confidence <= 1.0 and 0.0 <= res.normalised_uncertainty <= 1.0, name
        assert res.metric == name
        json.dumps(res.to_dict())  # details are plain JSON (run logs store them)



def test_all_distinct_entropy_confidence_is_exactly_zero():
    """H / ln n is clipped to [0, 1]: float rounding gave 0.9999999999999998 at n = 3."""
    from uncertainty_lab import registry

    for n in (3, 5, 10):
        result = registry.create("metrics", "discrete_semantic_entropy", judge="exact").score([f"a{i}" for i in range(n)])
        assert result.confidence == 0.0 and result.normalised_uncertainty == 1.0
