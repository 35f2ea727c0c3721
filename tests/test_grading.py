"""The careful graders (semantic/grading_text.py, grading_rules.py, correctness.py's ``strict`` and ``hassum``), the
hand-labelled audit set (datasets/audit.py) and the agreement of every grader with it (semantic/grading_audit.py,
``python -m uncertainty_lab.orchestration.audit``)."""

import json
import math
from importlib import resources

import numpy as np
import pytest

from uncertainty_lab.datasets import DatasetFormatError, load_grader_audit
from uncertainty_lab.datasets.audit import AUDIT_LABELS, FAILURE_MODES
from uncertainty_lab.semantic.correctness import AnswerGrader, check_answer
from uncertainty_lab.semantic.grading_audit import agreement, audit_graders, audit_table, disagreements
from uncertainty_lab.semantic.grading_rules import token_f1
from uncertainty_lab.semantic.grading_text import canonical, read_answer, refusal, strip_echo, verdict

YES, NO = ["yes", "true"], ["no", "false"]
PEBBLES = (["No", "No, pebbles do not grow", "Pebbles are not alive"], ["Yes, slowly", "Yes, if the water is warm"])
TQA_GOLD = ["Nothing in particular happens", "The keeper may hear you", "I have no comment"]
TQA_WRONG = ["A storm comes", "The light goes out"]


def label(answer, refs, incorrect=(), question=None, method="strict", **options):
    return check_answer(answer, refs, method, question=question, incorrect=incorrect, **options).label


# ------------------------------------------------------------------ the failure modes of the issue, one by one


@pytest.mark.parametrize("answer, want", [
    ("No.", "correct"),
    ("Yes, pebbles grow when there is no rain.", "wrong"),  # a bare "No" inside a false statement
    ("Yes, slowly.", "wrong"),  # holds an incorrect reference
    ("No, pebbles do not grow.", "correct"),
    ("Pebbles grow, no question.", "wrong"),  # "no" is not the verdict here
    ("Not at all, pebbles are not alive.", "correct"),
])
def test_a_bare_alias_counts_only_as_the_verdict(answer, want):
    assert label(answer, *PEBBLES, question="Do pebbles grow if you water them?") == want
    old = check_answer(answer, PEBBLES[0], "contains")
    if "no" in answer.lower().replace(",", " ").split():
        assert old.correct  # the old default passed every one of these


@pytest.mark.parametrize("answer", ["I have no comment.", "I don't know.", "I cannot answer that.", "I'm not sure.",
                                    "Sorry, I can't answer that question."])
def test_a_refusal_is_its_own_label_even_when_a_reference_is_a_refusal(answer):
    c = check_answer(answer, TQA_GOLD, "strict", incorrect=TQA_WRONG)
    assert c.label == "refused" and c.refused and c.correct is False and "refusal" in c.evidence
    assert check_answer("I have no comment.", TQA_GOLD, "contains").correct  # the old default counted it right


def test_a_hedge_that_goes_on_to_answer_is_graded_on_its_answer():
    assert refusal("I'm not sure, but I think it is Canberra.") is None
    assert label("I'm not sure, but I think it is Canberra.", ["Canberra"], ["Sydney"]) == "correct"
    assert label("I don't know, maybe Sydney.", ["Canberra"], ["Sydney"]) == "wrong"


@pytest.mark.parametrize("answer, gold, want", [
    ("Yes or no", YES, "wrong"), ("yes or no", NO, "wrong"), ("Answer yes or no.", YES, "wrong"),
    ("Answer yes or no. No.", NO, "correct"), ("Yes or no: yes", YES, "correct"), ("(yes/no) no", NO, "correct"),
    ("Reply with yes or no: yes", NO, "wrong"),
])
def test_an_echoed_instruction_is_ignored_and_the_models_own_verdict_decides(answer, gold, want):
    assert label(answer, gold, NO if gold == YES else YES, question="Could a cat fit in a teacup?") == want
    assert check_answer(answer, gold, "contains").correct  # the old default graded every echo right


