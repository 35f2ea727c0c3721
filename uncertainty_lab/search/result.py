"""The result of a CGDP search experiment: per condition (policy · belief · gates) accuracy, tokens, steps, loops,
premature stops and stop reasons, with intervals; paired comparisons; the exhaustion gate's token savings; the
report and ``results.json``.

Reported per condition: accuracy as exact match with a Wilson interval and token F1 with a bootstrap interval;
tokens with bootstrap intervals — *context tokens* Σ_t Cost(a_t) (what the observations put into the agent's
context; paper Eq. 1) and *model tokens* (prompt + completion of every model call of the episode, counted with
the lab's token proxy); steps; loop rate and premature-stop rate (Wilson; definitions in
:mod:`~uncertainty_lab.search.scoring`); mean support recall; invalid answers and policy parse failures; and
**stop reasons**: every reason that occurs is counted — the known kinds first (each gate's ``stop_kind`` in the
conditions, and "budget"), built-ins in the order answered, exhausted, budget, then any other. Paired
comparisons and the savings: :mod:`~uncertainty_lab.search.comparisons`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ..datasets.source import describe_data
from ..jsonsafe import jsonable
from ..lab import LabResult
from . import comparisons, figures
from .config import Condition, SearchConfig, gate_stop_kind, own_corpus
from .oracle import OracleReader
from .record import Episode
from .scoring import EpisodeScore

__all__ = ["STOP_ORDER", "SearchExperimentResult", "SearchResult"]

#: the built-in gates' stop reasons, in the order the tables list them; other kinds follow
STOP_ORDER = ("answered", "exhausted", "budget")


def _mean_ci(x: Sequence[float], n_boot: int, level: float, seed: int) -> dict[str, float]:
    """Mean with a bootstrap interval over the finite values (NaN everywhere when there is none)."""
    from ..semantic.evaluation import bootstrap_ci

    arr = np.asarray(x, dtype=float)
    arr = arr[np.isfinite(arr)]
    if arr.size == 0:
        return {"mean": math.nan, "low": math.nan, "high": math.nan}
    ci = bootstrap_ci(comparisons.batched_mean, arr, n_boot=n_boot, level=level, seed=seed)
    return {"mean": float(arr.mean()), "low": ci.low, "high": ci.high}


def _prop(flags: Sequence[bool], level: float) -> dict[str, float]:
    """A rate with its Wilson interval."""
    from ..semantic.evaluation import accuracy_ci

    ci = accuracy_ci(np.asarray(flags, dtype=bool), level=level)
    return {"rate": ci.estimate, "low": ci.low, "high": ci.high, "count": ci.successes, "n": ci.n}


def _pct(x: float) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.0%}"


@dataclass
class SearchResult(LabResult):
    """The episodes of an experiment keyed by :class:`Condition` (each a list in question order), with the
    tables, paired tests, token savings and figures built from them."""

    report_name: ClassVar[str] = "summary"
    figure_dpi: ClassVar[int] = 100

    config: SearchConfig
    episodes: dict[Condition, list[Episode]]
    out_dir: Path | None = None
    files: dict[str, Path] = field(default_factory=dict)
    llm_label: str = ""
    _scores: dict[Condition, list[EpisodeScore]] = field(default_factory=dict, init=False, repr=False)
    _cache: dict[str, Any] = field(default_factory=dict, init=False, repr=False)

    @property
    def conditions(self) -> list[Condition]:
        return list(self.episodes)

    def scores(self, condition: Condition) -> list[EpisodeScore]:
        if condition not in self._scores:
            self._scores[condition] = [ep.score(loop_threshold=self.config.loop_threshold)
                                       for ep in self.episodes[condition]]
        return self._scores[condition]

    def condition(self, policy: str | None = None, belief: str | None = None, gates: str | None = None) -> Condition:
        """The one condition matching the given parts (``gates`` is a gate-set label or its names joined by +)."""
        found = [c for c in self.conditions if (policy is None or c.policy == policy)
                 and (belief is None or c.belief == belief)
                 and (gates is None or gates in (c.gate_label, "+".join(c.gate_names())))]
        if len(found) != 1:
            raise KeyError(f"{len(found)} conditions match policy={policy!r}, belief={belief!r}, gates={gates!r}; "
                           f"conditions are {[c.label for c in self.conditions]}")
        return found[0]

    def stop_kinds(self) -> list[str]:
        """Every stop reason the tables count: the known kinds — each gate's ``stop_kind`` in the conditions, and
        "budget" — built-ins first in :data:`STOP_ORDER`, new kinds in the order the conditions name them; then
        any other reason an episode stopped for, in the order met."""
        if "kinds" not in self._cache:
            rank = {k: i for i, k in enumerate(STOP_ORDER)}
            named = [gate_stop_kind(g) for c in self.conditions for g in c.gates]
            known = sorted(dict.fromkeys([k for k in named if k] + ["budget"]), key=lambda k: rank.get(k, len(rank)))
            found = [s.stop_reason for c in self.conditions for s in self.scores(c) if s.stop_reason is not None]
            self._cache["kinds"] = known + [r for r in dict.fromkeys(found) if r not in known]
        return list(self._cache["kinds"])

    # -- per condition ----------------------------------------------------------------------------------------
    def summary_rows(self) -> list[dict[str, Any]]:
        """One row per condition (see the module doc for every number)."""
        if "rows" not in self._cache:
            self._cache["rows"] = [self._row(k, c) for k, c in enumerate(self.conditions)]
        return [dict(r) for r in self._cache["rows"]]

    def _row(self, k: int, c: Condition) -> dict[str, Any]:
        cfg, sc, eps = self.config, self.scores(c), self.episodes[c]
        seed = cfg.seed + k
        recalls = [s.support_recall for s in sc if not math.isnan(s.support_recall)]
        return {
            "condition": c.label, "policy": c.policy, "belief": c.belief, "gates": c.gate_label, "n": len(sc),
            "exact_match": _prop([s.exact_match == 1.0 for s in sc], cfg.level),
            "f1": _mean_ci([0.0 if math.isnan(s.f1) else s.f1 for s in sc], cfg.n_boot, cfg.level, seed),
            "context_tokens": _mean_ci([s.cost for s in sc], cfg.n_boot, cfg.level, seed),
            "model_tokens": _mean_ci([s.llm_tokens for s in sc], cfg.n_boot, cfg.level, seed),
            "steps": float(np.mean([s.steps for s in sc])),
            "loop": _prop([s.loop for s in sc], cfg.level),
            "premature_stop": _prop([s.premature_stop for s in sc], cfg.level),
            "support_recall": float(np.mean(recalls)) if recalls else math.nan,
            "objective": float(np.mean([s.objective for s in sc])),
            "stop_reasons": {r: sum(s.stop_reason == r for s in sc) for r in self.stop_kinds()},
            "invalid_answers": sum(not s.valid for s in sc),
            "parse_failures": sum(len(ep.parse_failures) for ep in eps),
            "policy_steps": sum(len(ep.steps) for ep in eps) if c.policy == "llm" else 0,
        }

    def summary_table(self) -> str:
        """The condition table (markdown), intervals at the configured level."""
        lvl, kinds, num = f"{self.config.level:.0%}", self.stop_kinds(), comparisons.num
        head = ["condition", "n", f"exact match [{lvl} Wilson]", f"F1 [{lvl} boot]", f"context tokens [{lvl} boot]",
                f"model tokens [{lvl} boot]", "steps", "loop rate", "premature stop", "support recall",
                f"stops {'/'.join(kinds)}", "invalid"]
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for r in self.summary_rows():
            em, f1, ct, mt = r["exact_match"], r["f1"], r["context_tokens"], r["model_tokens"]
            lp, pm = r["loop"], r["premature_stop"]
            lines.append("| " + " | ".join([
                r["condition"], str(r["n"]),
                f"{em['rate']:.0%} [{em['low']:.0%}, {em['high']:.0%}] ({em['count']}/{em['n']})",
                f"{f1['mean']:.2f} [{f1['low']:.2f}, {f1['high']:.2f}]",
                f"{num(ct['mean'])} [{num(ct['low'])}, {num(ct['high'])}]",
                f"{num(mt['mean'])} [{num(mt['low'])}, {num(mt['high'])}]",
                f"{r['steps']:.1f}",
                f"{lp['rate']:.0%} [{lp['low']:.0%}, {lp['high']:.0%}]",
                f"{pm['rate']:.0%} [{pm['low']:.0%}, {pm['high']:.0%}]",
                _pct(r["support_recall"]),
                "/".join(str(r["stop_reasons"][k]) for k in kinds),
                str(r["invalid_answers"]),
            ]) + " |")
        return "\n".join(lines)

    def table(self):
        """The condition table as a :class:`~uncertainty_lab.table.Table` (flat numbers, for notebooks)."""
        from ..table import Table

        flat = []
        for r in self.summary_rows():
            flat.append({
                "condition": r["condition"], "n": r["n"], "EM": r["exact_match"]["rate"],
                "EM low": r["exact_match"]["low"], "EM high": r["exact_match"]["high"], "F1": r["f1"]["mean"],
                "context tokens": r["context_tokens"]["mean"], "model tokens": r["model_tokens"]["mean"],
                "steps": r["steps"], "loop rate": r["loop"]["rate"], "premature": r["premature_stop"]["rate"],
                "support recall": r["support_recall"], **r["stop_reasons"],
            })
        return Table(flat, title=f"{len(flat)} conditions, {self.config.level:.0%} intervals")

    # -- between conditions -----------------------------------------------------------------------------------
    def paired(self) -> list[dict[str, Any]]:
        """McNemar comparisons between conditions that differ in one factor
        (:func:`~uncertainty_lab.search.comparisons.paired`)."""
        return comparisons.paired(self.conditions, self.scores, self.config.level)

    def token_savings(self) -> list[dict[str, Any]]:
        """The exhaustion gate's token savings next to the accuracy difference
        (:func:`~uncertainty_lab.search.comparisons.token_savings`)."""
        return comparisons.token_savings(self.conditions, self.scores, self.config)

    def savings_table(self) -> str:
        """:meth:`token_savings` as markdown."""
        return comparisons.savings_table(self.token_savings(), self.config.level)

    # -- report ------------------------------------------------------------------------------------------------
    def report(self) -> str:
        """The whole summary as markdown."""
        cfg = self.config
        n_q = max((len(v) for v in self.episodes.values()), default=0)
        parts = [
            "# CGDP search experiment", "",
            f"{n_q} questions × {len(self.conditions)} conditions; model {self.llm_label}; retriever {cfg.retriever}, "
            f"k = {cfg.k}; max_steps = {cfg.max_steps}; λ = {cfg.lam:g} per token; seed {cfg.seed}.", "",
            *self._data_lines(), "",
            "## Conditions", "", self.summary_table(), "",
            "Context tokens = Σ_t Cost(a_t), the observation tokens that entered the agent's context (paper Eq. 1); "
            "model tokens = prompt + completion of every model call (token proxy of `search.text.count_tokens`). "
            "Loop: a search/read that repeats an earlier one (Jaccard ≥ "
            f"{cfg.loop_threshold}) and shows nothing new. Premature stop: a gate or the model stopped before every "
            "supporting document was seen. Support recall: the share of a question's supporting documents the "
            "episode saw. Stops: how many episodes ended for each reason (the gates' stop kinds; budget = max_steps "
            "ran out). Invalid: final answers that are empty or abstain (\"unknown\", \"I don't know\") — with the "
            "oracle reader, an abstention means the evidence was incomplete when the episode stopped. Intervals: "
            "Wilson for rates, percentile bootstrap for means, at the level in brackets.", "",
            "## Token savings of the exhaustion gate", "", self.savings_table(), "",
            "Paper (GPT-4o-mini, four harnesses, three domains): *up to 39% fewer tokens with no loss of task "
            "accuracy* from the exhaustion gate. A saving here counts as \"at equal accuracy\" only where the "
            "accuracy column says so. The paper's belief-state result (up to +11.4% multi-hop accuracy) comes from a "
            "separate experiment; compare it with the belief rows below, not with the savings.", "",
            "## Paired comparisons (McNemar on exact match, same questions)", "",
        ]
        parts += [f"- **{p['factor']}** ({p['fixed']}): {p['comparison'].verdict}; mean context tokens "
                  f"{p['context_tokens_a']:,.0f} vs {p['context_tokens_b']:,.0f}" for p in self.paired()] \
            or ["- (one condition only)"]
        parts += ["", "## Caveats", ""] + [f"- {c}" for c in self._caveats(n_q)]
        return "\n".join(parts)

    def unanswerable(self) -> list[str]:
        """The ids of the questions marked unanswerable (MuSiQue-Full's ``answerable: false``), in order."""
        eps = next(iter(self.episodes.values()), [])
        return [ep.question_id for ep in eps if ep.config["question"].get("answerable", True) is False]

    def _data_lines(self) -> list[str]:
        """What the questions and the corpus were, and how unanswerable questions are scored."""
        cfg = self.config
        corpus = ("each question searches its own paragraphs (supporting and distractors)" if own_corpus(cfg)
                  else "every question searches the one corpus of all loaded documents")
        lines = [f"Data: {describe_data(cfg.data)}; {corpus}."]
        unanswerable = self.unanswerable()
        if unanswerable:
            n_q = len(next(iter(self.episodes.values()), []))
            lines += ["", f"{len(unanswerable)} of the {n_q} questions are **unanswerable** (MuSiQue-Full: a paragraph "
                      "the chain needs was removed). They are kept and scored: an abstention (\"unknown\", \"I don't "
                      "know\", …) is right there (exact match 1, F1 1) and any other answer, the original gold "
                      "included, is wrong; the invalid-answer column counts those abstentions too."
                      + ("" if own_corpus(cfg) else " With a shared corpus the removed paragraph may still be found "
                         "(e.g. in the answerable twin's paragraphs): prefer corpus = 'own'.")]
        return lines

    def _caveats(self, n_q: int) -> list[str]:
        caveats = [f"{n_q} questions give wide intervals: read the intervals and verdicts, not the point estimates."]
        if isinstance(self.config.llm, OracleReader) or self.config.llm == "oracle":
            caveats.append("The model is the **oracle reader** (model-free; it answers right exactly when its notes "
                           "cite every supporting document): accuracy here measures the search and its stopping, "
                           "not a language model.")
        fails = sum(r["parse_failures"] for r in self.summary_rows())
        if fails:
            steps = sum(r["policy_steps"] for r in self.summary_rows())
            caveats.append(f"{fails} of {steps} llm-policy steps could not be parsed and fell back to searching the "
                           "question (recorded per step).")
        return caveats

    # -- figures ----------------------------------------------------------------------------------------------
    def draw_tokens_accuracy(self, ax: Any = None, tokens: str = "context_tokens"):
        """:func:`~uncertainty_lab.search.figures.draw_tokens_accuracy` of this result."""
        return figures.draw_tokens_accuracy(self, ax, tokens)

    def draw_stop_reasons(self, ax: Any = None):
        """:func:`~uncertainty_lab.search.figures.draw_stop_reasons` of this result."""
        return figures.draw_stop_reasons(self, ax)

    def figure(self):
        """:func:`~uncertainty_lab.search.figures.figure` of this result (three panels)."""
        return figures.figure(self)

    # -- files ------------------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        paired = [{**{k: v for k, v in p.items() if k != "comparison"},
                   "difference": p["comparison"].difference, "ci_low": p["comparison"].ci_low,
                   "ci_high": p["comparison"].ci_high, "p_value": p["comparison"].p_value,
                   "verdict": p["comparison"].verdict} for p in self.paired()]
        return jsonable({
            "config": self.config.to_dict(), "llm": self.llm_label, "unanswerable": self.unanswerable(),
            "summary": self.summary_rows(),
            "token_savings": self.token_savings(), "paired": paired,
            "episodes": {c.label: {ep.question_id: str(ep.path) if ep.path else None for ep in eps}
                         for c, eps in self.episodes.items()},
        })

    def written(self) -> list[Path]:
        """The summary, results and figure, then every episode file."""
        return [*self.files.values(), *(ep.path for eps in self.episodes.values() for ep in eps if ep.path)]


#: the name this result had before the lab contract (kept for notebooks and scripts)
SearchExperimentResult = SearchResult
