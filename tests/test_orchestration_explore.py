"""Notebook 04's tools: policy tables, dry runs on hand-made signals, trace tables (explore.py), cases read off a
run (cases.py), the signal map (figures.py), sample-size arithmetic (sample_size.py) and the scripted backend
(scripted.py) — with a scripted model and a one-hot embedder, no LLM."""

from __future__ import annotations

import math

import pytest
from fakes import OneHotEmbedder

from uncertainty_lab.datasets.qa import QAItem
from uncertainty_lab.orchestration import Coordinator, Signals, default_workers, get_policy
from uncertainty_lab.orchestration.cases import CASE_KINDS, case_table, category_table, find_cases
from uncertainty_lab.orchestration.explore import (
    decisions_table,
    dry_run,
    policy_table,
    score_answers,
    short_reason,
    trace_table,
)
from uncertainty_lab.orchestration.figures import draw_signal_map
from uncertainty_lab.orchestration.sample_size import sample_size_table, smallest_significant_gap
from uncertainty_lab.orchestration.scripted import ScriptedLLM

BAD = Signals(entropy=1.0, density=0.3, n_samples=3)
GOOD = Signals(entropy=0.0, density=0.97, n_samples=3)


def coordinator(script, policy="both", n=3, **kw):
    llm = ScriptedLLM(script=script)
    metrics = {"entropy": "discrete_semantic_entropy",
               "density": {"name": "semantic_density", "embedder": OneHotEmbedder()}}
    return Coordinator(default_workers(llm, max_tokens=8), policy, metrics, n_samples=n, judge="exact", **kw)


# ----------------------------------------------------------------------------------- policies as data


def test_policy_table_shows_every_field_of_every_preset():
    t = policy_table()
    assert t.columns == ["field", "none", "entropy_only", "density_only", "both"]
    rows = {r["field"]: r for r in t}
    assert rows["metrics"]["none"] == "(none)" and rows["metrics"]["both"] == "entropy, density"
    assert rows["max_rounds"]["none"] == 1 and rows["entropy_threshold"]["both"] == 0.5
    assert "name" not in rows
    custom = policy_table("both", {"preset": "both", "name": "strict", "density_threshold": 0.9})
    assert [r["strict"] for r in custom if r["field"] == "density_threshold"] == [0.9]
    with pytest.raises(ValueError, match="distinct names"):
        policy_table("both", "both")


def test_dry_run_climbs_the_whole_ladder_and_stops_at_the_cap():
    ds = dry_run("both", [BAD] * 4)
    assert [d.action for d in ds] == ["reprompt", "reassign", "delegate", "final_select"]
    assert [d.round for d in ds] == [1, 2, 3, 4]
    assert [d.action for d in dry_run("both", [BAD, GOOD, BAD])] == ["reprompt", "accept"]
    assert [d.action for d in dry_run("both", [GOOD])] == ["accept"]
    # one worker: no one to reassign or delegate to
    assert [d.action for d in dry_run("both", [BAD] * 4, n_workers=1)] == ["reprompt", "final_select"]
    with pytest.raises(ValueError, match="had not stopped after 2"):
        dry_run("both", [BAD, BAD])
    with pytest.raises(ValueError, match="empty"):
        dry_run("both", [])


def test_decisions_table_separates_concerns_from_reasons():
    ds = dry_run("both", [BAD] * 4)
    t = decisions_table(ds)
    assert t.columns == ["round", "SE", "SD", "concern", "action", "reason"]
    assert t[0]["concern"] == "entropy 1 > 0.5; density 0.3 < 0.8"
    assert t[0]["reason"] == "first concern: re-prompt with explicit acceptance criteria and a changed angle"
    assert "(the reprompt did not clear it)" in t[1]["reason"] and "entropy 1" not in t[1]["reason"]
    assert t[3]["reason"].startswith("round cap 4 reached with concern: ")
    clean = decisions_table(dry_run("both", [GOOD]), labels=["clean"])
    assert clean[0]["case"] == "clean" and clean[0]["concern"] == "—" and clean[0]["action"] == "accept"
    missing = get_policy("both").decide(Signals(entropy=0.0, density=math.nan, missing={"density": "outage"}), 1)
    assert decisions_table([missing])[0]["concern"] == "density missing: outage"
    assert short_reason(missing).startswith("first concern: ")
    with pytest.raises(ValueError, match="labels"):
        decisions_table(ds, labels=["a"])


# ----------------------------------------------------------------------------------- traces and the scripted backend


