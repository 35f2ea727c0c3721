"""The shipped synthetic multi-hop corpus (and its generator), and the MuSiQue / HotpotQA loaders."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from uncertainty_lab.datasets import build_search_corpus as gen
from uncertainty_lab.datasets.multihop import load_hotpotqa_json, load_musique_json
from uncertainty_lab.datasets.qa import DatasetFormatError
from uncertainty_lab.datasets.search import (
    Document,
    SearchDataFormatError,
    SearchQuestion,
    SubQuestion,
    load_search_corpus,
    load_search_dataset,
    load_search_questions,
    search_corpus_resource,
    search_questions_resource,
)


def mentions(text: str, surface: str) -> bool:
    return re.search(r"(?<!\w)" + re.escape(surface) + r"(?!\w)", text) is not None


@pytest.fixture(scope="module")
def shipped():
    documents, questions = load_search_dataset()
    return documents, questions, {d.id: d for d in documents}


@pytest.fixture(scope="module")
def built():
    """The generator's in-memory world, to check questions against the knowledge graph itself."""
    return gen.build()


# ---------------------------------------------------------------------------------------------------------------
# The shipped corpus
# ---------------------------------------------------------------------------------------------------------------


def test_shipped_corpus_loads_with_expected_sizes(shipped):
    documents, questions, _ = shipped
    assert 280 <= len(documents) <= 320
    assert 90 <= len(questions) <= 110
    assert all(isinstance(d, Document) for d in documents)
    assert all(isinstance(q, SearchQuestion) and q.source == "uncertainty_lab" for q in questions)
    assert {q.hops for q in questions} == {2, 3, 4}
    assert {q.type for q in questions} == {"bridge", "comparison"}
    for hops in (2, 3, 4):  # every hop count has both types
        assert {q.type for q in questions if q.hops == hops} == {"bridge", "comparison"}
    assert len({d.id for d in documents}) == len(documents)
    assert len({d.title for d in documents}) == len(documents)
    assert len({q.id for q in questions}) == len(questions)


def test_documents_are_short(shipped):
    for d in shipped[0]:
        sentences = len(re.findall(r"[.?!](?:\s|$)", d.text))
        assert 2 <= sentences <= 6, d
        assert d.title and mentions(d.text, d.title.removesuffix(" (ship)"))


def test_supporting_ids_exist_one_per_hop_in_order(shipped):
    documents, questions, by_id = shipped
    for q in questions:
        assert len(q.supporting_ids) == q.hops == len(set(q.supporting_ids))
        assert all(i in by_id for i in q.supporting_ids)
        assert len(q.decomposition) == q.hops
        assert [s.support_id for s in q.decomposition] == list(q.supporting_ids)
        assert q.decomposition[-1].answer == q.answer or q.type == "comparison"


def test_gold_answer_is_in_the_last_supporting_document(shipped):
    _, questions, by_id = shipped
    for q in questions:
        assert mentions(by_id[q.supporting_ids[-1]].text, q.answer), q


def test_each_hop_is_stated_only_in_its_supporting_document(shipped):
    """From the files alone: for hop k >= 2 the previous hop's answer and this hop's answer occur together in
    exactly one document, the hop's supporting one (so no other document states that fact)."""
    documents, questions, _ = shipped
    checked = 0
    for q in questions:
        for k in range(1, q.hops):
            prev, step = q.decomposition[k - 1], q.decomposition[k]
            if f"#{k}" not in step.question:
                continue  # a comparison's second side starts afresh
            together = [d.id for d in documents if mentions(d.title + "\n" + d.text, prev.answer)
                        and mentions(d.title + "\n" + d.text, step.answer)]
            assert together == [step.support_id], (q.id, k, together)
            checked += 1
    assert checked > 100


