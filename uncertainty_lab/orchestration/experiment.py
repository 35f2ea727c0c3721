"""The policy comparison: the four policies (``none``, ``entropy_only``, ``density_only``, ``both``) on the
shipped QA set (or a subset) with the embedded model, and an Ollama model when one is named.

Reported, per model and policy: accuracy with a Wilson interval, model calls and wall time per question,
rounds and decisions; per model: the AUROC of each metric for detecting a wrong answer, computed from the
**first-round** signals against the correctness of the first-round answer (the first round is the same
in every policy: same seed, prompt and worker); paired McNemar tests between policies with plain-language
verdicts. Everything is written to ``out_dir``: one resumable JSONL per (model, policy) under ``runs/``,
``summary.md`` (the tables), ``results.json`` (the numbers) and ``figure.png`` (accuracy with intervals;
calls per question).

Configure with :class:`ExperimentConfig`, a dict, or a JSON / TOML file (:func:`load_config`); the CLI
``uncertainty-lab orchestrate run --config FILE`` runs it headless.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import configfile
from ..lab import save_outputs
from .coordinator import BenchmarkRun, Coordinator, OrchestrationError, OrchestrationResumeError, policy_of
from .grading import QAGrader
from .policy import Policy, get_policy
from .workers import default_workers

__all__ = ["ExperimentConfig", "ExperimentResult", "load_config", "run_experiment", "select_items"]

DEFAULT_POLICIES = ("none", "entropy_only", "density_only", "both")


@dataclass
class ExperimentConfig:
    """What to run. Items: ``categories`` (None = all five), ``per_category`` (first k of each), ``ids``,
    ``limit`` (first n after the other filters). Models: ``backend`` (a spec; default the embedded model)
    and ``ollama_model`` (also run an Ollama model; its server is checked first). Sampling: ``n_samples``,
    ``temperature``, ``max_tokens``. Policies: ``policies`` (preset names or dicts) and overrides applied to
    every gated policy: ``max_rounds``, ``entropy_threshold`` (H/ln n), ``raw_entropy_threshold`` (nats,
    converted with ``n_samples``; refused when unreachable), ``density_threshold``. Scoring: ``judge`` (name
    or ``{"name", ...params}``), ``metrics`` (``{role: spec}``), ``extra_metrics`` (logged, for AUROC),
    ``grading`` (``{"method": "contains", ...AnswerGrader options}``). ``seed``. ``share_cache``: all policies
    share the completion cache (the first round is generated once; later policies get it free, so their wall
    time is not comparable) — False gives each policy its own cache under ``out_dir/cache`` (comparable wall
    times, more compute). ``overwrite``: start the run files afresh instead of resuming. ``out_dir``,
    ``progress``, ``figure``."""

    policies: list[Any] = field(default_factory=lambda: list(DEFAULT_POLICIES))
    categories: list[str] | None = None
    per_category: int | None = None
    ids: list[str] | None = None
    limit: int | None = None
    backend: Any = "embedded"
    ollama_model: str | None = None
    n_samples: int = 5
    temperature: float = 0.7
    max_tokens: int = 32
    max_rounds: int | None = None
    entropy_threshold: float | None = None
    raw_entropy_threshold: float | None = None
    density_threshold: float | None = None
    judge: Any = "embedding"
    metrics: dict[str, Any] | None = None
    extra_metrics: list[str] = field(default_factory=list)
    grading: dict[str, Any] = field(default_factory=lambda: {"method": "contains"})
    seed: int = 0
    share_cache: bool = True
    overwrite: bool = False
    out_dir: str = "orchestration_results"
    progress: bool = True
    figure: bool = True

    def __post_init__(self):
        if not self.policies:
            raise ValueError("policies is empty; give at least one, e.g. ['none', 'both']")
        if isinstance(self.categories, str):
            self.categories = [self.categories]
        for name in ("per_category", "limit", "n_samples", "max_tokens", "max_rounds"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 1):
                raise ValueError(f"{name} must be a positive integer or None, got {v!r}")
        if self.entropy_threshold is not None and self.raw_entropy_threshold is not None:
            raise ValueError("give entropy_threshold (normalised H/ln n) or raw_entropy_threshold (nats), not both")
        if not isinstance(self.grading, Mapping) or "method" not in self.grading:
            raise ValueError(f"grading must be a dict with a 'method' (normalised, contains, embedding, llm), got {self.grading!r}")

    @classmethod
    def from_mapping(cls, d: Mapping[str, Any]) -> ExperimentConfig:
        """From a dict (a parsed config file); an unknown key is an error naming the closest field."""
        return configfile.build(cls, d, what="experiment")

    def to_dict(self) -> dict[str, Any]:
        return configfile.as_dict(self, backend="backend")

    def policy_objects(self) -> list[Policy]:
        """The policies to run, with the overrides applied to every gated one."""
        out = []
        for spec in self.policies:
            p = get_policy(spec)
            if p.metrics:
                changes: dict[str, Any] = {}
                if self.max_rounds is not None:
                    changes["max_rounds"] = self.max_rounds
                if self.entropy_threshold is not None:
                    changes["entropy_threshold"] = self.entropy_threshold
                if self.raw_entropy_threshold is not None:
                    changes["entropy_threshold"] = Policy.from_raw_entropy_threshold(
                        self.raw_entropy_threshold, self.n_samples).entropy_threshold
                if self.density_threshold is not None:
                    changes["density_threshold"] = self.density_threshold
                p = p.replace(**changes) if changes else p
            out.append(p)
        names = [p.name for p in out]
        if len(set(names)) != len(names):
            raise ValueError(f"policy names must be unique (they name the run files), got {names}")
        return out


def load_config(path: str | os.PathLike) -> ExperimentConfig:
    """An :class:`ExperimentConfig` from a ``.json`` or ``.toml`` file."""
    return configfile.load(path, ExperimentConfig.from_mapping)


def select_items(config: ExperimentConfig) -> list[Any]:
    """The shipped QA items the config asks for, in file order."""
    from ..datasets.qa import load_qa_questions

    items = load_qa_questions(config.categories)
    if config.ids is not None:
        by_id = {it.id: it for it in items}
        unknown = [i for i in config.ids if i not in by_id]
        if unknown:
            raise ValueError(f"ids {unknown[:5]} are not in the shipped set (or not in categories {config.categories})")
        wanted = set(config.ids)
        items = [it for it in items if it.id in wanted]
    if config.per_category is not None:
        seen: dict[str, int] = {}
        kept = []
        for it in items:
            if seen.get(it.category, 0) < config.per_category:
                kept.append(it)
                seen[it.category] = seen.get(it.category, 0) + 1
        items = kept
    if config.limit is not None:
        items = items[:config.limit]
    if not items:
        raise ValueError("the selection is empty; check categories, ids, per_category and limit")
    return items


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "model"


def _backend(spec: Any, cache_path: Path | None) -> Any:
    """A backend from a spec (or the instance itself), with its own completion cache at ``cache_path``."""
    from ..llm import CompletionCache, get_llm

    cache = None if cache_path is None else CompletionCache(cache_path)
    if not isinstance(spec, str):
        if cache is not None:
            spec = dataclasses.replace(spec) if dataclasses.is_dataclass(spec) else spec
            spec.cache = cache
        return spec
    return get_llm(spec, quiet=True, cache=cache)


def _resolve_judge(spec: Any) -> Any:
    from .. import registry
    from ..semantic.judges import resolve_judge

    if isinstance(spec, Mapping):
        params = dict(spec)
        name = params.pop("name", None)
        if not isinstance(name, str):
            raise ValueError(f"judge needs a 'name', got {spec!r}")
        return registry.create("equivalence_judges", name, **params)
    return resolve_judge(spec)


@dataclass
class ExperimentResult:
    """The runs of an experiment, keyed ``(model, policy)``, with the tables and the figure built from them."""

    config: ExperimentConfig
    runs: dict[tuple[str, str], BenchmarkRun]
    judge_cache: dict[str, float] = field(default_factory=dict)
    out_dir: Path | None = None
    files: dict[str, Path] = field(default_factory=dict)

    @property
    def models(self) -> list[str]:
        return list(dict.fromkeys(m for m, _ in self.runs))

    @property
    def policies(self) -> list[str]:
        return list(dict.fromkeys(p for _, p in self.runs))

    # -- tables -------------------------------------------------------------------------------------
    def summary_rows(self) -> list[dict[str, Any]]:
        """One row per (model, policy): accuracy and its Wilson interval, calls, time, rounds, decisions."""
        rows = []
        for (model, policy), run in self.runs.items():
            ci = run.accuracy_ci()
            acts = run.action_counts()
            rows.append({
                "model": model, "policy": policy, "n": len(run), "correct": ci.successes, "accuracy": ci.estimate,
                "ci_low": ci.low, "ci_high": ci.high, "calls_per_question": float(run.model_calls.mean()),
                "generated_per_question": float(np.mean([t.model_calls - t.cached_calls for t in run.traces])),
                "wall_s_per_question": float(run.wall_time.mean()), "rounds_per_question": float(run.n_rounds.mean()),
                "accepted_first_round": int(sum(1 for t in run.traces if t.actions[0] == "accept")),
                "reprompts": acts.get("reprompt", 0), "reassigns": acts.get("reassign", 0),
                "delegations": acts.get("delegate", 0), "final_selects": acts.get("final_select", 0),
                "invalid_final": int(sum(1 for t in run.traces if not t.final.valid)),
            })
        return rows

    def summary_table(self) -> str:
        """The policy table (markdown). ``calls/q``: generations requested per question (the cost a policy
        incurs); ``generated/q``: those the completion cache did not already hold; ``wall s/q`` counts cached
        completions as free (see ``share_cache``)."""
        head = ["model", "policy", "n", "accuracy [95% Wilson]", "calls/q", "generated/q", "wall s/q", "rounds/q",
                "accepted r1", "reprompt/reassign/delegate", "final select", "invalid"]
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for r in self.summary_rows():
            lines.append("| " + " | ".join([
                r["model"], r["policy"], str(r["n"]),
                f"{r['accuracy']:.1%} [{r['ci_low']:.1%}, {r['ci_high']:.1%}] ({r['correct']}/{r['n']})",
                f"{r['calls_per_question']:.1f}", f"{r['generated_per_question']:.1f}",
                f"{r['wall_s_per_question']:.2f}", f"{r['rounds_per_question']:.2f}",
                str(r["accepted_first_round"]), f"{r['reprompts']}/{r['reassigns']}/{r['delegations']}",
                str(r["final_selects"]), str(r["invalid_final"])]) + " |")
        return "\n".join(lines)

    def auroc_rows(self) -> list[dict[str, Any]]:
        """Per model and metric: AUROC of the first-round signal for telling right from wrong first-round
        answers (= AUROC of the uncertainty for flagging a wrong one), with n, wrong and missing counts;
        plus the ``both`` policy's concern flag when that policy ran."""
        from ..semantic.evaluation import auroc

        rows = []
        for model in self.models:
            runs = {p: r for (m, p), r in self.runs.items() if m == model}
            run = next(iter(runs.values()))
            labels = run.first_correct
            roles = list(run.config["coordinator"]["metrics"])
            scores = {role: run.first_signal(role) for role in roles}
            gated = [p for p in runs if policy_of(runs[p]).metrics]
            if gated:
                pol = policy_of(runs["both"] if "both" in runs else runs[gated[-1]])
                scores[f"no concern ({pol.name})"] = np.array(
                    [0.0 if pol.concerns(t.first_signals) else 1.0 for t in run.traces])
            for name, s in scores.items():
                ok = np.isfinite(s)
                y = labels[ok]
                value = float(auroc(s[ok], y)) if ok.any() else math.nan
                rows.append({"model": model, "signal": name, "auroc": value, "n": int(ok.sum()),
                             "wrong": int((~y).sum()), "missing": int((~ok).sum())})
        return rows

    def auroc_table(self) -> str:
        lines = ["| model | first-round signal | AUROC (wrong-answer detection) | n | wrong | missing |", "|---|---|---|---|---|---|"]
        for r in self.auroc_rows():
            a = "undefined (all right or all wrong)" if math.isnan(r["auroc"]) else f"{r['auroc']:.3f}"
            lines.append(f"| {r['model']} | {r['signal']} | {a} | {r['n']} | {r['wrong']} | {r['missing']} |")
        return "\n".join(lines)

    def paired(self) -> list[tuple[str, Any]]:
        """(model, PairedComparison) for every pair of policies on the same questions (McNemar)."""
        from ..semantic.evaluation import paired_comparison

        out = []
        for model in self.models:
            pols = [p for (m, p) in self.runs if m == model]
            for i, a in enumerate(pols):
                for b in pols[i + 1:]:
                    ra, rb = self.runs[(model, a)], self.runs[(model, b)]
                    if ra.ids != rb.ids:
                        raise OrchestrationError(f"runs {a!r} and {b!r} of {model} cover different questions")
                    out.append((model, paired_comparison(rb.correct, ra.correct, names=(b, a))))
        return out

    def report(self) -> str:
        """The whole summary as markdown: the policy table, paired verdicts, AUROCs, cache hit rate, caveats."""
        note = ("calls/q = generations requested per question; generated/q = those not already in the completion "
                "cache; wall s/q counts cached completions as free"
                + (", and the policies share one cache (the first policy pays for the shared first round)"
                   if self.config.share_cache else ""))
        parts = ["## Policies", "", self.summary_table(), "", note + ".", "",
                 "## Paired comparisons (McNemar, same questions)", ""]
        parts += [f"- {model}: {pc.verdict}" for model, pc in self.paired()] or ["- (one policy only)"]
        parts += ["", "## Wrong-answer detection from the first-round signals", "", self.auroc_table(), ""]
        jc = self.judge_cache
        if jc:
            rate = jc.get("hit_rate", math.nan)
            parts.append(f"Pair-judgement cache: {jc.get('hits', 0)} hits, {jc.get('misses', 0)} misses "
                         f"(hit rate {'n/a' if math.isnan(rate) else f'{rate:.1%}'}).")
        parts += ["", "Caveats: a few dozen questions give wide intervals (read the verdicts, not the point "
                      "estimates); consistency is not correctness — an error shared by every sample passes every gate."]
        return "\n".join(parts)

    # -- figure -------------------------------------------------------------------------------------
    def figure(self):
        """Accuracy with Wilson intervals per policy (left) and model calls per question (right)."""
        from matplotlib.figure import Figure

        rows = self.summary_rows()
        models, policies = self.models, self.policies
        fig = Figure(figsize=(10, 3.8), layout="constrained")
        ax_acc, ax_calls = fig.subplots(1, 2)
        width = 0.8 / max(len(models), 1)
        x = np.arange(len(policies))
        for k, model in enumerate(models):
            mine = {r["policy"]: r for r in rows if r["model"] == model}
            acc = np.array([mine[p]["accuracy"] if p in mine else np.nan for p in policies])
            lo = np.array([mine[p]["ci_low"] if p in mine else np.nan for p in policies])
            hi = np.array([mine[p]["ci_high"] if p in mine else np.nan for p in policies])
            calls = np.array([mine[p]["calls_per_question"] if p in mine else np.nan for p in policies])
            off = x + (k - (len(models) - 1) / 2) * width
            ax_acc.errorbar(off, acc, yerr=[acc - lo, hi - acc], fmt="o", capsize=4, label=model)
            ax_calls.bar(off, calls, width=width * 0.9, label=model)
        for ax, title in ((ax_acc, "accuracy (95% Wilson interval)"), (ax_calls, "model calls per question")):
            ax.set_xticks(x, policies)
            ax.set_title(title)
            ax.grid(axis="y", alpha=0.3)
        ax_acc.set_ylim(-0.02, 1.02)
        n = max((r["n"] for r in rows), default=0)
        ax_acc.set_xlabel(f"policy (n = {n} questions)")
        ax_calls.set_xlabel("policy")
        if len(models) > 1:
            ax_acc.legend(fontsize="small")
        return fig

    # -- files --------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        def clean(x):
            if isinstance(x, float) and math.isnan(x):
                return None
            if isinstance(x, dict):
                return {k: clean(v) for k, v in x.items()}
            if isinstance(x, list):
                return [clean(v) for v in x]
            return x

        return clean({
            "config": self.config.to_dict(), "summary": self.summary_rows(), "auroc": self.auroc_rows(),
            "paired": [{"model": m, "a": pc.names[0], "b": pc.names[1], "difference": pc.difference,
                        "p_value": pc.p_value, "only_a": pc.only_a, "only_b": pc.only_b, "verdict": pc.verdict}
                       for m, pc in self.paired()],
            "judge_cache": dict(self.judge_cache),
            "runs": {f"{m}/{p}": str(r.path) if r.path else None for (m, p), r in self.runs.items()},
        })

    def save(self, out_dir: str | os.PathLike | None = None, *, figure: bool = True) -> dict[str, Path]:
        """Write ``summary.md``, ``results.json`` and (``figure``) ``figure.png`` to ``out_dir``."""
        return save_outputs(self, out_dir, report="summary", figure=figure, dpi=110)


