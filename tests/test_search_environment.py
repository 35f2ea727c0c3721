"""The CGDP environment: BM25 (bm25s) over the shipped corpus, embedding/hybrid retrieval, tools and token costs."""

from __future__ import annotations

import pytest
from fakes import FakeEmbedder

from uncertainty_lab.datasets.search import Document, load_search_questions
from uncertainty_lab.search import Action, SearchEnvironment, SearchEnvironmentError, count_tokens, objective
from uncertainty_lab.search.text import entities, find_doc_ids, jaccard

TINY = [
    Document("d-1", "Alpha", "Red fox jumps."),
    Document("d-2", "Beta", "Blue whale swims far."),
    Document("d-3", "Gamma", "Red panda sleeps."),
]


@pytest.fixture(scope="module")
def shipped():
    return SearchEnvironment()


@pytest.mark.parametrize(("query", "doc_id"), [
    ("Who founded the Havelt Brotherhood?", "doc-091"),
    ("Who designed the ship Karby?", "doc-213"),
    ("Which institution holds the Kalveck Loom?", "doc-012"),
    ("Who designed the Broskick Codex?", "doc-266"),
    ("Who was Orlra Quarell married to?", "doc-018"),
])
def test_bm25_ranks_the_supporting_document_first(shipped, query, doc_id):
    obs = shipped.search(query)
    assert obs.passage_ids[0] == doc_id
    assert len(obs.passage_ids) == 3 and list(obs.scores) == sorted(obs.scores, reverse=True)


def test_bm25_first_hops_of_the_shipped_questions(shipped):
    hits = sum(shipped.search(q.decomposition[0].question).passage_ids[0] == q.decomposition[0].support_id
               for q in load_search_questions())
    assert hits >= 90  # 95 of 100 when written


def test_token_proxy_by_hand():
    assert count_tokens("") == 0
    assert count_tokens("Red fox jumps.") == 4
    assert count_tokens("[doc-091] Havelt: founded.") == 9  # [ doc - 091 ] Havelt : founded .
    assert count_tokens("don't  stop") == 4  # don ' t stop
    with pytest.raises(TypeError, match="string"):
        count_tokens(3)


def test_search_cost_is_the_tokens_of_the_observation():
    env = SearchEnvironment(TINY, k=2)
    obs = env.search("red")
    assert obs.passage_ids == ("d-1", "d-3")  # equal BM25 scores keep corpus order
    assert obs.text == "[d-1] Alpha: Red fox jumps.\n[d-3] Gamma: Red panda sleeps."
    # [ d - 1 ] Alpha : Red fox jumps .  = 11 tokens, twice
    assert obs.cost == 22 == count_tokens(obs.text)
    read = env.read("d-2")
    assert read.passage_ids == ("d-2",) and read.cost == 12  # [ d - 2 ] Beta : Blue whale swims far .
    assert env.answer("x").cost == 0 and env.answer("x").terminal
    assert objective(1, 22 + 12, 0.01) == pytest.approx(1 - 0.34)


def test_search_edge_cases():
    env = SearchEnvironment(TINY, k=5)  # k larger than the corpus is capped
    assert env.k == 3
    none = env.search("zebra")
    assert none.passage_ids == () and none.text == "(no results for this query)" and none.cost == 7
    assert env.search("   ").passage_ids == ()
    assert env.search("the of").passage_ids == ()  # stop words only
    bad = env.read("d-9")
    assert bad.passage_ids == () and "unknown document id" in bad.error and bad.cost == count_tokens(bad.text)
    assert env.read("D 1").passage_ids == ("d-1",)  # a loosely written id is resolved
    assert env.step(Action("search", "whale")).passage_ids[0] == "d-2"
    with pytest.raises(SearchEnvironmentError, match="k must be a positive integer"):
        env.search("red", k=0)
    with pytest.raises(SearchEnvironmentError, match="retriever must be one of"):
        SearchEnvironment(TINY, retriever="tfidf")
    with pytest.raises(SearchEnvironmentError, match="unique"):
        SearchEnvironment([TINY[0], TINY[0]])
    with pytest.raises(SearchEnvironmentError, match="Action.kind"):
        Action("jump", "x")


def test_fingerprint_and_config_identify_the_corpus():
    a, b = SearchEnvironment(TINY), SearchEnvironment(TINY[:2])
    assert a.fingerprint() != b.fingerprint() and a.config()["n_documents"] == 3


#: hand-made vectors: the query "red" is closest to d-2, then d-3, then d-1
HAND = {"Alpha: Red fox jumps.": [0.0, 1.0], "Beta: Blue whale swims far.": [1.0, 0.0],
        "Gamma: Red panda sleeps.": [0.8, 0.6], "red": [0.96, 0.28]}


def test_embedding_and_hybrid_retrieval_by_hand():
    emb = SearchEnvironment(TINY, retriever="embedding", embedder=FakeEmbedder(HAND), k=3)
    assert emb.search("red").passage_ids == ("d-2", "d-3", "d-1")
    hybrid = SearchEnvironment(TINY, retriever="hybrid", embedder=FakeEmbedder(HAND), k=3, rrf_k=60)
    hits = hybrid.rank("red")
    # BM25 ranks d-1, d-3 (d-2 has no query term); embeddings rank d-2, d-3, d-1
    expected = {"d-1": 1 / 61 + 1 / 63, "d-3": 1 / 62 + 1 / 62, "d-2": 1 / 61}
    assert [i for i, _ in hits] == ["d-1", "d-3", "d-2"]  # 0.032266 > 0.032258 > 0.016393
    for doc_id, score in hits:
        assert score == pytest.approx(expected[doc_id])


def test_text_helpers():
    assert jaccard("a b c", "b c d") == pytest.approx(2 / 4)
    assert jaccard("", "") == 1.0 and jaccard("", "a") == 0.0
    assert entities("It was founded in 1837 by Kelys Kalveck. It is headquartered in Tismar.") == ["Kelys Kalveck", "Tismar"]
    # dash-shaped ids first (DOC-7), then the loose "doc 91" form; both mapped onto the corpus ids
    assert find_doc_ids("see doc 91 and (DOC-7)", ["doc-091", "doc-007"]) == ["doc-007", "doc-091"]
    assert find_doc_ids("cites doc-999") == ["doc-999"]
