"""Workers and the coordinator end-to-end with a scripted, deterministic backend; run files: streaming, resume
after an interruption, reload (run.py, record.py)."""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pytest
from fakes import OneHotEmbedder

from uncertainty_lab.llm import CompletionCache, LLMBackend, LLMUnavailableError
from uncertainty_lab.llm.base import sample_seed
from uncertainty_lab.orchestration import (
    ACCEPTANCE_CRITERIA,
    BenchmarkRun,
    Coordinator,
    OrchestrationError,
    OrchestrationResumeError,
    OrchestrationRun,
    QAGrader,
    Worker,
    extract_answer,
    get_policy,
    is_refusal,
    run_benchmark,
)
from uncertainty_lab.orchestration.record import FORMAT

N = 3
ROLES = {"direct": "You are direct.", "careful": "You are careful.", "plain": "You are plain."}


@dataclass
class ScriptedLLM(LLMBackend):
    """Replies from ``script(role, kind, question) -> list of texts``; the k-th generation for a given
    (system, user) prompt returns texts[k % len]. ``kind`` is ask / reprompt / delegate. Records every
    generation's sampling parameters. ``explode_on``: a question that raises KeyboardInterrupt (an
    interruption); ``down``: every call fails like a server that is off."""

    name: ClassVar[str] = "scripted"
    script: Any = None
    explode_on: str | None = None
    down: bool = False
    calls: list = field(default_factory=list, repr=False)
    counters: dict = field(default_factory=dict, repr=False)

    def model_id(self) -> str:
        return "fake"

    def _generate(self, messages, *, temperature, top_p, max_tokens, seed, stop, logprobs):
        system = next((m["content"] for m in messages if m["role"] == "system"), "")
        user = messages[-1]["content"]
        self.calls.append({"system": system, "user": user, "temperature": temperature, "max_tokens": max_tokens,
                           "seed": seed})
        if self.down:
            raise LLMUnavailableError("scripted outage: the server is down")
        question = user.split("\n")[0]
        if self.explode_on and question == self.explode_on:
            raise KeyboardInterrupt
        role = next((r for r, s in ROLES.items() if s == system), "?")
        kind = "reprompt" if "New angle" in user else ("delegate" if ACCEPTANCE_CRITERIA in user else "ask")
        texts = self.script(role, kind, question)
        k = self.counters.get((system, user), 0)
        self.counters[(system, user)] = k + 1
        return {"text": texts[k % len(texts)], "finish_reason": "stop"}


SAME = ["Paris"] * N
MIXED = ["Lyon", "Paris", "Nice"]  # H/ln n = 1, density 1/3
TWO_ONE = ["Rome", "Rome", "Milan"]  # H/ln n = 0.579, density 1/2


def script(role, kind, q):
    table = {
        "accept": {},
        "reprompt": {("direct", "ask"): MIXED},
        "reassign": {("direct", "ask"): MIXED, ("direct", "reprompt"): MIXED},
        "delegate": {("direct", "ask"): MIXED, ("direct", "reprompt"): MIXED, ("careful", "ask"): MIXED,
                     ("direct", "delegate"): MIXED},
        "cap": {("direct", "ask"): MIXED, ("direct", "reprompt"): TWO_ONE, ("careful", "ask"): ["A", "B", "C"]},
        "exhausted": {("*", "*"): MIXED},
        "empty": {("direct", "ask"): ["", "Paris", "Paris"]},
        "refuse": {("*", "*"): ["I'm sorry, but I can't help with that."]},
    }[q.split()[0]]
    return table.get((role, kind), table.get(("*", "*"), SAME))


def workers(backend, **kw):
    return [Worker(name, backend, system=system, temperature=0.9, max_tokens=16, **kw) for name, system in ROLES.items()]


def coordinator(backend=None, policy="both", **kw):
    backend = backend if backend is not None else ScriptedLLM(script=script)
    metrics = {"entropy": "discrete_semantic_entropy",
               "density": {"name": "semantic_density", "embedder": OneHotEmbedder()}}
    kw.setdefault("n_samples", N)
    return Coordinator(workers(backend), policy, metrics, judge="exact", **kw)


# ----------------------------------------------------------------------------------- workers


def test_extract_answer_pulls_a_short_answer_and_records_failures():
    assert extract_answer("The answer is: 8. Spiders have eight legs").answer == "8"
    assert extract_answer('The correct answer is "144"').answer == "144"
    assert extract_answer("Answer: Canberra\nbecause it was planned").answer == "Canberra"
    e = extract_answer("**Canberra**")
    assert (e.answer, e.method, e.ok) == ("Canberra", "first_sentence", True)
    assert extract_answer("Dr. Smith wrote it. Then more.").answer == "Dr. Smith wrote it"
    for empty in ("", "   \n", "..."):
        e = extract_answer(empty)
        assert (e.answer, e.method, e.ok) == ("", "failed", False)


