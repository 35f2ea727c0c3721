"""The search lab's ``data`` setting: the shipped corpus by default (the same corpus and questions as before, so
recorded episodes replay), MuSiQue and HotpotQA files with each question searching its own paragraphs, a seeded
sample and an explicit split; MuSiQue-Full's unanswerable questions kept and scored (an abstention is right
there); the old ``corpus_path`` / ``questions_path`` as deprecated aliases; ``search run`` with a data table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from uncertainty_lab.cli import main
from uncertainty_lab.datasets.search import load_search_corpus, load_search_questions, search_corpus_resource
from uncertainty_lab.llm import Completion
from uncertainty_lab.search import SearchEnvironment, run_episode
from uncertainty_lab.search.config import SearchConfig, load_data, question_documents
from uncertainty_lab.search.experiment import EXPERIMENT, run_experiment
from uncertainty_lab.search.oracle import OracleReader
from uncertainty_lab.search.prompts import answer_messages

DATA = Path(__file__).resolve().parent / "data"
MUSIQUE = {"loader": "musique", "path": str(DATA / "musique"), "split": "dev"}
HOTPOTQA = {"loader": "hotpotqa", "path": str(DATA / "hotpotqa" / "hotpot_dev_distractor_v1.json")}
FAST = {"llm": "oracle", "progress": False, "figure": False}
UNANSWERABLE = "2hop__101_102_unans"


def test_the_default_is_the_shipped_corpus_and_questions_as_before():
    config = SearchConfig()
    assert config.data == {"loader": "shipped_search"} and config.corpus == "auto"
    documents, questions = load_data(config)
    assert documents == load_search_corpus() and questions == load_search_questions()
    context = EXPERIMENT.prepare(config)
    assert context.corpora == {}  # one shared corpus: the environment every recorded episode was run in
    assert context.environment("q001").config() == SearchEnvironment().config()


def test_musique_questions_search_their_own_paragraphs():
    context = EXPERIMENT.prepare(SearchConfig(data=MUSIQUE, **FAST))
    assert [q.id for q in context.questions] == ["2hop__101_102", UNANSWERABLE, "3hop1__201_202_203"]
    assert len(context.env.documents) == 5  # every distinct paragraph, shared ones once
    for q in context.questions:
        own = context.environment(q.id)
        assert set(own.ids) == {*q.supporting_ids, *q.distractor_ids} and own.ids == sorted(own.ids)
    answerable, unanswerable = context.questions[0], context.questions[1]
    assert not unanswerable.answerable and unanswerable.supporting_ids == ()
    # the paragraph the unanswerable twin lacks is not in what it searches
    missing = set(answerable.supporting_ids) - set(context.environment(UNANSWERABLE).ids)
    assert len(missing) == 1 and missing <= set(context.env.ids)


def test_a_seeded_sample_and_a_limit_choose_the_questions():
    pick = {**MUSIQUE, "sample": 2, "seed": 0}
    first = [q.id for q in load_data(SearchConfig(data=pick))[1]]
    assert len(first) == 2 and first == [q.id for q in load_data(SearchConfig(data=pick))[1]]
    assert [q.id for q in load_data(SearchConfig(data={**MUSIQUE, "limit": 1}))[1]] == ["2hop__101_102"]
    with pytest.raises(ValueError, match="no MuSiQue file for split 'train'"):
        load_data(SearchConfig(data={**MUSIQUE, "split": "train"}))


def test_unanswerable_questions_are_kept_and_an_abstention_is_right_there(tmp_path):
    result = run_experiment({**FAST, "data": MUSIQUE, "out_dir": str(tmp_path / "m")})
    assert result.unanswerable() == [UNANSWERABLE]
    for condition in result.conditions:
        scores = {s.question_id: s for s in result.scores(condition)}
        assert scores[UNANSWERABLE].answer == "unknown" and scores[UNANSWERABLE].exact_match == 1.0
        assert scores[UNANSWERABLE].f1 == 1.0 and not scores[UNANSWERABLE].valid
        assert scores["3hop1__201_202_203"].exact_match == 1.0 and scores["3hop1__201_202_203"].answer == "Ilse"
    report = result.report()
    assert "Data: musique: " in report and "each question searches its own paragraphs" in report
    assert "1 of the 3 questions are **unanswerable**" in report and "an abstention" in report
    saved = json.loads((tmp_path / "m" / "results.json").read_text(encoding="utf-8"))
    assert saved["unanswerable"] == [UNANSWERABLE] and saved["config"]["data"]["loader"] == "musique"


class Says:
    """A model that answers every prompt with ``text``."""

    name, label, supports_logprobs = "says", "says:1", False

    def __init__(self, text):
        self.text = text

    def model_id(self):
        return "says-1"

    def complete(self, messages, *, n=1, seed=0, **kw):
        return [Completion(self.text, "stop", "says", "says-1", seed, i) for i in range(n)]


@pytest.mark.parametrize(("reply", "right"), [("Varrow Coast", 0.0), ("I don't know", 1.0), ("unknown", 1.0),
                                              ("", 0.0)])
def test_an_unanswerable_question_is_right_only_when_the_answer_abstains(reply, right):
    documents, questions = load_data(SearchConfig(data=MUSIQUE))
    q = next(q for q in questions if q.id == UNANSWERABLE)
    env = SearchEnvironment(question_documents(q, documents))
    score = run_episode(q, env, llm=Says(reply), policy="heuristic", belief="implicit", gates=["fixed_budget"],
                        max_steps=2, seed=0).score()
    assert score.exact_match == right and score.f1 == right


def test_the_oracle_tells_twins_apart_by_their_evidence():
    _, questions = load_data(SearchConfig(data=MUSIQUE))
    oracle = OracleReader(questions)
    answerable = questions[0]
    text = answerable.question
    cited = "\n".join(f"[{i}] passage" for i in answerable.supporting_ids)
    assert oracle.question(text) is answerable
    assert oracle.complete(answer_messages(text, cited))[0].text == "Varrow Coast"
    assert oracle.complete(answer_messages(text, "[musique-000000000000] other"))[0].text == "unknown"


def test_hotpotqa_and_a_shared_corpus(tmp_path):
    result = run_experiment({**FAST, "data": HOTPOTQA, "corpus": "shared", "out_dir": str(tmp_path / "h")})
    assert [s.exact_match for s in result.scores(result.conditions[0])] == [1.0, 1.0]
    assert "every question searches the one corpus of all loaded documents" in result.report()
    assert result.unanswerable() == []
    with pytest.raises(ValueError, match="corpus must be one of 'auto', 'own', 'shared'"):
        SearchConfig(corpus="pooled")


def test_the_old_corpus_and_questions_paths_still_work_with_a_future_warning():
    corpus = str(search_corpus_resource())
    questions = corpus.replace("search_corpus.jsonl", "search_questions.jsonl")
    with pytest.warns(FutureWarning, match=r"'corpus_path' is deprecated.*data = \{loader = 'shipped_search', "
                                           r"path = .*questions_path = "):
        old = SearchConfig(corpus_path=corpus, questions_path=questions)
    assert old.data == {"loader": "shipped_search", "path": corpus, "questions_path": questions}
    assert old.corpus_path is None and old.questions_path is None
    assert load_data(old) == load_data(SearchConfig())
    with pytest.raises(ValueError, match="give corpus_path and questions_path together"):
        SearchConfig(corpus_path=corpus)
    with pytest.raises(ValueError, match="give only data"):
        SearchConfig(corpus_path=corpus, questions_path=questions, data=MUSIQUE)


@pytest.mark.parametrize(("data", "match"), [
    ({"loader": "truthfulqa", "path": "TruthfulQA.csv"}, r"data.loader must be one of 'shipped_search', 'musique', "
                                                         r"'hotpotqa', 'world' \('truthfulqa' gives another kind of "
                                                         r"data\)"),
    ({"loader": "hotpotqa"}, "loader 'hotpotqa' reads a file you downloaded; give its path"),
    ({"loader": "musique", "path": "m.jsonl", "sample": 2, "seed": -1}, "data.seed must be a non-negative integer"),
    ({"loader": "hotpotqa", "path": "h.json", "split": "dev"}, None),  # a bad split is found when the file is read
    ("nope", "data.loader must be one of"),
])
def test_a_bad_data_setting_is_an_error_naming_it(data, match):
    if match is None:
        with pytest.raises(ValueError, match=r"data = hotpotqa: h\.json \(split 'dev'\): split must be one of"):
            load_data(SearchConfig(data=data))
        return
    with pytest.raises(ValueError, match=match):
        SearchConfig(data=data)


def test_search_run_takes_a_data_table(tmp_path, capsys):
    cfg = tmp_path / "musique.toml"
    out = tmp_path / "out"
    cfg.write_text(f'llm = "oracle"\nbeliefs = ["implicit"]\ngate_sets = [["fixed_budget"]]\nout_dir = "{out}"\n'
                   f'data = {{loader = "musique", path = "{DATA / "musique"}", split = "dev", sample = 2, seed = 0}}\n',
                   encoding="utf-8")
    assert main(["search", "run", "--config", str(cfg), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "2 questions × 1 conditions" in printed and "Data: musique: " in printed and "sample 2 (seed 0)" in printed
    assert len(list((out / "episodes").rglob("*.jsonl"))) == 2