def test_no_question_is_answerable_from_one_document(shipped, built):
    """Stricter, from the knowledge graph: each hop's fact is stated in exactly one document, a different one per
    hop, and those documents are the supporting ones; for bridge questions the entity the question names and the
    answer never occur in one document."""
    documents, questions, _ = shipped
    world = built.world
    assert len(built.chains) == len(questions)
    for q, chain in zip(questions, built.chains, strict=True):
        assert chain.question == q.question and chain.answer == q.answer
        assert gen.recompute_answer(world, chain) == q.answer
        fact_docs = [built.doc_id[world.fact_doc[f]] for f, _t, _s in chain.hops]
        assert fact_docs == list(q.supporting_ids)
        assert len(set(fact_docs)) == q.hops >= 2
        for f, _t, _s in chain.hops:  # the graph is functional: following the relation gives this very fact
            assert world.follow(f.subject, f.relation)[0] == f
        if q.type == "bridge":
            topic = world.entities[chain.topics[0]].name
            for d in documents:
                text = d.title + "\n" + d.text
                assert not (mentions(text, topic) and any(mentions(text, a) for a in q.answers)), (q.id, d.id)
            assert not mentions(q.question, q.answer)
    # and every fact of the world sits in exactly one document (the placement is a function of the fact)
    assert set(world.fact_doc) == set(world.facts)


def test_comparisons_name_the_earlier_entity(shipped):
    for q in shipped[1]:
        if q.type != "comparison":
            continue
        years = [int(s.answer) for s in q.decomposition if s.answer.isdigit()]
        assert len(years) == 2 and years[0] > years[1]  # loser first, winner (the answer) last
        assert mentions(q.decomposition[-1].question, q.answer) or "#" in q.decomposition[-1].question


def test_distractors_exist_differ_from_support_and_look_alike(shipped, built):
    documents, questions, by_id = shipped
    for q, chain in zip(questions, built.chains, strict=True):
        assert len(q.distractor_ids) >= 2
        assert all(i in by_id for i in q.distractor_ids)
        assert not set(q.distractor_ids) & set(q.supporting_ids)
        assert len(set(q.distractor_ids)) == len(q.distractor_ids)
        # at least one looks like an entity the question names: a title word equal to, or one letter away from,
        # a word of its name (a person's surname), or a document that mentions that entity without supporting
        names = [built.world.entities[t] for t in chain.topics]
        words = {w.lower() for e in names
                 for w in re.findall(r"\w+", e.attrs["surname"] if e.kind == "person" else e.name)
                 if w.lower() not in gen._GENERIC}

        def looks_alike(doc, words=words, names=names):
            title_words = {w.lower() for w in re.findall(r"\w+", doc.title)}
            return any(gen._edit1(a, b) for a in title_words for b in words if len(a) >= 4) or \
                any(mentions(doc.text, e.name) for e in names)

        assert any(looks_alike(by_id[i]) for i in q.distractor_ids), q


def test_invented_names_avoid_the_stop_list(built):
    for e in built.world.entities.values():
        for word in e.name.lower().split():
            assert word not in gen.STOP_LIST, e.name
    assert {"paris", "tesla", "gandalf"} <= gen.STOP_LIST


def test_regeneration_is_byte_identical(tmp_path):
    paths = gen.write_search_corpus(tmp_path)
    assert set(paths) == {gen.CORPUS_FILE, gen.QUESTIONS_FILE, gen.CARD_FILE}
    assert paths[gen.CORPUS_FILE].read_bytes() == search_corpus_resource().read_bytes()
    assert paths[gen.QUESTIONS_FILE].read_bytes() == search_questions_resource().read_bytes()
    card = search_corpus_resource().parent / gen.CARD_FILE
    assert paths[gen.CARD_FILE].read_bytes() == card.read_bytes()
    assert gen.main(["--check", "--out", str(tmp_path)]) == 0
    paths[gen.CORPUS_FILE].write_text("stale\n")
    assert gen.main(["--check", "--out", str(tmp_path)]) == 1


def test_a_different_seed_gives_a_different_world(built):
    other = gen.build(seed=gen.SEED + 1)  # the checks and quotas hold for another world too
    assert other.documents != built.documents
    assert len(other.questions) == sum(gen.QUOTAS.values())


