"""The CGDP experiment: implicit vs predicate × gate sets × policies, its tables, savings and paired tests, the
oracle reader, resuming after an interruption, config files and the ``search run`` command; the llm policy
with the real embedded model on two questions."""

from __future__ import annotations

import json
import math
import time

import pytest
from fakes import FakeEpisode

from uncertainty_lab.search import Episode, PredicateBelief, SearchEnvironment, run_episode
from uncertainty_lab.search.config import Condition, SearchConfig, gate_label, load_config, select_questions
from uncertainty_lab.search.experiment import run_experiment
from uncertainty_lab.search.oracle import OracleReader, OracleReaderError
from uncertainty_lab.search.prompts import answer_messages, decomposition_messages, policy_messages
from uncertainty_lab.search.result import SearchResult

FAST = {"llm": "oracle", "limit": 10, "progress": False, "figure": False}


def _strip_paths(d):
    d = dict(d)
    d.pop("episodes", None)
    d["config"] = {k: v for k, v in d["config"].items() if k != "out_dir"}
    return d


# --- the heuristic experiment -------------------------------------------------------------------------------


def test_heuristic_experiment_is_quick_deterministic_and_has_intervals(tmp_path):
    start = time.perf_counter()
    a = run_experiment({**FAST, "out_dir": str(tmp_path / "a")})
    seconds = time.perf_counter() - start
    b = run_experiment({**FAST, "out_dir": str(tmp_path / "b")})
    assert seconds < 60, f"10 questions × 4 conditions with the oracle took {seconds:.1f} s"
    assert json.dumps(_strip_paths(a.to_dict()), sort_keys=True) == json.dumps(_strip_paths(b.to_dict()),
                                                                               sort_keys=True)
    labels = [c.label for c in a.conditions]
    assert labels == ["heuristic · implicit · fixed_budget", "heuristic · implicit · exhaustion+fixed_budget",
                      "heuristic · predicate · fixed_budget", "heuristic · predicate · exhaustion+fixed_budget"]
    rows = a.summary_rows()
    for r in rows:
        assert r["n"] == 10
        em, f1, tok = r["exact_match"], r["f1"], r["context_tokens"]
        assert 0 <= em["low"] <= em["rate"] <= em["high"] <= 1 and em["high"] > em["low"]  # Wilson is never empty
        assert f1["low"] <= f1["mean"] <= f1["high"]
        assert tok["low"] <= tok["mean"] <= tok["high"] and tok["mean"] > 0
        assert r["model_tokens"]["mean"] > 0  # counted from the prompts even though the oracle is free
        assert sum(r["stop_reasons"].values()) == 10
        assert 0 <= r["loop"]["rate"] <= 1 and 0 <= r["premature_stop"]["rate"] <= 1
        assert r["steps"] <= 8
    # the exhaustion gate never adds steps to the same episode, and stops with reason "exhausted"
    for belief in ("implicit", "predicate"):
        without = a.condition(belief=belief, gates="fixed_budget")
        with_ = a.condition(belief=belief, gates="exhaustion+fixed_budget")
        for e0, e1 in zip(a.episodes[without], a.episodes[with_], strict=True):
            assert e0.question_id == e1.question_id and len(e1.steps) <= len(e0.steps)
            assert [s.query for s in e1.steps] == [s.query for s in e0.steps[:len(e1.steps)]]
            if len(e1.steps) < len(e0.steps):
                assert e1.stop_reason == "exhausted"
    table = a.summary_table()
    assert table.count("\n") == 1 + len(rows)
    assert "exact match [95% Wilson]" in table and "[" in table.splitlines()[2]
    savings = a.token_savings()
    assert [(s["belief"], s["without"], s["with"]) for s in savings] == [
        ("implicit", "fixed_budget", "exhaustion+fixed_budget"), ("predicate", "fixed_budget", "exhaustion+fixed_budget")]
    for s in savings:
        ct = s["context_tokens"]
        assert ct["saving"] == pytest.approx((ct["without"] - ct["with"]) / ct["without"])
        assert ct["low"] <= ct["saving"] <= ct["high"] and ct["saving"] >= 0
        assert "accuracy" in s["accuracy_note"] and set(s["accuracy_difference"]) >= {"difference", "low", "high"}
    report = a.report()
    for needle in ("## Token savings of the exhaustion gate", "39%", "11.4%", "oracle reader", "McNemar"):
        assert needle in report
    factors = sorted(p["factor"] for p in a.paired())
    assert factors == ["belief", "belief", "gates", "gates"]
    belief_pair = next(p for p in a.paired() if p["factor"] == "belief")
    assert belief_pair["comparison"].names == ("predicate", "implicit")


