"""Search worlds (uncertainty_lab/worlds/search.py): the corpus of fact chains, the agent's stated rates measured
back from lab runs, the two shipped worlds' effects with fixed seeds (checked against chain_theory), the world
data loader, and bad input."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from uncertainty_lab.cli import main
from uncertainty_lab.search import SearchEnvironment, run_episode
from uncertainty_lab.search.config import SearchConfig, load_data, question_documents
from uncertainty_lab.search.experiment import EXPERIMENT
from uncertainty_lab.search.policies import parse_action
from uncertainty_lab.search.prompts import ANSWER_SYSTEM, POLICY_SYSTEM, decomposition_messages, extraction_messages
from uncertainty_lab.worlds import WorldError, load_world
from uncertainty_lab.worlds import search as ws
from uncertainty_lab.worlds.search import SearchWorld, chain_theory, world_llm
from uncertainty_lab.worlds.search_audit import measure_rates

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples" / "worlds").glob("search_*.toml"))


def make_world(name="probe", questions=24, hops=(2, 3), **agent) -> SearchWorld:
    spec = {"kind": "search", "name": name, "corpus": {"seed": 3, "questions": questions, "hops": list(hops)},
            "agent": agent}
    return SearchWorld(name=name, description="", source="test", spec=spec)


def test_the_world_recognises_the_labs_prompts_by_their_system_text():
    texts = {"policy": POLICY_SYSTEM, "answer": ANSWER_SYSTEM,
             "extraction": extraction_messages("s", "a", "o")[0]["content"],
             "decomposition": decomposition_messages("q")[0]["content"]}
    for kind, prefix in ws.PROMPTS.items():
        assert texts[kind].startswith(prefix), kind


@pytest.mark.parametrize("name", ["search_efficient", "search_premature"])
def test_every_target_query_retrieves_its_hop_in_the_top_k_shared_and_own_corpus(name):
    world = load_world(name)
    shared = SearchEnvironment(world.documents)
    for chain in world.chains.values():
        q = chain.question
        assert q.hops == chain.k == len(q.supporting_ids) and q.answer == chain.entities[-1]
        assert [s.support_id for s in q.decomposition] == list(q.supporting_ids)
        own = SearchEnvironment(question_documents(q, world.documents))
        for j in range(1, chain.k + 1):
            for env in (shared, own):
                assert q.supporting_ids[j - 1] in [i for i, _ in env.rank(chain.hop_query(j))], (q.id, j)
    names = [e for c in world.chains.values() for e in c.entities]
    assert len(names) == len(set(names))  # no entity is shared between chains


def test_malformed_replies_are_unparseable_and_repairable_ones_are_repaired():
    for form in ws._PROSE:
        assert parse_action(form.format(rel="mentor", ent="Vel Orn")).status == "failed", form
    for form in ws._REPAIRABLE_SEARCH:
        parsed = parse_action(form.format(q="Vel Orn mentor"))
        assert parsed.status == "repaired" and parsed.action.kind == "search", form
        assert parsed.action.argument == "Vel Orn mentor"
    for form in ws._REPAIRABLE_ANSWER:
        parsed = parse_action(form.format(q="Vel Orn"))
        assert parsed.status == "repaired" and parsed.action.kind == "answer" and parsed.action.argument == "Vel Orn"


def test_stated_rates_hold_in_simulation_within_intervals():
    """Every rate strictly between 0 and 1; the lab's own records (parse status, queries, extraction outputs)
    measure each back, inside its 99% Wilson interval (seeded, so the check is deterministic)."""
    rates = {"format_reliability": 0.7, "repairable": 0.5, "query_skill": 0.7, "stall": 0.3,
             "extraction_accuracy": 0.8, "answer_when_done": 0.3}
    world = make_world(questions=30, **rates)
    llm = world_llm(world)
    env = SearchEnvironment(world.documents)
    episodes = [run_episode(q, env, llm=llm, policy="llm", belief=belief, gates=["fixed_budget"], max_steps=8, seed=0)
                for q in world.questions for belief in ("predicate", "implicit")]
    table = measure_rates(world, episodes, level=0.99)
    for row in table:
        assert row["n"] >= 40, row
        assert row["inside"], row
    fallbacks = sum(s.policy["fallback"] for ep in episodes for s in ep.steps)
    assert fallbacks == sum(s.policy["parse"] == "failed" for ep in episodes for s in ep.steps) > 0


def _run(path: Path, tmp_path: Path, **overrides):
    return EXPERIMENT.run(path, save=False, out_dir=str(tmp_path / path.stem), beliefs=["predicate"], **overrides)


def _savings(result):
    (row,) = result.token_savings()
    return row


def test_efficient_world_the_gate_saves_tokens_at_equal_accuracy(tmp_path):
    result = _run(ROOT / "examples/worlds/search_efficient.toml", tmp_path)
    row = _savings(result)
    assert row["accuracy_same"] and 0.8 < row["accuracy_with"] < 1.0  # equal, and not trivially at 100%
    for key in ("context_tokens", "model_tokens"):
        assert row[key]["low"] > 0.15, row[key]  # a saving whose whole interval is well above zero
    by_label = {c.gate_label: [s.stop_reason for s in result.scores(c)] for c in result.conditions}
    assert set(by_label["fixed_budget"]) == {"budget"}
    assert by_label["exhaustion+fixed_budget"].count("exhausted") >= 30
    assert "world:search_efficient@" in result.report()


def test_premature_world_the_gate_stops_too_early_as_theory_says(tmp_path):
    result = _run(ROOT / "examples/worlds/search_premature.toml", tmp_path)
    row = _savings(result)
    d = row["accuracy_difference"]
    assert d["difference"] < -0.25 and d["high"] < 0 and d["p_value"] < 0.001 and d["only_with"] == 0
    assert not row["accuracy_same"] and row["context_tokens"]["low"] > 0  # cheaper, but by losing answers
    gated = next(c for c in result.conditions if "exhaustion" in c.gate_names())
    scores = result.scores(gated)
    assert {s.stop_reason for s in scores} == {"exhausted"}
    world = load_world("search_premature")
    hops = [world.chains[q.question].k for q in world.questions]
    expected = np.mean([chain_theory(k, 0.5, max_steps=12)["accuracy"] for k in hops])
    correct = sum(s.exact_match == 1.0 for s in scores)
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(correct, len(scores), alpha=0.01, method="wilson")
    assert low <= expected <= high, (correct, expected)
    episodes = result.episodes[gated]
    wrong = [ep for ep, s in zip(episodes, scores, strict=True) if s.exact_match != 1.0]
    assert wrong and all(ep.final["open_questions"] for ep in wrong)  # stopped with the question still open
    assert "world:search_premature@" in result.report()


def test_chain_theory_matches_its_closed_form_and_a_direct_simulation():
    for k, s in ((2, 0.3), (3, 0.5), (4, 0.6)):
        assert chain_theory(k, s, max_steps=200)["accuracy"] == pytest.approx((1 - s**2) ** (k - 1), abs=1e-9)
        assert chain_theory(k, s, max_steps=200, gate=False)["accuracy"] == pytest.approx(1.0, abs=1e-9)
    rng = np.random.default_rng(0)
    k, s, budget, n = 3, 0.5, 6, 20000
    right = 0
    for _ in range(n):
        h, streak = 1, 0
        for _t in range(2, budget + 1):
            if h == k or rng.random() < s:
                streak += 1
                if streak >= 2:
                    break
            else:
                h, streak = h + 1, 0
        right += h == k
    assert chain_theory(k, s, max_steps=budget)["accuracy"] == pytest.approx(right / n, abs=4 * math.sqrt(0.25 / n))
    with pytest.raises(ValueError, match="stall must be a probability"):
        chain_theory(3, 1.5)
    with pytest.raises(ValueError, match="max_steps must be a positive integer"):
        chain_theory(3, 0.5, max_steps=0)


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_the_example_configs_take_data_and_model_from_the_world_and_pass_check(path, tmp_path, monkeypatch):
    config = SearchConfig.coerce(path)
    assert config.llm == f"world:{path.stem}" and config.data == {"loader": "world", "world": path.stem}
    documents, questions = load_data(config)
    assert len(questions) == 40 and {d.id for d in documents} >= {i for q in questions for i in q.supporting_ids}
    monkeypatch.chdir(ROOT)
    assert main(["search", "run", "--config", str(path.relative_to(ROOT)), "--check", "--out-dir",
                 str(tmp_path / "out")]) == 0


def test_bad_worlds_and_data_settings_are_errors_naming_the_setting(tmp_path):
    with pytest.raises(WorldError, match="agent.stall.*probability"):
        make_world(stall=1.5)
    with pytest.raises(WorldError, match=r"agent.stal.*did you mean 'stall'"):
        make_world(stal=0.5)
    bad = tmp_path / "w.toml"
    bad.write_text('kind = "search"\n[corpus]\nhops = [0]\n')
    with pytest.raises(WorldError, match="corpus.hops"):
        load_world(bad)
    with pytest.raises(ValueError, match="needs the world"):
        SearchConfig(llm="oracle", data="world")
    with pytest.raises(ValueError, match="name the world once"):
        load_data(SearchConfig(llm="oracle", data={"loader": "world", "world": "search_efficient", "path": "x.toml"}))
    world = make_world()
    with pytest.raises(WorldError, match="not one of this world's"):
        world.respond([{"role": "system", "content": POLICY_SYSTEM}, {"role": "user", "content": "Question: Who?"}],
                      np.random.default_rng(0), temperature=0.0, max_tokens=8)
    with pytest.raises(WorldError, match="answers the search lab's prompts only"):
        world.respond([{"role": "user", "content": "hello"}], np.random.default_rng(0), temperature=0.0, max_tokens=8)
