"""Graders as a plugin kind (semantic/grades.py, graders.py, llm_judge.py; the registry's ``graders`` group): the
built-ins by name and by table, a researcher's grader by name in a lab config and in the audit, the LLM judge's
prompt, verdict parsing and caching, and ``uncertain`` counted wherever labels are counted. No model runs here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import pytest
from fakes import ByQuestion, CannedLLM, EchoLLM

from uncertainty_lab import registry
from uncertainty_lab.datasets.audit import load_grader_audit
from uncertainty_lab.llm import CompletionCache
from uncertainty_lab.orchestration import QAGrader, run_experiment
from uncertainty_lab.semantic.correctness import (
    METHODS,
    AnswerGrader,
    Correctness,
    check_answer,
    correctness_labels,
    label_counts,
)
from uncertainty_lab.semantic.graders import StrictGrader, from_decision
from uncertainty_lab.semantic.grades import Grader
from uncertainty_lab.semantic.grading_audit import agreement, audit_graders, disagreements
from uncertainty_lab.semantic.grading_rules import Decision
from uncertainty_lab.semantic.llm_judge import JUDGE_SYSTEM, LLMJudgeGrader, parse_verdict

CANBERRA = ("What is the capital of Australia?", ["Canberra"], ["Sydney", "Melbourne"])


@dataclass
class WordGrader(Grader):
    """A researcher's grader: correct when the answer holds ``word``, uncertain when it holds ``unsure``."""

    name: ClassVar[str] = "word"
    summary: ClassVar[str] = "holds a word"
    word: str = field(default="canberra", metadata={"help": "the word that makes an answer correct"})
    unsure: str = field(default="maybe", metadata={"help": "the word that makes the grader unsure"})

    def decide(self, answer, norm, correct, incorrect, question):
        if self.unsure in norm.split():
            return Correctness(None, self.name, f"{self.unsure!r} in the answer", uncertain=True)
        return Correctness(self.word in norm.split(), self.name, f"looked for {self.word!r}")


@pytest.fixture
def word_grader():
    registry.register("graders", "word")(WordGrader)
    yield WordGrader
    registry.unregister("graders", "word")


def test_the_graders_kind_is_discovered_with_every_builtin():
    assert "graders" in registry.KINDS and registry.group("graders") == "uncertainty_lab.graders"
    assert registry.PROTOCOLS["graders"] == ("grade",)
    assert set(METHODS) <= set(registry.names("graders"))
    info = {i.name: i for i in registry.describe("graders") if i.distribution == "uncertainty-lab"}
    assert set(info) == set(METHODS) and all(i.status == "ok" and i.summary for i in info.values())
    strict = {p.name: p for p in info["strict"].parameters}
    assert (strict["overlap"].min, strict["overlap"].max, strict["paraphrase"].choices) == (0.0, 1.0,
                                                                                           ("tokens", "embedding"))
    assert "embedder" not in strict  # hidden: an object, not a widget
    assert [p.name for p in info["llm"].parameters] == ["llm", "seed", "max_tokens", "prompt"]


def test_builtins_resolve_by_name_table_and_instance_and_keep_their_meaning():
    q, gold, wrong = CANBERRA
    strict = registry.resolve("graders", "strict")
    assert isinstance(strict, StrictGrader) and strict.grade("Sydney", gold, wrong, q).label == "wrong"
    assert strict.grade("It is Canberra.", gold, wrong, q).correct is True
    assert registry.resolve("graders", {"name": "strict", "paraphrase": "embedding"}).label == "strict+embedding"
    assert registry.resolve("graders", ("embedding", {"threshold": 0.6})).threshold == 0.6
    assert registry.resolve("graders", strict) is strict
    for method in ("strict", "contains", "normalised"):  # the old entry points give the plugin's answers
        assert check_answer("Canberra, not Sydney", gold, method, incorrect=wrong) == \
            registry.resolve("graders", method).grade("Canberra, not Sydney", gold, wrong)
    assert QAGrader().name == "strict" and QAGrader("contains").name == QAGrader(method="contains").name == "contains"
    assert QAGrader().config() == {"method": "strict", "options": {}, "decline": "refusal markers on the whole "
                                                                                 "completion"}  # as journals hold it
    judge = QAGrader("llm").grader  # by name, the judge's own default backend (made on first use, not now)
    assert isinstance(judge, LLMJudgeGrader) and judge.llm == "embedded" and judge._backend is None
    with pytest.raises(registry.ParameterError, match=r"'overlap' must be <= 1.0"):
        registry.resolve("graders", {"name": "strict", "overlap": 2.0})


