"""The coordinator: ask a worker, score its samples, let the policy decide, act — until an answer is
accepted or selected; then validate it, like every other exit.

Each round the coordinator gets the worker's primary answer and ``n_samples`` samples (sampled alike;
the primary is sample 0), computes the configured metrics on the extracted answers, turns them into
:class:`~.policy.Signals` and asks the policy for a :class:`~.policy.Decision`:

- ``reprompt``: the same worker, the question with explicit acceptance criteria and a changed angle
  (optionally rephrased by a ``rephraser`` LLM); never a bare "try again";
- ``reassign``: the next worker of the pool gets the question afresh;
- ``delegate``: ``delegate_k`` other workers get it with the acceptance criteria; the most confident
  answer (:func:`~.policy.best_round`'s key) represents the round;
- ``accept`` / ``final_select``: stop. Both go through :meth:`Coordinator._finalise`, which keeps the
  chosen answer only if it is valid (non-empty extraction, no backend error) and otherwise falls back to
  the best valid answer already produced — or reports that there is none.

Seeds: every call for a question uses the same seed (from ``seed`` and the question text), so the first
round is the same in every policy and conditions share completions through the cache; later rounds
differ by prompt or worker. The re-prompt text depends only on the question and the re-prompt number,
not on the signal values, so policies differ only in their decisions.

Metrics config: ``{role: spec}``; the ``entropy`` role is read as ``normalised_uncertainty`` (H / ln n),
the ``density`` role as ``confidence``, any other role is logged (its confidence) and never gated. A spec
is a registered metric name, ``{"name": ..., **params}`` or a metric instance; metrics that take a
``judge`` get the coordinator's one shared judge (so ``judge.cache_info()`` covers them all).

:meth:`Coordinator.run_benchmark` streams one record per question to JSONL, resumes after an
interruption (the header's config must match), and :meth:`BenchmarkRun.load` reloads the file.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import time
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..journal import JournalWriter, drop_cut_tail, read_records
from ..llm import LLMError
from ..semantic import MetricResult
from ..semantic.judges import resolve_judge
from .policy import Decision, Policy, Signals, best_round, get_policy, selection_key
from .workers import Worker, WorkerAnswer, default_workers

__all__ = ["ACCEPTANCE_CRITERIA", "ANGLES", "DEFAULT_METRICS", "FORMAT", "BenchmarkRun", "Candidate",
           "Coordinator", "FinalAnswer", "OrchestrationError", "OrchestrationResumeError", "QuestionRecord", "Round",
           "Trace", "policy_of"]

FORMAT = "uncertainty_lab.orchestration.benchmark/1"

DEFAULT_METRICS: dict[str, Any] = {"entropy": "discrete_semantic_entropy", "density": "semantic_density"}

ACCEPTANCE_CRITERIA = (
    "Acceptance criteria: a short final answer that is true to well-known facts. If the question rests on a false "
    "premise, say so. If you should not help, say you can't help with that.")
ANGLES = (
    "Restate to yourself exactly what is asked before you answer.",
    "Check every fact the question assumes, and answer only what you are sure of.",
    "Answer the way a careful reference book would.",
)
REPHRASE_SYSTEM = "You rewrite questions to make them clearer. Keep the meaning. Reply with the rewritten question only."


class OrchestrationError(ValueError):
    """A coordinator or run that cannot work as configured; the message says what to change."""


class OrchestrationResumeError(OrchestrationError):
    """An existing run file belongs to a different configuration."""


def _plain(x: Any) -> Any:
    """JSON-ready: numpy scalars/arrays to Python, NaN to None, tuples to lists, unknown objects to repr."""
    if isinstance(x, Mapping):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, np.ndarray):
        return _plain(x.tolist())
    if isinstance(x, (np.floating, float)):
        x = float(x)
        return None if math.isnan(x) else x
    if isinstance(x, np.integer):
        return int(x)
    if x is None or isinstance(x, (str, int, bool)):
        return x
    return repr(x)


# ---------------------------------------------------------------------------------------------- records


@dataclass
class Candidate:
    """One worker answer with the signals the policy read and the metric results they came from."""

    answer: WorkerAnswer
    signals: Signals
    metrics: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"answer": self.answer.to_dict(), "signals": self.signals.to_dict(), "metrics": _plain(self.metrics)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Candidate:
        return cls(WorkerAnswer.from_dict(d["answer"]), Signals.from_dict(d["signals"]), dict(d.get("metrics") or {}))


@dataclass
class Round:
    """One round: how its answers were obtained (``action``: ask, reprompt, reassign, delegate), the
    ``candidates`` (several after a delegation), the ``chosen`` one, and the policy's ``decision``."""

    round: int
    action: str
    candidates: list[Candidate]
    chosen: int
    decision: Decision

    @property
    def candidate(self) -> Candidate:
        return self.candidates[self.chosen]

    @property
    def signals(self) -> Signals:
        return self.candidate.signals

    def to_dict(self) -> dict[str, Any]:
        return {"round": self.round, "action": self.action, "chosen": self.chosen,
                "candidates": [c.to_dict() for c in self.candidates], "decision": self.decision.to_dict()}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Round:
        return cls(d["round"], d["action"], [Candidate.from_dict(c) for c in d["candidates"]], d["chosen"],
                   Decision.from_dict(d["decision"]))


