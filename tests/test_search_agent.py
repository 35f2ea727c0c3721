"""The PBAI loop end to end: the heuristic policy with the exhaustion gate on shipped questions, every exit through
the same final answer, llm-policy parse failures, JSONL streaming, interrupt-and-resume, reload; and the llm policy
with the real embedded model for a two-step budget."""

from __future__ import annotations

import json

import pytest
from fakes import ScriptedLLM, by_system

from uncertainty_lab.search import Episode, EpisodeError, EpisodeResumeError, run_episode


def test_scripted_llm_replies_and_records():
    llm = ScriptedLLM(reply=["a", "b"])
    assert [c.text for c in llm.complete("x")] == ["a"]
    assert llm.complete("y", seed=7)[0].text == "b"
    assert len(llm.calls) == 2 and llm.calls[1]["seed"] == 7


# --- the heuristic policy, deterministic --------------------------------------------------------------------


@pytest.mark.parametrize(("qid", "reason", "steps", "recall"), [
    ("q001", "budget", 10, 1.0),        # every round still finds something new: the gate never fires
    ("q003", "exhausted", 4, 0.5),      # rounds 3 and 4: J ≥ 0.6 and no new passage
    ("q005", "exhausted", 7, 2 / 3),
])
def test_heuristic_policy_with_the_exhaustion_gate(env, questions, qid, reason, steps, recall):
    q = questions[qid]
    llm = ScriptedLLM(reply=q.answer)
    ep = run_episode(q, env, llm=llm, policy="heuristic", belief="implicit", gates=["exhaustion"], max_steps=10)
    assert (ep.stop_reason, len(ep.steps)) == (reason, steps)
    assert ep.steps[0].query == q.question and ep.steps[1].query.startswith(q.question + " ")
    trace = ep.gate_trace("exhaustion")
    if reason == "exhausted":
        assert [r["streak"] for r in trace[-2:]] == [1, 2] and trace[-1]["stop"]
        assert trace[-1]["jaccard"] >= 0.6 and trace[-1]["upr"] <= 0.3
        assert ep.stop_gate == "exhaustion" and ep.final["stop_detail"].startswith("exhausted")
    else:
        assert ep.stop_gate == "max_steps" and not any(r["stop"] for r in trace)
    assert len(llm.calls) == 1  # implicit belief + heuristic: the model only answers, once
    score = ep.score()
    assert score.exact_match == 1.0 and score.f1 == 1.0 and score.support_recall == pytest.approx(recall)
    assert score.premature_stop == (reason == "exhausted")  # stopped by the gate before every support was seen
    assert score.cost == sum(s.cost for s in ep.steps) > 0
    assert score.objective == pytest.approx(1.0 - 1e-3 * score.cost)


def test_heuristic_policy_with_a_predicate_belief(env, questions):
    """Open questions from the decomposition; '#1' is filled from the satisfied question's note."""
    q = questions["q001"]

    def extraction(messages, i, seed):
        passages = messages[-1]["content"].split("Passages:")[1]
        if "[doc-187]" in passages:
            return "FACT: Kelys Kalveck was born in Drasir. [doc-187]\nDONE: Q2 — Drasir [doc-187]"
        return "FACT: Kelys Kalveck founded the Havelt Brotherhood. [doc-091]\nDONE: Q1 — Kelys Kalveck [doc-091]"

    llm = ScriptedLLM(reply=by_system(extraction=extraction, answer="Drasir"))
    ep = run_episode(q, env, llm=llm, belief="predicate", belief_params={"init": "decomposition"},
                     gates=["belief_complete", "exhaustion"], max_steps=6)
    assert [s.query for s in ep.steps] == ["Who founded the Havelt Brotherhood?", "In which city was Kelys Kalveck born?"]
    assert ep.stop_reason == "answered" and ep.stop_gate == "belief_complete"
    assert ep.steps[-1].open_questions == [] and ep.final["open_questions"] == []
    assert [s.update["status"] for s in ep.steps] == ["ok", "ok"]
    assert ep.steps[0].llm_tokens["calls"] == 1 and ep.llm_tokens["calls"] == 3
    assert ep.start["belief"]["predicates"][1]["text"] == "In which city was #1 born?"
    s = ep.score()
    assert (s.exact_match, s.support_recall, s.premature_stop, s.loop) == (1.0, 1.0, False, False)