def test_results_files_and_figure(tmp_path):
    r = run_experiment({**FAST, "limit": 3, "figure": True, "out_dir": str(tmp_path)})
    assert set(r.files) == {"summary", "results", "figure"}
    assert r.files["figure"].stat().st_size > 10_000
    data = json.loads(r.files["results"].read_text())
    assert len(data["summary"]) == 4 and data["llm"] == "oracle:gold-reader-1"
    assert all(len(v) == 3 for v in data["episodes"].values())
    assert len(list((tmp_path / "episodes").glob("*/*.jsonl"))) == 12
    fig = r.draw_stop_reasons()
    assert len(fig.axes) == 1


def test_savings_are_reported_with_the_accuracy_difference():
    """A saving bought with lost accuracy says so; equal accuracy says so."""
    cfg = SearchConfig(beliefs=["implicit"], llm="oracle")
    without, with_ = Condition("heuristic", "implicit", ("fixed_budget",)), \
        Condition("heuristic", "implicit", ("exhaustion", "fixed_budget"))
    ids = [f"q{i}" for i in range(10)]
    lose = SearchResult(cfg, {
        without: [FakeEpisode(i, correct=True, cost=100) for i in ids],
        with_: [FakeEpisode(i, correct=k >= 8, cost=60) for k, i in enumerate(ids)],
    })
    (row,) = lose.token_savings()
    assert row["context_tokens"]["saving"] == pytest.approx(0.4)
    assert row["accuracy_same"] is False and "NOT equal" in row["accuracy_note"]
    assert row["accuracy_difference"]["difference"] == pytest.approx(-0.8)
    assert "NOT equal" in lose.savings_table() and "+40%" in lose.savings_table()
    same = SearchResult(cfg, {without: [FakeEpisode(i, correct=k < 5, cost=100) for k, i in enumerate(ids)],
                                        with_: [FakeEpisode(i, correct=k < 5, cost=75) for k, i in enumerate(ids)]})
    (row,) = same.token_savings()
    assert row["accuracy_same"] and row["context_tokens"]["saving"] == pytest.approx(0.25)
    assert "equal accuracy" in row["accuracy_note"] and "says nothing" not in row["accuracy_note"]
    zero = SearchResult(cfg, {without: [FakeEpisode(i, correct=False, cost=100) for i in ids],
                                        with_: [FakeEpisode(i, correct=False, cost=50) for i in ids]})
    (row,) = zero.token_savings()
    assert row["accuracy_same"] and "both arms are at 0%, so this says nothing" in row["accuracy_note"]
    noise = SearchResult(cfg, {without: [FakeEpisode(i, correct=k < 5, cost=100) for k, i in enumerate(ids)],
                                         with_: [FakeEpisode(i, correct=k < 4, cost=75) for k, i in enumerate(ids)]})
    (row,) = noise.token_savings()
    assert not row["accuracy_same"] and "within noise" in row["accuracy_note"]


# --- the oracle reader --------------------------------------------------------------------------------------


