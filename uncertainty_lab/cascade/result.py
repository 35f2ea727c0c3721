"""The cascade experiment's result: the runs keyed ``(selector label, k, run)``, their diagnostics, and the
paper's table built from them (mean S_t, trend, late-stage S_t, global vs local drift), as rows, markdown
(``table.md``), JSON (``results.json``) and a figure (:mod:`~uncertainty_lab.cascade.figures`).
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ..datasets.source import describe_data
from ..jsonsafe import jsonable
from ..lab import LabResult
from .config import CascadeConfig
from .diagnostics import RunDiagnostics, curve_band, interval, trend
from .figures import figure
from .memory_use import memory_use
from .record import CascadeRun

__all__ = ["CascadeExperimentResult", "CascadeResult", "RunKey"]

RunKey = tuple[str, int, int]  # (selector label, k, run index)

TABLE_HEAD = ["selector", "k", "runs", "mean S ± sd", "trend (mean curve; runs)", "late S ± sd", "global drift ± sd",
              "local drift ± sd", "global > local", "S defined", "memory empty", "copies", "copies of memory"]


def _pm(mean: float, sd: float) -> str:
    if not math.isfinite(mean):
        return "–"
    return f"{mean:.3f}" + (f" ± {sd:.3f}" if math.isfinite(sd) else "")


def _mean(values: list[float]) -> float:
    """The mean of the finite values (NaN when none)."""
    finite = [v for v in values if math.isfinite(v)]
    return float(np.mean(finite)) if finite else math.nan


def _share(x: float) -> str:
    return "–" if not math.isfinite(x) else f"{x:.0%}"


def _beta_line(fit: Any, grid: Any) -> str:
    """How β was chosen, or that the data do not determine it (the likelihood is flat over the grid)."""
    if fit.beta is None:
        return f"β undetermined on the grid {list(grid or [])} ({fit.beta_note})"
    return f"β = {fit.beta:g} /h chosen from {list(grid or [])} by likelihood among stable fits"


def _penalty_text(fit: Any) -> str:
    """``""`` for an unpenalised fit, else the penalty, η and how η was chosen, and how many α̂ are non-zero."""
    if getattr(fit, "penalty", "none") == "none":
        return ""
    how = f", the least BIC of {len(fit.eta_path)} on the L1 path" if getattr(fit, "eta_path", None) else ""
    return f"; {fit.penalty} penalty η = {fit.eta:.3g}{how}: {int((fit.alpha > 0).sum())} of {fit.alpha.size} α̂ > 0"


def _timing_line(fit: Any) -> str:
    note = getattr(fit, "timing_note", "")
    return f" (no timing information: {note})" if note else ""


def _empty_memory_notes(rows: list[dict[str, Any]]) -> list[str]:
    """A warning line for every condition whose memory was empty at every step (or at most of them)."""
    out = []
    for r in rows:
        share = r.get("memory_empty", math.nan)
        if math.isfinite(share) and share >= 0.5:
            every = "every step" if share == 1 else f"{share:.0%} of the steps"
            out.append(f"\n**Note:** selector `{r['selector']}` (k = {r['k']}) had an EMPTY memory at {every}: its "
                       "texts were written from the node's instruction alone, so its S_t and drifts say nothing about "
                       "its memory.")
    return out


def run_row(key: RunKey, run: CascadeRun, d: RunDiagnostics) -> dict[str, Any]:
    """One run's row: its seed, file, length and summaries (mean / late S_t, trend, drifts, memory empty, copies,
    copies of memory, uncertainty)."""
    s = d.summaries
    a = s.get("alignment")
    return {
        "selector": key[0], "k": key[1], "run": key[2], "seed": run.config["seed"],
        "steps": len(run), "stop_reason": run.stop_reason,
        "mean_S": a.mean if a else math.nan, "late_S": a.late_mean if a else math.nan,
        "trend": a.trend.label if a else "undetermined", "slope": a.trend.slope if a else math.nan,
        "slope_ci": [a.trend.ci_low, a.trend.ci_high] if a else [math.nan, math.nan],
        "S_defined": (a.n / len(run)) if a and len(run) else math.nan,
        "global_drift": s["global_drift"].mean, "local_drift": s["local_drift"].mean,
        "global_late": s["global_drift"].late_mean, "local_late": s["local_drift"].late_mean,
        **memory_use(run),
        "uncertainty": float(np.nanmean(run.uncertainty)) if np.isfinite(run.uncertainty).any() else math.nan,
        "cleaned": sum(1 for st in run.steps if st.raw_text is not None),
        "path": str(run.path) if run.path else None,
        # with a known truth (a cascade world's data) only: NaN otherwise (results.json: null)
        "memory_precision": s["memory_precision"].mean if "memory_precision" in s else math.nan,
        "late_memory_precision": s["memory_precision"].late_mean if "memory_precision" in s else math.nan,
    }


def condition_row(sel: str, k: int, rr: list[dict[str, Any]], curves: list[np.ndarray]) -> dict[str, Any]:
    """One (selector, k) row of the table from its run rows ``rr`` and alignment ``curves``: over runs, mean ± sd
    (and 95% t-interval) of mean S_t and late S_t, global and local drift; the trend of the run-averaged S_t."""
    mean_s = interval([r["mean_S"] for r in rr])
    late_s = interval([r["late_S"] for r in rr])
    g = interval([r["global_drift"] for r in rr])
    loc = interval([r["local_drift"] for r in rr])
    tr = trend(curve_band(curves)[0] if curves else np.zeros(0))
    defined = [r["S_defined"] for r in rr if math.isfinite(r["S_defined"])]
    unc = interval([r["uncertainty"] for r in rr])
    return {
        "selector": sel, "k": k, "runs": len(rr), "steps": max((r["steps"] for r in rr), default=0),
        "mean_S": mean_s.mean, "mean_S_sd": mean_s.sd, "mean_S_ci": [mean_s.ci_low, mean_s.ci_high],
        "trend": tr.label, "trend_slope": tr.slope, "trend_slope_ci": [tr.ci_low, tr.ci_high],
        "run_trends": dict(Counter(r["trend"] for r in rr)),
        "late_S": late_s.mean, "late_S_sd": late_s.sd, "late_S_ci": [late_s.ci_low, late_s.ci_high],
        "global_drift": g.mean, "global_drift_sd": g.sd, "local_drift": loc.mean, "local_drift_sd": loc.sd,
        "global_exceeds_local": sum(1 for r in rr if r["global_drift"] > r["local_drift"]),
        "S_defined": float(np.mean(defined)) if defined else math.nan,
        **{name: _mean([r[name] for r in rr]) for name in ("memory_empty", "copies", "copies_memory")},
        "uncertainty": unc.mean, "uncertainty_sd": unc.sd,
        **_precision_cells(rr),
    }


def _precision_cells(rr: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean ± sd over runs of the memory precision (NaN without a known truth)."""
    p = interval([r.get("memory_precision", math.nan) for r in rr])
    return {"memory_precision": p.mean, "memory_precision_sd": p.sd, "memory_precision_ci": [p.ci_low, p.ci_high]}


