"""QA worlds (worlds/qa.py): the world backend by spec, determinism and caching, world-file errors, the lab's prompts
read right, and simulation against the exact theory (worlds/qa_theory.py, orchestration/known_truth.py). Offline and
model-free: the exact judge and a hash embedder (the default judge's checks are in test_worlds_qa_judge.py)."""

import json
import math

import numpy as np
import pytest
from fakes import HashEmbedder

from uncertainty_lab import registry
from uncertainty_lab.llm import get_llm
from uncertainty_lab.orchestration.coordinator import Coordinator
from uncertainty_lab.orchestration.grading import QAGrader
from uncertainty_lab.orchestration.known_truth import concerns, expected_accuracy, policy_path, theory
from uncertainty_lab.orchestration.policy import Signals, get_policy
from uncertainty_lab.orchestration.workers import WORKER_ROLES, default_workers, extract_answer
from uncertainty_lab.semantic import SampleSet
from uncertainty_lab.semantic.density import SemanticDensity
from uncertainty_lab.semantic.entropy import DiscreteSemanticEntropy
from uncertainty_lab.semantic.judges import ExactJudge
from uncertainty_lab.worlds import WorldError, WorldLLM, load_world, shipped_worlds
from uncertainty_lab.worlds.qa_theory import auroc, mixture, signal_atoms

WORKERS = list(WORKER_ROLES)
POLICIES = [get_policy(p) for p in ("none", "entropy_only", "density_only", "both")]


@pytest.fixture(scope="module")
def judge():
    return ExactJudge()


@pytest.fixture(scope="module")
def density(judge):
    return SemanticDensity(judge=judge, embedder=HashEmbedder(1.5))


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """The calibrated world with 12 questions, as a JSON world file (a user's file works like a shipped one)."""
    spec = {**load_world("calibrated").spec, "name": "small", "n_questions": 12}
    path = tmp_path_factory.mktemp("worlds") / "small.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    return path


def test_the_backend_by_spec_is_the_world_and_is_named_so(monkeypatch):
    monkeypatch.setenv("UL_LLM", "world:overconfident")  # the notebooks' model choice: get_llm("auto")
    assert get_llm("auto", quiet=True).label.startswith("world:overconfident@")
    llm = get_llm("world:calibrated", quiet=True)
    assert isinstance(llm, WorldLLM) and "world" in registry.names("llm_backends")
    assert llm.label.startswith("world:calibrated@") and llm.world.kind == "qa"
    assert {"calibrated", "overconfident", "underconfident"} <= set(shipped_worlds())


def test_answers_are_a_function_of_request_seed_and_index_and_are_cached():
    llm = get_llm("world:calibrated", quiet=True)
    q = llm.world.questions[3].text
    msgs = [{"role": "system", "content": WORKER_ROLES["direct"]}, {"role": "user", "content": q}]
    a = [c.text for c in llm.complete(msgs, n=8, seed=5, use_cache=False)]
    assert a == [c.text for c in llm.complete(msgs, n=8, seed=5, use_cache=False)]
    assert a != [c.text for c in llm.complete(msgs, n=8, seed=6, use_cache=False)]
    first = llm.complete(msgs, n=8, seed=5)
    again = llm.complete(msgs, n=8, seed=5)
    assert [c.text for c in first] == a and not any(c.cached for c in first) and all(c.cached for c in again)


