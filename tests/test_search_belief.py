"""Belief states: the implicit truncated history and the predicate belief (strict parse, repairs, rejections,
bounds and eviction), text and JSON formats."""

from __future__ import annotations

import pytest
from fakes import ScriptedLLM

from uncertainty_lab.datasets.search import Document
from uncertainty_lab.search import (
    Action,
    ImplicitBelief,
    PredicateBelief,
    SearchEnvironment,
    count_tokens,
    make_belief,
    parse_extraction,
)

TINY = [
    Document("d-1", "Alpha", "Red fox jumps."),
    Document("d-2", "Beta", "Blue whale swims far."),
    Document("d-3", "Gamma", "Red panda sleeps."),
]
QUESTION = "In which city was the founder of the Havelt Brotherhood born?"


# --- implicit -----------------------------------------------------------------------------------------------


def test_implicit_truncation_keeps_the_newest_steps_within_budget():
    env = SearchEnvironment(TINY, k=2)
    b = ImplicitBelief(budget=40)
    b.start("Which animal is red?")
    steps = [Action("search", "red"), Action("search", "whale"), Action("read", "d-1")]
    records = [b.update(t, a, env.step(a)) for t, a in enumerate(steps, 1)]
    # entry tokens by hand: "Step 1. SEARCH: red" = 6 + two passages of 11 = 28; "Step 2. SEARCH: whale" = 6 + 12
    # = 18; "Step 3. READ: d-1" = 8 + 11 = 19.  28 -> 28+18 = 46 > 40: drop step 1 -> 18 -> 18+19 = 37 <= 40
    assert [e["tokens"] for e in b.snapshot()["entries"]] == [18, 19]
    assert [e["t"] for e in b.entries] == [2, 3]
    assert records[0]["dropped_steps"] == [] and records[1]["dropped_steps"] == [1] and records[2]["dropped_steps"] == []
    assert b.history_tokens == 37 <= b.budget and b.dropped == 1
    text = b.render()
    assert text.startswith("Question: Which animal is red?\n")  # the question is pinned
    assert "Step 1." not in text and "Step 2. SEARCH: whale" in text and "1 older step(s) dropped" in text
    assert b.open_questions() is None
    again = ImplicitBelief(budget=40)
    again.restore(b.snapshot())
    assert again.render() == text


def test_implicit_cuts_a_newest_entry_larger_than_the_budget():
    b = ImplicitBelief(budget=16)
    b.start("q?")
    env = SearchEnvironment(TINY, k=3)
    rec = b.update(1, Action("search", "red whale"), env.search("red whale"))
    assert rec["cut_newest"] and b.history_tokens <= 16 and b.entries[0]["text"].endswith("…")
    assert len(b.entries) == 1
    with pytest.raises(ValueError, match="budget must be an integer >= 16"):
        ImplicitBelief(budget=3)


# --- predicate: parsing -------------------------------------------------------------------------------------


def _update(b: PredicateBelief, env, text: str, query="Who founded the Havelt Brotherhood?", t=1):
    obs = env.search(query)
    docs = {i: f"{env.document(i).title}: {env.document(i).text}" for i in obs.passage_ids}
    return b.update(t, Action("search", query), obs, llm=ScriptedLLM(reply=text), seed=0, documents=docs)


def test_predicate_strict_parse(env):
    b = PredicateBelief()
    b.start(QUESTION)
    rec = _update(b, env, "FACT: Kelys Kalveck founded the Havelt Brotherhood. [doc-091]\n"
                          "OPEN: Where was Kelys Kalveck born?")
    assert rec["status"] == "ok" and rec["n_rejected"] == 0
    assert [i["status"] for i in rec["items"]] == ["ok", "ok"]
    assert [(f.text, f.doc_ids) for f in b.findings] == [("Kelys Kalveck founded the Havelt Brotherhood.", ("doc-091",))]
    assert b.open_questions() == [QUESTION, "Where was Kelys Kalveck born?"]
    assert rec["tokens"]["calls"] == 1 and rec["raw"].startswith("FACT:")
    rec2 = _update(b, env, "FACT: Kelys Kalveck was born in Drasir. [doc-187]\nDONE: Q2 — Drasir [doc-187]\n"
                           "DONE: Q1 [doc-187]", query="Kelys Kalveck born", t=2)
    assert rec2["status"] == "ok"
    assert [(p.status, p.doc_ids) for p in b.predicates] == [("satisfied", ("doc-187",)), ("satisfied", ("doc-187",))]
    assert b.predicates[1].note == "Drasir" and b.open_questions() == []
    snap = b.snapshot()
    assert snap["kind"] == "predicate" and "Q2. Where was Kelys Kalveck born? (satisfied — Drasir [doc-187])" in snap["text"]