def table_line(r: dict[str, Any], sampled: bool) -> str:
    """A table row as a markdown line."""
    runs_tr = ", ".join(f"{lab} {n}" for lab, n in sorted(r["run_trends"].items()))
    cells = [r["selector"], str(r["k"]), str(r["runs"]), _pm(r["mean_S"], r["mean_S_sd"]),
             f"{r['trend']} ({runs_tr})", _pm(r["late_S"], r["late_S_sd"]),
             _pm(r["global_drift"], r["global_drift_sd"]), _pm(r["local_drift"], r["local_drift_sd"]),
             f"{r['global_exceeds_local']}/{r['runs']}", _share(r["S_defined"]), _share(r["memory_empty"]),
             _share(r["copies"]), _share(r["copies_memory"])]
    if sampled:
        cells.append(_pm(r["uncertainty"], r["uncertainty_sd"]))
    return "| " + " | ".join(cells) + " |"


@dataclass
class CascadeResult(LabResult):
    """The runs (keyed ``(selector label, k, run)``), their diagnostics, and the table and figure built from them.
    ``setup`` is the shared data and fit (:class:`~uncertainty_lab.cascade.experiment.CascadeSetup`)."""

    report_name: ClassVar[str] = "table"

    config: CascadeConfig
    setup: Any
    runs: dict[RunKey, CascadeRun]
    diagnostics: dict[RunKey, RunDiagnostics]
    llm_label: str
    embedder_name: str
    out_dir: Path | None = None
    files: dict[str, Path] = field(default_factory=dict)

    def written(self) -> list[Path]:
        """The table, results and figure, then every run file."""
        return [*self.files.values(), *(run.path for run in self.runs.values() if run.path is not None)]

    @property
    def conditions(self) -> list[tuple[str, int]]:
        """(selector label, k) in the order run."""
        return list(dict.fromkeys((s, k) for s, k, _ in self.runs))

    def keys(self, selector: str, k: int) -> list[RunKey]:
        return [key for key in self.runs if key[0] == selector and key[1] == k]

    def curves(self, name: str, selector: str, k: int) -> list[np.ndarray]:
        """The per-step curves ``name`` (alignment, global_drift, local_drift, uncertainty) of a condition's runs."""
        if name == "uncertainty":
            return [self.runs[key].uncertainty for key in self.keys(selector, k)]
        return [self.diagnostics[key].curves[name].values for key in self.keys(selector, k)]

    def run_rows(self) -> list[dict[str, Any]]:
        """One row per run: its seed, file, length and summaries (:func:`run_row`)."""
        return [run_row(key, run, self.diagnostics[key]) for key, run in self.runs.items()]

    def rows(self) -> list[dict[str, Any]]:
        """The paper's table, one row per (selector, k): over runs, mean ± sd of mean S_t, late-stage S_t, global
        and local drift; the trend of the run-averaged S_t curve and the per-run trend labels; how many runs had
        global > local drift; the share of steps with a defined S_t; the shares of steps with an empty memory, of
        texts copying an earlier text and of texts copying their memory; the mean per-step uncertainty when
        sampled."""
        per_run = self.run_rows()
        return [condition_row(sel, k, [r for r in per_run if r["selector"] == sel and r["k"] == k],
                              self.curves("alignment", sel, k)) for sel, k in self.conditions]

    def table(self) -> str:
        """The table as markdown (what ``table.md`` holds under its heading)."""
        sampled = self.config.samples_per_step > 0
        head = TABLE_HEAD + (["uncertainty ± sd"] if sampled else [])
        truth = getattr(self.setup, "truth", None) is not None
        head = head + (["memory precision ± sd"] if truth else [])
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        rows = [table_line(r, sampled) + (f" {_pm(r['memory_precision'], r['memory_precision_sd'])} |" if truth else "")
                for r in self.rows()]
        return "\n".join(lines + rows)

    def report(self) -> str:
        """The table with what it is and how to read it (markdown)."""
        c, s = self.config, self.setup
        late = f"the last {c.late_fraction:.0%} of the steps" if c.late_fraction != 1 / 3 else "the last third of the steps"
        m = s.model
        parts = [
            "## HawkesLLM cascade experiment", "",
            *[f"**Warning:** {w}" for w in s.fit.warnings], *([""] if s.fit.warnings else []),
            f"Data: {describe_data(c.data)}; nodes {', '.join(s.nodes)}.",
            f"Generator: {self.llm_label}; temperature {c.temperature:g}, top-p {c.top_p:g}, at most {c.max_tokens} "
            f"new tokens{'; texts cleaned to one headline (clean_headline)' if c.clean else ''}. "
            f"{c.runs} run(s) per condition, {c.steps} steps each, run r seeded {c.seed} + r (shared by every "
            "selector and k: same event schedule, only the memory differs).",
            f"Hawkes model: exponential kernel, {_beta_line(s.fit, c.beta_grid)}, ρ(G) = {m.spectral_radius():.3f}"
            f"{_penalty_text(s.fit)}{_timing_line(s.fit)}; fitted on the {s.train_stream.n_events} "
            f"training events only (t ≤ {s.train_stream.end_time:.1f} h). Seed event: the last training event.",
            f"Evaluation embedder: {self.embedder_name} — a sentence encoder independent of the generator (the "
            "paper's embedder shared the generator's source, which can inflate alignment). References: the "
            f"{len(s.references)} held-out headlines of the same node within ±{c.window:g} h"
            + (f" (±{c.wide_window:g} h when none)" if c.wide_window else "") + ".",
            "", self.table(), "",
            f"mean S: the run's mean alignment S_t over the steps where it is defined; late S: its mean over {late}; "
            "± sd over runs. trend: OLS slope of the run-averaged S_t on the step, labelled by its 95% CI "
            "(increasing / decreasing / flat when it contains 0), with the per-run labels in brackets. "
            "global drift: 1 − cos(text, seed event); local drift: 1 − cos(text, weighted centre of its memory); both "
            "range over [0, 2] (above 1: the text points away from its reference). "
            "global > local: runs whose mean global drift exceeds their mean local drift. S defined: share of "
            "steps with a reference text in the window. memory empty: share of steps whose selector gave the model "
            "no memory (its text then comes from the instruction alone; a selector empty at every step measures "
            "the prompt, not the memory). copies: share of texts that repeat an earlier text of the run word for "
            "word; copies of memory: share that repeat a text of their own step's memory (what the prompt showed) "
            "(uncertainty_lab.cascade.memory_use).",
            *_empty_memory_notes(self.rows()),
            "",
            "For scale, the paper (Qwen2.5 via Ollama, GDELT Artemis II, k = 3): HawkesLLM 0.636 / increasing / "
            "0.682, chronological 0.581 / decreasing / 0.541, random 0.621 / decreasing / 0.594 (mean / trend / "
            "late); drift global 0.450 ± 0.019 vs local 0.185 ± 0.072. With few runs the ± sd is wide: read "
            "differences between selectors against it.",
            "", *truth_section(self),
        ]
        return "\n".join(parts)

    def metric_name(self) -> str:
        """The name of the metric that scored the alternative samples."""
        m = self.config.metric
        if isinstance(m, str):
            return m
        return m.get("name", "metric") if isinstance(m, Mapping) else getattr(m, "name", "metric")

    def figure(self) -> Any:
        """S_t per selector and k, drift per run, per-step uncertainty when sampled
        (:func:`uncertainty_lab.cascade.figures.figure`)."""
        return figure(self)

    def to_dict(self) -> dict[str, Any]:
        """Everything ``results.json`` holds: config, model, embedder, nodes, seed event, the fit, the table, the
        run rows and every run's per-step curves, as JSON values (NaN → null)."""
        s = self.setup
        ties = getattr(s.fit, "ties", None)
        fit = {
            "beta": s.fit.beta, "beta_note": getattr(s.fit, "beta_note", ""),
            "untimed_sources": [s.nodes[j] for j in getattr(s.fit, "untimed_sources", ())],
            "timing_note": getattr(s.fit, "timing_note", ""),
            "stream_ties": None if ties is None else {
                "how": ties.how, "reason": ties.reason, "n_events": ties.n_events, "n_tied": ties.n_tied,
                "share": ties.share, "tied_per_node": dict(zip(s.nodes, ties.tied, strict=True)),
                "events_per_node": dict(zip(s.nodes, ties.events, strict=True))},
            "mu": s.model.mu, "alpha_source_target": s.model.alpha,
            "rho": s.model.spectral_radius(), "log_likelihood": s.fit.log_likelihood,
            "n_events": s.fit.n_events, "train_start": s.train_stream.start_time, "train_end": s.train_stream.end_time,
            "candidates": s.fit.table.to_dicts(), "warnings": list(s.fit.warnings),
            "penalty": getattr(s.fit, "penalty", "none"), "eta": getattr(s.fit, "eta", 0.0),
            "eta_path": None if getattr(s.fit, "eta_path", None) is None else s.fit.eta_path.to_dicts(),
        }
        ties = getattr(s.data_report, "ties_report", None)
        if ties is not None:
            fit["ties"] = dataclasses.asdict(ties)
        curves = {}
        for key in self.runs:
            d = self.diagnostics[key]
            curves[f"{key[0]}/k{key[1]}/run{key[2]}"] = {name: c.values for name, c in d.curves.items()} | {
                "uncertainty": self.runs[key].uncertainty}
        return jsonable({
            "config": self.config.to_dict(), "llm": self.llm_label, "embedder": self.embedder_name,
            "nodes": list(s.nodes), "seed_event": s.seed_event.to_record(), "fit": fit,
            "table": self.rows(), "runs": self.run_rows(), "curves": curves, "truth": truth_dict(self),
        })