# --- every exit path, one final answer ----------------------------------------------------------------------


def test_every_exit_goes_through_the_same_final_answer(env, questions):
    q = questions["q001"]
    exits = {
        "answered": dict(policy="llm", gates=["llm_self_stop", "exhaustion"], policy_reply="ANSWER: Drasir"),
        "exhausted": dict(policy="llm", gates=["llm_self_stop", "exhaustion"], policy_reply="I think it is Drasir."),
        "budget": dict(policy="heuristic", gates=[], policy_reply=""),
    }
    for reason, how in exits.items():
        for final_reply, valid, failure in (("Answer: Drasir.", True, None), ("", False, "empty answer"),
                                            ("I don't know", False, "abstention")):
            llm = ScriptedLLM(reply=by_system(policy=how["policy_reply"], answer=final_reply))
            ep = run_episode(q, env, llm=llm, policy=how["policy"], gates=how["gates"], max_steps=3)
            assert ep.stop_reason == reason
            last = llm.calls[-1]["messages"]
            assert last[0]["content"].startswith("Answer the question using only the notes")  # the one final step
            assert ep.final["answer"]["valid"] is valid
            if valid:
                assert ep.answer == "Drasir" and ep.score().exact_match == 1.0
            else:
                assert failure in ep.final["answer"]["failure"] and ep.score().exact_match == 0.0
                assert ep.answer == ("" if final_reply == "" else "I don't know")  # never a status string
    # the model's own ANSWER is a proposal; without llm_self_stop the search goes on
    llm = ScriptedLLM(reply=by_system(policy="ANSWER: Tismar", answer="Drasir"))
    ep = run_episode(q, env, llm=llm, policy="llm", gates=["exhaustion"], max_steps=3)
    assert ep.stop_reason == "budget" and [s.action for s in ep.steps] == ["answer"] * 3
    assert ep.final["proposed_answer"] == "Tismar" and ep.answer == "Drasir" and ep.cost == 0


def test_answer_convergence_inside_an_episode(env, questions, tmp_path):
    q = questions["q001"]
    llm = ScriptedLLM(reply="Drasir")  # the agent binds its own model to the gate
    ep = run_episode(q, env, llm=llm, gates=[("answer_convergence", {"m": 4})], max_steps=3)
    assert ep.stop_reason == "answered" and ep.stop_gate == "answer_convergence" and len(ep.steps) == 1
    assert ep.steps[0].gates["answer_convergence"]["signals"]["n_clusters"] == 1
    assert ep.steps[0].llm_tokens["calls"] == 4 and ep.llm_tokens["calls"] == 5  # 4 samples + the final answer
    unsure = ScriptedLLM(reply="unknown")  # abstentions are not agreement: the gate keeps searching
    ep = run_episode(q, env, llm=unsure, gates=["answer_convergence"], max_steps=2, out=tmp_path / "u.jsonl")
    sig = ep.steps[0].gates["answer_convergence"]["signals"]
    assert sig["uncertainty"] is None and sig["n_valid"] == 0  # NaN is written as null
    assert ep.stop_reason == "budget" and "abstention" in ep.final["answer"]["failure"]
    assert Episode.load(tmp_path / "u.jsonl").records() == ep.records()