@dataclass(frozen=True)
class FinalAnswer:
    """The answer a run returns: text (extracted) and ``raw`` completion, where it came from (``round``,
    ``candidate``, ``worker``), the ``exit`` (accept / final_select), whether it is ``valid``, and a ``note``
    from validation."""

    answer: str
    raw: str
    round: int
    candidate: int
    worker: str
    exit: str
    valid: bool
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> FinalAnswer:
        return cls(**{f.name: d[f.name] for f in dataclasses.fields(cls) if f.name in d})


@dataclass
class Trace:
    """Everything one question's run did: ``rounds`` (each with its decision and the signals behind it),
    the ``final`` answer, ``model_calls`` (generations, incl. rephrasing), ``cached_calls``, ``wall_time_s``
    and the judge's cache ``judge_hits`` / ``judge_misses`` during the run."""

    question: str
    policy: str
    rounds: list[Round]
    final: FinalAnswer
    model_calls: int = 0
    cached_calls: int = 0
    wall_time_s: float = 0.0
    judge_hits: int = 0
    judge_misses: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def answer(self) -> str:
        return self.final.answer

    @property
    def decisions(self) -> list[Decision]:
        return [r.decision for r in self.rounds]

    @property
    def actions(self) -> list[str]:
        return [r.decision.action for r in self.rounds]

    @property
    def first_signals(self) -> Signals:
        return self.rounds[0].signals

    def describe(self) -> str:
        """A plain-text trace: one line per round, then the final answer."""
        lines = [f"Q: {self.question}  [policy {self.policy}]"]
        for r in self.rounds:
            s = r.signals
            sig = f"H/ln n={_show(s.entropy)} D={_show(s.density)}"
            who = ", ".join(c.answer.worker for c in r.candidates)
            lines.append(f"  round {r.round} {r.action:<8} ({who}) -> {r.candidate.answer.answer!r:.60}  {sig}")
            lines.append(f"      {r.decision.action}: {r.decision.reason}")
        f = self.final
        lines.append(f"  final ({f.exit}, round {f.round}, {f.worker}{'' if f.valid else ', INVALID'}): {f.answer!r}"
                     + (f"  [{f.note}]" if f.note else ""))
        lines.append(f"  {self.model_calls} model calls ({self.cached_calls} cached), {self.wall_time_s:.2f} s")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"question": self.question, "policy": self.policy, "rounds": [r.to_dict() for r in self.rounds],
                "final": self.final.to_dict(), "model_calls": self.model_calls, "cached_calls": self.cached_calls,
                "wall_time_s": self.wall_time_s, "judge_hits": self.judge_hits, "judge_misses": self.judge_misses,
                "notes": list(self.notes)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Trace:
        return cls(d["question"], d["policy"], [Round.from_dict(r) for r in d["rounds"]], FinalAnswer.from_dict(d["final"]),
                   d.get("model_calls", 0), d.get("cached_calls", 0), d.get("wall_time_s", 0.0), d.get("judge_hits", 0),
                   d.get("judge_misses", 0), list(d.get("notes", [])))