def truth_dict(result: CascadeResult) -> dict[str, Any] | None:
    """``results.json``'s ``truth``: the known process (a world's) and the fit against it (α recovered), or None
    when the data carries no truth."""
    s = result.setup
    if getattr(s, "truth", None) is None:
        return None
    from .truth import alpha_recovery

    return {"truth": dict(s.truth), "recovery": alpha_recovery(s.model, s.truth, s.nodes)}


def truth_section(result: CascadeResult) -> list[str]:
    """The report's lines on the known truth: α true → fitted with its error norms, and what memory precision
    means; one line saying there is none when the data carries no true parents."""
    s = result.setup
    if getattr(s, "truth", None) is None:
        return ["Memory precision: none — the data carry no true parents (a cascade world's data do: "
                "data = {loader = 'world', world = ...})."]
    from .truth import alpha_recovery, alpha_table

    rec = alpha_recovery(s.model, s.truth, s.nodes)
    rel = rec["alpha_error"] / rec["alpha_norm"] if rec["alpha_norm"] > 0 else math.nan
    return [
        f"### Against the known truth (world:{rec['world']})", "",
        f"α recovered, true → fitted (per hour; rows: source, columns: target): ‖α̂ − α‖_F = {rec['alpha_error']:.3f}"
        + (f" ({rel:.0%} of ‖α‖_F = {rec['alpha_norm']:.3f})" if math.isfinite(rel) else " (the true α is 0)")
        + f"; branching ‖Ĝ − G‖_F = {rec['G_error']:.3f}; ρ = {rec['rho']:.3f} → {rec['rho_fit']:.3f}; "
        f"β = {rec['beta']:g} → {rec['beta_fit']:g} /h; ‖μ̂ − μ‖ = {rec['mu_error']:.3f}.", "",
        alpha_table(rec, list(s.nodes)), "",
        "memory precision: the mean over a run's steps of the expected share of the memory items that truly caused "
        "the new event (parent, grandparent, …), under the true process given the run's times and nodes "
        "(uncertainty_lab.cascade.truth).",
    ]


#: Deprecated alias of :class:`CascadeResult` (its name before 0.2); removed in 0.3.
CascadeExperimentResult = CascadeResult
