"""Equivalence judges: relations on hand-made NLI outcomes, lenient parsing, caching and batching, the LLM
judge (canned replies and the real embedded model), a tiny randomly initialised NLI cross-encoder, and
registry discovery of every semantic plugin."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from fakes import CannedLLM, FakeEmbedder, TableNLIJudge, unit

from uncertainty_lab import registry
from uncertainty_lab.parameters import ParameterError
from uncertainty_lab.semantic import (
    LABELS,
    RELATIONS,
    EmbeddingJudge,
    ExactJudge,
    JudgeCapabilityError,
    LLMEntailmentJudge,
    NLICrossEncoderJudge,
    clear_judgement_cache,
    cluster,
    parse_nli_label,
    relation_holds,
    resolve_judge,
)

C, N, E = "contradiction", "neutral", "entailment"

# hand-written truth table: (forward, backward) -> equivalent under each relation
TRUTH = {
    (E, E): dict(strict_bidirectional=True, no_contradiction=True, no_contradiction_not_both_neutral=True, either_direction=True),
    (E, N): dict(strict_bidirectional=False, no_contradiction=True, no_contradiction_not_both_neutral=True, either_direction=True),
    (N, E): dict(strict_bidirectional=False, no_contradiction=True, no_contradiction_not_both_neutral=True, either_direction=True),
    (N, N): dict(strict_bidirectional=False, no_contradiction=True, no_contradiction_not_both_neutral=False, either_direction=False),
    (E, C): dict(strict_bidirectional=False, no_contradiction=False, no_contradiction_not_both_neutral=False, either_direction=True),
    (C, E): dict(strict_bidirectional=False, no_contradiction=False, no_contradiction_not_both_neutral=False, either_direction=True),
    (N, C): dict(strict_bidirectional=False, no_contradiction=False, no_contradiction_not_both_neutral=False, either_direction=False),
    (C, N): dict(strict_bidirectional=False, no_contradiction=False, no_contradiction_not_both_neutral=False, either_direction=False),
    (C, C): dict(strict_bidirectional=False, no_contradiction=False, no_contradiction_not_both_neutral=False, either_direction=False),
}


@pytest.mark.parametrize("relation", RELATIONS)
@pytest.mark.parametrize("outcome", list(TRUTH))
def test_relations_on_hand_made_nli_outcomes(relation, outcome):
    fwd, bwd = outcome
    assert relation_holds(relation, fwd, bwd) is TRUTH[outcome][relation]
    judge = TableNLIJudge(table={("A", "B"): fwd, ("B", "A"): bwd}, relation=relation)
    j = judge.judge("q", "A", "B")
    assert j.equivalent is TRUTH[outcome][relation]
    assert (j.forward.label, j.backward.label) == outcome
    assert judge.equivalent("q", "B", "A") is TRUTH[(bwd, fwd)][relation]


def test_relation_errors():
    with pytest.raises(ValueError, match="relation must be one of"):
        relation_holds("both", E, E)
    with pytest.raises(ValueError, match="NLI label"):
        relation_holds("strict_bidirectional", "entails", E)
    with pytest.raises(ParameterError, match="must be one of"):
        registry.create("equivalence_judges", "llm_entailment", relation="strict", llm=CannedLLM(lambda p: "x"))


@pytest.mark.parametrize(
    "reply, label",
    [
        ("entailment", E), ("Entailment.", E), ("  NEUTRAL ", N), ("Contradiction!", C),
        ("The answer is entailment.", E), ("Answer 1 entails Answer 2", E),
        ("They contradict each other.", C), ("Entailment. No contradiction here.", E),
        ("Answer 1 does not entail Answer 2.", N), ("It doesn't entail it", N),
        ("not entailment but a contradiction", C), ("Yes", E), ("No.", N), ("unclear", N),
        ("They are inconsistent", C), ("", None), ("banana", None), ("1234", None),
    ],
)
def test_parse_nli_label_is_lenient(reply, label):
    assert parse_nli_label(reply) == label


def test_exact_judge():
    j = ExactJudge()
    assert j.equivalent("", "The Canberra!", "canberra") and not j.equivalent("", "Canberra", "Sydney")
    assert j.similarity("", "Paris", "paris.") == 1.0 and j.similarity("", "Paris", "Rome") == 0.0
    with pytest.raises(JudgeCapabilityError, match="no NLI probabilities"):
        j.probabilities("", "a", "b")


def test_embedding_judge_threshold_with_hand_made_vectors():
    emb = FakeEmbedder({"a": unit(0), "b": unit(20), "c": unit(60)})
    judge = EmbeddingJudge(threshold=0.9, embedder=emb)
    jab, jac = judge.judge_pairs("q", [("a", "b"), ("a", "c")])
    assert jab.similarity == pytest.approx(math.cos(math.radians(20)), abs=1e-6)  # float32 vectors
    assert jab.equivalent and not jac.equivalent  # cos 20° = 0.94 >= 0.9 > cos 60° = 0.5
    assert not EmbeddingJudge(threshold=0.95, embedder=emb).equivalent("q", "a", "b")


def test_embedding_judge_real_model():
    judge = registry.create("equivalence_judges", "embedding", threshold=0.8)
    same = judge.judge("", "The capital of France is Paris.", "Paris is the capital of France.")
    other = judge.judge("", "The capital of France is Paris.", "Bananas are rich in potassium.")
    assert same.equivalent and not other.equivalent
    assert same.similarity > 0.9 > 0.3 > other.similarity


def test_pair_judgements_are_cached_and_shared_by_configuration():
    clear_judgement_cache()
    table = {("A", "B"): E, ("B", "A"): E}
    j1 = TableNLIJudge(table=table)
    j1.judge_pairs("q", [("A", "B"), ("B", "A"), ("A", "A")])
    assert sorted(j1.asked) == [("A", "B"), ("B", "A")]  # identical texts are never sent; duplicates asked once
    j1.judge_pairs("q", [("A", "B")])
    assert len(j1.asked) == 2 and j1.cache_info()["hits"] == 2
    j1.relation = "no_contradiction"  # the relation is applied to cached verdicts: no new questions
    assert j1.equivalent("q", "A", "B") and len(j1.asked) == 2
    j1.judge_pairs("another question", [("A", "B")])  # the question is part of the key
    assert len(j1.asked) == 4


def test_llm_judge_with_canned_replies_asks_both_directions_and_reports_parse_failures():
    clear_judgement_cache()

    def reply(prompt):
        if "Answer 1: Paris\nAnswer 2: The capital is Paris" in prompt:
            return "Entailment"
        if "Answer 1: The capital is Paris\nAnswer 2: Paris" in prompt:
            return "entails, yes"
        if "Rome" in prompt and "Answer 1: Paris" in prompt:
            return "Contradiction."
        return "I like turtles"  # unreadable

    llm = CannedLLM(reply)
    judge = LLMEntailmentJudge(llm=llm)
    assert judge.equivalent("What is the capital of France?", "Paris", "The capital is Paris")
    assert len(llm.prompts) == 2 and "We are evaluating answers to the question: What is the capital" in llm.prompts[0]
    j = judge.judge("What is the capital of France?", "Paris", "Rome")
    assert not j.equivalent and j.forward.label == C
    assert j.backward.label == N and not j.backward.parsed and j.backward.raw == "I like turtles"
    assert j.parse_failures == ["I like turtles"]
    assert judge.probabilities("What is the capital of France?", "Paris", "Rome") == (1.0, 0.0, 0.0)
    n_calls = len(llm.prompts)
    judge.judge("What is the capital of France?", "Rome", "Paris")  # both directions cached
    assert len(llm.prompts) == n_calls
    c = cluster(["Paris", "The capital is Paris", "Rome"], judge, "What is the capital of France?")
    assert c.clusters == [[0, 1], [2]] and "I like turtles" in c.parse_failures


def test_llm_judge_through_the_real_embedded_backend():
    clear_judgement_cache()
    judge = registry.create("equivalence_judges", "llm_entailment", llm="embedded", max_tokens=6)
    j = judge.judge("What is the capital of France?", "Paris", "The capital of France is Paris.")
    for v in (j.forward, j.backward):
        assert v.label in LABELS and sum(v.probabilities) == 1.0
        assert v.parsed == (parse_nli_label(v.raw) is not None)  # never silently: unreadable replies are flagged
    assert j.equivalent == relation_holds("strict_bidirectional", j.forward.label, j.backward.label)
    misses = judge.cache_info()["misses"]
    judge.judge("What is the capital of France?", "The capital of France is Paris.", "Paris")
    assert judge.cache_info()["misses"] == misses  # the reversed pair is served from the cache


def test_resolve_judge():
    assert isinstance(resolve_judge("exact"), ExactJudge)
    j = ExactJudge()
    assert resolve_judge(j) is j
    with pytest.raises(TypeError, match="instantiate it"):
        resolve_judge(ExactJudge)
    with pytest.raises(TypeError, match="equivalent"):
        resolve_judge(42)
    with pytest.raises(registry.UnknownPluginError, match="closest match: 'exact'"):
        resolve_judge("exakt")


# ---------------------------------------------------------------------------------------------------
# a tiny randomly initialised NLI cross-encoder, built and saved locally

WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "a", "is", "of", "capital", "paris", "france",
         "rome", "london", "what", "city", "it", "yes", "no", "?", "."]


@pytest.fixture(scope="module")
def tiny_nli(tmp_path_factory):
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    root = tmp_path_factory.mktemp("tiny_nli")
    (root / "vocab.txt").write_text("\n".join(WORDS) + "\n")
    tokenizer = BertTokenizerFast(vocab_file=str(root / "vocab.txt"))
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(WORDS), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64, num_labels=3,
                        id2label={0: "contradiction", 1: "neutral", 2: "entailment"},
                        label2id={"contradiction": 0, "neutral": 1, "entailment": 2})
    model = BertForSequenceClassification(config).eval()
    with torch.no_grad():  # make entailment the clear argmax whatever the input
        model.classifier.bias.copy_(torch.tensor([-2.0, 0.0, 2.0]))
    path = root / "model"
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path, model, tokenizer


def _direct_probs(model, tokenizer, pairs):
    import torch

    enc = tokenizer([p for p, _ in pairs], [h for _, h in pairs], padding=True, truncation=True, return_tensors="pt")
    with torch.no_grad():
        return torch.softmax(model(**enc).logits, dim=-1).numpy()


def test_cross_encoder_matches_a_direct_forward_pass_and_batches_all_pairs(tiny_nli, monkeypatch):
    from sentence_transformers import CrossEncoder

    clear_judgement_cache()
    path, model, tokenizer = tiny_nli
    calls = []
    original = CrossEncoder.predict

    def counting_predict(self, inputs, *a, **k):
        calls.append(len(inputs))
        return original(self, inputs, *a, **k)

    monkeypatch.setattr(CrossEncoder, "predict", counting_predict)
    judge = registry.create("equivalence_judges", "nli_cross_encoder", model=str(path))
    q = "what is the capital of france ?"
    texts = ["paris", "it is paris .", "rome", "london"]
    pairs = list(itertools.combinations(texts, 2))
    judgements = judge.judge_pairs(q, pairs)
    assert calls == [2 * len(pairs)]  # every directed pair in one predict call
    directed = [d for a, b in pairs for d in ((a, b), (b, a))]
    expected = _direct_probs(model, tokenizer, [(f"{q} {p}", f"{q} {h}") for p, h in directed])
    got = judge.probabilities_many(q, directed)
    # float32 forward passes of the same weights, batched vs padded differently: agree to ~1e-6
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert calls == [2 * len(pairs)]  # ... and the second look-up came from the cache
    assert all(j.equivalent and j.forward.label == E for j in judgements)  # bias makes entailment the argmax

    # clustering asks for all unique pairs in one batch, then reads the cache
    clear_judgement_cache()
    calls.clear()
    c = cluster(texts + ["paris"], judge, q)
    assert calls == [2 * len(pairs)] and c.n_clusters == 1


def test_cross_encoder_label_order_and_question(tiny_nli):
    clear_judgement_cache()
    path, model, tokenizer = tiny_nli
    # declare the model's columns as (entailment, neutral, contradiction): its biased column 2 now reads as contradiction
    flipped = NLICrossEncoderJudge(model=str(path), label_order="entailment, neutral, contradiction")
    normal = NLICrossEncoderJudge(model=str(path))
    pn, pf = normal.probabilities("", "paris", "rome"), flipped.probabilities("", "paris", "rome")
    assert pf == pytest.approx(pn[::-1])
    assert normal.equivalent("", "paris", "rome") and not flipped.equivalent("", "paris", "rome")
    no_q = NLICrossEncoderJudge(model=str(path), prepend_question=False)
    expected = _direct_probs(model, tokenizer, [("paris", "rome")])[0]
    np.testing.assert_allclose(no_q.probabilities("what city ?", "paris", "rome"), expected, atol=1e-5)


def test_cross_encoder_bad_configuration(tmp_path):
    with pytest.raises(ValueError, match="needs model="):
        registry.create("equivalence_judges", "nli_cross_encoder")
    with pytest.raises(ValueError, match="label_order"):
        NLICrossEncoderJudge(model=str(tmp_path), label_order="contradiction,entailment")
    with pytest.raises(FileNotFoundError, match="no NLI model"):
        NLICrossEncoderJudge(model=str(tmp_path / "missing"))


# ---------------------------------------------------------------------------------------------------
# registry discovery

METRICS = {"semantic_entropy", "discrete_semantic_entropy", "semantic_density", "num_semantic_sets", "eigval_laplacian",
           "degree", "eccentricity", "lexical_similarity", "predictive_entropy", "verbalized_confidence"}
JUDGES = {"exact", "embedding", "llm_entailment", "nli_cross_encoder"}


def test_registry_discovers_every_semantic_plugin():
    registry.refresh(strict=True)
    assert METRICS <= set(registry.names("metrics"))
    assert JUDGES <= set(registry.names("equivalence_judges"))
    infos = {i.name: i for i in registry.describe("metrics", strict=True) + registry.describe("equivalence_judges", strict=True)}
    for name in METRICS | JUDGES:
        info = infos[name]
        assert info.status == "ok" and info.distribution == "uncertainty-lab" and info.summary, name
        assert info.reference, name
    for name in METRICS:
        assert callable(registry.get("metrics", name).score)
    for name in JUDGES:
        assert callable(registry.get("equivalence_judges", name).equivalent)
    judge_param = {p.name: p for p in infos["semantic_entropy"].parameters}["judge"]
    assert judge_param.default == "exact"
    relation = {p.name: p for p in infos["llm_entailment"].parameters}["relation"]
    assert relation.choices == RELATIONS


def test_metric_judge_parameter_takes_a_name_or_an_instance():
    by_name = registry.create("metrics", "discrete_semantic_entropy", judge="exact")
    by_instance = registry.create("metrics", "discrete_semantic_entropy", judge=ExactJudge())
    texts = ["Paris", "paris.", "Rome"]
    assert by_name.score(texts).uncertainty == by_instance.score(texts).uncertainty
    with pytest.raises(registry.UnknownPluginError):
        registry.create("metrics", "discrete_semantic_entropy", judge="nope")


def test_pyproject_entry_points_name_the_judge_classes():
    """Each ``equivalence_judges`` entry point in pyproject.toml (the source of the installed metadata) imports
    the judge class of that name from its module, and the old ``semantic.judges`` path still gives the same
    class (an older install's metadata points there)."""
    import importlib
    import tomllib
    from pathlib import Path

    from uncertainty_lab.semantic import judges

    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    table = project["project"]["entry-points"]["uncertainty_lab.equivalence_judges"]
    assert JUDGES <= set(table)
    for name in JUDGES:
        module, _, attr = table[name].partition(":")
        cls = getattr(importlib.import_module(module), attr)
        assert cls.name == name and getattr(judges, attr) is cls
    assert table["llm_entailment"].startswith("uncertainty_lab.semantic.judges_nli:")
