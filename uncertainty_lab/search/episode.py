"""Search episodes: the step record gates read (:class:`SearchStep`), the episode (:class:`Episode`) with its JSONL
stream, and its score (:class:`EpisodeScore`).

JSONL layout (format ``uncertainty_lab.search/1``): a header ``{"type": "header", "format", "config"}``; a
``{"type": "start", "init", "belief"}`` record (the initial belief); one ``{"type": "step", ...}`` per step,
written as soon as the step is done; a ``{"type": "final", ...}`` record (stop reason, the validated answer).
An episode cut short reloads without its final record and resumes from its last complete step.

Scoring (:meth:`Episode.score`):

- ``exact_match`` / ``f1``: the final answer against the gold answer and its aliases (best alias), after
  :func:`~uncertainty_lab.semantic.text.normalise_answer`; F1 is SQuAD's token F1. An invalid answer scores 0.
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

import json
import math
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..journal import JournalWriter, read_records
from ..semantic.text import normalise_answer
from .text import action_tokens

__all__ = ["FORMAT", "Episode", "EpisodeError", "EpisodeResumeError", "EpisodeScore", "SearchStep", "step_seed",
           "token_f1"]

FORMAT = "uncertainty_lab.search/1"
_PURPOSES = {"init": 0, "policy": 1, "update": 2, "answer": 3, "convergence": 4}


class EpisodeError(ValueError):
    """An episode file is damaged or an episode argument is wrong; the message says which and how to fix it."""


class EpisodeResumeError(EpisodeError):
    """An existing JSONL file cannot be continued with these arguments (a different configuration)."""


def step_seed(seed: int, t: int, purpose: str) -> int:
    """The seed of one model call: derived from (seed, step t, purpose) so a resumed episode makes the same calls."""
    return int(np.random.SeedSequence([int(seed), int(t), _PURPOSES[purpose]]).generate_state(1, np.uint32)[0]
               & 0x7FFFFFFF)


def _add_tokens(*parts: dict[str, int] | None) -> dict[str, int]:
    out = {"prompt": 0, "completion": 0, "calls": 0}
    for p in parts:
        if isinstance(p, dict):
            for k in out:
                out[k] += int(p.get(k, 0) or 0)
    return out


@dataclass
class SearchStep:
    """One step of an episode — what the gates read and what the JSONL stores.

    ``query``: the action's argument (the search query; the doc id for a read; the proposed answer for an
    answer). ``passage_ids``: C_t, the ids shown at this step, in rank order. ``action``: "search", "read" or
    "answer". ``t``: the step number (from 1). ``belief``: the belief snapshot after this step's update (its
    ``"text"`` is the state as the model sees it; a predicate belief lists ``findings`` and ``predicates``).
    ``observation``/``cost``: the text that entered the context and its tokens. ``policy``, ``update``: how the
    action was chosen (raw reply, parse status, fallback) and how the belief was updated (items ok / repaired /
    rejected). ``llm_tokens``: model-call tokens of this step. ``gates``: each gate's decision record.
    """

    query: str
    passage_ids: tuple[str, ...] = ()
    action: str = "search"
    t: int = 0
    question: str = ""
    scores: tuple[float, ...] = ()
    observation: str = ""
    cost: int = 0
    error: str | None = None
    belief: dict[str, Any] | None = None
    policy: dict[str, Any] = field(default_factory=dict)
    update: dict[str, Any] = field(default_factory=dict)
    llm_tokens: dict[str, int] = field(default_factory=dict)
    gates: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self):
        if not isinstance(self.query, str):
            raise TypeError(f"SearchStep.query must be a string, got {type(self.query).__name__}")
        if isinstance(self.passage_ids, str):
            raise TypeError("SearchStep.passage_ids must be a list of ids, not one string; wrap it: [doc_id]")
        self.passage_ids = tuple(self.passage_ids)
        self.scores = tuple(self.scores)

    @property
    def action_text(self) -> str:
        """The text the exhaustion gate compares: the query of a search, ``read <id>`` for a read."""
        return f"read {self.query}" if self.action == "read" else self.query

    @property
    def open_questions(self) -> list[str] | None:
        """Open predicates after this step (None for a belief without them)."""
        if not self.belief or self.belief.get("kind") != "predicate":
            return None
        return [p["text"] for p in self.belief.get("predicates", []) if p.get("status") == "open"]

    @property
    def stopped_by(self) -> list[str]:
        return [name for name, d in self.gates.items() if d.get("stop")]

    def to_record(self) -> dict[str, Any]:
        return {"type": "step", "t": self.t, "action": self.action, "query": self.query,
                "passage_ids": list(self.passage_ids), "scores": list(self.scores), "observation": self.observation,
                "cost": self.cost, "error": self.error, "question": self.question, "belief": self.belief,
                "policy": self.policy, "update": self.update, "llm_tokens": self.llm_tokens, "gates": self.gates}

    @classmethod
    def from_record(cls, rec: dict[str, Any]) -> SearchStep:
        return cls(query=rec["query"], passage_ids=tuple(rec.get("passage_ids", ())), action=rec.get("action", "search"),
                   t=int(rec.get("t", 0)), question=rec.get("question", ""), scores=tuple(rec.get("scores", ())),
                   observation=rec.get("observation", ""), cost=int(rec.get("cost", 0)), error=rec.get("error"),
                   belief=rec.get("belief"), policy=rec.get("policy", {}), update=rec.get("update", {}),
                   llm_tokens=rec.get("llm_tokens", {}), gates=rec.get("gates", {}))


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


@dataclass
class Episode:
    """One search episode: ``config`` (question, environment, policy, belief, gates, model, seed, λ), the ``start``
    record (initial belief), the ``steps`` and the ``final`` record. ``Episode.load(path)`` reloads a JSONL file."""

    config: dict[str, Any]
    start: dict[str, Any] | None = None
    steps: list[SearchStep] = field(default_factory=list)
    final: dict[str, Any] | None = None
    path: Path | None = None

    def __len__(self) -> int:
        return len(self.steps)

    def __repr__(self) -> str:
        where = f", path={str(self.path)!r}" if self.path else ""
        ans = self.answer if self.final else None
        return (f"Episode({self.question_id!r}, {len(self.steps)} steps, stop_reason={self.stop_reason!r}, "
                f"answer={ans!r}{where})")

    # --- views --------------------------------------------------------------------------------------
    @property
    def question(self) -> str:
        return self.config["question"]["question"]

    @property
    def question_id(self) -> str:
        return self.config["question"].get("id", "")

    @property
    def complete(self) -> bool:
        return self.final is not None

    @property
    def stop_reason(self) -> str | None:
        """"answered", "exhausted" or "budget" (None while unfinished)."""
        return None if self.final is None else self.final.get("stop_reason")

    @property
    def stop_gate(self) -> str | None:
        return None if self.final is None else self.final.get("stop_gate")

    @property
    def answer(self) -> str:
        return "" if self.final is None else self.final["answer"]["text"]

    @property
    def queries(self) -> list[str]:
        return [s.query for s in self.steps if s.action == "search"]

    @property
    def seen_ids(self) -> list[str]:
        """Every passage id shown during the episode, first-seen order."""
        return list(dict.fromkeys(i for s in self.steps for i in s.passage_ids))

    @property
    def cost(self) -> int:
        """Σ_t Cost(a_t): observation tokens that entered the context (paper Eq. 1)."""
        return sum(s.cost for s in self.steps)

    @property
    def llm_tokens(self) -> dict[str, int]:
        """Model-call tokens of the whole episode (init, every step, final answer): prompt, completion, calls."""
        return _add_tokens((self.start or {}).get("init", {}).get("tokens"), *(s.llm_tokens for s in self.steps),
                           (self.final or {}).get("tokens"))

    @property
    def parse_failures(self) -> list[int]:
        """Steps whose policy reply could not be parsed (they fell back to searching the question)."""
        return [s.t for s in self.steps if s.policy.get("parse") == "failed"]

    def gate_trace(self, gate: str = "exhaustion") -> list[dict[str, Any]]:
        """Per step: t, the gate's stop flag and its signals (e.g. J_t, UPR_t, streak for ``exhaustion``)."""
        return [{"t": s.t, "stop": s.gates.get(gate, {}).get("stop"), **s.gates.get(gate, {}).get("signals", {})}
                for s in self.steps if gate in s.gates]

    # --- scoring ------------------------------------------------------------------------------------
    def repeats(self, loop_threshold: float = 0.9) -> list[int]:
        """Steps whose search/read action repeats an earlier one (Jaccard ≥ ``loop_threshold``) and shows no
        passage not seen before (see the module doc)."""
        seen_actions: list[frozenset[str]] = []
        seen_ids: set[str] = set()
        out = []
        for s in self.steps:
            if s.action not in ("search", "read"):
                continue
            tok = action_tokens(s.action_text)
            similar = any((len(tok & p) / len(tok | p) if (tok or p) else 1.0) >= loop_threshold for p in seen_actions)
            if similar and not (set(s.passage_ids) - seen_ids):
                out.append(s.t)
            seen_actions.append(tok)
            seen_ids.update(s.passage_ids)
        return out

    def score(self, lam: float | None = None, loop_threshold: float = 0.9) -> EpisodeScore:
        """Score the finished episode against the gold answer in its config (see the module doc)."""
        if self.final is None:
            raise EpisodeError(f"episode {self.question_id!r} is unfinished ({len(self.steps)} steps, no final answer); "
                               "resume it with run_episode(..., out=path) first")
        q = self.config["question"]
        lam = float(self.config.get("lam", 0.0) if lam is None else lam)
        ans = self.final["answer"]
        golds = [g for g in [q.get("answer", ""), *q.get("aliases", [])] if g and normalise_answer(g)]
        if ans.get("valid") and golds:
            em = float(any(normalise_answer(ans["text"]) == normalise_answer(g) for g in golds))
            f1 = max(token_f1(ans["text"], g) for g in golds)
        else:
            em = f1 = math.nan if not golds else 0.0
        support = list(q.get("supporting_ids", []))
        seen = set(self.seen_ids)
        recall = (sum(i in seen for i in support) / len(support)) if support else math.nan
        reps = self.repeats(loop_threshold)
        budget_stop = self.stop_reason == "budget"
        premature = bool(support) and not budget_stop and recall < 1.0
        success = 0.0 if math.isnan(em) else em
        return EpisodeScore(
            question_id=self.question_id, answer=ans["text"], valid=bool(ans.get("valid")), exact_match=em, f1=f1,
            support_recall=recall, loop=bool(reps), n_repeats=len(reps), premature_stop=premature,
            stop_reason=self.stop_reason, stop_gate=self.stop_gate, steps=len(self.steps), cost=self.cost,
            llm_tokens=self.llm_tokens["prompt"] + self.llm_tokens["completion"],
            objective=success - lam * self.cost, lam=lam,
        )

    # --- records ------------------------------------------------------------------------------------
    def header(self) -> dict[str, Any]:
        return {"type": "header", "format": FORMAT, "config": self.config}

    def records(self) -> list[dict[str, Any]]:
        out = [self.header()]
        if self.start is not None:
            out.append({"type": "start", **self.start})
        out += [s.to_record() for s in self.steps]
        if self.final is not None:
            out.append({"type": "final", **self.final})
        return out

    def save(self, path: str | os.PathLike) -> Path:
        """Write the whole episode as JSONL (a finished or unfinished one)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with JournalWriter(path, "w") as writer:
            for rec in self.records():
                writer.write(rec)
        self.path = path
        return path

    @classmethod
    def load(cls, path: str | os.PathLike) -> Episode:
        """Reload a JSONL episode (finished or cut short) into an Episode."""
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"no episode file at {path}")
        header, start, steps, final, _ = read_jsonl(path)
        if header is None:
            raise EpisodeError(f"{path} has no episode header line; it is not a search episode (or it is empty)")
        return cls(header["config"], start, [SearchStep.from_record(r) for r in steps], final, path)


def read_jsonl(path: Path):
    """(header, start, step records, final or None, bytes of complete lines). A last line the interruption cut
    short (no newline, or not JSON) is ignored; damage elsewhere is an error."""
    header = start = final = None
    steps: list[dict[str, Any]] = []
    lines, good = read_records(path, error=EpisodeError)
    for line_no, rec in lines:
        kind = rec.get("type") if isinstance(rec, dict) else None
        if kind == "header":
            if header is not None:
                raise EpisodeError(f"{path} line {line_no}: a second header; the file mixes two episodes")
            if rec.get("format") != FORMAT:
                raise EpisodeError(f"{path}: format {rec.get('format')!r} is not {FORMAT!r}")
            header = rec
        elif header is None:
            raise EpisodeError(f"{path} line {line_no}: a {kind!r} record before the header")
        elif kind == "start":
            start = {k: v for k, v in rec.items() if k != "type"}
        elif kind == "step":
            if rec.get("t") != len(steps) + 1:
                raise EpisodeError(f"{path} line {line_no}: step {rec.get('t')!r} where step {len(steps) + 1} was expected")
            steps.append(rec)
        elif kind == "final":
            final = {k: v for k, v in rec.items() if k != "type"}
        else:
            raise EpisodeError(f"{path} line {line_no}: unknown record {json.dumps(rec)[:80]!r}")
    return header, start, steps, final, good