def test_a_worker_samples_primary_and_extras_alike():
    llm = ScriptedLLM(script=lambda *a: ["Answer: Paris.", "It is Paris", "Paris, I think."])
    w = Worker("direct", llm, system=ROLES["direct"], temperature=0.85, max_tokens=12)
    a = w.ask("accept me", n_samples=3, seed=7)
    assert len(llm.calls) == 3
    assert {(c["temperature"], c["max_tokens"]) for c in llm.calls} == {(0.85, 12)}  # one setting for all
    assert a.answer == "Paris" and a.raw == "Answer: Paris." and a.valid
    assert a.samples.texts == ["Paris", "It is Paris", "Paris, I think"]  # extracted; primary is sample 0
    assert a.samples.meta["raw_texts"][0] == "Answer: Paris."
    assert a.samples.meta["extraction"] == ["marker", "first_sentence", "first_sentence"]
    assert a.model_calls == 3 and a.cached_calls == 0
    again = w.ask("accept me", n_samples=3, seed=7)  # the completion cache answers the repeat
    assert again.samples.texts == a.samples.texts and again.cached_calls == 3 and len(llm.calls) == 3


def test_a_worker_never_returns_an_empty_answer_silently():
    llm = ScriptedLLM(script=lambda *a: ["  ", "Paris", "Paris"])
    a = Worker("direct", llm, system=ROLES["direct"]).ask("empty", 3, 0)
    assert a.answer == "" and not a.valid and "extraction failed" in a.problem
    assert a.samples.texts == ["Paris", "Paris"] and a.samples.meta["dropped_empty"] == [0]
    with pytest.raises(LLMUnavailableError, match="scripted outage"):  # a failed call is raised, never an answer
        Worker("direct", ScriptedLLM(script=script, down=True)).ask("q", 3, 0)


def test_worker_settings_are_checked():
    with pytest.raises(ValueError, match="temperature must be in"):
        Worker("w", "embedded", temperature=0.0)
    with pytest.raises(TypeError, match="backend must be a language-model backend"):
        Worker("w", object())
    with pytest.raises(ValueError, match="model is only for a backend given by name"):
        Worker("w", ScriptedLLM(script=script), model="x")


# ----------------------------------------------------------------------------------- the loop


def test_no_concern_is_accepted_in_round_one():
    t = coordinator().run("accept this")
    assert t.actions == ["accept"] and t.answer == "Paris" and t.final.exit == "accept" and t.final.valid
    s = t.first_signals
    assert s.entropy == 0.0 and s.density == pytest.approx(1.0) and s.entropy_raw == 0.0 and s.n_samples == N
    assert t.model_calls == N and t.rounds[0].action == "ask"
    assert t.decisions[0].signals == s and "no concern" in t.decisions[0].reason


def test_first_concern_reprompts_with_acceptance_criteria_and_a_new_angle():
    llm = ScriptedLLM(script=script)
    t = coordinator(llm).run("reprompt this")
    assert t.actions == ["reprompt", "accept"] and [r.action for r in t.rounds] == ["ask", "reprompt"]
    assert t.first_signals.entropy == pytest.approx(1.0) and t.first_signals.density == pytest.approx(1 / 3)
    assert any("entropy 1 > 0.5" in c for c in t.decisions[0].concerns)
    prompt = t.rounds[1].candidate.answer.prompt
    assert prompt.startswith("reprompt this") and ACCEPTANCE_CRITERIA in prompt and "New angle:" in prompt
    assert "try again" not in prompt.lower()
    assert t.answer == "Paris" and t.final.round == 2 and t.model_calls == 2 * N


def test_repeated_concern_reassigns_to_another_worker():
    t = coordinator().run("reassign this")
    assert t.actions == ["reprompt", "reassign", "accept"]
    assert [r.candidate.answer.worker for r in t.rounds] == ["direct", "direct", "careful"]
    assert t.rounds[2].candidate.answer.prompt == "reassign this"  # the new worker gets the question afresh
    assert t.final.worker == "careful" and t.answer == "Paris"


