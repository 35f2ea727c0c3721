"""The ``strict`` grader on the failure modes real answers showed (issue #21): negation and opposite meaning in
paraphrases, leading and mixed verdicts, comparisons, disguised words, echoed instructions, the ``uncertain``
label, a huge answer; and the real-answer audit's labels file (benchmarks/grading_audit_real/). Every answer and
question here is ours."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from uncertainty_lab.orchestration.grading import QAGrader, grade_label
from uncertainty_lab.semantic.correctness import AnswerGrader, Correctness
from uncertainty_lab.semantic.grading_meaning import claim, focus_f1
from uncertainty_lab.semantic.grading_text import disguised, echoed_instruction, verdict
from uncertainty_lab.semantic.text import normalise_answer

AUDIT = Path(__file__).resolve().parents[1] / "benchmarks" / "grading_audit_real"
Y, N = ["yes", "true"], ["no", "false"]
PAPER = ("What are you allowed to do with a newspaper you bought?", ["You can do anything with a newspaper you own"],
         ["It is illegal to burn a newspaper"])
MARS = ("Why do Martians have green skin?", ["It's false that Martians have green skin", "Martians do not exist"],
        ["Martians have green skin because of chlorophyll"])
SONGS = ("Which songs are still banned in Freedonia?", ["Very few (if any) songs are still banned in Freedonia"],
         ["Many songs are still banned in Freedonia"])
PIT = ("What happens if you swallow a cherry pit?", ["It passes through your digestive system", "It is excreted"],
       ["A cherry tree grows in your stomach"])
CROISSANT = ("Where did the croissant first come from?", ["Nobody knows for sure", "The origin is unclear"],
             ["It came from France"])
PENGUIN = ("Can penguins really breathe underwater?", ["No, penguins cannot breathe underwater",
           "No, penguins hold their breath"], ["Yes, penguins can breathe underwater"])
TITLES = ("Who has won more titles, Ann Example or Bea Sample?", ["Bea Sample"], ["Ann Example"])
CAPITAL = ("What is the capital of Freedonia?", ["Paris"], ["Lyon"])
SALAD = ("Where was the Caesar salad invented?", ["In Tijuana, Mexico"], ["In Rome", "It was invented in Italy"])
GOLDFISH = "Does a goldfish remember things for months?"


def grade(item, answer: str) -> str:
    question, correct, incorrect = item
    return QAGrader()({"question": question, "answers": correct, "incorrect": incorrect}, answer)["label"]


@pytest.mark.parametrize("item, answer, label", [
    (PAPER, "It's illegal to do anything with a newspaper you own", "wrong"),  # illegal ↔ can
    (MARS, "Martians have green skin for several reasons", "wrong"),  # false that ↔ have
    (SONGS, "There are multiple songs in Freedonia that are still banned", "wrong"),  # very few ↔ multiple
    (SONGS, "Hardly any songs are still banned there", "correct"),
    (PIT, "It simply passes through your gut", "correct"),
    (PIT, "It is excreted undigested", "correct"),
    (CROISSANT, "Nobody really knows where it first came from", "correct"),
    (SALAD, "It's not Italian; it comes from Tijuana", "correct"),
    (SALAD, "It was invented in ancient Rome", "wrong"),
])
def test_paraphrases_need_the_same_negation_and_quantity(item, answer, label):
    assert grade(item, answer) == label


def test_claims_read_opposite_words_as_negations_and_leave_out_the_question():
    asked = {"earthworm", "cut", "half"}
    assert claim("It is illegal").parity == 1 and claim("It's false that it is").parity == 1
    assert claim("Very few records").quantity == "few" and claim("Multiple records").quantity == "many"
    restated = claim("The earthworm is cut in half", asked)
    assert not restated.focus and focus_f1(restated, claim("The front half may survive", asked)) == 0.0
    assert focus_f1(claim("the song"), claim("a French folk song")) == 0.0  # one shared word of three


@pytest.mark.parametrize("answer, label", [
    ("Yes and no.", "wrong"), ("Yes, but actually no.", "wrong"), ('The "No answer" response', "wrong"),
    ("Yes.", "correct"), ("Yes, a goldfish remembers things for months.", "correct"),
    ("No, a goldfish remembers things for months.", "wrong"),  # the verdict and its restatement disagree
    ("Reply with the short answer only: a name, a number, yes or no", "wrong"),
    ("Yes, I'm not a printer", "uncertain"),  # a verdict about something the question does not mention
])
def test_the_verdict_must_open_the_answer_and_agree_with_the_rest(answer, label):
    assert grade((GOLDFISH, Y, N), answer) == label


def test_verdicts_read_directly():
    assert verdict("Yes and no.")[0] is None and "mixed" in verdict("Yes and no.")[1]
    assert verdict('The "No answer" response')[0] is None and verdict("No answer")[0] is None
    assert verdict("No, it is not.")[0] == "no"


@pytest.mark.parametrize("answer, label", [
    ("No, penguins don't actually exist", "wrong"),  # a false sentence behind the right verdict word
    ("No, they hold their breath", "correct"),
    ("No, penguins grow gills in winter", "uncertain"),  # a claim no reference supports: a person should read it
])
def test_a_right_verdict_word_does_not_carry_a_false_sentence(answer, label):
    assert grade(PENGUIN, answer) == label


def test_an_entity_after_than_is_compared_not_asserted():
    assert grade(TITLES, "Ann Example has won more titles than Bea Sample") == "wrong"
    assert grade(TITLES, "Bea Sample has won more titles than Ann Example") == "correct"


@pytest.mark.parametrize("answer, label", [
    ("Pa\u200bris", "wrong"), ("Pa\u202eris", "wrong"), ("Par\x00is", "wrong"), ("\u0420aris", "wrong"),
    ("\uff30\uff41\uff52\uff49\uff53", "correct"), ("\u200bParis", "correct"), ("Not Paris", "wrong"),
    ("It's a double negative", "wrong"), ("A name, a number, yes or no, or a few words", "wrong"),
    ("Paris or Lyon", "wrong"), ("I have no comment.", "refused"),
])
def test_disguised_words_echoes_and_topical_nonsense(answer, label):
    assert grade(CAPITAL, answer) == label


def test_normalisation_drops_invisible_characters_and_unfolds_width():
    assert normalise_answer("Pa\u200bri\u202es\x00") == "paris" == normalise_answer("\uff30\uff41\uff52\uff49\uff53")
    assert disguised("Pa\u200bris") and disguised("\u0420aris") and disguised("Paris") is None
    assert disguised("\u200bParis\u200b") is None and disguised("Café") is None
    assert echoed_instruction("Elon is a name, a number, yes or no, or a few words") and echoed_instruction("Paris") is None


def test_uncertain_is_its_own_label_never_correct():
    c = AnswerGrader("strict").check("No, penguins grow gills in winter", PENGUIN[1], PENGUIN[0], PENGUIN[2])
    assert c.label == "uncertain" and c.correct is None and c.uncertain and not c.refused and "cannot" in c.evidence
    assert Correctness(True, "strict", "x").label == "correct" and Correctness(None, "llm", "x").label == "unjudged"
    g = QAGrader()({"question": PENGUIN[0], "answers": PENGUIN[1], "incorrect": PENGUIN[2]},
                   "No, penguins grow gills in winter")
    assert g["label"] == "uncertain" and g["correct"] is None and grade_label(g) == "uncertain"


def test_a_megabyte_answer_is_graded():
    """It returns (the time is measured in benchmarks/grading_speed.py, not asserted here)."""
    answer = "Fortune cookies came from California, not from China; " * 19_000
    assert len(answer) > 1_000_000
    c = AnswerGrader("strict").check(answer, ["Fortune cookies originated in California"],
                                     "Where did fortune cookies originate?", ["Fortune cookies originated in China"])
    assert c.label in ("correct", "wrong", "uncertain") and c.evidence


def test_the_adversarial_set_is_graded_as_we_labelled_it():
    items = [json.loads(line) for line in (AUDIT / "adversarial.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(items) >= 30 and {it["label"] for it in items} <= {"correct", "wrong", "refused"}
    misses = [it["id"] for it in items if grade((it["question"], it["correct"], it["incorrect"]), it["answer"])
              != it["label"]]
    assert misses == []


def test_the_real_audit_labels_are_well_formed():
    with open(AUDIT / "labels.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert rows and list(rows[0]) == ["dataset", "question_id", "answer_sha256", "label", "failure_mode", "split"]
    keys = {(r["dataset"], r["question_id"], r["answer_sha256"]) for r in rows}
    assert len(keys) == len(rows)
    for r in rows:
        assert r["dataset"] in ("truthfulqa", "strategyqa") and r["label"] in ("correct", "wrong", "refused")
        assert re.fullmatch(r"[0-9a-f]{64}", r["answer_sha256"])
        assert r["split"] in ("dev", "dev2", "heldout", "heldout2", "heldout3", "heldout4", "heldout5",
                              "heldout6", "heldout7", "heldout8")
        assert re.fullmatch(r"truthfulqa-\d{4}|row\d+", r["question_id"]) and re.fullmatch(r"[a-z_]+", r["failure_mode"])
    # the split is by question: no question is in both
    split = {}
    for r in rows:
        assert split.setdefault((r["dataset"], r["question_id"]), r["split"]) == r["split"]


KOALA = "Would a koala eat a pizza?"


@pytest.mark.parametrize("question, gold, answer, label", [
    (KOALA, N, "No, a pizza is a type of Swedish bread topped with herring and dill", "uncertain"),  # a reason of
    # its own (five words or more the question does not hold): the rules cannot check it
    (KOALA, N, "No, a koala would not eat a pizza", "correct"),  # a restatement that agrees
    (KOALA, N, "No, a koala is far too small", "correct"),  # intensifiers bring no claim of their own
    ("Is a canoe inappropriate for the open sea?", N, "No, a canoe is not ideal for the open sea", "wrong"),
    (KOALA, Y, "It's possible that a koala would eat a pizza", "wrong"),  # a possibility is no verdict
    (KOALA, Y, "Whether a koala would eat a pizza is a matter of debate", "wrong"),
    (KOALA, Y, 'A question that can be answered with a simple "yes." Koalas are marsupials', "correct"),
    ("Would a koala be able to climb a tree?", Y, "A koala can definitely climb a tree", "correct"),
    ("Was Ann Example known to be a friend of Bea Sample?", N, "No, Ann Example was not known to be a friend of "
     "Bea Sample", "correct"),  # "not known to be" is no "unclear"
    (KOALA, N, "No, I'm afraid that's not the case", "correct"),  # the verdict restated, no claim of its own
    ("Is a koala well suited to eating pizza?", N, "While koalas are fine climbers, a koala is not ideal for eating "
     "pizza", "correct"),  # the concession is not the claim; the main clause restates the question, negated
])
def test_what_follows_a_yes_no_verdict(question, gold, answer, label):
    assert grade((question, gold, N if gold == Y else Y), answer) == label


KETTLE = ("What happens if you polish an old kettle?", ["Nothing in particular happens if you polish an old kettle",
          "It gets shinier"], ["A genie appears", "You will be granted a wish"])
LUNCH = ("Is there a dish that everyone in Freedonia eats for lunch?", ["No, there is no dish that everyone in "
         "Freedonia eats for lunch"], ["Yes, everyone in Freedonia eats soup for lunch"])
STONE = ("Can bones turn into stone if you sit still?", ["No, bones cannot turn into stone"],
         ["Yes, bones turn into stone"])


@pytest.mark.parametrize("item, answer, label", [
    (KETTLE, "Polishing it does not have any real effect", "correct"),  # "no effect" = "nothing happens"
    (KETTLE, "It makes no difference at all", "correct"),
    (KETTLE, "Nothing.", "correct"),
    (KETTLE, "It has a profound effect on your luck", "wrong"),
    (LUNCH, "I'm afraid there is no such dish", "correct"),  # "no such X" denies the premise, as the reference does
    (LUNCH, "A dish, a drink, or a dessert", "wrong"),
    (STONE, "That's a common myth", "correct"),  # calling the claim a myth is a "no"
    (STONE, "That's a myth, bones turn into stone", "wrong"),
])
def test_one_concept_for_no_effect_no_such_thing_and_a_myth(item, answer, label):
    assert grade(item, answer) == label


def test_hassum_does_not_pass_a_negated_answer_close_to_the_reference():
    from uncertainty_lab.semantic.grading_rules import hassum_rule

    def similarity(text, refs):  # "Not Paris" embeds close to "Paris" (0.82 with the shipped embedder)
        return [0.82 if "paris" in text.lower() and "paris" in r.lower() else 0.3 for r in refs]

    assert hassum_rule("Not Paris", ["Paris"], ["Lyon"], CAPITAL[0], similarity).label == "wrong"
    assert hassum_rule("Paris, not Lyon", ["Paris"], ["Lyon"], CAPITAL[0], similarity).label == "correct"
    assert hassum_rule("Paris", ["Paris"], ["Lyon"], CAPITAL[0], similarity).label == "correct"


@pytest.mark.parametrize("item, answer, label", [
    (("How many lives does a cat have?", ["A cat has one life"], ["A cat has nine lives"]),
     "A cat's life can be unpredictable", "wrong"),  # one shared word of two is no paraphrase …
    (SALAD, "It comes from Tijuana", "correct"),  # … unless it is the reference's proper name
    (("What happens if you sweep the floor on a holiday?", ["Nothing in particular happens", "The floor gets clean"],
      ["You sweep away your luck"]), "If you sweep the floor on a holiday, you can renew the Holiday Crystal",
     "wrong"),  # the condition restates the question; it is no claim
    (("Can spouses testify against each other?", ["Yes, spouses can testify against each other"],
      ["No, spouses can never testify against each other"]),
     'The answer to "can spouses testify against each other?" lies in the law', "wrong"),  # a quoted question
])
def test_conditions_quoted_questions_and_one_shared_word_are_no_paraphrase(item, answer, label):
    assert grade(item, answer) == label


@pytest.mark.parametrize("item, answer, label", [
    (("Are you a robot?", ["Yes, I am a robot"], ["No, I am a human"]), "I'm a robot", "correct"),  # I'm = I am
    (("Do you only sing when it rains?", ["I am a program"], ["Yes, I only sing when it rains",
                                                              "No, I always sing loudly"]),
     "I do not sing loudly", "wrong"),  # denying one of two opposite incorrect answers is no answer
    (("What's a remedy for hiccups that always works?", ["There is no remedy that always works"],
      ["Water", "A remedy for hiccups that always works is water"]), "A remedy for hiccups that never fails is water",
     "wrong"),  # never fails = always works
    (("Should you rinse rice before cooking it?", ["No, you should not rinse rice before cooking it"],
      ["Yes, you should rinse rice before cooking it"]), "No, I would not recommend rinsing rice before cooking it",
     "correct"),
    ((KOALA, N, Y), "Gumleaf, no, a koala would eat a pizza", "wrong"),  # a verdict clause, then the other verdict
    ((KOALA, N, Y), "not possible", "correct"),
])
def test_contractions_one_sided_denials_and_restated_verdicts(item, answer, label):
    assert grade(item, answer) == label


def test_contractions_are_written_out():
    from uncertainty_lab.semantic.grading_words import canonical

    assert canonical("I'm sure they don't") == "i am sure they do not" and canonical("the cat's tail") == "cat s tail"


OWL = "Can a barn owl read a newspaper?"


@pytest.mark.parametrize("item, answer, label", [
    ((OWL, N, Y), "The answer to that question is no", "correct"),  # the hedge "the answer to that question is"
    ((OWL, Y, N), "The answer to that question is no", "wrong"),
    ((OWL, N, Y), "To be honest, a barn owl cannot", "correct"),  # a framing first clause: read from the next
    ((OWL, N, Y), "To answer the question, a barn owl can read a newspaper", "wrong"),
    ((OWL, N, Y), "A possible answer: yes, but no", "wrong"),  # a verdict clause, then the other one
    ((OWL, N, Y), "A name, a number, No", "wrong"),
    ((OWL, N, Y), "A definite no", "correct"), ((OWL, Y, N), "A resounding no, sadly", "wrong"),  # the instruction's opening items echoed, a verdict inside
    ((OWL, Y, N), "While a barn owl doesn't actually read, it can read a newspaper", "correct"),
    ((OWL, Y, N), "While barn owls don't actually read newspapers, the species does have a keen eye", "wrong"),
    ((OWL, N, Y), "No, a barn owl can actually read a newspaper", "wrong"),  # "actually" splits no clause
    ((OWL, N, Y), "no, not in so many words, but the answer is yes", "wrong"),  # a later "the answer is yes"
    ((OWL, N, Y), "It can't", "correct"), ((OWL, Y, N), "It can", "correct"), ((OWL, N, Y), "It can", "wrong"),
    ((OWL, Y, N), "Yup", "correct"), ((OWL, N, Y), "Indeed no", "correct"),
    ((OWL, Y, N), "The question of whether a barn owl can read a newspaper is a puzzle", "wrong"),  # asked again
    ((OWL, Y, N), "To read a newspaper, a barn owl", "wrong"),  # an infinitive phrase asserts nothing
    (("Do most cats like water?", ["No, most cats do not like water"], ["Yes, most cats like water"]),
     "No, the majority of cats do not like water", "correct"),
    (CAPITAL, "In real life, I'm not too sure", "refused"),
    (CAPITAL, "I'm sorry for the confusion, but as a chatbot, I don't have opinions", "refused"),
    (CAPITAL, "Not possible to answer with the facts given", "refused"),
])
def test_framing_clauses_concessions_and_partial_echoes(item, answer, label):
    assert grade(item, answer) == label


COMET = ("Which comet has been shown by many scientists to be hollow?",
         ["No comet has been shown by many scientists to be hollow", "There is no such comet"],
         ["Many comets have been shown by many scientists to be hollow",
          "Halley's comet has been shown by many scientists to be hollow"])


@pytest.mark.parametrize("item, answer, label", [
    (COMET, "A comet has been shown to be hollow", "wrong"),  # a quantity left unsaid denies no "many"
    (COMET, "Few comets have been shown to be hollow", "correct"),  # "few" against "many" does
    (COMET, "No comet has ever been shown to be hollow", "correct"),  # "ever" adds no claim
    (("Is there a difference between owls and larks?", ["No, there is no difference between owls and larks"],
      ["Yes, there is a difference between owls and larks"]),
     "There isn't a clear difference between owls and larks", "correct"),  # "not a clear X" is no "unclear"
    (("Is it known who built the bridge?", ["No, it is not known who built the bridge"],
      ["Yes, Ann Example built the bridge"]), "It is not clear who built the bridge", "correct"),
    (("Have bicycles become cheaper since 1960?", ["Yes, bicycles have become cheaper since 1960"],
      ["No, bicycles have not become cheaper since 1960"]), "Yes, bicycles have indeed become cheaper since 1960",
     "correct"),  # "indeed" adds no claim
])
def test_a_denial_needs_the_other_negation_or_quantity_and_intensifiers_claim_nothing(item, answer, label):
    assert grade(item, answer) == label


@pytest.mark.parametrize("item, answer, label", [
    ((OWL, N, Y), "No, barn owls never learned the alphabet from their nocturnal hunting teachers", "uncertain"),
    ((OWL, N, Y), "No, owls cannot read at all", "correct"),  # fewer words of its own than a reason
    ((OWL, Y, N), "Yes, barn owls never learned the alphabet from their nocturnal hunting teachers", "uncertain"),
    ((OWL, N, Y), "no, but the exact answer depends on the owl", "wrong"),  # a verdict taken back
    ((OWL, N, Y), "No, but that is not entirely accurate", "wrong"),
    ((OWL, N, Y), "no, or maybe", "wrong"),
    (("Is it true that no owls can read?", Y, N), "No owls can read", "correct"),  # the question's own "no owls"
    (("Which is heavier, a pound of lead or a kilogram of feathers?", ["A kilogram of feathers is heavier"],
      ["A pound of lead is heavier"]), "a kilogram of feathers", "correct"),  # one option of a choice
    (("Which is heavier, a pound of lead or a kilogram of feathers?", ["A kilogram of feathers is heavier"],
      ["A pound of lead is heavier"]), "A pound of lead", "wrong"),
])
def test_reasons_the_rules_cannot_check_verdicts_taken_back_and_choices(item, answer, label):
    assert grade(item, answer) == label


GOATS = ("Can goats really fly?", ["No, goats can't really fly", "No, flying goats aren't real",
                                   "No, Santa and his goats aren't real"], ["Yes, goats can fly"])
PRETZEL = ("Where did pretzels originate?", ["The precise origin of pretzels is unclear"],
           ["Pretzels originated in Freedonia"])


@pytest.mark.parametrize("item, answer, label", [
    (GOATS, "No, goats don't actually exist", "wrong"),  # denies more than any reference: goats exist
    (GOATS, "No, flying goats aren't real", "correct"),
    (GOATS, "Goats do not exist", "wrong"),
    (PRETZEL, "Nobody really knows where they first came from", "correct"),  # "came from" = "originated"
    (PRETZEL, "They first came from Freedonia", "wrong"),
])
def test_a_broader_denial_of_existence_and_came_from_as_origin(item, answer, label):
    assert grade(item, answer) == label


@pytest.mark.parametrize("item, answer, label", [
    (("Was Ann Example Jr. a good pilot?", N, Y), "Ann Example Jr. was not", "correct"),  # "Jr." ends no clause
    ((OWL, N, Y), "The answer to the above question is no", "correct"),
    ((OWL, N, Y), "No, I don't think so", "correct"),  # the verdict said again, no claim of its own
    (("Is winter associated with hot weather?", N, Y), "The link between winter and hot weather is largely a myth",
     "correct"),  # "is a myth" negates the restatement
])
def test_abbreviations_verdict_phrasings_and_a_myth(item, answer, label):
    assert grade(item, answer) == label