def _show(x: float) -> str:
    return "missing" if math.isnan(x) else f"{x:.2f}"


# ---------------------------------------------------------------------------------------------- metrics


def _make_metric(role: str, spec: Any, judge: Any) -> Any:
    from .. import registry
    from ..parameters import ParameterError, parameters, validate

    if isinstance(spec, str):
        spec = {"name": spec}
    if isinstance(spec, Mapping):
        params = dict(spec)
        name = params.pop("name", None)
        if not isinstance(name, str):
            raise OrchestrationError(f"metrics[{role!r}] needs a 'name' (a registered metric), got {spec!r}")
        try:
            cls = registry.get("metrics", name)
        except registry.RegistryError as exc:
            raise OrchestrationError(f"metrics[{role!r}]: {exc}") from exc
        declared = {p.name for p in parameters(cls)}
        fields = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else declared
        unknown = sorted(set(params) - fields)
        if unknown:
            raise ParameterError(f"metrics[{role!r}] = {name!r} has no parameter(s) {unknown}; its parameters are "
                                 f"{sorted(declared)}")
        checked = validate(cls, {k: v for k, v in params.items() if k in declared and k != "judge"},
                           owner=f"metric {name!r}")
        hidden = {k: v for k, v in params.items() if k not in declared}
        if "judge" in fields:
            checked["judge"] = params.get("judge", judge)
        return cls(**checked, **hidden)
    if callable(getattr(spec, "score", None)):
        return spec
    raise OrchestrationError(f"metrics[{role!r}] must be a metric name, a dict with 'name', or a metric instance; "
                             f"got {type(spec).__name__}")