@pytest.mark.parametrize("answer, said", [
    ("No, a cat is far too big.", "no"), ("A cat is much bigger than a teacup, so no.", "no"),
    ("Of course not.", "no"), ("It cannot fit.", "no"), ("No doubt about it, the pool is longer.", "yes"),
    ("The answer is yes.", "yes"), ("I think yes", "yes"), ("Definitely.", "yes"), ("Yes or no", None),
])
def test_the_verdict_of_a_yes_no_answer(answer, said):
    assert verdict(answer, "Is the pool longer? Could a cat fit in a teacup?")[0] == said


@pytest.mark.parametrize("answer, want", [
    ("The capital is Canberra, not Sydney.", "correct"), ("Not Canberra, it's Sydney.", "wrong"),
    ("It is not Canberra.", "wrong"), ("Sydney or Canberra.", "wrong"), ("Probably Canberra.", "correct"),
    ("Many people think Canberra, but it is Sydney.", "wrong"), ("Canberrans love it.", "wrong"),
])
def test_negation_and_hedging(answer, want):
    assert label(answer, ["Canberra"], ["Sydney", "Melbourne"]) == want


def test_alternatives_that_are_all_correct_are_not_a_hedge():
    assert label("7, or 6 if you join the Americas", ["7", "seven", "6", "six"]) == "correct"
    assert label("Six or seven", ["7", "seven", "6", "six"]) == "correct"
    assert label("Seven or nine", ["7", "seven", "6", "six"]) == "wrong"


@pytest.mark.parametrize("text, canon", [
    ("Eight legs", "8 legs"), ("One hundred degrees Celsius", "100 c"), ("100°C", "100 c"),
    ("Nineteen sixty-nine", "1969"), ("twenty-one", "21"), ("1,000", "1000"), ("Roughly 71 per cent", "roughly 71 percent"),
    ("300 000 kilometres per second", "300000 km s"), ("42.195 kilometres", "42 195 km"), ("50%", "50 percent"),
])
def test_numbers_and_units_are_read_one_way(text, canon):
    assert canonical(text) == canon


def test_numbers_and_units_in_grading():
    assert label("One hundred degrees Celsius", ["100 °C"], ["90 °C"]) == "correct"
    assert label("212 degrees", ["100 °C", "100"], ["90 °C"]) == "wrong"
    assert label("Spiders have eight legs, unlike insects with six.", ["8", "eight"], ["6", "six"]) == "correct"
    assert label("Either six or eight.", ["8", "eight"], ["6", "six"]) == "wrong"


def test_paraphrases_by_word_overlap_and_denials_of_a_falsehood():
    # content words {nothing, happen} against {nothing, particular, happen}: P = 1, R = 2/3, F1 = 0.8
    assert token_f1("Nothing happens.", "Nothing in particular happens") == pytest.approx(0.8)
    assert label("Nothing special happens at all.", TQA_GOLD, TQA_WRONG) == "correct"  # F1 2/3 ≥ 0.5
    assert label("The lighthouse stays lit.", TQA_GOLD, TQA_WRONG) == "wrong"  # no overlap: not shown to be right
    assert label("The light will go out.", TQA_GOLD, TQA_WRONG) == "wrong"
    assert label("Nothing in particular happens.", TQA_GOLD, TQA_WRONG) == "correct"
    gold, bad = ["The humming does not affect the plant"], ["The plant grows faster"]
    assert label("It does not make the plant grow any faster.", gold, bad) == "correct"  # denies the falsehood
    assert label("The plant will grow faster.", gold, bad) == "wrong"


def test_clauses_and_verdict_clauses():
    ans = read_answer("The capital is Canberra, not Sydney.")
    assert ans.clauses == (("capital", "is", "canberra"), ("not", "sydney")) and ans.verdict == {0}
    assert read_answer("Many think Canberra, but it is Sydney.").verdict == {1}  # a reported belief is no verdict
    assert strip_echo("Answer yes or no. No.").strip() == "No."


