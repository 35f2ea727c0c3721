"""Comparisons between the conditions of a search experiment, on the same questions.

- **Paired comparisons** (:func:`paired`): McNemar on exact match between conditions that differ in one factor
  (predicate − implicit; a later gate set − an earlier one; a later policy − an earlier one).
- **Token savings of the exhaustion gate** (:func:`token_savings`): for each gate set G holding ``exhaustion``
  whose twin G − {exhaustion} also ran, saving = (mean tokens without − mean tokens with) / mean tokens without,
  with a paired bootstrap interval — always next to the accuracy difference (with − without) and its interval,
  saying plainly whether accuracy was the same; a saving bought with a loss of accuracy is not the paper's claim
  (up to 39 % fewer tokens *with no loss of accuracy*). The belief-state result of the paper (up to +11.4 %
  multi-hop accuracy) is a separate experiment; the report keeps them apart.

``scores`` is a function condition → its episode scores (the result's cache).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .config import Condition
from .scoring import EpisodeScore

__all__ = ["batched_mean", "num", "paired", "savings_table", "token_savings"]

Scores = Callable[[Condition], list[EpisodeScore]]


def _batched(fn):
    fn.supports_batches = True
    return fn


@_batched
def batched_mean(x: np.ndarray):
    """The mean per resample row (a batched bootstrap statistic)."""
    return np.asarray(x, dtype=float).mean(axis=-1)


@_batched
def _saving(without: np.ndarray, with_: np.ndarray):
    """(mean without − mean with) / mean without, per resample row."""
    a = np.asarray(without, dtype=float).mean(axis=-1)
    b = np.asarray(with_, dtype=float).mean(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(a > 0, (a - b) / np.where(a > 0, a, 1.0), np.nan)


def num(x: float, digits: int = 0) -> str:
    """A number with thousands separators; "—" for a missing one."""
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:,.{digits}f}"


def _same_questions(scores: Scores, a: Condition, b: Condition):
    """(question ids both ran, a's scores, b's scores), in a's order."""
    sa = {s.question_id: s for s in scores(a)}
    sb = {s.question_id: s for s in scores(b)}
    ids = [i for i in sa if i in sb]
    return ids, [sa[i] for i in ids], [sb[i] for i in ids]


def paired(conditions: Sequence[Condition], scores: Scores, level: float) -> list[dict[str, Any]]:
    """McNemar comparisons (exact match, same questions) between conditions that differ in one factor. Each row
    carries the :class:`~uncertainty_lab.semantic.evaluation.PairedComparison` and the mean context tokens."""
    from ..semantic.evaluation import paired_comparison

    names = {"policy": lambda c: c.policy, "belief": lambda c: c.belief, "gates": lambda c: c.gate_label}
    out = []
    for i, a in enumerate(conditions):
        for b in conditions[i + 1:]:
            same = [a.policy == b.policy, a.belief == b.belief, a.gate_label == b.gate_label]
            if sum(same) != 2:
                continue
            factor = ("policy", "belief", "gates")[same.index(False)]
            # orient: predicate − implicit; later gate set − earlier; later policy − earlier
            first, second = (a, b) if factor == "belief" and b.belief == "implicit" else (b, a)
            ids, s1, s2 = _same_questions(scores, first, second)
            if not ids:
                continue
            fixed = " · ".join(x for x, keep in zip((a.policy, a.belief, a.gate_label), same, strict=True) if keep)
            pc = paired_comparison([s.exact_match == 1.0 for s in s1], [s.exact_match == 1.0 for s in s2],
                                   names=(names[factor](first), names[factor](second)), level=level)
            out.append({"factor": factor, "fixed": fixed, "a": first.label, "b": second.label, "n": len(ids),
                        "comparison": pc,
                        "context_tokens_a": float(np.mean([s.cost for s in s1])),
                        "context_tokens_b": float(np.mean([s.cost for s in s2]))})
    return out


def _twins(conditions: Sequence[Condition]) -> list[tuple[Condition, Condition]]:
    """(with exhaustion, the same condition without it) for every condition whose twin ran."""
    by_key = {(c.policy, c.belief, tuple(str(g) for g in c.gates)): c for c in conditions}
    out = []
    for c in conditions:
        names = c.gate_names()
        if "exhaustion" not in names:
            continue
        rest = tuple(str(g) for g, n in zip(c.gates, names, strict=True) if n != "exhaustion")
        twin = by_key.get((c.policy, c.belief, rest))
        if twin is not None:
            out.append((c, twin))
    return out