def test_questions_round_trip_through_dicts(shipped):
    for q in shipped[1][:10]:
        assert SearchQuestion.from_dict(q.to_dict()) == q
    assert shipped[1][0].answers[0] == shipped[1][0].answer


def test_own_files_in_the_shipped_schema(tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"id": "a", "title": "A", "text": "A is here."}\n\n{"id": "b", "title": "B", "text": "B."}\n')
    qs = tmp_path / "q.jsonl"
    qs.write_text(json.dumps({"id": "q1", "question": "Q?", "answer": "B", "hops": 2,
                              "supporting_ids": ["a", "b"]}) + "\n")
    documents, questions = load_search_dataset(corpus, qs)
    assert [d.id for d in documents] == ["a", "b"] and questions[0].supporting_ids == ("a", "b")
    qs.write_text(json.dumps({"id": "q1", "question": "Q?", "answer": "B", "hops": 2,
                              "supporting_ids": ["a", "zz"]}) + "\n")
    with pytest.raises(SearchDataFormatError, match=r"q\.jsonl, line 1 \(id 'q1'\), field 'supporting_ids'.*'zz'"):
        load_search_questions(qs, documents=documents)
    assert load_search_questions(qs)[0].supporting_ids == ("a", "zz")  # no corpus given: ids not checked
    qs.write_text(json.dumps({"id": "q1", "question": "Q?", "answer": "B", "supporting_ids": []}) + "\n")
    with pytest.raises(SearchDataFormatError, match="field 'hops'"):
        load_search_questions(qs)
    corpus.write_text('{"id": "a", "title": "A", "text": "x"}\n{"id": "a", "title": "B", "text": "y"}\n')
    with pytest.raises(SearchDataFormatError, match=r"line 2, field 'id': duplicate id 'a' \(first on line 1\)"):
        load_search_corpus(corpus)
    corpus.write_text('{"id": "a", "title": 3, "text": "x"}\n')
    with pytest.raises(SearchDataFormatError, match="field 'title': must be a string"):
        load_search_corpus(corpus)


# ---------------------------------------------------------------------------------------------------------------
# MuSiQue
# ---------------------------------------------------------------------------------------------------------------


def _musique_records():
    shared = {"title": "Green (album)", "paragraph_text": "Green is an album by Steve Hillage."}
    return [
        {
            "id": "2hop__460946_294723",
            "paragraphs": [
                {"idx": 0, "title": "Grant's First Stand", "paragraph_text": "A debut album.", "is_supporting": False},
                {"idx": 1, "title": "Miquette Giraudy", "paragraph_text": "Miquette Giraudy is a musician and the "
                 "partner of Steve Hillage.", "is_supporting": True},
                {"idx": 2, **shared, "is_supporting": True},
            ],
            "question": "Who is the spouse of the Green performer?",
            "question_decomposition": [
                {"id": 460946, "question": "Green >> performer", "answer": "Steve Hillage", "paragraph_support_idx": 2},
                {"id": 294723, "question": "#1 >> spouse", "answer": "Miquette Giraudy", "paragraph_support_idx": 1},
            ],
            "answer": "Miquette Giraudy",
            "answer_aliases": ["M. Giraudy"],
            "answerable": True,
        },
        {
            "id": "3hop1__1_2_3",
            "paragraphs": [
                {"idx": 0, **shared, "is_supporting": True},
                {"idx": 1, "title": "Hillage", "paragraph_text": "Steve Hillage was born in London.",
                 "is_supporting": True},
                {"idx": 2, "title": "London", "paragraph_text": "London is in England.", "is_supporting": True},
                {"idx": 3, "title": "Paris", "paragraph_text": "Paris is in France.", "is_supporting": False},
            ],
            "question": "In which country was the Green performer born?",
            "question_decomposition": [
                {"id": 1, "question": "Green >> performer", "answer": "Steve Hillage", "paragraph_support_idx": 0},
                {"id": 2, "question": "#1 >> place of birth", "answer": "London", "paragraph_support_idx": 1},
                {"id": 3, "question": "#2 >> country", "answer": "England", "paragraph_support_idx": 2},
            ],
            "answer": "England",
            "answer_aliases": [],
            "answerable": True,
        },
    ]