def test_an_unknown_grader_lists_the_alternatives():
    with pytest.raises(registry.UnknownPluginError, match=r"available: contains, embedding, hassum, llm, normalised, "
                                                          r"strict.*closest match: 'strict'"):
        registry.resolve("graders", "strikt")
    with pytest.raises(registry.UnknownPluginError, match=r"grading: no graders plugin named 'strikt'"):
        QAGrader({"name": "strikt"})
    with pytest.raises(registry.UnknownPluginError, match=r"grading: no graders plugin named 'strikt'.*'strict'"):
        QAGrader("strikt")
    with pytest.raises(ValueError, match=r"did you mean 'strict'"):
        QAGrader("strikt", {"threshold": 0.5})  # the older form, through AnswerGrader
    with pytest.raises(ValueError, match=r"unknown grader 'strikt'.*audit's own rows"):
        audit_graders(["strikt"], load_grader_audit(limit=2))


def test_a_researchers_grader_works_by_name_in_the_audit_and_in_answer_grader(word_grader):
    items = load_grader_audit(split="holdout", limit=20)
    (row,) = audit_graders(["word"], items)
    labels = [WordGrader().grade(it.answer, it.references).label for it in items]
    assert row == agreement([it.label for it in items], labels, name="word")
    (table_row,) = audit_graders({"mine": {"name": "word", "word": "no"}}, items)
    assert table_row.name == "mine" and table_row.accuracy != row.accuracy
    assert len(disagreements("word", items)) == sum(a != it.label for a, it in zip(labels, items, strict=True))
    assert AnswerGrader("word").check("Canberra", ["Canberra"]).method == "word"


def test_a_researchers_grader_by_name_in_an_orchestration_config_and_uncertain_is_counted(word_grader, tmp_path):
    llm = ByQuestion(script={"What is the capital city of Australia": ["Canberra"], "": ["maybe Paris"]})
    result = run_experiment({"ids": ["factual-001", "factual-002", "factual-003"], "llm": llm,
                             "policies": ["none", "both"], "metrics": {"entropy": "discrete_semantic_entropy",
                                                                     "density": "num_semantic_sets"},
                             "judge": "exact", "n_samples": 3, "max_tokens": 8, "progress": False, "figure": False,
                             "out_dir": str(tmp_path), "grading": "word"})
    run = result.runs[(result.models[0], "none")]
    canberra = [r.item["question"].startswith("What is the capital city of Australia") for r in run.records]
    assert run.labels == ["correct" if c else "uncertain" for c in canberra] and any(canberra) and not all(canberra)
    assert run.label_counts()["uncertain"] == canberra.count(False)
    row = result.summary_rows()[0]
    assert (row["uncertain"], row["correct"], row["accuracy"]) == (canberra.count(False), canberra.count(True), 1.0)
    assert f"{canberra.count(False)} uncertain" in result.summary_table()
    assert result.report().splitlines()[2].startswith("Grading: **word** — holds a word")
    assert {r["missing"] for r in result.auroc_rows()} >= {canberra.count(False)}
    ((_, pc),) = result.paired()  # McNemar over the questions decided in both runs
    assert pc.n == canberra.count(True)
    # the accuracy, AUROC and paired rows above use the decided questions only; `correct` (figures, case views) reads
    # an uncertain grade as "not counted correct", never as right
    assert list(run.correct) == canberra
    table = QAGrader.from_setting({"name": "word", "word": "paris"})  # a table, as a config's grading holds it
    assert [table(r.item, "Paris")["label"] for r in run.records] == ["correct"] * len(run)
    assert table.config()["method"] == "word" and table.config()["options"]["word"] == "paris"


def test_the_judge_prompt_shows_question_references_and_answer():
    q, gold, wrong = CANBERRA
    stub = CannedLLM(lambda prompt: "CORRECT")
    judge = LLMJudgeGrader(llm=stub)
    c = judge.grade("The capital is Canberra", gold, wrong, q)
    assert (c.correct, c.label, c.raw, c.method) == (True, "correct", "CORRECT", "llm")
    (prompt,) = stub.prompts
    for text in (q, "Canberra", "Sydney", "Melbourne", "The capital is Canberra", "CORRECT, WRONG or UNSURE"):
        assert text in prompt
    assert prompt.index("Canberra") < prompt.index("Sydney")  # correct references first, then the incorrect ones
    messages = judge.messages("x", ["a"], [], None)
    assert messages[0] == {"role": "system", "content": JUDGE_SYSTEM} and "(none given)" in messages[1]["content"]
    with pytest.raises(ValueError, match=r"prompt must contain \{answer\}"):
        LLMJudgeGrader(llm=stub, prompt="{correct}")