def _token_saving(s_with: list[EpisodeScore], s_without: list[EpisodeScore], get: Callable[[EpisodeScore], float],
                  config: Any) -> dict[str, float]:
    """Mean tokens without and with the gate, the saving and its paired bootstrap interval (NaN when the twin
    used no tokens)."""
    from ..semantic.evaluation import bootstrap_ci

    w = np.array([get(s) for s in s_with], dtype=float)
    wo = np.array([get(s) for s in s_without], dtype=float)
    if not wo.mean() > 0:
        return {"without": float(wo.mean()), "with": float(w.mean()), "saving": math.nan,
                "low": math.nan, "high": math.nan}
    ci = bootstrap_ci(_saving, wo, w, n_boot=config.n_boot, level=config.level, seed=config.seed)
    return {"without": float(wo.mean()), "with": float(w.mean()), "saving": float(_saving(wo, w)),
            "low": ci.low, "high": ci.high}


def _accuracy_verdict(pc: Any, n: int, level: float) -> tuple[bool, str]:
    """(accuracy the same?, the plain sentence the savings table prints) for a with − without comparison."""
    if pc.only_a + pc.only_b == 0:
        note = f"equal accuracy: right on exactly the same {n} questions with and without the gate"
        if pc.accuracy_a in (0.0, 1.0):
            note += (f" — but both arms are at {pc.accuracy_a:.0%}, so this says nothing about whether the gate can "
                     "cost accuracy")
        return True, note
    diff = (f"{100 * pc.difference:+.1f} points, {level:.0%} CI [{100 * pc.ci_low:+.1f}, "
            f"{100 * pc.ci_high:+.1f}], McNemar p = {pc.p_value:.2g}")
    if pc.ci_low > 0 or pc.ci_high < 0:
        return False, f"accuracy NOT equal: with − without = {diff}"
    return False, (f"accuracy not equal on these questions (with − without = {diff}); the difference is within "
                   "noise, which is not the same as no loss")


def token_savings(conditions: Sequence[Condition], scores: Scores, config: Any) -> list[dict[str, Any]]:
    """For each condition whose gate set holds ``exhaustion`` and whose twin without it ran (same policy, belief
    and other gates): the saving (tokens without − tokens with) / tokens without on the same questions, for
    context and model tokens, each with a paired bootstrap interval, next to the accuracy difference (with −
    without), its interval and a plain statement of whether accuracy was the same."""
    from ..semantic.evaluation import paired_comparison

    out = []
    for c, twin in _twins(conditions):
        ids, s_with, s_without = _same_questions(scores, c, twin)
        if not ids:
            continue
        row: dict[str, Any] = {"policy": c.policy, "belief": c.belief, "with": c.gate_label,
                               "without": twin.gate_label, "n": len(ids)}
        row["context_tokens"] = _token_saving(s_with, s_without, lambda s: s.cost, config)
        row["model_tokens"] = _token_saving(s_with, s_without, lambda s: s.llm_tokens, config)
        pc = paired_comparison([s.exact_match == 1.0 for s in s_with], [s.exact_match == 1.0 for s in s_without],
                               names=("with", "without"), level=config.level)
        row["accuracy_with"], row["accuracy_without"] = pc.accuracy_a, pc.accuracy_b
        row["accuracy_difference"] = {"difference": pc.difference, "low": pc.ci_low, "high": pc.ci_high,
                                      "p_value": pc.p_value, "only_with": pc.only_a, "only_without": pc.only_b}
        row["accuracy_same"], row["accuracy_note"] = _accuracy_verdict(pc, len(ids), config.level)
        out.append(row)
    return out


def savings_table(rows: list[dict[str, Any]], level: float) -> str:
    """The rows of :func:`token_savings` as markdown (or a sentence when no gate set has a twin)."""
    lvl = f"{level:.0%}"
    head = ["policy · belief", "without → with", "n", f"context-token saving [{lvl} boot]",
            f"model-token saving [{lvl} boot]", f"accuracy with − without [{lvl} Newcombe]", "accuracy"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [f"{r['policy']} · {r['belief']}", f"{r['without']} → {r['with']}", str(r["n"])]
        for key in ("context_tokens", "model_tokens"):
            t = r[key]
            if math.isnan(t["saving"]):
                cells.append(f"— ({num(t['without'])} → {num(t['with'])})")
            else:
                cells.append(f"{t['saving']:+.0%} [{t['low']:+.0%}, {t['high']:+.0%}] "
                             f"({num(t['without'])} → {num(t['with'])})")
        d = r["accuracy_difference"]
        cells.append(f"{100 * d['difference']:+.1f} pts [{100 * d['low']:+.1f}, {100 * d['high']:+.1f}] "
                     f"({r['accuracy_without']:.0%} → {r['accuracy_with']:.0%})")
        cells.append(r["accuracy_note"])
        lines.append("| " + " | ".join(cells) + " |")
    if not rows:
        return "(no gate set with `exhaustion` has a twin without it in this experiment)"
    return "\n".join(lines)