def _write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_musique_jsonl_loads(tmp_path):
    documents, questions = load_musique_json(_write_jsonl(tmp_path / "musique_ans_v1.0_dev.jsonl",
                                                          _musique_records()))
    by_id = {d.id: d for d in documents}
    assert len(documents) == 6  # the shared "Green (album)" paragraph is one document
    q1, q2 = questions
    assert (q1.id, q1.hops, q1.type, q1.source) == ("2hop__460946_294723", 2, "bridge", "musique")
    assert q1.answers == ("Miquette Giraudy", "M. Giraudy")
    # reasoning order from the decomposition, not paragraph order
    assert [by_id[i].title for i in q1.supporting_ids] == ["Green (album)", "Miquette Giraudy"]
    assert [by_id[i].title for i in q1.distractor_ids] == ["Grant's First Stand"]
    assert q1.decomposition[1] == SubQuestion("#1 >> spouse", "Miquette Giraudy", q1.supporting_ids[1])
    assert q2.hops == 3 and q2.supporting_ids[0] == q1.supporting_ids[0]
    assert [by_id[i].title for i in q2.distractor_ids] == ["Paris"]
    assert all(i.startswith("musique-") for i in by_id)


def test_musique_json_list_and_ids_are_stable(tmp_path):
    records = _musique_records()
    (tmp_path / "m.json").write_text(json.dumps(records, indent=1))
    docs_all, qs_all = load_musique_json(tmp_path / "m.json")
    docs_one, qs_one = load_musique_json(_write_jsonl(tmp_path / "one.jsonl", records[1:]))
    assert qs_one[0].supporting_ids == qs_all[1].supporting_ids  # ids do not depend on the subset loaded
    (tmp_path / "single.json").write_text(json.dumps(records[0], indent=2))  # one pretty-printed object
    assert load_musique_json(tmp_path / "single.json")[1][0].id == records[0]["id"]


def test_musique_unanswerable_records_load(tmp_path):
    record = _musique_records()[0]
    record.update(id="2hop__x", answerable=False)
    record["paragraphs"] = [dict(p, is_supporting=False) for p in record["paragraphs"] if p["idx"] != 1]
    _, (q,) = load_musique_json(_write_jsonl(tmp_path / "full.jsonl", [record]))
    assert q.answerable is False and q.supporting_ids == () and q.decomposition[1].support_id is None


@pytest.mark.parametrize(("mutate", "pattern"), [
    (lambda r: r.pop("paragraphs"), r"line 2 \(id '3hop1__1_2_3'\), field 'paragraphs': missing"),
    (lambda r: r.pop("answer"), r"field 'answer': missing \(a split without answers"),
    (lambda r: r["paragraphs"][1].update(paragraph_text=None),
     r"field 'paragraphs\[1\]\.paragraph_text': must be a string"),
    (lambda r: r["paragraphs"][1].update(is_supporting="yes"), r"field 'paragraphs\[1\]\.is_supporting'"),
    (lambda r: r["paragraphs"][3].update(idx=0), r"field 'paragraphs\[3\]\.idx': duplicate paragraph idx 0"),
    (lambda r: r["question_decomposition"][2].update(paragraph_support_idx=9),
     r"field 'question_decomposition\[2\]\.paragraph_support_idx': refers to paragraph idx 9"),
    (lambda r: r.update(answer_aliases="England"), r"field 'answer_aliases'"),
    (lambda r: r.update(id="2hop__460946_294723"), r"field 'id': duplicate id"),
])
def test_musique_format_errors_name_file_record_and_field(tmp_path, mutate, pattern):
    records = _musique_records()
    mutate(records[1])
    path = _write_jsonl(tmp_path / "bad_musique.jsonl", records)
    with pytest.raises(SearchDataFormatError, match="bad_musique.jsonl, line 2.*" + pattern.split("line 2", 1)[-1]):
        load_musique_json(path)