def _metric_config(metric: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": getattr(metric, "name", type(metric).__name__)}
    if dataclasses.is_dataclass(metric):
        for f in dataclasses.fields(metric):
            if f.name.startswith("_") or f.name == "judge" or f.metadata.get("hidden"):
                continue
            v = getattr(metric, f.name)
            out[f.name] = v if v is None or isinstance(v, (str, int, float, bool)) else repr(v)
    return out


def _judge_config(judge: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": getattr(judge, "name", type(judge).__name__)}
    if dataclasses.is_dataclass(judge):
        for f in dataclasses.fields(judge):
            if f.name.startswith("_") or not f.init:
                continue
            v = getattr(judge, f.name)
            if v is None or isinstance(v, (str, int, float, bool)):
                out[f.name] = v
            elif callable(getattr(v, "complete", None)):
                out[f.name] = getattr(v, "label", type(v).__name__)
    return out


def _question_seed(seed: int, question: str) -> int:
    return int(np.random.SeedSequence([seed, zlib.crc32(question.encode())]).generate_state(1, np.uint32)[0] & 0x7FFFFFFF)


# ---------------------------------------------------------------------------------------------- coordinator


@dataclass
class Coordinator:
    """Runs a policy over a pool of workers (see the module doc).

    ``workers``: a :class:`Worker`, a list of them, or a backend spec/instance (then :func:`default_workers`);
    ``policy``: a preset name, dict or :class:`Policy`; ``metrics``: ``{role: spec}`` (default
    :data:`DEFAULT_METRICS`; the policy's gates must be among the roles); ``n_samples``: answers per worker
    call (primary included); ``judge``: the equivalence judge all metrics share (name or instance);
    ``rephraser``: an optional LLM (spec or backend) that rephrases re-prompts; ``seed``.
    """

    workers: Any = "embedded"
    policy: Any = "both"
    metrics: Any = None
    n_samples: int = 5
    judge: Any = "embedding"
    rephraser: Any = None
    seed: int = 0

    def __post_init__(self):
        if isinstance(self.workers, Worker):
            self.workers = [self.workers]
        elif isinstance(self.workers, str) or callable(getattr(self.workers, "complete", None)):
            self.workers = default_workers(self.workers)
        else:
            self.workers = list(self.workers)
        if not self.workers or not all(isinstance(w, Worker) for w in self.workers):
            raise OrchestrationError("workers must be a Worker, a non-empty list of Workers, or a backend spec")
        names = [w.name for w in self.workers]
        if len(set(names)) != len(names):
            raise OrchestrationError(f"worker names must be unique, got {names}")
        self.policy = get_policy(self.policy)
        if not isinstance(self.n_samples, int) or isinstance(self.n_samples, bool) or self.n_samples < 1:
            raise OrchestrationError(f"n_samples must be a positive integer, got {self.n_samples!r}")
        if self.policy.metrics and self.n_samples < 2:
            raise OrchestrationError(
                f"n_samples={self.n_samples}: with one sample every metric is missing, so policy {self.policy.name!r} "
                "would be concerned every round; use n_samples >= 2 (HASSUM uses 5)")
        if not isinstance(self.seed, int) or self.seed < 0:
            raise OrchestrationError(f"seed must be a non-negative integer, got {self.seed!r}")
        self._judge = resolve_judge(self.judge)
        specs = dict(DEFAULT_METRICS if self.metrics is None else self.metrics)
        missing = [g for g in self.policy.metrics if g not in specs]
        if missing:
            raise OrchestrationError(f"policy {self.policy.name!r} gates on {missing} but the metrics config has no such "
                                     f"role (roles: {sorted(specs)}); add e.g. {{'density': 'semantic_density'}}")
        self._metrics = {role: _make_metric(role, spec, self._judge) for role, spec in specs.items()}
        self._check_reachable()
        if self.rephraser is not None and isinstance(self.rephraser, str):
            from ..llm import get_llm

            self.rephraser = get_llm(self.rephraser, quiet=True)

    def _check_reachable(self) -> None:
        """Refuse thresholds the configured metrics can never cross with ``n_samples`` samples."""
        n = self.n_samples
        d = self._metrics.get("density")
        if "density" in self.policy.metrics and getattr(d, "_variant", None) == "embedding_set" \
                and getattr(d, "include_diagonal", False) and self.policy.density_threshold <= 1.0 / n:
            raise OrchestrationError(
                f"density_threshold={self.policy.density_threshold} can never fire: the embedding_set density with its "
                f"diagonal is at least 1/n = {1.0 / n:.3f} for n_samples={n}; raise the threshold or set "
                "include_diagonal=False")

    # -- configuration ------------------------------------------------------------------------------
    def config(self) -> dict[str, Any]:
        """Everything a run's results depend on (the JSONL header; resuming checks it)."""
        return {"policy": self.policy.to_dict(), "workers": [w.config() for w in self.workers],
                "metrics": {role: _metric_config(m) for role, m in self._metrics.items()},
                "judge": _judge_config(self._judge), "n_samples": self.n_samples, "seed": self.seed,
                "rephraser": None if self.rephraser is None else getattr(self.rephraser, "label", repr(self.rephraser))}

    @property
    def judge_instance(self) -> Any:
        """The judge every metric shares (its ``cache_info()`` reports pair-judgement cache hits)."""
        return self._judge

    # -- one worker answer ----------------------------------------------------------------------------
    def score(self, answer: WorkerAnswer) -> Candidate:
        """Metrics on a worker answer's samples, as :class:`Signals` (missing metrics stay missing)."""
        results: dict[str, MetricResult] = {}
        for role, metric in self._metrics.items():
            try:
                results[role] = metric.score(answer.samples)
            except LLMError as exc:  # an LLM judge that is down: missing, never confident
                results[role] = MetricResult.missing_value(getattr(metric, "name", role), f"{type(exc).__name__}: {exc}")
        missing = {role: str(r.details.get("missing", "not computed")) for role, r in results.items() if r.missing}
        e = results.get("entropy")
        d = results.get("density")
        signals = Signals(
            entropy=math.nan if e is None else e.normalised_uncertainty,
            entropy_raw=math.nan if e is None else e.uncertainty,
            density=math.nan if d is None else d.confidence,
            n_samples=answer.samples.n, answer_valid=answer.valid, missing=missing, problem=answer.problem,
            extra={role: r.confidence for role, r in results.items() if role not in ("entropy", "density")})
        return Candidate(answer, signals, {role: r.to_dict() for role, r in results.items()})

    # -- prompts ------------------------------------------------------------------------------------
    def reprompt_text(self, question: str, k: int, seed: int) -> tuple[str, int, int]:
        """The k-th re-prompt (0-based): the question, the acceptance criteria and angle ``k``; with a
        ``rephraser``, also its rephrasing of the question (skipped when the rephraser fails). Returns
        (prompt, model calls spent, of which cached)."""
        angle = ANGLES[k % len(ANGLES)]
        extra, calls, cached = "", 0, 0
        if self.rephraser is not None:
            msgs = [{"role": "system", "content": REPHRASE_SYSTEM},
                    {"role": "user", "content": f"Angle: {angle}\nQuestion: {question}\nRewritten question:"}]
            calls = 1
            try:
                (c,) = self.rephraser.complete(msgs, n=1, temperature=0.0, seed=seed, max_tokens=64)
                rephrased, cached = _first_line(c.text), int(bool(getattr(c, "cached", False)))
            except LLMError:
                rephrased = ""
            if rephrased and rephrased != question:
                extra = f"\n(Put differently: {rephrased})"
        return (f"{question}{extra}\n\n{ACCEPTANCE_CRITERIA}\nNew angle: {angle}\nReply as 'Answer: <short answer>'.",
                calls, cached)

    def delegation_text(self, question: str) -> str:
        return f"{question}\n\n{ACCEPTANCE_CRITERIA}\nReply as 'Answer: <short answer>'."

    # -- the loop -----------------------------------------------------------------------------------
    def run(self, question: str) -> Trace:
        """Orchestrate one question (see the module doc) and return its :class:`Trace`."""
        if not isinstance(question, str) or not question.strip():
            raise OrchestrationError(f"question must be a non-empty string, got {question!r}")
        t0 = time.perf_counter()
        info0 = self._judge_counts()
        seed = _question_seed(self.seed, question)
        policy, n_w = self.policy, len(self.workers)
        rounds: list[Round] = []
        history: list[Decision] = []
        calls = cached = 0
        current, action, reprompts = 0, "ask", 0
        while True:
            r = len(rounds) + 1
            if action == "delegate":
                k = min(policy.delegate_k, n_w)
                asked = [(current + 1 + j) % n_w for j in range(k)]
                prompts = [self.delegation_text(question)] * k
            elif action == "reprompt":
                text, spent, hit = self.reprompt_text(question, reprompts, seed)
                calls, cached = calls + spent, cached + hit
                reprompts += 1
                asked, prompts = [current], [text]
            else:  # ask, reassign
                asked, prompts = [current], [question]
            answers = [self.workers[w].ask(p, self.n_samples, seed, question=question)
                       for w, p in zip(asked, prompts, strict=True)]
            calls += sum(a.model_calls for a in answers)
            cached += sum(a.cached_calls for a in answers)
            cands = [self.score(a) for a in answers]
            chosen = best_round([c.signals for c in cands], policy)
            current = asked[chosen]
            decision = policy.decide(cands[chosen].signals, r, history, n_workers=n_w)
            rounds.append(Round(r, action, cands, chosen, decision))
            history.append(decision)
            if decision.action in ("accept", "final_select"):
                break
            action = decision.action
            if action == "reassign":
                current = (current + 1) % n_w
        final = self._finalise(rounds, decision.action)
        info1 = self._judge_counts()
        return Trace(question, policy.name, rounds, final, calls, cached, time.perf_counter() - t0,
                     info1[0] - info0[0], info1[1] - info0[1])

    def _judge_counts(self) -> tuple[int, int]:
        info = self._judge.cache_info() if callable(getattr(self._judge, "cache_info", None)) else {}
        return int(info.get("hits", 0)), int(info.get("misses", 0))

    def _finalise(self, rounds: list[Round], exit: str) -> FinalAnswer:
        """Every exit's validation: the accepted answer (or, at ``final_select``, the best one produced in
        any round) if valid; else the best valid answer produced; else an invalid empty answer, said so."""
        flat = [(r.round, i, c) for r in rounds for i, c in enumerate(r.candidates)]
        if exit == "accept":
            last = rounds[-1]
            pick = next(j for j, (rr, i, _) in enumerate(flat) if rr == last.round and i == last.chosen)
            note = ""
        else:
            pick = best_round([c.signals for _, _, c in flat], self.policy)
            rr, i, _ = flat[pick]
            note = f"best of {len(flat)} answer(s) by (invalid, concern, -density, entropy): round {rr}"
        rr, i, c = flat[pick]
        if not c.answer.valid:
            valid = [j for j, (_, _, cc) in enumerate(flat) if cc.answer.valid]
            if not valid:
                return FinalAnswer(c.answer.answer, c.answer.raw, rr, i, c.answer.worker, exit, False,
                                   f"no valid answer in any round ({c.answer.problem})")
            j = min(valid, key=lambda j: (selection_key(flat[j][2].signals, self.policy), j))
            bad = c.answer.problem
            rr, i, c = flat[j]
            note = f"the {exit} answer was invalid ({bad}); replaced by the best valid one, round {rr}"
        return FinalAnswer(c.answer.answer, c.answer.raw, rr, i, c.answer.worker, exit, True, note)

    # -- benchmark runs -----------------------------------------------------------------------------
    def run_benchmark(self, items: Iterable[Any], out: str | os.PathLike | None = None, *, grader: Any = "default",
                      resume: bool = True, progress: bool = True, extra_config: Mapping[str, Any] | None = None,
                      desc: str | None = None) -> BenchmarkRun:
        """Run every item (QAItems, ``{"id", "question", "answers", ...}`` dicts or question strings), streaming
        one record per question to ``out`` (JSONL) as it goes. An existing ``out`` with the same configuration
        is resumed (questions already there are kept); another configuration raises
        :class:`OrchestrationResumeError`; ``resume=False`` overwrites. ``grader`` (``"default"`` = contains
        matching with refusal markers for decline items; None = ungraded; or a callable ``(item, answer, raw)
        -> {"correct", ...}``) grades the final and the first-round answers."""
        from tqdm.auto import tqdm

        from .grading import QAGrader

        items = [_as_item(it, i) for i, it in enumerate(items)]
        ids = [it["id"] for it in items]
        if len(set(ids)) != len(ids):
            dup = next(i for i in ids if ids.count(i) > 1)
            raise OrchestrationError(f"item ids must be unique; {dup!r} appears twice")
        if grader == "default":
            grader = QAGrader()
        if grader is not None and not callable(grader):
            raise OrchestrationError(f"grader must be 'default', None or a callable (item, answer, raw), got {grader!r}")
        gconf = grader.config() if callable(getattr(grader, "config", None)) else (
            None if grader is None else getattr(grader, "__name__", type(grader).__name__))
        config = _plain({"coordinator": self.config(), "grader": gconf, "items": ids, **dict(extra_config or {})})
        path = None if out is None else Path(out)
        records: list[QuestionRecord] = []
        if path is not None and path.exists() and resume:
            header, recs, end, good = _read(path)
            if header is not None:
                _check_same(header["config"], config, path)
                records = [QuestionRecord.from_dict(r) for r in recs]
                done = [r.id for r in records]
                if done != ids[:len(done)]:
                    raise OrchestrationResumeError(f"{path}: its questions {done[:3]}... are not the start of the items")
                drop_cut_tail(path, good)
                if end is not None and len(records) == len(ids):
                    return BenchmarkRun(config, records, True, path)
            mode = "a" if header is not None else "w"
        else:
            mode = "w"
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        writer = JournalWriter(path, mode, allow_nan=False)
        if mode == "w":
            writer.write({"type": "header", "format": FORMAT, "config": config})
        try:
            bar = tqdm(total=len(items), initial=len(records), desc=desc or f"orchestrate [{self.policy.name}]",
                       disable=not progress, leave=False)
            for index in range(len(records), len(items)):
                item = items[index]
                trace = self.run(item["question"])
                grade = first = None
                if grader is not None and item.get("answers") is not None:
                    grade = _plain(grader(item, trace.final.answer, trace.final.raw))
                    c0 = trace.rounds[0].candidate.answer
                    first = _plain(grader(item, c0.answer, c0.raw))
                rec = QuestionRecord(index, item["id"], item, trace, grade, first)
                records.append(rec)
                writer.write(rec.to_dict())
                bar.update(1)
            bar.close()
            writer.write({"type": "end", "n": len(records)})
        finally:
            writer.close()
        return BenchmarkRun(config, records, True, path)


def _first_line(text: str) -> str:
    """The rephrasing in an LLM reply: its first non-empty line, without a label, quotes or markdown."""
    for line in text.splitlines():
        line = re.sub(r"^\s*(?:rewritten|rephrased)?\s*question\s*:\s*", "", line, flags=re.IGNORECASE)
        line = line.strip().strip("\"'`*“”‘’").strip()
        if line:
            return line[:300]
    return ""


def _as_item(item: Any, index: int) -> dict[str, Any]:
    if isinstance(item, str):
        return {"id": f"q{index:04d}", "question": item, "answers": None}
    if isinstance(item, Mapping):
        if "question" not in item:
            raise OrchestrationError(f"items[{index}] has no 'question': {dict(item)!r}")
        d = dict(item)
        d.setdefault("id", f"q{index:04d}")
        d.setdefault("answers", None)
        return _plain(d)
    to_dict = getattr(item, "to_dict", None)
    if callable(to_dict) and hasattr(item, "question"):
        return _plain(to_dict())
    raise OrchestrationError(f"items[{index}] must be a QAItem, a dict with 'question', or a string; got {type(item).__name__}")


# ---------------------------------------------------------------------------------------------- JSONL runs


def _read(path: Path):
    """(header, question records, end record or None, bytes of complete lines)."""
    header, recs, end = None, [], None
    lines, good = read_records(path, error=OrchestrationError, what="is this an orchestration run?")
    for line_no, rec in lines:
        kind = rec.get("type") if isinstance(rec, dict) else None
        if kind == "header":
            if header is not None:
                raise OrchestrationError(f"{path} line {line_no}: a second header; the file mixes two runs")
            if rec.get("format") != FORMAT:
                raise OrchestrationError(f"{path}: format {rec.get('format')!r} is not {FORMAT!r}")
            header = rec
        elif header is None:
            raise OrchestrationError(f"{path} line {line_no}: a {kind!r} record before the header")
        elif kind == "question":
            recs.append(rec)
        elif kind == "end":
            end = rec
        else:
            raise OrchestrationError(f"{path} line {line_no}: unknown record type {kind!r}")
    return header, recs, end, good


def _diff(a: Any, b: Any, prefix: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            out += _diff(a.get(k), b.get(k), f"{prefix}.{k}" if prefix else str(k))
        return out
    return [] if a == b else [prefix or "(root)"]


def _check_same(old: Any, new: Any, path: Path) -> None:
    diffs = _diff(old, new)
    if diffs:
        raise OrchestrationResumeError(
            f"{path} holds a run with a different configuration ({', '.join(diffs[:6])}"
            f"{', …' if len(diffs) > 6 else ''} differ); write to a new file, or pass resume=False to overwrite it")


@dataclass
class QuestionRecord:
    """One question of a benchmark run: its ``item``, the ``trace``, the ``grade`` of the final answer and
    ``first_grade`` of the first-round answer (``{"correct", "method", "evidence"}``, None when ungraded)."""

    index: int
    id: str
    item: dict[str, Any]
    trace: Trace
    grade: dict[str, Any] | None = None
    first_grade: dict[str, Any] | None = None

    @property
    def correct(self) -> bool | None:
        return None if self.grade is None else self.grade.get("correct")

    def to_dict(self) -> dict[str, Any]:
        return {"type": "question", "index": self.index, "id": self.id, "item": self.item,
                "trace": _plain(self.trace.to_dict()), "grade": self.grade, "first_grade": self.first_grade}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> QuestionRecord:
        return cls(d["index"], d["id"], dict(d["item"]), Trace.from_dict(d["trace"]), d.get("grade"), d.get("first_grade"))


@dataclass
class BenchmarkRun:
    """A benchmark run's ``config`` (the JSONL header), its ``records`` in item order, whether it is
    ``complete``, and the ``path`` it streams to. :meth:`load` reloads a file (complete or interrupted)."""

    config: dict[str, Any]
    records: list[QuestionRecord]
    complete: bool = True
    path: Path | None = None

    @classmethod
    def load(cls, path: str | os.PathLike) -> BenchmarkRun:
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"no run file at {path}")
        header, recs, end, _ = _read(path)
        if header is None:
            raise OrchestrationError(f"{path} has no orchestration header line; it is not a run file (or it is empty)")
        records = [QuestionRecord.from_dict(r) for r in recs]
        return cls(header["config"], records, end is not None and len(records) == len(header["config"].get("items", [])),
                   path)

    def __len__(self) -> int:
        return len(self.records)

    def __repr__(self) -> str:
        state = "complete" if self.complete else "interrupted"
        return f"BenchmarkRun(policy={self.policy!r}, {len(self)} question(s), {state})"

    @property
    def policy(self) -> str:
        return self.config.get("coordinator", {}).get("policy", {}).get("name", "?")

    @property
    def ids(self) -> list[str]:
        return [r.id for r in self.records]

    @property
    def traces(self) -> list[Trace]:
        return [r.trace for r in self.records]

    def _labels(self, key: str) -> np.ndarray:
        grades = [getattr(r, key) for r in self.records]
        bad = [r.id for r, g in zip(self.records, grades, strict=True) if g is None or g.get("correct") is None]
        if bad:
            raise OrchestrationError(f"{len(bad)} question(s) are ungraded (e.g. {bad[0]!r}); grade them or drop them")
        return np.array([g["correct"] for g in grades], dtype=bool)

    @property
    def correct(self) -> np.ndarray:
        """Whether each final answer is correct (raises when some are ungraded)."""
        return self._labels("grade")

    @property
    def first_correct(self) -> np.ndarray:
        """Whether each first-round answer is correct (the labels for AUROC of first-round signals)."""
        return self._labels("first_grade")

    def accuracy_ci(self, level: float = 0.95):
        """Accuracy with its Wilson interval (:func:`uncertainty_lab.semantic.evaluation.accuracy_ci`)."""
        from ..semantic.evaluation import accuracy_ci

        return accuracy_ci(self.correct, level=level)

    @property
    def model_calls(self) -> np.ndarray:
        return np.array([r.trace.model_calls for r in self.records], dtype=float)

    @property
    def wall_time(self) -> np.ndarray:
        return np.array([r.trace.wall_time_s for r in self.records], dtype=float)

    @property
    def n_rounds(self) -> np.ndarray:
        return np.array([len(r.trace.rounds) for r in self.records], dtype=float)

    def first_signal(self, role: str) -> np.ndarray:
        """The first-round signal of ``role`` per question, as a confidence (higher = surer): 1 − H/ln n for
        ``entropy``, the density for ``density``, the logged confidence for any other role; NaN = missing."""
        out = []
        for r in self.records:
            s = r.trace.first_signals
            if role == "entropy":
                out.append(1.0 - s.entropy)
            elif role == "density":
                out.append(s.density)
            else:
                out.append(s.extra.get(role, math.nan))
        return np.array(out, dtype=float)

    def action_counts(self) -> dict[str, int]:
        """How often each decision was taken, over all rounds and questions."""
        out: dict[str, int] = {}
        for r in self.records:
            for a in r.trace.actions:
                out[a] = out.get(a, 0) + 1
        return out

    def judge_cache(self) -> dict[str, float]:
        """Pair-judgement cache hits and misses summed over the questions, and the hit rate."""
        hits = sum(r.trace.judge_hits for r in self.records)
        misses = sum(r.trace.judge_misses for r in self.records)
        return {"hits": hits, "misses": misses, "hit_rate": hits / (hits + misses) if hits + misses else math.nan}


def policy_of(run: BenchmarkRun) -> Policy:
    """The :class:`Policy` a run used, rebuilt from its header."""
    return get_policy(dict(run.config["coordinator"]["policy"]))