def test_predicate_repairs_common_deviations(env):
    b = PredicateBelief()
    b.start(QUESTION)
    rec = _update(b, env, "- fact - Kelys Kalveck founded the Havelt Brotherhood (doc 91)\n"
                          "**Question:** Where was Kelys Kalveck born?\n"
                          "The Havelt Brotherhood is headquartered in Tismar.\n"
                          "Done: 1 [doc-091]")
    assert rec["status"] == "repaired", rec
    items = rec["items"]
    assert [i["status"] for i in items] == ["repaired"] * 4
    assert items[0]["tag"] == "FACT" and items[0]["doc_ids"] == ["doc-091"]
    assert any("bullet" in r for r in items[0]["repairs"]) and any("'fact-' read as FACT:" in r for r in items[0]["repairs"])
    assert any("parentheses" in r for r in items[0]["repairs"]) and any("'doc 91' read as 'doc-091'" in r for r in items[0]["repairs"])
    assert items[1]["tag"] == "OPEN" and any("markdown" in r for r in items[1]["repairs"])
    assert items[2]["tag"] == "FACT" and items[2]["doc_ids"] == ["doc-091"]  # untagged but stated by doc-091
    assert any("untagged line read as FACT" in r for r in items[2]["repairs"])
    assert items[3]["tag"] == "DONE" and items[3]["target"] == 0 and any("read as Q1" in r for r in items[3]["repairs"])
    assert len(b.findings) == 2 and b.predicates[0].status == "satisfied"


def test_predicate_rejections_are_recorded_and_leave_the_belief_unchanged(env):
    b = PredicateBelief()
    b.start(QUESTION)
    before = b.snapshot()
    rec = _update(b, env, "FACT: Kelys was born on the moon. [doc-999]\n"
                          "The sky is green.\n"
                          "DONE: Q7 [doc-091]\n"
                          "OPEN: ok\n"
                          "DONE: Q1")
    assert rec["status"] == "rejected" and rec["n_accepted"] == 0 and rec["n_rejected"] == 5
    reasons = [i["reason"] for i in rec["items"]]
    assert "FACT cites no observed document" in reasons[0]
    assert any("dropped id 'doc-999': never observed" in r for r in rec["items"][0]["repairs"])
    assert "not a FACT/OPEN/DONE/REFUTED line" in reasons[1]
    assert "Q7 does not exist" in reasons[2]
    assert "too short" in reasons[3]
    assert "DONE cites no observed document" in reasons[4]
    after = b.snapshot()
    assert after["findings"] == before["findings"] and after["predicates"] == before["predicates"]
    empty = _update(b, env, "   ")
    assert empty["status"] == "rejected" and "empty output" in empty["notes"]


def test_predicate_partial_update(env):
    b = PredicateBelief()
    b.start(QUESTION)
    rec = _update(b, env, "FACT: Kelys Kalveck founded the Havelt Brotherhood. [doc-091]\nbanana")
    assert rec["status"] == "partial" and rec["n_accepted"] == 1 and rec["n_rejected"] == 1


def test_predicate_json_format(env):
    b = PredicateBelief(format="json")
    b.start(QUESTION)
    strict = _update(b, env, '{"facts": [{"text": "Kelys Kalveck founded the Havelt Brotherhood.", "doc_ids": ["doc-091"]}], '
                             '"open": ["Where was Kelys Kalveck born?"], "done": [], "refuted": []}')
    assert strict["status"] == "ok" and len(b.findings) == 1 and len(b.predicates) == 2
    fenced = _update(b, env, "Here you go:\n```json\n{'findings': [{'text': 'The Brotherhood is in Tismar', 'ids': ['doc-091']}],}\n```")
    assert fenced["status"] == "repaired"
    reps = fenced["items"][0]["repairs"]
    assert "code fence removed" in reps and "trailing commas removed" in reps and "single quotes read as double quotes" in reps
    assert "key 'findings' read as 'facts'" in reps and "key 'ids' read as 'doc_ids'" in reps
    not_json = _update(b, env, "FACT: Kelys Kalveck headed the Havelt Brotherhood. [doc-091]")
    assert not_json["status"] == "repaired" and "output is not JSON; read as text lines" in not_json["notes"]
    assert len(b.findings) == 3


def test_parse_extraction_directly():
    items, notes = parse_extraction("FACT: a b [x-1]\nREFUTED: Q1 [x-1]", "text", known=["x-1"],
                                    predicates=make_belief("predicate").predicates or [])
    assert items[0].status == "ok" and items[1].status == "rejected" and "Q1 does not exist" in items[1].reason
    with pytest.raises(ValueError, match="fmt"):
        parse_extraction("", "yaml", known=[])