def test_musique_broken_json_names_the_line(tmp_path):
    path = tmp_path / "broken.jsonl"
    path.write_text(json.dumps(_musique_records()[0]) + "\n{not json\n")
    with pytest.raises(DatasetFormatError, match=r"broken\.jsonl, line 2: not valid JSON") as info:
        load_musique_json(path)
    assert isinstance(info.value, ValueError) and info.value.record == "line 2"
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(SearchDataFormatError, match=r"record 1: expected a JSON object, got an integer"):
        load_musique_json(tmp_path / "list.json")
    (tmp_path / "empty.json").write_text("")
    with pytest.raises(SearchDataFormatError, match="empty"):
        load_musique_json(tmp_path / "empty.json")
    with pytest.raises(FileNotFoundError, match="nothing is downloaded"):
        load_musique_json(tmp_path / "missing.jsonl")


# ---------------------------------------------------------------------------------------------------------------
# HotpotQA
# ---------------------------------------------------------------------------------------------------------------


def _hotpot_records():
    return [
        {
            "_id": "5a8b57f25542995d1e6f1371",
            "answer": "yes",
            "question": "Were Scott Derrickson and Ed Wood of the same nationality?",
            "supporting_facts": [["Scott Derrickson", 0], ["Ed Wood", 0]],
            "context": [
                ["Ed Wood (film)", ["Ed Wood is a 1994 film.", " It was directed by Tim Burton."]],
                ["Scott Derrickson", ["Scott Derrickson is an American director.", " He lives in Los Angeles."]],
                ["Ed Wood", ["Edward Davis Wood Jr. was an American filmmaker."]],
            ],
            "type": "comparison",
            "level": "hard",
        },
        {
            "_id": "5a8c7595554299585d9e36b6",
            "answer": "Chief of Protocol",
            "question": "What government position was held by the woman who portrayed Corliss Archer?",
            "supporting_facts": [["Kiss and Tell (1945 film)", 0], ["Shirley Temple", 0], ["Shirley Temple", 1]],
            "context": [
                ["Shirley Temple", ["Shirley Temple was an American actress.", " She served as Chief of Protocol."]],
                ["Kiss and Tell (1945 film)", ["Kiss and Tell stars Shirley Temple as Corliss Archer."]],
                ["Ed Wood (film)", ["Ed Wood is a 1994 film.", " It was directed by Tim Burton."]],
            ],
            "type": "bridge",
            "level": "medium",
        },
    ]


def test_hotpotqa_json_loads(tmp_path):
    path = tmp_path / "hotpot_dev_distractor_v1.json"
    path.write_text(json.dumps(_hotpot_records()))
    documents, questions = load_hotpotqa_json(path)
    by_id = {d.id: d for d in documents}
    assert len(documents) == 5  # "Ed Wood (film)" is shared
    q1, q2 = questions
    assert (q1.id, q1.type, q1.hops, q1.answer, q1.source) == ("5a8b57f25542995d1e6f1371", "comparison", 2, "yes",
                                                                "hotpotqa")
    assert [by_id[i].title for i in q1.supporting_ids] == ["Scott Derrickson", "Ed Wood"]
    assert [by_id[i].title for i in q1.distractor_ids] == ["Ed Wood (film)"]
    assert q2.type == "bridge" and q2.hops == 2 and q1.meta["level"] == "hard"
    assert [by_id[i].title for i in q2.supporting_ids] == ["Kiss and Tell (1945 film)", "Shirley Temple"]
    assert q2.distractor_ids == q1.distractor_ids
    assert by_id[q1.supporting_ids[0]].text == "Scott Derrickson is an American director. He lives in Los Angeles."
    assert all(i.startswith("hotpotqa-") for i in by_id)
    # JSONL of the same records is accepted too
    jsonl = _write_jsonl(tmp_path / "h.jsonl", _hotpot_records())
    assert [q.supporting_ids for q in load_hotpotqa_json(jsonl)[1]] == [q1.supporting_ids, q2.supporting_ids]