def test_the_scripted_backend_replies_by_worker_and_kind_without_a_cache():
    llm = ScriptedLLM(script={"direct:ask": ["a", "b"], "*:reprompt": ["r"], "*": ["x"]})
    out = llm.complete([{"role": "system", "content": default_workers(llm)[0].system},
                        {"role": "user", "content": "Q?"}], n=3, seed=1)
    assert [c.text for c in out] == ["a", "b", "a"] and not any(c.cached for c in out)
    assert llm.complete("Q?\n\nNew angle: think", n=1, seed=1)[0].text == "r"
    assert llm.complete("anything", n=1, seed=1)[0].text == "x"
    assert llm.label == "scripted:script"
    with pytest.raises(KeyError, match="no reply"):
        ScriptedLLM(script={"direct:ask": ["a"]}).complete("Q?", n=1, seed=0)
    with pytest.raises(ValueError, match="non-empty list"):
        ScriptedLLM(script={"*": "oops"})
    with pytest.raises(ValueError, match="non-empty dict"):
        ScriptedLLM(script={})


def test_a_reprompt_that_makes_the_answer_worse_is_visible_in_the_trace_table():
    script = {"direct:ask": ["Canberra", "Sydney", "Melbourne"], "*": ["Sydney"]}
    item = QAItem("x", "factual", "What is the capital city of Australia?", ("Canberra",))
    gated = coordinator(script).run(item.question)
    plain = coordinator(script, policy="none").run(item.question)
    assert plain.answer == "Canberra" and gated.answer == "Sydney"  # chasing the metric
    t = trace_table(gated)
    assert t.columns == ["round", "how", "worker", "answer", "SE", "SD", "concern", "action", "reason"]
    assert [r["action"] for r in t] == ["reprompt", "accept"]
    assert [r["how"] for r in t] == ["ask", "reprompt"]
    assert t[0]["SE"] == pytest.approx(1.0) and t[0]["SD"] == pytest.approx(1 / 3, abs=1e-3)
    assert t[1]["SE"] == 0.0 and t[1]["concern"] == "—" and t[1]["answer"] == "Sydney"
    assert "final (accept, round 2, direct): 'Sydney'" in t.title and item.question in t.title


def test_trace_table_lists_every_delegated_answer_and_marks_the_chosen_one():
    script = {"direct:ask": ["A", "B", "C"], "direct:reprompt": ["A", "B", "C"], "careful:ask": ["D", "E", "F"],
              "*:delegate": ["A", "B", "C"], "plain:delegate": ["Paris"], "*": ["?"]}
    t = trace_table(coordinator(script).run("Which city?"), width=10)
    delegated = [r for r in t if r["how"] == "delegate"]
    assert len(delegated) == 2
    chosen = [r for r in delegated if r["action"] != "(not chosen)"]
    assert len(chosen) == 1 and chosen[0]["worker"] == "plain" and chosen[0]["action"] == "accept"
    assert [r["reason"] for r in delegated if r["action"] == "(not chosen)"] == [""]
    long = trace_table(coordinator({"*": ["word " * 40]}, policy="none").run("Q?"), width=10)
    assert long[0]["answer"].endswith("…") and len(long[0]["answer"]) == 10


def test_score_answers_uses_the_coordinators_metrics_unanimous_wrong_passes_the_gate():
    coord = coordinator({"*": ["x"]})
    s = score_answers(coord, "What is the capital city of Australia?", ["Sydney"] * 3)
    assert s.entropy == 0.0 and s.density == pytest.approx(1.0) and s.n_samples == 3
    assert coord.policy.decide(s, 1).action == "accept"
    split = score_answers(coord, "Q?", ["Sydney", "Canberra", "Sydney"])
    h = -(2 / 3) * math.log(2 / 3) - (1 / 3) * math.log(1 / 3)
    assert split.entropy == pytest.approx(h / math.log(3)) and coord.policy.decide(split, 1).action == "reprompt"
    with pytest.raises(ValueError, match="non-empty list"):
        score_answers(coord, "Q?", "Sydney")


# ----------------------------------------------------------------------------------- reading a run

ITEMS = [
    {"id": "u", "category": "factual", "question": "unanimous wrong", "answers": ["Canberra"]},
    {"id": "h", "category": "factual", "question": "hurt by reprompt", "answers": ["Canberra"]},
    {"id": "f", "category": "ambiguous", "question": "flagged wrong", "answers": ["Canberra"]},
    {"id": "ok", "category": "ambiguous", "question": "clean right", "answers": ["Canberra"]},
]


class RunLLM(ScriptedLLM):
    """Replies by question (the first line of the prompt) and kind."""

    def reply(self, system, user, index):
        q = user.split("\n")[0]
        kind = "reprompt" if "New angle:" in user else "ask"
        table = {
            ("unanimous wrong", "ask"): ["Sydney"],
            ("hurt by reprompt", "ask"): ["Canberra", "Sydney", "Perth"],
            ("hurt by reprompt", "reprompt"): ["Sydney"],
            ("flagged wrong", "ask"): ["Perth", "Sydney", "Darwin"],
            ("flagged wrong", "reprompt"): ["Canberra"],
            ("clean right", "ask"): ["Canberra"],
        }
        texts = table.get((q, kind), ["Hobart", "Perth", "Darwin"])
        return texts[index % len(texts)]