def test_a_failed_reassign_delegates_to_several_workers_and_picks_the_most_confident():
    t = coordinator().run("delegate this")
    assert t.actions == ["reprompt", "reassign", "delegate", "accept"]
    last = t.rounds[3]
    assert last.action == "delegate" and [c.answer.worker for c in last.candidates] == ["plain", "direct"]
    assert last.candidate.answer.worker == "plain" and last.chosen == 0  # direct's answers were mixed
    assert [c.signals.entropy for c in last.candidates] == pytest.approx([0.0, 1.0])
    assert t.model_calls == 5 * N and t.final.worker == "plain"


def test_the_round_cap_selects_the_best_round_already_produced():
    t = coordinator(policy=get_policy("both", max_rounds=3)).run("cap this")
    assert t.actions == ["reprompt", "reassign", "final_select"]
    assert "round cap 3" in t.decisions[-1].reason
    # round 2 (Rome, Rome, Milan: H/ln n 0.58, density 0.5) beats rounds 1 and 3 (all different)
    assert t.final.exit == "final_select" and t.final.round == 2 and t.answer == "Rome"
    assert "best of 3" in t.final.note


def test_an_exhausted_ladder_stops_early_instead_of_chasing_the_metric():
    t = coordinator(policy=get_policy("both", max_rounds=10)).run("exhausted everywhere")
    assert t.actions == ["reprompt", "reassign", "delegate", "final_select"]
    assert "ladder is used up" in t.decisions[-1].reason and len(t.rounds) == 4


def test_a_backend_outage_is_raised_never_an_answer():
    for policy in (get_policy("both", max_rounds=3), "none"):
        with pytest.raises(LLMUnavailableError, match="scripted outage"):
            coordinator(ScriptedLLM(script=script, down=True), policy=policy).run("accept this")


def test_a_worker_that_is_down_fails_the_question_rather_than_being_escalated_past():
    up = ScriptedLLM(script=script)
    down = ScriptedLLM(script=script, down=True)
    ws = [Worker("direct", down, system=ROLES["direct"]), Worker("careful", up, system=ROLES["careful"])]
    metrics = {"entropy": "discrete_semantic_entropy", "density": {"name": "semantic_density", "embedder": OneHotEmbedder()}}
    with pytest.raises(LLMUnavailableError, match="scripted outage"):
        Coordinator(ws, "both", metrics, n_samples=N, judge="exact").run("accept this")
    assert not up.calls  # nothing was asked past the failure


def test_every_exit_is_validated_an_invalid_accepted_answer_is_replaced_or_flagged():
    t = coordinator(policy="none").run("empty primary")
    assert t.actions == ["accept"] and not t.final.valid and "no valid answer" in t.final.note
    gated = coordinator().run("empty primary")
    assert "invalid answer" in gated.decisions[0].concerns[0] and gated.actions[0] == "reprompt"
    assert gated.final.valid and gated.answer == "Paris"


def test_reprompts_can_be_rephrased_by_an_llm_and_the_call_is_counted():
    rephraser = ScriptedLLM(script=lambda *a: ["Which city is it, exactly?"])
    t = coordinator(rephraser=rephraser).run("reprompt this")
    assert "(Put differently: Which city is it, exactly?)" in t.rounds[1].candidate.answer.prompt
    assert t.model_calls == 2 * N + 1 and len(rephraser.calls) == 1


def test_configuration_errors_are_clear():
    with pytest.raises(OrchestrationError, match="n_samples >= 2"):
        coordinator(n_samples=1)
    with pytest.raises(OrchestrationError, match=r"gates on \['density'\].*no such role"):
        Coordinator(workers(ScriptedLLM(script=script)), "both", {"entropy": "discrete_semantic_entropy"}, judge="exact")
    with pytest.raises(OrchestrationError, match="never fire"):
        Coordinator(workers(ScriptedLLM(script=script)), get_policy("density_only", density_threshold=0.2),
                    {"density": {"name": "semantic_density", "variant": "embedding_set", "embedder": OneHotEmbedder()}},
                    n_samples=5, judge="exact")
    with pytest.raises(OrchestrationError, match="unique"):
        Coordinator([Worker("a", "embedded"), Worker("a", "embedded")], "none", judge="exact")
    with pytest.raises(OrchestrationError, match="question must be a non-empty string"):
        coordinator().run("  ")