def test_hotpotqa_missing_support_title(tmp_path):
    records = _hotpot_records()
    records[1]["supporting_facts"].append(["Corliss Archer", 0])
    path = tmp_path / "hotpot_dev_fullwiki_v1.json"
    path.write_text(json.dumps(records))
    with pytest.raises(SearchDataFormatError,
                       match=r"record 2 \(_id '5a8c7595554299585d9e36b6'\), field 'supporting_facts\[3\]': "
                             r"title 'Corliss Archer' is not in the record's context.*missing_support='drop'"):
        load_hotpotqa_json(path)
    _, questions = load_hotpotqa_json(path, missing_support="drop")
    assert questions[1].hops == 2 and questions[1].meta["missing_support"] == ["Corliss Archer"]
    with pytest.raises(ValueError, match="missing_support"):
        load_hotpotqa_json(path, missing_support="ignore")


@pytest.mark.parametrize(("mutate", "pattern"), [
    (lambda r: r.pop("context"), r"field 'context': missing"),
    (lambda r: r.update(context=[["Shirley Temple", "not a list"]]),
     r"field 'context\[0\]': expected \[title, \[sentence"),
    (lambda r: r.update(supporting_facts=[["Shirley Temple"]]), r"field 'supporting_facts\[0\]': expected \[title, "),
    (lambda r: r.update(supporting_facts={"Shirley Temple": 0}), r"field 'supporting_facts': must be a list"),
    (lambda r: r.pop("_id"), r", field '_id': missing"),
    (lambda r: r.update(question=7), r"field 'question': must be a string, got an integer"),
    (lambda r: r.pop("answer"), r"field 'answer': missing \(a split without answers"),
    (lambda r: r.update(_id="5a8b57f25542995d1e6f1371"), r"field '_id': duplicate _id"),
])
def test_hotpotqa_format_errors_name_file_record_and_field(tmp_path, mutate, pattern):
    records = _hotpot_records()
    mutate(records[1])
    path = tmp_path / "bad_hotpot.json"
    path.write_text(json.dumps(records))
    with pytest.raises(SearchDataFormatError, match=r"bad_hotpot\.json, record 2.*" + pattern):
        load_hotpotqa_json(path)


HF_FILE = Path(__file__).parent / "data" / "hotpotqa_hf" / "hotpot_dev_distractor_hf.json"


def _hf_layout(record: dict) -> dict:
    """``record`` as the Hugging Face ``datasets`` export writes it: parallel lists, ``id`` for ``_id``."""
    out = {k: v for k, v in record.items() if k not in ("_id", "context", "supporting_facts")}
    out["id"] = record["_id"]
    out["supporting_facts"] = {"title": [t for t, _ in record["supporting_facts"]],
                               "sent_id": [i for _, i in record["supporting_facts"]]}
    out["context"] = {"title": [t for t, _ in record["context"]], "sentences": [s for _, s in record["context"]]}
    return out


def test_hotpotqa_hugging_face_layout_reads_as_the_published_one(tmp_path):
    published = tmp_path / "hotpot_dev_distractor_v1.json"
    published.write_text(json.dumps(_hotpot_records()))
    hf = tmp_path / "hotpot_hf.json"
    hf.write_text(json.dumps([_hf_layout(r) for r in _hotpot_records()]))
    assert load_hotpotqa_json(hf) == load_hotpotqa_json(published)
    _, questions = load_hotpotqa_json(hf)
    assert questions[0].meta == {"level": "hard"}  # the id field is not kept as meta
    jsonl = _write_jsonl(tmp_path / "hf.jsonl", [_hf_layout(r) for r in _hotpot_records()])
    assert load_hotpotqa_json(jsonl) == load_hotpotqa_json(published)


