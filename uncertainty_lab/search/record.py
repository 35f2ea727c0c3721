"""The run record of one search episode: the step record gates read (:class:`SearchStep`), the episode
(:class:`Episode`) and its run-file format (:data:`FORMAT`), and the seed of each of its model calls.

Run file (format ``uncertainty_lab.search/1``, read and resumed by :class:`~uncertainty_lab.journal.JournalFormat`):
a header ``{"type": "header", "format", "config"}``; a ``{"type": "start", "init", "belief"}`` record (the
initial belief); one ``{"type": "step", ...}`` per step, written as soon as the step is done; a
``{"type": "final", ...}`` record (stop reason, the validated answer). An episode cut short reloads without its
final record and resumes from its last complete step. Scoring: :mod:`~uncertainty_lab.search.scoring`.

Seeds: the model call for ``purpose`` at step t draws ``derive_seed(seed, t, code)`` (:mod:`uncertainty_lab.seeds`;
codes init 0, policy 1, update 2, answer 3, convergence 4), so a resumed episode makes the calls an
uninterrupted one makes and finds them in the completion cache.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..journal import Journal, JournalFormat, write_all
from ..seeds import derive_seed
from .scoring import EpisodeScore, repeats, score_episode

__all__ = ["FORMAT", "Episode", "EpisodeError", "EpisodeResumeError", "SearchStep", "add_tokens", "step_seed"]

_PURPOSES = {"init": 0, "policy": 1, "update": 2, "answer": 3, "convergence": 4}


class EpisodeError(ValueError):
    """An episode file is damaged or an episode argument is wrong; the message says which and how to fix it."""


class EpisodeResumeError(EpisodeError):
    """An existing JSONL file cannot be continued with these arguments (a different configuration)."""


FORMAT = JournalFormat("uncertainty_lab.search/1", body=("start", "step"), end="final", error=EpisodeError,
                       resume_error=EpisodeResumeError, what="search episode")


def step_seed(seed: int, t: int, purpose: str) -> int:
    """The seed of one model call: derived from (seed, step t, purpose) so a resumed episode makes the same calls."""
    return derive_seed(int(seed), int(t), _PURPOSES[purpose])


def add_tokens(*parts: dict[str, int] | None) -> dict[str, int]:
    """The sum of token records ``{"prompt", "completion", "calls"}`` (None and missing keys count 0)."""
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


def _without_type(rec: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if rec is None else {k: v for k, v in rec.items() if k != "type"}


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
        """The stopping gate's ``stop_kind`` ("answered", "exhausted", "budget", or a plugin's own); None while
        unfinished."""
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
        return add_tokens((self.start or {}).get("init", {}).get("tokens"), *(s.llm_tokens for s in self.steps),
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
        """Steps whose search/read action repeats an earlier one (:func:`~uncertainty_lab.search.scoring.repeats`)."""
        return repeats(self.steps, loop_threshold)

    def score(self, lam: float | None = None, loop_threshold: float = 0.9) -> EpisodeScore:
        """Score the finished episode against the gold answer in its config (:mod:`~uncertainty_lab.search.scoring`)."""
        if self.final is None:
            raise EpisodeError(f"episode {self.question_id!r} is unfinished ({len(self.steps)} steps, no final answer); "
                               "resume it with run_episode(..., out=path) first")
        return score_episode(self, lam, loop_threshold)

    # --- records ------------------------------------------------------------------------------------
    def header(self) -> dict[str, Any]:
        return {"type": "header", "format": FORMAT.name, "config": self.config}

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
        self.path = write_all(path, self.records())
        return self.path

    @classmethod
    def from_journal(cls, journal: Journal) -> Episode:
        """The episode a run file holds (:meth:`FORMAT.read <uncertainty_lab.journal.JournalFormat.read>`): its
        start record, its steps (numbered 1, 2, … without a gap) and its final record when it finished."""
        start, steps = None, []
        for rec in journal.body:
            if rec["type"] == "start":
                start = _without_type(rec)
            elif rec.get("t") != len(steps) + 1:
                raise EpisodeError(f"{journal.path}: step {rec.get('t')!r} where step {len(steps) + 1} was expected")
            else:
                steps.append(SearchStep.from_record(rec))
        return cls(journal.config, start, steps, _without_type(journal.end), journal.path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> Episode:
        """Reload a JSONL episode (finished or cut short) into an Episode."""
        return cls.from_journal(FORMAT.load(path))