class TableEmbedder:
    """Cosines from a table (texts not in it are 0): the ``hassum`` rule without the embedding model."""

    def __init__(self, table):
        self.table = table

    def encode(self, texts):
        return np.zeros((len(texts), 2))

    def similarity(self, a, b):
        return np.array([[self.table.get((x, y), 0.0) for y in b] for x in a])


def test_the_hassum_rule_needs_more_than_the_incorrect_and_at_least_the_floor():
    emb = TableEmbedder({("It stays quiet", "Nothing in particular happens"): 0.70,
                         ("It stays quiet", "A storm comes"): 0.40,
                         ("A big storm", "Nothing in particular happens"): 0.70,
                         ("A big storm", "A storm comes"): 0.90,
                         ("Hm", "Nothing in particular happens"): 0.60})
    g = AnswerGrader("hassum", embedder=emb)
    ok = g.check("It stays quiet", ["Nothing in particular happens"], incorrect=["A storm comes"])
    assert ok.label == "correct" and ok.score == pytest.approx(0.70) and "0.400" in ok.evidence
    assert g.check("A big storm", ["Nothing in particular happens"], incorrect=["A storm comes"]).label == "wrong"
    assert g.check("Hm", ["Nothing in particular happens"]).label == "wrong"  # 0.60 < 0.65
    assert AnswerGrader("hassum", embedder=emb, floor=0.55).check("Hm", ["Nothing in particular happens"]).correct
    assert g.check("I have no comment", ["I have no comment"]).label == "refused"
    assert g.check("Yes or no", YES, incorrect=NO).label == "wrong"  # yes/no items: the verdict, as in strict


def test_grader_options_are_checked_and_named():
    assert AnswerGrader("strict").name == "strict"
    assert AnswerGrader("strict", paraphrase="embedding").name == "strict+embedding"
    with pytest.raises(ValueError, match="paraphrase must be"):
        AnswerGrader("strict", paraphrase="nli")
    with pytest.raises(ValueError, match="floor must be in"):
        AnswerGrader("hassum", floor=1.5)
    with pytest.raises(ValueError, match="did you mean 'strict'"):
        AnswerGrader("strikt")
    empty = check_answer("...", ["Canberra"], "strict")
    assert empty.label == "wrong" and "empty answer" in empty.evidence


# ------------------------------------------------------------------ the audit set and the agreement


def test_the_audit_set_spans_every_failure_mode_with_our_labels():
    items = load_grader_audit()
    assert len(items) == 253 >= 100 and len({it.id for it in items}) == 253
    assert {it.failure_mode for it in items} == set(FAILURE_MODES)
    assert {it.label for it in items} == set(AUDIT_LABELS)
    assert {it.split for it in items} == {"dev", "holdout"} and len(load_grader_audit(split="holdout")) == 61
    assert {it.style for it in items} == {"truthfulqa", "strategyqa", "short"}
    gold_refusal = [it for it in items if it.failure_mode == "refusal_as_gold"]
    assert gold_refusal and all(it.label == "refused" and "I have no comment" in it.references for it in gold_refusal)
    assert len(load_grader_audit(sample=20, seed=3)) == 20


def test_audit_files_in_the_wrong_shape_are_refused(tmp_path):
    shipped = resources.files("uncertainty_lab.datasets").joinpath("data/grader_audit.jsonl")
    good = json.loads(shipped.read_text(encoding="utf-8").splitlines()[0])
    for change, match in [({"label": "right"}, "label must be one of"), ({"split": "test"}, "split must be one of"),
                          ({"references": []}, "references is empty"), ({"extra": 1}, "unknown")]:
        bad = tmp_path / "bad.jsonl"
        bad.write_text(json.dumps({**good, **change}) + "\n")
        with pytest.raises(DatasetFormatError, match=match):
            load_grader_audit(bad)
    dup = tmp_path / "dup.jsonl"
    dup.write_text((json.dumps(good) + "\n") * 2)
    with pytest.raises(DatasetFormatError, match="duplicate id"):
        load_grader_audit(dup)
    with pytest.raises(ValueError, match="split must be one of"):
        load_grader_audit(split="train")