def test_oracle_reader_answers_only_from_cited_evidence(questions):
    q = questions["q001"]  # supporting doc-091 (founder), doc-187 (birthplace)
    oracle = OracleReader()
    both = "Question: x\n[doc-091] Havelt Brotherhood: ...\n[doc-187] Kelys Kalveck: ..."
    one = "Question: x\nF1. founded by Kelys Kalveck [doc-091]"
    assert oracle.complete(answer_messages(q.question, both))[0].text == "Drasir"
    assert oracle.complete(answer_messages(q.question, one))[0].text == "unknown"
    assert oracle.complete(answer_messages("Who is nobody?", both))[0].text == "unknown"
    assert [c.text for c in oracle.complete(answer_messages(q.question, both), n=3)] == ["Drasir"] * 3
    assert oracle.complete(decomposition_messages(q.question))[0].text.splitlines() == [
        f"OPEN: {s.question}" for s in q.decomposition]
    with pytest.raises(OracleReaderError, match="heuristic"):
        oracle.complete(policy_messages(f"Question: {q.question}"))
    with pytest.raises(OracleReaderError, match="only answers"):
        oracle.complete([{"role": "system", "content": "hello"}, {"role": "user", "content": "hi"}])


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_oracle_extraction_is_accepted_strictly_by_the_predicate_belief(questions, fmt):
    q = questions["q001"]
    env = SearchEnvironment()
    oracle = OracleReader()
    belief = PredicateBelief(format=fmt, init="decomposition")
    belief.start(q.question, decomposition=[s.question for s in q.decomposition])
    obs = env.read("doc-091")
    from uncertainty_lab.search import Action

    rec = belief.update(1, Action("read", "doc-091"), obs, llm=oracle)
    assert rec["status"] == "ok", rec
    assert belief.findings[0].doc_ids == ("doc-091",) and "Kelys Kalveck" in belief.findings[0].text
    assert belief.predicates[0].status == "satisfied" and belief.predicates[0].note == "Kelys Kalveck"
    rec = belief.update(2, Action("read", "doc-187"), env.read("doc-187"), llm=oracle)
    assert rec["status"] == "ok" and belief.open_questions() == []
    assert oracle.complete(answer_messages(q.question, belief.render()))[0].text == "Drasir"
    # a passage that supports nothing gets an empty update, recorded as such
    rec = belief.update(3, Action("read", "doc-001"), env.read("doc-001"), llm=oracle)
    assert rec["status"] == "rejected" and rec["n_accepted"] == 0


def test_oracle_drives_a_heuristic_predicate_episode_to_the_answer(questions):
    ep = run_episode(questions["q001"], SearchEnvironment(), llm=OracleReader(), policy="heuristic",
                     belief="predicate", gates=["belief_complete", "exhaustion"], max_steps=8)
    s = ep.score()
    assert ep.stop_reason == "answered" and ep.stop_gate == "belief_complete"
    assert s.exact_match == 1.0 and s.support_recall == 1.0 and not s.premature_stop


# --- configuration ------------------------------------------------------------------------------------------


def test_config_files_and_errors(tmp_path):
    toml = tmp_path / "c.toml"
    toml.write_text('llm = "oracle"\nhops = [4]\nlimit = 2\nmax_steps = 4\n'
                    'gate_sets = [["fixed_budget"], [{name = "exhaustion", tau_j = 0.5}, "fixed_budget"]]\n'
                    '[belief_params.predicate]\nmax_findings = 4\n')
    cfg = load_config(toml)
    assert [q.hops for q in select_questions(cfg)] == [4, 4]
    assert [c.gate_label for c in cfg.conditions()] == ["fixed_budget", "exhaustion(tau_j=0.5)+fixed_budget"] * 2
    assert dict(cfg.conditions()[0].gates[0]) == {"name": "fixed_budget", "max_steps": 4}
    js = tmp_path / "c.json"
    js.write_text(json.dumps({"llm": "oracle", "questions": ["q002", "q001"]}))
    assert [q.id for q in select_questions(load_config(js))] == ["q001", "q002"]
    assert gate_label(["exhaustion", {"name": "fixed_budget", "max_steps": 3}]) == "exhaustion+fixed_budget(max_steps=3)"
    with pytest.raises(ValueError, match="did you mean 'max_steps'"):
        SearchConfig.from_mapping({"max_step": 3})
    with pytest.raises(ValueError, match="cannot choose actions"):
        SearchConfig(llm="oracle", policies=["heuristic", "llm"])
    with pytest.raises(ValueError, match="did you mean 'predicate'"):
        SearchConfig(beliefs=["predicat"])
    with pytest.raises(ValueError, match="gate sets must differ"):
        SearchConfig(gate_sets=[["fixed_budget"], ["fixed_budget"]])
    with pytest.raises(ValueError, match="not in the data set"):
        select_questions(SearchConfig(questions=["q999"]))
    with pytest.raises(ValueError, match="empty"):
        select_questions(SearchConfig(hops=[9]))
    bad = tmp_path / "c.yaml"
    bad.write_text("x")
    with pytest.raises(ValueError, match=".json or .toml"):
        load_config(bad)
    with pytest.raises(ValueError, match="gate set .exhaustio.: no stopping_gates plugin named .exhaustio.; .*closest match: .exhaustion."):
        run_experiment({**FAST, "limit": 1, "gate_sets": [["exhaustio"]], "out_dir": str(tmp_path / "x")})


# --- resume -------------------------------------------------------------------------------------------------


class _Interrupted(Exception):
    pass