# --- predicate: bounds and eviction -------------------------------------------------------------------------


def test_findings_bound_evicts_the_oldest_unprotected_finding(env):
    b = PredicateBelief(max_findings=2)
    b.start(QUESTION)
    _update(b, env, "FACT: Kelys Kalveck founded the Havelt Brotherhood. [doc-091]\nDONE: Q1 [doc-091]")
    assert b.predicates[0].status == "satisfied"
    # doc-204 and doc-041 are the other passages of this search
    rec = _update(b, env, "FACT: finding B [doc-204]\nFACT: finding C [doc-041]", t=2)
    ops = rec["ops"]
    assert ops[0]["op"] == "add_finding" and "evicted" not in ops[0]
    # A is the only evidence of the satisfied Q1: protected; B is the oldest unprotected one
    assert ops[1]["evicted"]["text"] == "finding B" and "oldest finding that is not the only evidence" in ops[1]["evicted"]["rule"]
    assert [f.text for f in b.findings] == ["Kelys Kalveck founded the Havelt Brotherhood.", "finding C"]
    assert len(b.findings) <= 2


def test_findings_bound_rejects_when_every_finding_is_protected(env):
    b = PredicateBelief(max_findings=1)
    b.start(QUESTION)
    _update(b, env, "FACT: Kelys Kalveck founded the Havelt Brotherhood. [doc-091]\nDONE: Q1 [doc-091]")
    rec = _update(b, env, "FACT: finding B [doc-204]", t=2)
    assert rec["ops"][0]["op"] == "reject_finding" and rec["items"][0]["status"] == "rejected"
    assert "only evidence of a satisfied question" in rec["items"][0]["reason"]
    assert [f.text for f in b.findings] == ["Kelys Kalveck founded the Havelt Brotherhood."]


def test_predicate_bound_evicts_closed_questions_never_open_ones(env):
    b = PredicateBelief(max_predicates=2)
    b.start(QUESTION)
    _update(b, env, "OPEN: Who founded the Havelt Brotherhood?")
    rec = _update(b, env, "OPEN: Where was the founder born?", t=2)
    assert rec["items"][0]["status"] == "rejected" and "all are open" in rec["items"][0]["reason"]
    assert len(b.predicates) == 2
    _update(b, env, "REFUTED: Q2 [doc-091]", t=3)
    rec = _update(b, env, "OPEN: Where was the founder born?", t=4)
    assert rec["ops"][0]["evicted"]["status"] == "refuted" and rec["ops"][0]["evicted"]["rule"] == "oldest refuted question"
    assert [p.text for p in b.predicates] == [QUESTION, "Where was the founder born?"]
    dup = _update(b, env, "OPEN: where was the founder born", t=5)
    assert dup["ops"][0]["op"] == "duplicate_question" and len(b.predicates) == 2


def test_predicate_init_modes_and_skips(env):
    b = PredicateBelief(init="decomposition")
    rec = b.start(QUESTION, decomposition=["Who founded the Havelt Brotherhood?", "In which city was #1 born?"])
    assert b.open_questions() == ["Who founded the Havelt Brotherhood?", "In which city was #1 born?"]
    assert rec["open"] == b.open_questions()
    llm = ScriptedLLM(reply="1. OPEN: Who founded the Havelt Brotherhood?\nWhere was that person born?\nnoise")
    b = PredicateBelief(init="llm")
    rec = b.start(QUESTION, llm=llm)
    assert b.open_questions() == ["Who founded the Havelt Brotherhood?", "Where was that person born?"]
    assert [i["status"] for i in rec["items"]] == ["repaired", "repaired", "rejected"]
    b = PredicateBelief(init="llm")
    rec = b.start(QUESTION, llm=ScriptedLLM(reply="no idea"))
    assert b.open_questions() == [QUESTION] and "fallback" in rec
    skipped = b.update(1, Action("search", "zebra zebra"), env.search("zzzz"), llm=None)
    assert skipped["status"] == "skipped" and skipped["tokens"]["calls"] == 0
    with pytest.raises(ValueError, match="max_findings must be a positive integer"):
        PredicateBelief(max_findings=0)
    with pytest.raises(LookupError, match="no belief named 'predicat'; available: implicit, predicate; closest match: 'predicate'"):
        make_belief("predicat")


def test_state_tokens_are_counted(env):
    b = PredicateBelief()
    b.start(QUESTION)
    snap = b.snapshot()
    assert snap["tokens"] == count_tokens(snap["text"])