def test_world_file_errors_name_the_file_and_the_field(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('kind = "qa"\noptions = 1\n', encoding="utf-8")
    with pytest.raises(WorldError, match=r"bad\.toml, options: must be an integer in \[2, 16\]"):
        load_world(bad)
    bad.write_text('kind = "qa"\ntrap_shar = 0.2\n', encoding="utf-8")
    with pytest.raises(WorldError, match=r"bad\.toml, trap_shar: unknown setting"):
        load_world(bad)
    bad.write_text('kind = "qa"\n[workers.direct]\nmatch = "x"\nskill = "high"\n', encoding="utf-8")
    with pytest.raises(WorldError, match=r"bad\.toml, workers\.direct"):
        load_world(bad)
    with pytest.raises(WorldError, match=r"<dict>, correct_answers: must be below options"):
        load_world({"kind": "qa", "options": 3, "correct_answers": 3})


def test_the_world_reads_the_labs_prompts_and_its_answers_extract_to_the_forms():
    world = load_world("calibrated")
    coord = Coordinator(default_workers(get_llm("world:calibrated", quiet=True)), "none", judge="exact",
                        metrics={"entropy": "discrete_semantic_entropy"})
    q = world.questions[0]
    assert [world.worker_of(WORKER_ROLES[w]) for w in WORKERS] == WORKERS
    assert world.variant_of(q.text) == ("ask", False)
    assert world.variant_of(coord.reprompt_text(q.text, 0, 1)[0]) == ("reprompt", False)
    assert world.variant_of(coord.delegation_text(q.text)) == ("delegate", False)
    assert world.find_question(coord.delegation_text(q.text)) is q
    forms = {f for k in range(len(q.clusters)) for f in q.forms(k)}
    rng = np.random.default_rng(0)
    for prompt in (q.text, coord.delegation_text(q.text)):
        for _ in range(30):
            text = world.respond([{"role": "user", "content": prompt}], rng, temperature=0.7, max_tokens=32)
            assert extract_answer(text).answer in forms


def test_the_grader_agrees_with_the_world_on_every_form():
    world = load_world("underconfident")
    grader = QAGrader()
    for item, q in zip(world.items(), world.questions[:10], strict=False):
        for k in range(len(q.clusters)):
            for form in q.forms(k):
                assert grader(item, form)["correct"] is q.correct[k], (q.text, form)


def test_theory_atoms_hold_the_real_metrics_values(judge, density):
    world = load_world("calibrated")
    q = world.questions[5]
    atoms = signal_atoms(world, q, "direct", "ask", 5, judge, density)
    assert math.isclose(atoms.prob.sum(), 1.0) and math.isclose(atoms.accuracy, world.cluster_probabilities(
        q, "direct", "ask")[0])
    entropy = DiscreteSemanticEntropy(judge=judge)
    table = world.form_probabilities(q, "direct", "ask")
    p = np.array([t[2] for t in table])
    rng = np.random.default_rng(1)
    for _ in range(40):
        texts = [table[i][0] for i in rng.choice(len(table), size=5, p=p / p.sum())]
        s = SampleSet(texts, question=q.text)
        e, d = entropy.score(s).normalised_uncertainty, density.score(s).confidence
        hit = np.isclose(atoms.entropy, e, atol=1e-9) & np.isclose(atoms.density, d, atol=1e-6)
        assert hit.any() and atoms.prob[hit].sum() > 0


def test_the_vectorised_concerns_are_the_policys():
    rng = np.random.default_rng(2)
    e, d = rng.random(200), rng.random(200)
    for p in POLICIES:
        want = [bool(p.concerns(Signals(entropy=a, density=b, n_samples=5))) for a, b in zip(e, d, strict=True)]
        assert concerns(p, e, d).tolist() == want


def test_the_path_follows_the_ladder():
    assert policy_path(get_policy("none"), WORKERS) == [[("direct", "ask")]]
    assert policy_path(get_policy("both"), WORKERS) == [[("direct", "ask")], [("direct", "reprompt")],
                                                       [("careful", "ask")], [("plain", "delegate"),
                                                                              ("direct", "delegate")]]


def test_expected_accuracy_matches_a_monte_carlo_of_the_same_atoms(judge, density):
    """The closed form (sums over ranked atoms) against drawing each round's atom and running Policy.decide and the
    best-of selection — an independent computation from the same per-round laws."""
    from uncertainty_lab.orchestration.policy import best_round

    world = load_world("calibrated")
    q = world.questions[7]
    policy = get_policy("both")
    path = policy_path(policy, WORKERS)
    calls = [[signal_atoms(world, q, w, v, 5, judge, density) for w, v in r] for r in path]
    exact = expected_accuracy(policy, calls)
    rng = np.random.default_rng(3)
    wins, runs = 0, 2500
    for _ in range(runs):
        flat, history = [], []
        for r, cands in enumerate(calls, start=1):
            drawn = [a for a in (rng.choice(len(c.prob), p=c.prob / c.prob.sum()) for c in cands)]
            sig = [(Signals(entropy=c.entropy[i], density=c.density[i], n_samples=5), c.correct[i])
                   for c, i in zip(cands, drawn, strict=True)]
            flat += sig
            chosen = sig[best_round([s for s, _ in sig], policy)]
            decision = policy.decide(chosen[0], r, history, n_workers=3)
            history.append(decision)
            if decision.action == "accept":
                wins += chosen[1]
                break
            if decision.action == "final_select":
                wins += flat[best_round([s for s, _ in flat], policy)][1]
                break
    assert abs(wins / runs - exact) < 4 * math.sqrt(exact * (1 - exact) / runs)  # 4 standard errors


def test_simulated_runs_agree_with_theory(small, judge, density):
    """Accuracy per policy and the first-round AUROC of the coordinator on the world, pooled over seeds, within 4
    standard errors of the exact values."""
    llm = get_llm(f"world:{small}", quiet=True)
    world = llm.world
    metrics = {"entropy": DiscreteSemanticEntropy(judge=judge), "density": density}
    th = theory(world, world.questions, POLICIES, WORKERS, 5, judge, density)
    grader = QAGrader()
    items = {it.question: it for it in world.items()}
    seeds = range(12)
    for p in POLICIES[::3]:
        right, first = [], []
        for seed in seeds:
            coord = Coordinator(default_workers(llm), p, metrics, 5, judge, seed=seed)
            for q in world.questions:
                t = coord.run(q.text)
                right.append(grader(items[q.text], t.final.answer)["correct"])
                first.append((t.first_signals, grader(items[q.text], t.rounds[0].candidates[0].answer.answer)["correct"]))
        exp = th["accuracy"][p.name]
        assert abs(np.mean(right) - exp) < 4 * math.sqrt(exp * (1 - exp) / len(right)), (p.name, np.mean(right), exp)
    ok = np.array([c for _, c in first])
    conf = np.array([1 - s.entropy for s, _ in first])
    diff = conf[ok][:, None] - conf[~ok][None, :]
    sim = float(((diff > 0) + 0.5 * (diff == 0)).mean())
    assert abs(sim - th["auroc"]["entropy"]) < 0.08  # ~4 standard errors of an AUROC on 144 answers


def test_shipped_worlds_show_what_they_claim(judge, density):
    """calibrated: entropy's AUROC ≥ 0.8 and the gates buy accuracy; overconfident: AUROC ≤ 0.65 (the exact judge's
    classes are the default judge's on these forms: test_worlds_qa_judge.py)."""
    out = {}
    for name in ("calibrated", "overconfident", "underconfident"):
        w = load_world(name)
        out[name] = auroc(mixture([signal_atoms(w, q, "direct", "ask", 5, judge, density) for q in w.questions]),
                          "entropy")
    assert out["calibrated"] >= 0.8 and out["overconfident"] <= 0.65 and out["underconfident"] < out["calibrated"]
    w = load_world("calibrated")
    acc = theory(w, w.questions, POLICIES[:2], WORKERS, 5, judge, density)["accuracy"]  # entropy: no embedder
    assert acc["entropy_only"] > acc["none"] + 0.1


def test_the_known_truth_panel_recomputes_on_a_slider(monkeypatch):
    from uncertainty_lab.widgets import worlds as panel

    kt = panel.known_truth("calibrated", {"n_questions": 8}, policies=("none", "entropy_only"), judge="exact",
                           embedder=HashEmbedder(1.5))
    assert kt.world.name == "calibrated*" and set(kt.theory["accuracy"]) == {"none", "entropy_only"}
    assert "accuracy of policy entropy_only" in str(kt) and "theory" in kt._repr_html_()
    seen = []
    monkeypatch.setattr(panel, "known_truth", lambda base, changes, **kw: seen.append(changes) or "table")
    box = panel.known_truth_explorer("overconfident", n_questions=8, judge="exact")
    box.children[0].children[0].value = 0.2  # the confidently-wrong share
    assert seen[0] is None and seen[-1] == {"trap_share": 0.2}  # unchanged settings: the world as shipped


def test_the_report_names_the_world_and_sets_theory_beside_the_run(small, tmp_path):
    from uncertainty_lab.orchestration.experiment import run_experiment

    density = SemanticDensity(judge=ExactJudge(), embedder=HashEmbedder(1.5))
    res = run_experiment({"llm": f"world:{small}", "data": {"loader": "world", "path": str(small)},
                          "policies": ["none", "entropy_only"], "judge": "exact", "out_dir": str(tmp_path / "out"),
                          "metrics": {"entropy": "discrete_semantic_entropy", "density": density},
                          "progress": False}, save=False)
    text = res.report()
    assert "## Known truth (the model is a simulated world, not an LLM)" in text and "`world:small`" in text
    assert all(row["model"].startswith("world:small@") for row in res.summary_rows())
    assert "| none |" in text.split("## Known truth")[1] and "| entropy |" in text.split("## Known truth")[1]