def test_llm_policy_parse_failures_are_recorded_and_fall_back_to_the_question(env, questions):
    q = questions["q001"]
    replies = iter(["search - Havelt Brotherhood founder", "The founder was born somewhere.", "SEARCH: Kelys Kalveck",
                    "hmm", "hmm"])
    llm = ScriptedLLM(reply=by_system(policy=lambda m, i, s: next(replies), answer="Drasir"))
    ep = run_episode(q, env, llm=llm, policy="llm", gates=["exhaustion"], max_steps=5)
    parses = [s.policy["parse"] for s in ep.steps]
    assert parses == ["repaired", "failed", "ok", "failed", "failed"]
    assert ep.parse_failures == [2, 4, 5]
    assert ep.steps[0].query == "Havelt Brotherhood founder" and "tag 'search' read as SEARCH:" in ep.steps[0].policy["repairs"]
    failed = ep.steps[1]
    assert failed.policy["fallback"] and failed.query == q.question
    assert failed.policy["reason"].startswith("no SEARCH/READ/ANSWER line") and "fell back" in failed.policy["reason"]
    assert failed.policy["raw"] == "The founder was born somewhere."
    # steps 4 and 5 repeat the question (as step 2 did) and find nothing new: the gate catches the loop
    assert ep.stop_reason == "exhausted" and len(ep.steps) == 5
    assert ep.score().loop and ep.repeats() == [4, 5]


def test_run_episode_argument_errors(env, questions):
    q = questions["q001"]
    with pytest.raises(EpisodeError, match="llm must be a language-model backend"):
        run_episode(q, env, llm=None)
    with pytest.raises(EpisodeError, match="max_steps must be a positive integer"):
        run_episode(q, env, llm=ScriptedLLM(), max_steps=0)
    with pytest.raises(EpisodeError, match="question must be a SearchQuestion"):
        run_episode("", env, llm=ScriptedLLM())
    with pytest.raises(LookupError, match="no policy named 'heuristik'; available: heuristic, llm; closest match: 'heuristic'"):
        run_episode(q, env, llm=ScriptedLLM(), policy="heuristik")


# --- JSONL: streaming, interrupt and resume, reload ---------------------------------------------------------


def _episode_args(questions):
    replies = {"Who": "SEARCH: Havelt Brotherhood founder", "Kelys": "READ: doc 187"}

    def policy(messages, i, seed):
        state = messages[-1]["content"]
        return replies["Kelys"] if "Kelys Kalveck founded" in state else replies["Who"]

    def extraction(messages, i, seed):
        passages = messages[-1]["content"].split("Passages:")[1]
        if "[doc-187]" in passages:
            return "FACT: Kelys Kalveck was born in Drasir. [doc-187]\nDONE: Q1 [doc-187]"
        return "FACT: Kelys Kalveck founded the Havelt Brotherhood. [doc-091]\nOPEN: Where was Kelys Kalveck born?"

    return dict(question=questions["q001"], policy="llm", belief="predicate",
                gates=["belief_complete", "exhaustion"], max_steps=6, seed=3,
                reply=by_system(policy=policy, extraction=extraction, answer="Drasir"))


def _run(env, args, out, **kw):
    args = dict(args)
    reply = args.pop("reply")
    llm = ScriptedLLM(reply=reply, fail_after=kw.pop("fail_after", None))
    return run_episode(args.pop("question"), env, llm=llm, out=out, **args, **kw), llm