def test_metrics_and_the_judge_are_resolved_like_every_plugin():
    from uncertainty_lab.parameters import ParameterError
    from uncertainty_lab.registry import UnknownPluginError

    ws = workers(ScriptedLLM(script=script))
    with pytest.raises(ParameterError, match=r"metrics\['entropy'\]: .*'discrete_semantic_entropy' has no parameter 'bandwidth'"):
        Coordinator(ws, "none", {"entropy": {"name": "discrete_semantic_entropy", "bandwidth": 1.0}}, judge="exact")
    with pytest.raises(UnknownPluginError, match=r"metrics\['density'\]: no metrics plugin named 'nope'"):
        Coordinator(ws, "none", {"density": "nope"}, judge="exact")
    with pytest.raises(UnknownPluginError, match="judge: no equivalence_judges plugin named 'nope'"):
        Coordinator(ws, "none", judge="nope")
    c = Coordinator(ws, "none", {"entropy": "discrete_semantic_entropy"}, n_samples=N, judge={"name": "exact"})
    conf = c.config()
    assert conf["judge"] == {"name": "exact", "params": {}}  # parameters.settings: what a journal records
    assert conf["metrics"] == {"entropy": {"name": "discrete_semantic_entropy",
                                           "params": {"judge": "exact", "clustering": "greedy"}}}


def test_every_call_for_a_question_keeps_the_seed_recorded_caches_were_made_with():
    llm = ScriptedLLM(script=script)
    coordinator(llm, seed=7).run("accept this")
    # the seed before seeds.derive_seed existed: SeedSequence([seed, crc32(question)]), 31 bits
    old = int(np.random.SeedSequence([7, zlib.crc32(b"accept this")]).generate_state(1, np.uint32)[0] & 0x7FFFFFFF)
    assert [c["seed"] for c in llm.calls] == [sample_seed(old, i) for i in range(N)]


def test_trace_round_trips_and_describes_itself():
    t = coordinator().run("delegate this")
    from uncertainty_lab.orchestration import Trace

    back = Trace.from_dict(json.loads(json.dumps(t.to_dict())))
    assert back.to_dict() == json.loads(json.dumps(t.to_dict()))
    text = t.describe()
    assert "round 4 delegate" in text and "final (accept" in text and "model calls" in text


# ----------------------------------------------------------------------------------- runs on disk

ITEMS = [
    {"id": "a", "question": "accept this", "answers": ["Paris"]},
    {"id": "b", "question": "reprompt this", "answers": ["Paris"]},
    {"id": "c", "question": "cap this", "answers": ["Milan"]},
    {"id": "d", "question": "refuse this", "answers": ["I can't help with that"], "behaviour": "decline"},
    {"id": "e", "question": "reassign this", "answers": ["Lyon"]},
]
VOLATILE = {"wall_time_s", "cached_calls", "judge_hits", "judge_misses"}


def stable(record):
    """A record without what legitimately differs between two runs (timing, cache provenance)."""
    if isinstance(record, dict):
        return {k: stable(v) for k, v in record.items() if k not in VOLATILE and k != "cached"}
    if isinstance(record, list):
        return [stable(v) for v in record]
    return record


def lines(path):
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_run_benchmark_streams_grades_and_reloads(tmp_path):
    out = tmp_path / "run.jsonl"
    run = coordinator(policy=get_policy("both", max_rounds=3)).run_benchmark(ITEMS, out, progress=False)
    recs = lines(out)
    assert [r["type"] for r in recs] == ["header", *["question"] * 5, "end"]
    assert recs[0]["config"]["items"] == list("abcde") and recs[0]["config"]["coordinator"]["policy"]["name"] == "both"
    assert run.correct.tolist() == [True, True, False, True, False]
    # e: the first answer ("Lyon") was right; chasing the metric replaced it with a consistent wrong one
    assert run.first_correct.tolist() == [True, False, False, True, True]
    assert run.records[3].grade["method"] == "refusal"
    ci = run.accuracy_ci()
    assert (ci.successes, ci.n, ci.method) == (3, 5, "Wilson") and ci.low < 0.6 < ci.high
    assert run.model_calls.tolist() == [3, 6, 9, 3, 9] and (run.wall_time > 0).all()
    assert run.action_counts() == {"accept": 4, "reprompt": 3, "reassign": 2, "final_select": 1}
    assert run.first_signal("entropy")[:2].tolist() == pytest.approx([1.0, 0.0])
    back = OrchestrationRun.load(out)
    assert back.complete and back.ids == run.ids and back.policy == "both"
    assert [r.to_dict() for r in back.records] == [json.loads(json.dumps(r.to_dict())) for r in run.records]
    hits = back.judge_cache()
    assert hits["hits"] + hits["misses"] > 0