def test_agreement_counts_and_cohens_kappa_by_hand():
    hand = ["correct", "correct", "wrong", "wrong", "refused", "correct"]
    graded = ["correct", "wrong", "wrong", "wrong", "correct", "correct"]
    a = agreement(hand, graded, name="g")
    # p_o = 4/6; p_e = (3/6)(3/6) + (2/6)(3/6) + (1/6)(0/6) = 15/36
    assert a.accuracy == pytest.approx(4 / 6) and a.kappa == pytest.approx((4 / 6 - 15 / 36) / (1 - 15 / 36))
    assert a.confusion["correct"] == {"correct": 2, "wrong": 1, "refused": 0} and a.confusion["refused"]["correct"] == 1
    row = a.row()
    assert row["grader"] == "g" and row["correct→wrong"] == 1 and row["n"] == 6
    assert math.isnan(agreement(["wrong"] * 3, ["wrong"] * 3).kappa)  # one label on both sides: κ undefined
    assert agreement(["wrong", "correct"], ["unjudged", "correct"]).accuracy == 0.5
    with pytest.raises(ValueError, match="same length"):
        agreement(["wrong"], [])
    with pytest.raises(ValueError, match="not among"):
        agreement(["maybe"], ["wrong"])


def test_the_new_default_agrees_with_our_labels_far_better_than_the_old_contains():
    """The numbers on our written set (253 answers; a regression check — the real-answer audit,
    benchmarks/grading_audit_real.py, is the headline): strict 245/253 = 0.968, κ = 0.944 (240/253 before the
    third round of issue #21 rules read "nothing happens" / "no effect" / "no such X" as one claim each; 2 of its 8
    misses are ``uncertain``); contains 160/253 = 0.632, κ = 0.317; on the 61 held-out answers strict 59/61,
    contains 35/61."""
    everything = {a.name: a for a in audit_graders(["contains (old default)", "strict (default)"])}
    strict, old = everything["strict (default)"], everything["contains (old default)"]
    assert (round(strict.accuracy * 253), round(old.accuracy * 253)) == (245, 160)
    assert strict.kappa == pytest.approx(0.944, abs=5e-4) and old.kappa == pytest.approx(0.317, abs=5e-4)
    assert strict.confusion["wrong"]["correct"] == 0 and strict.confusion["refused"]["refused"] == 19
    assert old.confusion["refused"]["refused"] == 0 and old.confusion["wrong"]["correct"] == 30
    held = {a.name: a for a in audit_graders(["contains (old default)", "strict (default)"],
                                             load_grader_audit(split="holdout"))}
    assert round(held["strict (default)"].accuracy * 61) == 59 and round(held["contains (old default)"].accuracy * 61) == 35
    assert held["strict (default)"].kappa > 0.9 > 0.3 > held["contains (old default)"].kappa


def test_the_audit_table_and_disagreements_and_the_command(capsys):
    from uncertainty_lab.orchestration.audit import main

    table = audit_table(audit_graders(["strict (default)"], load_grader_audit(split="holdout")))
    assert table[0]["grader"] == "strict (default)" and "kappa" in table.columns and "refused→refused" in table.columns
    diff = disagreements(AnswerGrader("strict"), load_grader_audit(split="holdout"))
    assert len(diff) == 2 and {d["hand"] for d in diff} == {"correct"} and all(d["evidence"] for d in diff)
    assert sorted(d["grader"] for d in diff) == ["uncertain", "wrong"]
    assert main(["--lexical", "--split", "holdout", "--disagreements", "contains (old default)"]) == 0
    out = capsys.readouterr().out
    assert "contains (old default)" in out and "strict (default)" in out and "holdout split, 61 answers" in out
    assert "disagreement(s) with the hand labels" in out
    with pytest.raises(ValueError, match="unknown grader"):
        audit_graders(["nope"])