@pytest.fixture(scope="module")
def runs():
    metrics = {"entropy": "discrete_semantic_entropy",
               "density": {"name": "semantic_density", "embedder": OneHotEmbedder()}}
    llm = RunLLM(script={"*": ["unused"]})
    out = {}
    for p in ("none", "both"):
        coord = Coordinator(default_workers(llm, max_tokens=8), p, metrics, n_samples=3, judge="exact")
        out[p] = coord.run_benchmark(ITEMS, None, progress=False)
    return out


def test_find_cases_sorts_questions_by_what_the_gate_did(runs):
    cases = find_cases(runs["both"])
    assert set(cases) == set(CASE_KINDS)
    ids = {k: [r.id for r in v] for k, v in cases.items()}
    assert ids["unanimous_wrong"] == ["u"] and ids["accepted_wrong"] == ["u"]
    assert ids["flagged_right"] == ["h"] and ids["remedy_hurt"] == ["h"]
    assert ids["flagged_wrong"] == ["f"] and ids["remedy_helped"] == ["f"]
    # a run without a gate is judged with the 'both' preset; its remedies never act
    plain = {k: [r.id for r in v] for k, v in find_cases(runs["none"]).items()}
    assert plain["unanimous_wrong"] == ["u"] and plain["flagged_wrong"] == ["f"]
    assert plain["remedy_hurt"] == [] and plain["remedy_helped"] == []
    t = case_table(cases["remedy_hurt"])
    assert t[0]["first right"] and not t[0]["final right"] and t[0]["actions"] == "reprompt → accept"
    assert t[0]["first answer"] == "Canberra" and t[0]["final answer"] == "Sydney"


def test_category_table_counts_flags_and_accuracy(runs):
    t = category_table(runs)
    rows = {r["category"]: r for r in t}
    assert list(rows) == ["factual", "ambiguous", "all"]
    assert rows["factual"]["wrong in round 1"] == 1 and rows["factual"]["flagged, wrong"] == "0/1"
    assert rows["factual"]["flagged, right"] == "1/1"
    assert rows["ambiguous"]["flagged, wrong"] == "1/1" and rows["ambiguous"]["flagged, right"] == "0/1"
    assert rows["all"]["none right"] == "2/4" and rows["all"]["both right"] == "2/4"
    with pytest.raises(KeyError, match="no run for policy"):
        category_table({"none": runs["none"]})


def test_draw_signal_map_draws_points_and_thresholds(runs):
    fig = draw_signal_map(runs["both"])
    ax = fig.axes[0]
    assert len(ax.collections) == 2  # right and wrong points, over the shaded concern region
    labels = ax.get_legend_handles_labels()[1]
    assert "τ_E = 0.5 (H/ln n)" in labels and "τ_D = 0.8" in labels
    assert "right in round 1 (2)" in labels and "wrong in round 1 (2)" in labels
    assert "concern (both): SE > τ_E or SD < τ_D" in labels
    only_entropy = draw_signal_map(runs["none"], "entropy_only").axes[0].get_legend_handles_labels()[1]
    assert not any(lab.startswith("τ_D") for lab in only_entropy) and "concern (entropy_only): SE > τ_E" in only_entropy


# ----------------------------------------------------------------------------------- sample size


def test_smallest_significant_gap_matches_the_exact_mcnemar_test():
    # six discordant questions all one way: p = 2 / 2**6 = 0.031 < 0.05; five: p = 0.0625
    assert smallest_significant_gap(6) == pytest.approx(1.0)
    assert smallest_significant_gap(40) == pytest.approx(6 / 40)
    assert smallest_significant_gap(5) != smallest_significant_gap(5)  # NaN: no split of 5 can be significant
    assert smallest_significant_gap(40, 12) == pytest.approx((2 * 10 - 12) / 40)  # 10 vs 2: p = 0.039
    assert math.isnan(smallest_significant_gap(40, 5))
    with pytest.raises(ValueError):
        smallest_significant_gap(0)
    with pytest.raises(ValueError):
        smallest_significant_gap(10, 11)


def test_sample_size_table_says_few_questions_resolve_only_large_gaps():
    t = sample_size_table((6, 40, 400))
    rows = {r["questions"]: r for r in t}
    assert rows[6]["gap needed, 30% discordant (pts)"] == "impossible"
    assert rows[40]["smallest real gap, best case (pts)"] == 15.0
    assert rows[40]["SE of one accuracy (pts)"] == pytest.approx(7.9)
    assert 14 < rows[40]["Wilson ± (pts)"] < 16
    assert rows[400]["gap needed, 30% discordant (pts)"] < rows[40]["gap needed, 30% discordant (pts)"]


def test_the_old_helper_module_still_imports_every_helper():
    from uncertainty_lab.orchestration import notebook_helpers

    assert notebook_helpers.find_cases is find_cases and notebook_helpers.ScriptedLLM is ScriptedLLM
    assert notebook_helpers.draw_signal_map is draw_signal_map and notebook_helpers.trace_table is trace_table
    assert notebook_helpers.sample_size_table is sample_size_table and notebook_helpers.CASE_KINDS is CASE_KINDS
