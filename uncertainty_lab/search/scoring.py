"""The score of one finished search episode: accuracy against the gold answer, support recall, loops, premature
stops, tokens and the paper's objective.

- ``exact_match`` / ``f1``: the final answer against the gold answer and its aliases (best alias), after
  :func:`~uncertainty_lab.semantic.text.normalise_answer`; F1 is SQuAD's token F1. An invalid answer scores 0.
  An **unanswerable** question (MuSiQue-Full's contrast questions, ``answerable: false``: a paragraph the chain
  needs was removed) is right (1, 1) when the answer is an abstention ("unknown", "I don't know", …) and wrong
  (0, 0) otherwise, the gold answer included: the paragraphs do not support it.
- ``support_recall``: share of the gold supporting documents among the passages the agent was shown.
- ``loop``: the episode did redundant work — some search/read action *repeats* an earlier one: its token
  Jaccard with an earlier search/read action of the episode (any distance back, not only the gate's window)
  is ≥ ``loop_threshold`` (default 0.9: the same token set, or one token in ten changed) **and** it showed no
  passage that had not been seen before. An exact repeat over this deterministic corpus always qualifies; a
  rephrasing that still finds something new does not. ``n_repeats`` counts such actions.
- ``premature_stop``: the episode was stopped by a gate or by the model (not by a budget) before every
  supporting document had been seen (``support_recall`` < 1).
- ``objective``: success (exact match) − λ · cost, cost = Σ_t Cost(a_t) (observation tokens; paper Eq. 1).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..semantic.text import normalise_answer
from .answer import is_abstention
from .text import action_tokens, jaccard

__all__ = ["EpisodeScore", "repeats", "score_episode", "token_f1"]


def token_f1(prediction: str, gold: str) -> float:
    """SQuAD token F1 between two answers after normalisation."""
    p, g = normalise_answer(prediction).split(), normalise_answer(gold).split()
    if not p or not g:
        return float(p == g)
    common = sum((Counter(p) & Counter(g)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(p), common / len(g)
    return 2 * precision * recall / (precision + recall)


@dataclass(frozen=True)
class EpisodeScore:
    """The score of one finished episode (see the module doc for every definition)."""

    question_id: str
    answer: str
    valid: bool
    exact_match: float
    f1: float
    support_recall: float
    loop: bool
    n_repeats: int
    premature_stop: bool
    stop_reason: str | None
    stop_gate: str | None
    steps: int
    cost: int
    llm_tokens: int
    objective: float
    lam: float

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def repeats(steps: Sequence[Any], loop_threshold: float = 0.9) -> list[int]:
    """Steps whose search/read action repeats an earlier one (Jaccard ≥ ``loop_threshold``) and shows no passage
    not seen before (see the module doc)."""
    seen_actions: list[frozenset[str]] = []
    seen_ids: set[str] = set()
    out = []
    for s in steps:
        if s.action not in ("search", "read"):
            continue
        tok = action_tokens(s.action_text)
        similar = any(jaccard(tok, p) >= loop_threshold for p in seen_actions)
        if similar and not (set(s.passage_ids) - seen_ids):
            out.append(s.t)
        seen_actions.append(tok)
        seen_ids.update(s.passage_ids)
    return out


def _accuracy(answer: dict[str, Any], question: dict[str, Any]) -> tuple[float, float]:
    """(exact match, F1) of the final answer record against the gold answer and aliases (NaN without a gold); for an
    unanswerable question, whether the answer abstains."""
    if question.get("answerable", True) is False:
        right = float(is_abstention(answer))
        return right, right
    golds = [g for g in [question.get("answer", ""), *question.get("aliases", [])] if g and normalise_answer(g)]
    if answer.get("valid") and golds:
        em = float(any(normalise_answer(answer["text"]) == normalise_answer(g) for g in golds))
        return em, max(token_f1(answer["text"], g) for g in golds)
    value = math.nan if not golds else 0.0
    return value, value


def score_episode(episode: Any, lam: float | None = None, loop_threshold: float = 0.9) -> EpisodeScore:
    """Score a finished :class:`~uncertainty_lab.search.record.Episode` against the gold answer in its config."""
    q = episode.config["question"]
    lam = float(episode.config.get("lam", 0.0) if lam is None else lam)
    ans = episode.final["answer"]
    em, f1 = _accuracy(ans, q)
    support = list(q.get("supporting_ids", []))
    seen = set(episode.seen_ids)
    recall = (sum(i in seen for i in support) / len(support)) if support else math.nan
    reps = repeats(episode.steps, loop_threshold)
    premature = bool(support) and episode.stop_reason != "budget" and recall < 1.0
    success = 0.0 if math.isnan(em) else em
    tokens = episode.llm_tokens
    return EpisodeScore(
        question_id=episode.question_id, answer=ans["text"], valid=bool(ans.get("valid")), exact_match=em, f1=f1,
        support_recall=recall, loop=bool(reps), n_repeats=len(reps), premature_stop=premature,
        stop_reason=episode.stop_reason, stop_gate=episode.stop_gate, steps=len(episode.steps), cost=episode.cost,
        llm_tokens=tokens["prompt"] + tokens["completion"], objective=success - lam * episode.cost, lam=lam,
    )
