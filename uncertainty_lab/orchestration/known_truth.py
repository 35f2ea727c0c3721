"""What theory predicts for a policy comparison run on a QA world (``llm = "world:<name>"``), by exact computation.

Per question the world gives each worker call's exact law of (H/ln n, D, primary right) (:mod:`uncertainty_lab.
worlds.qa_theory`). A policy's path is fixed by its ladder: round 1 asks worker 0; each concerned round climbs one
rung (re-prompt the same worker, reassign to the next, delegate to the next ``delegate_k``) until the round cap or the
end of the ladder, then ``final_select`` takes the best answer produced. Rounds draw independently (distinct prompts),
so with Q_s = P(round s's chosen answer raises a concern) and A_s = P(it raises none and is right)

    P(right) = Σ_r (∏_{s<r} Q_s) A_r + P(every round concerned and the final selection is right),

where a round of several candidates (and the final selection) takes the smallest key (concern, −D, H/ln n), ties to
the earliest — P(winner is atom a of candidate i) = p_i(a) ∏_{j<i} P_j(key > key_a) ∏_{j>i} P_j(key ≥ key_a). The
expected accuracy is the mean over the reported questions; :func:`known_truth_lines` sets it beside the run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .policy import Policy

__all__ = ["concerns", "expected_accuracy", "known_truth_lines", "policy_path", "theory"]


@dataclass(frozen=True)
class _Cand:
    key: np.ndarray  # (concern, -density, entropy) per atom, as a sortable float triple
    concern: np.ndarray
    correct: np.ndarray
    prob: np.ndarray


def policy_path(policy: Policy, workers: list[str]) -> list[list[tuple[str, str]]]:
    """The (worker, variant) calls of each round a policy can reach, in order (round 1 first)."""
    rounds = [[(workers[0], "ask")]]
    current = 0
    for rung in policy.ladder(len(workers)):
        if len(rounds) >= policy.max_rounds:
            break
        if rung == "reprompt":
            rounds.append([(workers[current], "reprompt")])
        elif rung == "reassign":
            current = (current + 1) % len(workers)
            rounds.append([(workers[current], "ask")])
        else:
            k = min(policy.delegate_k, len(workers))
            rounds.append([(workers[(current + 1 + j) % len(workers)], "delegate") for j in range(k)])
    return rounds


def _cand(atoms: Any, policy: Policy) -> _Cand:
    concern = concerns(policy, atoms.entropy, atoms.density)
    key = np.stack([concern.astype(float), -atoms.density, atoms.entropy], axis=1)
    return _Cand(key, concern, atoms.correct, atoms.prob)


def concerns(policy: Policy, entropy: np.ndarray, density: np.ndarray) -> np.ndarray:
    """:meth:`Policy.concerns` of valid answers, vectorised: H/ln n > τ_E on the entropy gate, D < τ_D on the density
    gate (a world's answers are never invalid nor missing)."""
    out = np.zeros(len(entropy), dtype=bool)
    if "entropy" in policy.metrics:
        out |= np.asarray(entropy) > policy.entropy_threshold
    if "density" in policy.metrics:
        out |= np.asarray(density) < policy.density_threshold
    return out


def _ranks(cands: list[_Cand]) -> list[np.ndarray]:
    allkeys = np.concatenate([c.key for c in cands])
    order = np.lexsort(allkeys.T[::-1])
    ranked = allkeys[order]
    step = np.any(ranked[1:] != ranked[:-1], axis=1)  # equal keys share a rank
    rank = np.empty(len(allkeys), dtype=np.int64)
    rank[order] = np.concatenate([[0], np.cumsum(step)])
    out, lo = [], 0
    for c in cands:
        out.append(rank[lo:lo + len(c.prob)])
        lo += len(c.prob)
    return out


def _winner_right(cands: list[_Cand], masks: list[np.ndarray], winners: list[np.ndarray]) -> float:
    """P(every candidate's atom is in its mask, and the smallest key (ties: earliest) is a right atom of the winners)."""
    ranks = _ranks(cands)
    top = max(int(r.max()) for r in ranks) + 1
    mass = [np.bincount(r, weights=c.prob * m, minlength=top) for r, c, m in zip(ranks, cands, masks, strict=True)]
    above = [np.concatenate([np.cumsum(x[::-1])[::-1][1:], [0.0]]) for x in mass]   # P(in mask, rank > k)
    at_or_above = [a + x for a, x in zip(above, mass, strict=True)]
    total = 0.0
    for i, (r, c, w) in enumerate(zip(ranks, cands, winners, strict=True)):
        f = c.prob * w * c.correct
        for j in range(len(cands)):
            if j != i:
                f = f * (above[j] if j < i else at_or_above[j])[r]
        total += float(f.sum())
    return total


def expected_accuracy(policy: Policy, calls: list[list[Any]]) -> float:
    """P(the final answer is right) for one question, given the atoms of each round's calls (:func:`policy_path`)."""
    rounds = [[_cand(a, policy) for a in r] for r in calls]
    reach, right = 1.0, 0.0
    everything = [c for r in rounds for c in r]
    for cands in rounds:
        ones = [np.ones(len(c.prob), dtype=bool) for c in cands]
        right += reach * _winner_right(cands, ones, [~c.concern for c in cands])
        q = math.prod(float(c.prob[c.concern].sum()) for c in cands)
        reach *= q
    conc = [c.concern for c in everything]  # every round concerned: the final selection over all answers
    right += _winner_right(everything, conc, conc)
    return right


def theory(world: Any, questions: list[Any], policies: list[Policy], workers: list[str], n: int, judge: Any,
           density: Any) -> dict[str, Any]:
    """Expected accuracy per policy and the expected AUROC of each first-round signal over ``questions``."""
    from ..worlds.qa_theory import auroc, mixture, signal_atoms

    cache: dict[tuple, Any] = {}

    def atoms(q, worker, variant):
        if (q.id, worker, variant) not in cache:
            cache[(q.id, worker, variant)] = signal_atoms(world, q, worker, variant, n, judge, density)
        return cache[(q.id, worker, variant)]

    acc = {}
    for p in policies:
        path = policy_path(p, workers)
        acc[p.name] = float(np.mean([expected_accuracy(p, [[atoms(q, w, v) for w, v in r] for r in path])
                                     for q in questions]))
    first = mixture([atoms(q, workers[0], "ask") for q in questions])
    return {"accuracy": acc, "auroc": {"entropy": auroc(first, "entropy"), "density": auroc(first, "density")},
            "first_accuracy": first.accuracy}


def _world(result: Any) -> Any:
    """The QA world the run's model is, or None."""
    llm = result.config.llm
    if not isinstance(llm, str) or not llm.startswith("world:"):
        return None
    from ..worlds import load_world

    world = load_world(llm.partition(":")[2])
    return world if world.kind == "qa" else None


def result_theory(result: Any) -> dict[str, Any] | None:
    """The theory of a result's run on a QA world (its reported questions, its policies as run, its workers, judge
    and metrics), or None when the model is not a QA world."""
    from .. import registry
    from .coordinator import DEFAULT_METRICS
    from .record import policy_of

    world = _world(result)
    if world is None:
        return None
    model = result.models[0]
    runs = {p: r for (m, p), r in result.runs.items() if m == model}
    run = next(iter(runs.values()))
    by_id = {q.id: q for q in world.questions}
    questions = [by_id[i] for i in run.ids if i in by_id]
    workers = [world.worker_of(w["system"] or "") for w in run.config["coordinator"]["workers"]]
    judge = registry.resolve("equivalence_judges", result.config.judge, what="judge")
    specs = dict(DEFAULT_METRICS if result.config.metrics is None else result.config.metrics)
    if specs.get("entropy") != "discrete_semantic_entropy" or "density" not in specs:
        raise ValueError("the exact theory covers the entropy role discrete_semantic_entropy and a density role")
    density = registry.resolve("metrics", specs["density"], what="metrics['density']", defaults={"judge": judge})
    th = theory(world, questions, [policy_of(r) for r in runs.values()], workers, result.config.n_samples, judge,
                density)
    th["world"], th["model"] = world, model
    return th


def known_truth_lines(result: Any) -> list[str]:
    """The report's "Known truth" section: each policy's accuracy and each signal's AUROC beside what the world's
    theory predicts, and whether uncertainty can help in this world at all."""
    try:
        th = result_theory(result)
    except ValueError as exc:  # a judge or metric the exact theory does not cover
        return ["## Known truth", "", f"The model is a world, but its theory is not available here: {exc}.", ""]
    if th is None:
        return []
    world, model = th["world"], th["model"]
    lines = ["## Known truth (the model is a simulated world, not an LLM)", "",
             f"`world:{world.name}` — {world.description}. Expected values are exact (enumerated outcomes of the "
             "world's answer distributions; `uncertainty_lab/worlds/data/qa_worlds.md`).", "",
             "| policy | run accuracy [95% Wilson] | expected (theory) | theory inside the interval |", "|---|---|---|---|"]
    for row in result.summary_rows():
        if row["model"] != model:
            continue
        exp = th["accuracy"][row["policy"]]
        inside = "yes" if row["ci_low"] <= exp <= row["ci_high"] else "**no**"
        lines.append(f"| {row['policy']} | {row['accuracy']:.1%} [{row['ci_low']:.1%}, {row['ci_high']:.1%}] | "
                     f"{exp:.1%} | {inside} |")
    found = {name: d for m, name, d in result.discriminations() if m == model}
    lines += ["", "| first-round signal | run AUROC | expected AUROC (theory) |", "|---|---|---|"]
    for role in ("entropy", "density"):
        d = found.get(role)
        lines.append(f"| {role} | {d.cell() if d is not None else '—'} | {th['auroc'][role]:.3f} |")
    best = max(th["auroc"].values())
    if best <= 0.65:
        lines += ["", f"**Uncertainty cannot help here.** In this world the errors are confident (expected AUROC at "
                      f"most {best:.2f}): no gate on these signals tells its wrong answers from right ones, so "
                      "escalating buys cost, not accuracy."]
    elif best >= 0.8:
        lines += ["", f"Uncertainty tracks error in this world (expected AUROC up to {best:.2f}): a gate can find the "
                      "answers worth a second try."]
    return [*lines, ""]