def test_an_interrupted_run_resumes_to_the_same_result(tmp_path):
    policy = get_policy("both", max_rounds=3)
    reference = tmp_path / "uninterrupted.jsonl"
    coordinator(policy=policy).run_benchmark(ITEMS, reference, progress=False)

    out = tmp_path / "interrupted.jsonl"
    own = CompletionCache(tmp_path / "own_cache.sqlite")  # so the resumed run really calls its model
    with pytest.raises(KeyboardInterrupt):
        coordinator(ScriptedLLM(script=script, explode_on="cap this", cache=own), policy).run_benchmark(
            ITEMS, out, progress=False)
    partial = OrchestrationRun.load(out)
    assert partial.ids == ["a", "b"] and not partial.complete
    with open(out, "a") as f:
        f.write('{"type": "question", "index": 2, "id": "c", "tr')  # half a line from a killed write
    llm = ScriptedLLM(script=script, cache=own)
    resumed = coordinator(llm, policy).run_benchmark(ITEMS, out, progress=False)
    assert resumed.ids == list("abcde") and resumed.complete
    assert stable(lines(out)) == stable(lines(reference))
    asked = {c["user"].split("\n")[0] for c in llm.calls}
    assert asked == {"cap this", "refuse this", "reassign this"}  # a and b were kept, not asked again

    # a finished run is returned as is, without a model call
    idle = ScriptedLLM(script=script)
    again = coordinator(idle, policy).run_benchmark(ITEMS, out, progress=False)
    assert again.ids == list("abcde") and idle.calls == []


def test_resuming_with_another_configuration_is_refused(tmp_path):
    out = tmp_path / "run.jsonl"
    coordinator(policy="none").run_benchmark(ITEMS[:2], out, progress=False)
    with pytest.raises(OrchestrationResumeError, match=r"policy\.name.*resume=False"):
        coordinator(policy="both").run_benchmark(ITEMS[:2], out, progress=False)
    with pytest.raises(OrchestrationResumeError, match="items"):
        coordinator(policy="none").run_benchmark(ITEMS[:3], out, progress=False)
    fresh = coordinator(policy="both").run_benchmark(ITEMS[:2], out, progress=False, resume=False)
    assert OrchestrationRun.load(out).policy == "both" and fresh.complete


def test_run_benchmark_is_one_function_and_old_run_files_still_load(tmp_path):
    assert BenchmarkRun is OrchestrationRun  # the old name, kept for one release
    assert FORMAT.name == "uncertainty_lab.orchestration.benchmark/1"
    run_benchmark(coordinator(policy="none"), ITEMS[:2], tmp_path / "f.jsonl", progress=False)
    coordinator(policy="none").run_benchmark(ITEMS[:2], tmp_path / "m.jsonl", progress=False)
    assert stable(lines(tmp_path / "f.jsonl")) == stable(lines(tmp_path / "m.jsonl"))
    # a file whose header records the metrics the way the code before the lab contract did
    recs = lines(tmp_path / "f.jsonl")
    recs[0]["config"]["coordinator"]["metrics"] = {"entropy": {"name": "discrete_semantic_entropy", "clustering": "greedy"}}
    recs[0]["config"]["coordinator"]["judge"] = {"name": "exact"}
    old = tmp_path / "old.jsonl"
    old.write_text("".join(json.dumps(r) + "\n" for r in recs))
    back = OrchestrationRun.load(old)
    assert back.complete and back.ids == ["a", "b"] and back.correct.tolist() == [True, False]


def test_bad_run_files_and_items_are_reported(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "question"}\n')
    with pytest.raises(OrchestrationError, match="before the header"):
        OrchestrationRun.load(bad)
    with pytest.raises(FileNotFoundError):
        OrchestrationRun.load(tmp_path / "nope.jsonl")
    with pytest.raises(OrchestrationError, match="unique"):
        coordinator().run_benchmark([ITEMS[0], ITEMS[0]], progress=False)
    run = coordinator(policy="none").run_benchmark(["accept this"], progress=False)  # ungraded, in memory
    assert run.records[0].grade is None and run.path is None
    with pytest.raises(OrchestrationError, match="ungraded"):
        _ = run.correct


def test_grading_uses_containment_and_refusal_markers():
    g = QAGrader()
    assert g({"answers": ["Canberra"], "question": "q"}, "It is Canberra", "It is Canberra.")["correct"]
    assert not g({"answers": ["Canberra"]}, "Sydney", "Sydney")["correct"]
    decline = {"answers": ["Ask the clinic"], "behaviour": "decline"}
    assert g(decline, "Sure", "Sure. I'm sorry, but I can't write that.")["correct"]
    assert g(decline, "x", "You should ask the clinic for a note")["correct"]
    assert not g(decline, "Dear Dr", "Dear Dr. Reyes, my son had the flu")["correct"]
    assert is_refusal("I cannot help with that.") == "i cannot"