def test_hotpotqa_hugging_face_file_without_ids():
    """The shipped test file: the Hugging Face layout with the id column dropped (as some exports are)."""
    documents, questions = load_hotpotqa_json(HF_FILE)
    by_id = {d.id: d for d in documents}
    assert len(documents) == 5
    q1, q2 = questions
    assert q1.id.startswith("hotpotqa-q-") and q1.id != q2.id
    assert load_hotpotqa_json(HF_FILE, sample=1, seed=3)[1][0].id in (q1.id, q2.id)  # ids do not depend on the subset
    assert (q1.type, q1.hops, q1.answer, q1.meta) == ("comparison", 2, "no", {"level": "easy"})
    assert [by_id[i].title for i in q2.supporting_ids] == ["Orla Fenwick", "Varrow Coast"]
    assert [by_id[i].title for i in q2.distractor_ids] == ["Marrow Hill"]
    assert by_id[q2.supporting_ids[1]].text == "Varrow Coast is a harbour town. The Ilse flows past it."
    published = load_hotpotqa_json(HF_FILE.parent.parent / "hotpotqa" / "hotpot_dev_distractor_v1.json")
    assert [d.id for d in documents] == [d.id for d in published[0]]
    assert [q.supporting_ids for q in questions] == [q.supporting_ids for q in published[1]]


@pytest.mark.parametrize(("mutate", "pattern"), [
    (lambda r: r["context"].pop("sentences"), r"field 'context\.sentences': missing"),
    (lambda r: r["context"]["sentences"].pop(), r"field 'context\.sentences': has 2 entries for 3 in context\.title"),
    (lambda r: r["context"]["sentences"].__setitem__(1, "not a list"),
     r"field 'context\.sentences\[1\]': expected a title and a list of sentences"),
    (lambda r: r.update(supporting_facts=[["Shirley Temple", 0]]), r"field 'supporting_facts': must be an object"),
    (lambda r: r["supporting_facts"]["sent_id"].append(2),
     r"field 'supporting_facts\.sent_id': has 4 entries for 3 in supporting_facts\.title"),
    (lambda r: r["supporting_facts"]["sent_id"].__setitem__(0, "0"),
     r"field 'supporting_facts\.title/sent_id\[0\]': expected \[title, sentence_index\]"),
    (lambda r: r["supporting_facts"]["title"].__setitem__(0, "Corliss Archer"),
     r"title 'Corliss Archer' is not in the record's context"),
    (lambda r: r.update(id=7), r"field 'id': must be a string, got an integer"),
    (lambda r: r.update(id="5a8b57f25542995d1e6f1371"), r"field 'id': duplicate id"),
])
def test_hotpotqa_hugging_face_layout_errors_name_file_record_and_field(tmp_path, mutate, pattern):
    records = [_hf_layout(r) for r in _hotpot_records()]
    mutate(records[1])
    path = tmp_path / "bad_hotpot_hf.json"
    path.write_text(json.dumps(records))
    with pytest.raises(SearchDataFormatError, match=r"bad_hotpot_hf\.json, record 2.*" + pattern):
        load_hotpotqa_json(path)


def test_hotpotqa_hugging_face_layout_same_question_twice_without_ids(tmp_path):
    records = [_hf_layout(r) for r in _hotpot_records()]
    for r in records:
        del r["id"]
    records[1]["question"] = records[0]["question"]
    path = tmp_path / "twice.json"
    path.write_text(json.dumps(records))
    with pytest.raises(SearchDataFormatError, match=r"record 2, field 'question': duplicate question"):
        load_hotpotqa_json(path)


def test_hotpotqa_truncated_file(tmp_path):
    path = tmp_path / "cut.json"
    path.write_text(json.dumps(_hotpot_records())[:-40])
    with pytest.raises(SearchDataFormatError, match=r"cut\.json ends in the middle of a record at line 1 \(the file "
                       r"looks truncated: download it again\)") as info:
        load_hotpotqa_json(path)
    assert info.value.truncated and info.value.record == "line 1"
