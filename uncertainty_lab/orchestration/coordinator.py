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

Seeds: every call for a question uses the same seed, ``derive_seed(seed, question)``, so the first round is
the same in every policy and conditions share completions through the cache; later rounds differ by prompt or
worker. The re-prompt text depends only on the question and the re-prompt number, not on the signal values,
so policies differ only in their decisions.

Metrics config: ``{role: spec}``; the ``entropy`` role is read as ``normalised_uncertainty`` (H / ln n),
the ``density`` role as ``confidence``, any other role is logged (its confidence) and never gated. A spec
is anything :func:`uncertainty_lab.registry.resolve` takes (a registered metric name, ``{"name": ...,
**params}`` or a metric instance); metrics that take a ``judge`` get the coordinator's one shared judge (so
``judge.cache_info()`` covers them all).

The result of one question is a :class:`~.trace.Trace`; :func:`~.run.run_benchmark` (also
:meth:`Coordinator.run_benchmark`) runs a list of questions into a resumable run file.
"""

from __future__ import annotations

import math
import os
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .. import registry
from ..jsonsafe import jsonable
from ..llm import LLMError
from ..parameters import settings
from ..seeds import derive_seed
from ..semantic import MetricResult
from .errors import OrchestrationError
from .policy import Decision, Signals, best_round, get_policy, selection_key
from .record import OrchestrationRun
from .trace import Candidate, FinalAnswer, Round, Trace
from .workers import Worker, WorkerAnswer, default_workers

__all__ = ["ACCEPTANCE_CRITERIA", "ANGLES", "DEFAULT_METRICS", "Coordinator"]

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
        self._judge = registry.resolve("equivalence_judges", self.judge, what="judge")
        specs = dict(DEFAULT_METRICS if self.metrics is None else self.metrics)
        missing = [g for g in self.policy.metrics if g not in specs]
        if missing:
            raise OrchestrationError(f"policy {self.policy.name!r} gates on {missing} but the metrics config has no such "
                                     f"role (roles: {sorted(specs)}); add e.g. {{'density': 'semantic_density'}}")
        self._metrics = {role: registry.resolve("metrics", spec, what=f"metrics[{role!r}]",
                                                defaults={"judge": self._judge})
                         for role, spec in specs.items()}
        self._check_reachable()
        if self.rephraser is not None:
            from ..llm import as_backend

            self.rephraser = as_backend(self.rephraser, what="rephraser")

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
        """Everything a run's results depend on (the run file's header; resuming checks it): the policy, the
        workers, each metric's and the judge's :func:`~uncertainty_lab.parameters.settings`, ``n_samples``,
        ``seed`` and the rephraser's label."""
        return {"policy": self.policy.to_dict(), "workers": [w.config() for w in self.workers],
                "metrics": {role: settings(m) for role, m in self._metrics.items()},
                "judge": settings(self._judge), "n_samples": self.n_samples, "seed": self.seed,
                "rephraser": jsonable(self.rephraser)}

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
        seed = derive_seed(self.seed, question)
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
                      desc: str | None = None) -> OrchestrationRun:
        """:func:`~.run.run_benchmark` with this coordinator: every item into the run file ``out``, resumable."""
        from .run import run_benchmark

        return run_benchmark(self, items, out, grader=grader, resume=resume, progress=progress,
                             extra_config=extra_config, desc=desc)


def _first_line(text: str) -> str:
    """The rephrasing in an LLM reply: its first non-empty line, without a label, quotes or markdown."""
    for line in text.splitlines():
        line = re.sub(r"^\s*(?:rewritten|rephrased)?\s*question\s*:\s*", "", line, flags=re.IGNORECASE)
        line = line.strip().strip("\"'`*“”‘’").strip()
        if line:
            return line[:300]
    return ""