class FlakyOracle(OracleReader):
    """The oracle, interrupted after ``fail_after`` calls (a killed process, a Ctrl-C)."""

    def __init__(self, fail_after: int):
        super().__init__()
        self.fail_after, self.n = fail_after, 0

    def complete(self, messages, **kw):
        self.n += 1
        if self.n > self.fail_after:
            raise _Interrupted("interrupted")
        return super().complete(messages, **kw)


def test_resume_after_interruption(tmp_path):
    cfg = {**FAST, "limit": 4, "beliefs": ["predicate"], "max_steps": 5}
    whole = run_experiment({**cfg, "out_dir": str(tmp_path / "whole")})
    with pytest.raises(_Interrupted):
        run_experiment({**cfg, "llm": FlakyOracle(fail_after=17), "out_dir": str(tmp_path / "cut")})
    files = sorted((tmp_path / "cut" / "episodes").glob("*/*.jsonl"))
    assert files and not (tmp_path / "cut" / "summary.md").exists()
    partial = [Episode.load(f) for f in files]
    assert any(not ep.complete for ep in partial)  # the one being run when it stopped
    resumed = run_experiment({**cfg, "out_dir": str(tmp_path / "cut")})
    assert json.dumps(_strip_paths(resumed.to_dict()), sort_keys=True) == json.dumps(
        _strip_paths(whole.to_dict()), sort_keys=True)
    for c in whole.conditions:
        for e0, e1 in zip(whole.episodes[c], resumed.episodes[c], strict=True):
            assert e0.records() == e1.records()
    # a finished run is read back, not rerun: an oracle that fails at once is never called
    again = run_experiment({**cfg, "llm": FlakyOracle(fail_after=0), "out_dir": str(tmp_path / "cut")})
    assert again.summary_rows() == resumed.summary_rows()


# --- the command line ---------------------------------------------------------------------------------------


def test_cli_search_run_writes_its_files(tmp_path, capsys):
    from uncertainty_lab.cli import main

    cfg = tmp_path / "search.toml"
    cfg.write_text('llm = "oracle"\nlimit = 3\nout_dir = "ignored"\n')
    out = tmp_path / "out"
    assert main(["search", "run", "--config", str(cfg), "--out-dir", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "# CGDP search experiment" in printed and "wrote:" in printed
    for name in ("summary.md", "results.json", "figure.png"):
        assert (out / name).is_file(), name
    assert len(list((out / "episodes").glob("*/*.jsonl"))) == 12
    assert not (tmp_path / "ignored").exists()
    bad = tmp_path / "bad.toml"
    bad.write_text('llm = "oracle"\npolicies = ["llm"]\n')
    assert main(["search", "run", "--config", str(bad)]) == 1
    assert "cannot choose actions" in capsys.readouterr().err
    assert main(["search", "run", "--config", str(tmp_path / "missing.toml")]) == 1


# --- the real embedded model --------------------------------------------------------------------------------


@pytest.mark.slow
def test_llm_policy_with_the_embedded_model(tmp_path):
    """One step per episode (84 s with two, 42 s with one): later steps' longer prompts are test_search_agent's."""
    result = run_experiment({
        "llm": "embedded", "llm_params": {"n_threads": 1}, "policies": ["llm"], "beliefs": ["implicit", "predicate"],
        "gate_sets": [["llm_self_stop", "exhaustion", "fixed_budget"]], "limit": 2, "max_steps": 1,
        "policy_params": {"llm": {"max_tokens": 12}}, "belief_params": {"predicate": {"max_tokens": 24}},
        "answer_max_tokens": 8, "progress": False, "figure": False, "out_dir": str(tmp_path)})
    assert result.llm_label.startswith("embedded:")
    rows = result.summary_rows()
    assert [r["condition"] for r in rows] == ["llm · implicit · llm_self_stop+exhaustion+fixed_budget",
                                              "llm · predicate · llm_self_stop+exhaustion+fixed_budget"]
    for r, c in zip(rows, result.conditions, strict=True):
        assert r["n"] == 2 and r["steps"] == 1
        assert r["model_tokens"]["mean"] > 0 and not math.isnan(r["exact_match"]["low"])
        for ep in result.episodes[c]:
            assert ep.complete and all(s.policy["policy"] == "llm" and s.policy["raw"] for s in ep.steps)
            assert r["parse_failures"] >= len(ep.parse_failures)
    assert [p["factor"] for p in result.paired()] == ["belief"]
    assert "llm-policy steps could not be parsed" in result.report() or all(
        r["parse_failures"] == 0 for r in rows)
