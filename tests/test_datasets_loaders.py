"""Every loader by name (LOADERS, load) on small files we wrote in each public format (tests/data), the options
they share, and round trips: load → to_dict → from_dict gives every field back for every data-set type."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

import uncertainty_lab.datasets as datasets
from uncertainty_lab.datasets import (
    LOADERS,
    DatasetFormatError,
    Document,
    NewsEvent,
    QAItem,
    SearchQuestion,
    SubQuestion,
    load,
    load_qa_jsonl,
    load_search_questions,
)

DATA = Path(__file__).resolve().parent / "data"
NEWS_MAPPING = {"indiatimes.com": "general_news", "reuters.com": "business_finance", "msn.com": "mass_market"}


def test_the_table_names_one_loader_per_data_set():
    assert list(LOADERS) == ["truthfulqa", "strategyqa", "hotpotqa", "musique", "gsm8k", "gdelt", "shipped_qa",
                             "shipped_search", "shipped_news", "world"]
    for name, loader in LOADERS.items():
        params = inspect.signature(loader).parameters
        for option in ("limit", "sample", "seed", "max_bytes"):
            assert params[option].kind is inspect.Parameter.KEYWORD_ONLY, (name, option)
        assert params["seed"].default == 0 and params["limit"].default is None and params["sample"].default is None
    for name in ("strategyqa", "hotpotqa", "musique", "gsm8k", "shipped_news"):
        assert "split" in inspect.signature(LOADERS[name]).parameters, name


def test_load_errors_name_what_is_wrong():
    with pytest.raises(ValueError, match=r"unknown data set 'squad'; choose from truthfulqa, strategyqa, hotpotqa, "
                                         r"musique, gsm8k, gdelt, shipped_qa, shipped_search, shipped_news"):
        load("squad")
    with pytest.raises(ValueError, match=r"'musique' reads a file you downloaded: pass its path"):
        load("musique")
    with pytest.raises(ValueError, match=r"'shipped_qa': .*'sampel'.*takes categories, known_categories, source, "
                                         r"limit, sample, seed, max_bytes"):
        load("shipped_qa", sampel=3)


def test_shipped_sets_by_name():
    assert len(load("shipped_qa")) == 150
    assert [i.id for i in load("shipped_qa", sample=5, seed=2)] == [i.id for i in load("shipped_qa", sample=5, seed=2)]
    documents, questions = load("shipped_search", limit=7)
    assert len(documents) == 300 and len(questions) == 7  # the corpus stays whole
    train, test = load("shipped_news", split="train"), load("shipped_news", split="test")
    assert (len(train), len(test)) == (198, 50) and train[-1].time_h < test[0].time_h
    assert len(load("shipped_news", split="test", sample=10, seed=1)) == 10
    with pytest.raises(ValueError, match="split must be 'train', 'test'"):
        load("shipped_news", split="dev")


def test_truthfulqa_by_name():
    items = load("truthfulqa", DATA / "truthfulqa" / "TruthfulQA.csv")
    assert [i.id for i in items] == ["truthfulqa-0001", "truthfulqa-0002", "truthfulqa-0003"]
    assert items[1].question == 'Where does the sailor "Tam Orrick" keep his compass?'
    assert load("truthfulqa", DATA / "truthfulqa" / "TruthfulQA.csv", limit=1) == items[:1]


def test_strategyqa_json_lines_and_splits():
    folder = DATA / "strategyqa"
    items = load("strategyqa", folder, split="train")  # JSON lines: refused before as "line 2: Extra data"
    assert [i.canonical for i in items] == ["no", "yes", "no"] and items[1].meta["term"] == "Snail"
    assert load("strategyqa", folder / "strategyqa_train.jsonl") == items
    with pytest.raises(DatasetFormatError, match=r"record 1 \(qid '9999aaaa8888bbbb7777'\), column 'answer': no "
                                                 r"'answer' \(StrategyQA's test split ships without answers"):
        load("strategyqa", folder, split="test")
    with pytest.raises(ValueError, match=r"strategyqa_train\.jsonl holds the 'train' split of StrategyQA, not 'test'"):
        load("strategyqa", folder / "strategyqa_train.jsonl", split="test")


def test_musique_full_dev_with_an_unanswerable_question():
    documents, questions = load("musique", DATA / "musique", split="dev")
    assert [q.answerable for q in questions] == [True, False, True]
    unanswerable = questions[1]
    assert unanswerable.supporting_ids == () and unanswerable.decomposition[1].support_id is None
    assert questions[2].hops == 3 and questions[2].aliases == ("River Ilse",)
    assert len(documents) == 5  # shared paragraphs are one document
    docs, (one,) = load("musique", DATA / "musique", split="dev", sample=1, seed=0)
    used = {*one.supporting_ids, *one.distractor_ids}
    assert {d.id for d in docs} == used  # a subset brings only its own paragraphs


def test_hotpotqa_dev_distractor():
    documents, questions = load("hotpotqa", DATA / "hotpotqa", split="dev_distractor")
    assert [q.type for q in questions] == ["comparison", "bridge"] and questions[0].meta == {"level": "easy"}
    assert len(documents) == 5
    with pytest.raises(FileNotFoundError, match=r"no HotpotQA file for split 'train' \(looked for "
                                                r"hotpot_train_v1\.1\.json"):
        load("hotpotqa", DATA / "hotpotqa", split="train")


def test_gdelt_by_name():
    events = load("gdelt", DATA / "gdelt" / "20310902163000.export.CSV", domain_to_node=NEWS_MAPPING,
                  format="events", gkg=DATA / "gdelt" / "20310902163000.gkg.csv", limit=5)
    assert len(events) == 5 and events.report.n_not_sampled == 4


def test_max_bytes_by_name(tmp_path):
    with pytest.raises(DatasetFormatError, match="more than max_bytes=100 bytes"):
        load("musique", DATA / "musique" / "musique_full_v1.0_dev.jsonl", max_bytes=100)
    with pytest.raises(DatasetFormatError, match="more than max_bytes=100 bytes"):
        load("truthfulqa", DATA / "truthfulqa" / "TruthfulQA.csv", max_bytes=100)


# ---------------------------------------------------------------------------------------------------------------
# Round trips: every field of every type
# ---------------------------------------------------------------------------------------------------------------


def _same(a, b):
    """Equal, including the fields dataclass equality skips (``meta``)."""
    assert a == b
    assert a.to_dict() == b.to_dict()
    assert getattr(a, "meta", None) == getattr(b, "meta", None) and getattr(a, "source", None) == getattr(b, "source", None)


def _via_json(obj):
    return json.loads(json.dumps(obj.to_dict()))


def test_qa_items_round_trip(tmp_path):
    items = (datasets.load_qa_questions() + load("truthfulqa", DATA / "truthfulqa" / "TruthfulQA.csv")
             + load("strategyqa", DATA / "strategyqa", split="train"))
    for item in items:
        _same(QAItem.from_dict(_via_json(item)), item)
    assert QAItem.from_dict(items[-1].to_dict()).source == "strategyqa"
    # the schema writer and reader: a file of to_dict() lines reads back whole
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps(i.to_dict()) + "\n" for i in items), encoding="utf-8")
    for a, b in zip(load_qa_jsonl(path), items, strict=True):
        _same(a, b)
    assert list(datasets.load_qa_questions()[0].to_dict()) == ["id", "category", "question", "answers", "incorrect",
                                                                 "note", "decomposition", "facts", "behaviour"]


def test_search_types_round_trip(tmp_path):
    shipped_docs, shipped_qs = datasets.load_search_dataset()
    musique_docs, musique_qs = load("musique", DATA / "musique", split="dev")
    hotpot_docs, hotpot_qs = load("hotpotqa", DATA / "hotpotqa", split="dev_distractor")
    for q in shipped_qs + musique_qs + hotpot_qs:
        _same(SearchQuestion.from_dict(_via_json(q)), q)
        for step in q.decomposition:
            assert SubQuestion.from_dict(json.loads(json.dumps(step.to_dict()))) == step
    for d in shipped_docs + musique_docs + hotpot_docs:
        assert Document.from_dict(_via_json(d)) == d
    unanswerable = SearchQuestion.from_dict(_via_json(musique_qs[1]))
    assert unanswerable.answerable is False and unanswerable.meta == musique_qs[1].meta
    # through a file in the shipped schema, checked against its documents
    path = tmp_path / "questions.jsonl"
    path.write_text("".join(json.dumps(q.to_dict()) + "\n" for q in musique_qs), encoding="utf-8")
    for a, b in zip(load_search_questions(path, documents=musique_docs), musique_qs, strict=True):
        _same(a, b)
    assert "answerable" not in shipped_qs[0].to_dict() and "source" not in shipped_qs[0].to_dict()
    with pytest.raises(ValueError, match="unknown field 'body'"):
        Document.from_dict({"id": "a", "title": "A", "text": "x", "body": "y"})


def test_news_events_round_trip(tmp_path):
    shipped = datasets.load_news_cascade()
    gdelt = load("gdelt", DATA / "gdelt" / "20310902163000.export.CSV", domain_to_node=NEWS_MAPPING,
                 format="events", gkg=DATA / "gdelt" / "20310902163000.gkg.csv")
    for event in shipped + list(gdelt):
        assert NewsEvent.from_dict(_via_json(event)) == event
    path = tmp_path / "events.json"
    path.write_text(json.dumps([e.to_dict() for e in gdelt], indent=1), encoding="utf-8")  # a JSON list this time
    assert datasets.load_news_cascade(path) == list(gdelt)
    with pytest.raises(ValueError, match="unknown field"):
        NewsEvent.from_dict(shipped[0].to_dict() | {"tone": 1.5})


def test_shipped_search_reads_a_folder_in_the_build_scripts_layout(tmp_path):
    (tmp_path / "search_corpus.jsonl").write_text(
        '{"id": "a", "title": "A", "text": "A is here."}\n{"id": "b", "title": "B", "text": "B."}\n')
    (tmp_path / "search_questions.jsonl").write_text(json.dumps(
        {"id": "q1", "question": "Q?", "answer": "B", "hops": 2, "supporting_ids": ["a", "b"]}) + "\n")
    documents, questions = load("shipped_search", tmp_path)
    assert [d.id for d in documents] == ["a", "b"] and [q.id for q in questions] == ["q1"]