@pytest.mark.parametrize("reply, label, parsed", [
    ("CORRECT", "correct", True), ("Wrong.", "wrong", True), ("UNSURE", "uncertain", True),
    ("Verdict: INCORRECT", "wrong", True), ("WRONG. The correct answer is Canberra.", "wrong", True),
    ("The proposed answer is correct.", "correct", True), ("The answer is not correct", "wrong", True),
    ("It isn't wrong", "correct", True), ("I'm not sure.", "uncertain", True), ("yes", "correct", True), ("No.", "wrong", True),
    ("No, cats do not react to hats.", "uncertain", False),
    ("CORRECT, WRONG or UNSURE", "uncertain", False), ("Correct or wrong or unsure.", "uncertain", False),
    ("CORRECT, WRONG or UNSU", "uncertain", False), ("Verdict: wrong/correct", "uncertain", False),
    ("WRONG. It is not correct, I am sure.", "wrong", True),     ("It is correct, or wrong.", "uncertain", False), ("The answer to this question is", "uncertain", False),
    ("", "uncertain", False),
])
def test_verdicts_are_parsed_leniently_and_garbage_is_uncertain(reply, label, parsed):
    assert parse_verdict(reply) == (label, parsed)
    c = LLMJudgeGrader(llm=CannedLLM(lambda prompt: reply)).grade("Canberra", ["Canberra"])
    assert c.label == label and c.raw == reply and ("unparsed" in c.evidence) is (not parsed)


@dataclass
class CountingJudge(EchoLLM):
    """A cached backend whose every generation says WRONG, counted."""

    asked: list = field(default_factory=list)

    def _generate(self, messages, **kwargs):
        self.asked.append(messages[-1]["content"])
        return {"text": "WRONG", "finish_reason": "stop"}


def test_the_judge_goes_through_the_completion_cache(tmp_path):
    q, gold, wrong = CANBERRA
    backend = CountingJudge(cache=CompletionCache(tmp_path / "judge.sqlite"))
    first = LLMJudgeGrader(llm=backend, seed=3).grade("Sydney", gold, wrong, q)
    again = LLMJudgeGrader(llm=backend, seed=3).grade("Sydney", gold, wrong, q)
    assert first == again and first.label == "wrong" and first.raw == "WRONG" and len(backend.asked) == 1
    LLMJudgeGrader(llm=backend, seed=4).grade("Sydney", gold, wrong, q)  # the seed is part of the key
    assert len(backend.asked) == 2
    replayed = CountingJudge(cache=CompletionCache(tmp_path / "judge.sqlite"))  # a later session, the same file
    assert LLMJudgeGrader(llm=replayed, seed=3).grade("Sydney", gold, wrong, q) == first and not replayed.asked


def test_uncertain_is_its_own_label_in_every_count():
    unsure = Correctness(None, "llm", "judge unsure", raw="UNSURE", uncertain=True)
    results = [Correctness(True, "x", ""), unsure, Correctness(False, "x", "", refused=True), Correctness(False, "x", "")]
    assert unsure.label == "uncertain" and not unsure.judged
    assert label_counts(results) == {"correct": 1, "wrong": 1, "refused": 1, "uncertain": 1}
    assert label_counts(["correct", None]) == {"correct": 1, "wrong": 0, "refused": 0, "uncertain": 0, "unjudged": 1}
    with pytest.raises(ValueError, match=r"1 of 4 answers are unjudged \(labels: .*'uncertain': 1"):
        correctness_labels(results)
    with pytest.raises(ValueError, match="uncertain grading has correct=None"):
        Correctness(True, "x", "", uncertain=True)
    a = agreement(["correct", "wrong", "refused"], ["correct", "uncertain", "refused"])
    assert a.uncertain == 1 and a.row()["uncertain"] == 1 and a.accuracy == pytest.approx(2 / 3)
    # the rules' decisions: an "uncertain" decision (the grader-rules branch adds them) maps to an uncertain grading
    assert from_decision(Decision("uncertain", "cannot tell"), "strict").label == "uncertain"
    assert from_decision(Decision("refused", "a refusal"), "strict") == Correctness(False, "strict", "a refusal",
                                                                                   refused=True)
    assert AnswerGrader("strict")._careful(Decision("uncertain", "?")).uncertain
    grade = QAGrader(WordGrader())({"answers": ["Canberra"], "question": "?"}, "maybe")
    assert grade["label"] == "uncertain" and grade["correct"] is None
    from types import SimpleNamespace

    from uncertainty_lab.widgets.semantic_analysis import CalibrationRun

    run = CalibrationRun([SimpleNamespace(id="q1"), SimpleNamespace(id="q2")], [], [results[0], unsure], [], [])
    with pytest.raises(ValueError, match=r"1 of 2 answers were graded uncertain \(e.g. question 'q2'"):
        run.correct  # noqa: B018  (never read as wrong)


def test_graders_get_a_picker_from_their_declared_parameters():
    from uncertainty_lab.widgets.picker import PluginPicker

    picker = PluginPicker("graders", value="strict")
    assert set(picker.controls) == {"overlap", "paraphrase", "floor"}
    assert {"strict", "llm", "contains"} <= set(picker.dropdown.options)
    params: dict[str, Any] = picker.params
    assert params == {"overlap": 0.5, "paraphrase": "tokens", "floor": 0.65}
    assert registry.resolve("graders", {"name": picker.name, **params}).label == "strict"