def test_jsonl_stream_interrupt_resume_and_reload(env, questions, tmp_path):
    args = _episode_args(questions)
    whole, llm = _run(env, args, tmp_path / "whole.jsonl")
    # the model closes Q1 but never the question it opened, and re-reads doc-187: the gate catches the loop
    assert whole.stop_reason == "exhausted" and len(whole.steps) == 4 and whole.answer == "Drasir"
    assert [s.action for s in whole.steps] == ["search", "read", "read", "read"] and whole.steps[1].query == "doc-187"
    assert whole.final["open_questions"] == ["Where was Kelys Kalveck born?"]
    assert [s.update["status"] for s in whole.steps] == ["ok", "ok", "partial", "partial"]
    assert "Q1 is already satisfied" in whole.steps[2].update["items"][1]["reason"]
    lines = [json.loads(x) for x in (tmp_path / "whole.jsonl").read_text().splitlines()]
    assert [r["type"] for r in lines] == ["header", "start", "step", "step", "step", "step", "final"]
    assert lines[0]["format"] == "uncertainty_lab.search/1" and lines[0]["config"]["seed"] == 3

    # interrupted during step 3 (its extraction call): the file holds what was finished
    cut = tmp_path / "cut.jsonl"
    with pytest.raises(KeyboardInterrupt):
        _run(env, args, cut, fail_after=5)  # two calls per step: the 6th call (step 3's extraction) raises
    assert [json.loads(x)["type"] for x in cut.read_text().splitlines()] == ["header", "start", "step", "step"]
    assert Episode.load(cut).complete is False and len(Episode.load(cut)) == 2
    with open(cut, "a") as f:
        f.write('{"type": "step", "t": 3, "acti')  # a write the interruption cut short
    resumed, llm2 = _run(env, args, cut)
    assert cut.read_text() == (tmp_path / "whole.jsonl").read_text()  # identical to the uninterrupted run
    assert len(llm2.calls) == len(llm.calls) - 4  # steps 1 and 2 were not made again

    loaded = Episode.load(tmp_path / "whole.jsonl")
    assert loaded.records() == whole.records() == resumed.records()
    assert loaded.score() == whole.score() and loaded.steps[1].belief == whole.steps[1].belief

    # a finished file is returned as is; another configuration is refused; resume=False starts over
    again, llm3 = _run(env, args, tmp_path / "whole.jsonl")
    assert llm3.calls == [] and again.records() == whole.records()
    with pytest.raises(EpisodeResumeError, match="max_steps: file 6 vs now 5"):
        _run(env, {**args, "max_steps": 5}, tmp_path / "whole.jsonl")
    fresh, _ = _run(env, {**args, "max_steps": 5}, tmp_path / "whole.jsonl", resume=False)
    assert Episode.load(tmp_path / "whole.jsonl").config["max_steps"] == 5 and fresh.complete
    with pytest.raises(EpisodeError, match="unfinished"):
        Episode(whole.config).score()


# --- the real embedded model --------------------------------------------------------------------------------


def test_llm_policy_with_the_embedded_model(env, questions, tmp_path):
    from uncertainty_lab.llm import get_llm

    llm = get_llm("embedded", n_threads=1)  # one thread is fastest on a busy two-core machine
    q = questions["q001"]
    ep = run_episode(q, env, llm=llm, policy="llm", belief="implicit", gates=["llm_self_stop", "exhaustion"],
                     max_steps=2, policy_params={"max_tokens": 16}, answer_max_tokens=8, out=tmp_path / "real.jsonl")
    assert ep.complete and 1 <= len(ep.steps) <= 2
    assert ep.stop_reason in ("budget", "answered", "exhausted")
    for s in ep.steps:
        assert s.policy["raw"] and s.policy["parse"] in ("ok", "repaired", "failed")
        assert s.policy["tokens"]["calls"] == 1 and s.llm_tokens["prompt"] > 0
        assert "exhaustion" in s.gates and "jaccard" in s.gates["exhaustion"]["signals"]
        assert s.belief["kind"] == "implicit" and s.belief["text"].startswith(f"Question: {q.question}")
        if s.policy["parse"] == "failed":  # recorded, and the fallback searched the question
            assert s.policy["fallback"] and s.query == q.question and s.policy["reason"]
            assert s.t in ep.parse_failures
    if llm.model_id().startswith("SmolLM2-135M"):
        # the shipped 135M model answers in prose rather than "SEARCH: ..." (both steps, seed 0, when written)
        assert ep.parse_failures and ep.steps[-1].query == q.question
    answer = ep.final["answer"]
    assert set(answer) == {"text", "normalised", "valid", "failure", "raw"}
    assert answer["valid"] == (answer["failure"] is None)
    assert Episode.load(tmp_path / "real.jsonl").records() == ep.records()