def run_experiment(config: ExperimentConfig | Mapping[str, Any] | str | os.PathLike, *, save: bool = True,
                   **overrides: Any) -> ExperimentResult:
    """Run every (model, policy) of ``config`` (a config, a dict, or a .json / .toml path; ``overrides``
    replace settings), resuming any run file already in ``out_dir/runs``; write the summary, results and
    figure when ``save``."""
    from ..llm import get_llm

    if isinstance(config, (str, os.PathLike)):
        config = load_config(config)
    elif isinstance(config, Mapping):
        config = ExperimentConfig.from_mapping(config)
    if overrides:
        ExperimentConfig.from_mapping(overrides | {"policies": config.policies})  # names unknown settings clearly
        config = dataclasses.replace(config, **overrides)
    policies = config.policy_objects()
    items = select_items(config)
    specs: list[Any] = [config.backend]
    if config.ollama_model:
        ollama = get_llm(f"ollama:{config.ollama_model}", quiet=True)
        ollama.check()  # a clear error now (server down, model not pulled), before any run starts
        specs.append(f"ollama:{config.ollama_model}")
    judge = _resolve_judge(config.judge)
    metrics = dict(config.metrics) if config.metrics is not None else {"entropy": "discrete_semantic_entropy",
                                                                        "density": "semantic_density"}
    for name in config.extra_metrics:
        metrics.setdefault(name, name)
    grader = QAGrader(**config.grading)
    out = Path(config.out_dir)
    runs: dict[tuple[str, str], BenchmarkRun] = {}
    for spec in specs:
        shared = _backend(spec, None)
        label = getattr(shared, "label", type(shared).__name__)
        for policy in policies:
            backend = shared
            if not config.share_cache:
                backend = _backend(spec, out / "cache" / f"{_slug(label)}__{_slug(policy.name)}.sqlite")
            workers = default_workers(backend, temperature=config.temperature, max_tokens=config.max_tokens)
            coord = Coordinator(workers, policy, metrics, config.n_samples, judge, seed=config.seed)
            path = out / "runs" / f"{_slug(label)}__{_slug(policy.name)}.jsonl"
            try:
                runs[(label, policy.name)] = coord.run_benchmark(
                    items, path, grader=grader, progress=config.progress, resume=not config.overwrite,
                    desc=f"{label} [{policy.name}]")
            except OrchestrationResumeError as exc:
                raise OrchestrationResumeError(f"{exc}. In an experiment: choose another out_dir, or set "
                                               "overwrite = true to start afresh") from None
    hits = sum(r.judge_cache()["hits"] for r in runs.values())
    misses = sum(r.judge_cache()["misses"] for r in runs.values())
    cache = {"hits": hits, "misses": misses, "hit_rate": hits / (hits + misses) if hits + misses else math.nan}
    result = ExperimentResult(config, runs, cache, out)
    if save:
        result.save(out, figure=config.figure)
    return result

