"""Notebook 03's panels and the helpers behind its cells: semantic uncertainty on one sample set.

The decisions live in plain functions a test can call without a browser:

- :func:`make_judge` / :func:`make_metrics` — judges and metrics by name, with the running model handed to
  the plugins that call one (``llm_entailment``, ``verbalized_confidence``);
- :func:`samples_table`, :func:`metrics_table`, :func:`compare_metrics` — small tables (no pandas) of
  samples with their meaning classes, of metric results, and of many metrics over many sample sets;
- :func:`entropy_range_table` / :func:`draw_entropy_range` — every discrete semantic entropy n samples can
  show, against a raw threshold (HASSUM's τ_E = 1.65 can never fire at n = 5) and the normalised one;
- :func:`calibration_run` / :func:`auroc_table` — sample a few questions, grade one sampled answer each,
  and the AUROC of every metric's confidence for predicting a right answer, with bootstrap intervals;
- :func:`run_playground` — the playground's whole computation: sample, cluster, score; a
  :class:`PlaygroundResult` with the samples, the clustering and a metric table.

:class:`SemanticPlayground` (from :func:`semantic_playground`) only wires ``run_playground`` to controls.
Its judge control is a :func:`plugin_picker` of the ``equivalence_judges`` plugins, so a judge's own
parameters (the embedding judge's cosine threshold, an entailment judge's relation) appear as controls.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import ipywidgets as widgets
import numpy as np

from .. import registry
from ..parameters import parameters
from ..semantic import (
    Clustering,
    MetricResult,
    SampleSet,
    as_sample_set,
    cluster,
    partitions_above,
    reachable_entropies,
    resolve_judge,
    sample_answers,
)
from ..table import Table
from .hawkes import SliderRange
from .picker import PluginPicker, plugin_picker

__all__ = [
    "DECIMALS",
    "DEFAULT_METRICS",
    "HASSUM_TAU_D",
    "HASSUM_TAU_E",
    "MODEL_CALLING_METRICS",
    "NORMALISED_TAU_E",
    "OFFLINE_JUDGES",
    "RANGES",
    "CalibrationRun",
    "PlaygroundResult",
    "SemanticPlayground",
    "auroc_table",
    "calibration_run",
    "compare_metrics",
    "draw_entropy_range",
    "entropy_range_table",
    "make_judge",
    "make_metrics",
    "metric_row",
    "metrics_table",
    "run_playground",
    "samples_table",
    "semantic_playground",
]

#: HASSUM's reference-code thresholds (secondary): concern = SE > 1.65 nats or SD < 0.8
HASSUM_TAU_E = 1.65
HASSUM_TAU_D = 0.8
#: an entropy threshold on the normalised scale H / ln n (the orchestration lab's default)
NORMALISED_TAU_E = 0.5
#: the judges that need neither a network nor a model of their own
OFFLINE_JUDGES = ("exact", "embedding")
#: metrics that call a language model themselves (one extra call per sample set)
MODEL_CALLING_METRICS = ("verbalized_confidence",)
#: what the playground scores unless told otherwise
DEFAULT_METRICS = ("discrete_semantic_entropy", "semantic_entropy", "num_semantic_sets", "semantic_density",
                   "lexical_similarity")
#: the playground's slider ranges
RANGES: dict[str, SliderRange] = {
    "n": SliderRange(2, 10, 1, 5),
    "temperature": SliderRange(0.0, 2.0, 0.1, 1.0),
    "max_tokens": SliderRange(8, 128, 4, 48),
}
_STYLE = {"description_width": "initial"}


# --- judges and metrics by name -------------------------------------------------------------------------


def _declared(kind: str, name: str) -> dict[str, Any]:
    return {p.name: p for p in parameters(registry.get(kind, name))}


def _with_llm(kind: str, name: str, params: dict[str, Any], llm: Any) -> dict[str, Any]:
    """``params`` plus ``llm=llm`` when the plugin declares an ``llm`` parameter left at its default."""
    declared = _declared(kind, name)
    p = declared.get("llm")
    if llm is not None and p is not None and params.get("llm", p.default) == p.default:
        params = {**params, "llm": llm}
    return params


def make_judge(judge: Any = "embedding", params: Mapping[str, Any] | None = None, *, llm: Any = None) -> Any:
    """An equivalence judge from a registered name (with ``params``) or an instance (returned as is).

    A judge that calls a model (``llm_entailment``) gets ``llm`` — the model the samples came from —
    unless ``params`` name another one than its default."""
    params = dict(params or {})
    if not isinstance(judge, str):
        if params:
            raise ValueError(f"params {sorted(params)} were given with a judge instance; set them on the instance")
        return resolve_judge(judge)
    return registry.create("equivalence_judges", judge, **_with_llm("equivalence_judges", judge, params, llm))


def make_metrics(metrics: Sequence[Any] | Mapping[str, Any], *, judge: Any = "embedding", llm: Any = None,
                 clustering: str | None = None) -> dict[str, Any]:
    """``{label: metric instance}`` from metric names or instances (a list) or ``{label: name or instance}``.

    A named metric gets the ``judge`` (and ``clustering``, ``"greedy"`` or ``"transitive"``) when it declares
    them, and ``llm`` when it declares an ``llm`` parameter (``verbalized_confidence``). Instances are kept."""
    if isinstance(metrics, str):
        raise TypeError("metrics must be a list of metric names (or a dict label -> name), not one string; "
                        f"wrap it: [{metrics!r}]")
    items = list(metrics.items()) if isinstance(metrics, Mapping) else [
        (m if isinstance(m, str) else getattr(m, "name", type(m).__name__), m) for m in metrics]
    if not items:
        raise ValueError(f"metrics is empty; choose at least one of {registry.names('metrics')}")
    out: dict[str, Any] = {}
    for label, m in items:
        if isinstance(m, str):
            declared = _declared("metrics", m)
            shared: dict[str, Any] = {}
            if "judge" in declared:
                shared["judge"] = judge
            if clustering is not None and "clustering" in declared:
                shared["clustering"] = clustering
            m = registry.create("metrics", m, **_with_llm("metrics", m, shared, llm))
        out[label] = m
    return out


# --- tables -------------------------------------------------------------------------------------------
#: tables are for reading: values are rounded to this many decimals (the exact ones stay in the results)
DECIMALS = 4


def _show(x: Any) -> float:
    """``x`` rounded for a table (NaN stays NaN; 1 − 1 + 2e-16 shows as 0)."""
    x = float(x)
    return x if math.isnan(x) else round(x, DECIMALS) + 0.0


def _note(result: MetricResult) -> str:
    d = result.details
    if result.missing:
        return f"missing: {d.get('missing')}"
    parts = []
    if "n_clusters" in d:
        parts.append(f"{d['n_clusters']} class(es), {d.get('judge')} judge, {d.get('clustering')}")
    elif d.get("judge"):
        parts.append(f"{d['judge']} judge")
    if "variant" in d:
        parts.append(f"variant {d['variant']}" + (f", target {d['target_source']}" if "target_source" in d else ""))
    if "max_entropy" in d:
        parts.append(f"max ln n = {d['max_entropy']:.3f}")
    if "raw" in d:
        parts.append(f"reply {str(d['raw']).strip()[:40]!r}")
    return "; ".join(parts)


def metric_row(label: str, result: MetricResult) -> dict[str, Any]:
    """One table row: ``metric``, ``uncertainty`` (natural scale), ``normalised`` ([0, 1]), ``confidence``
    ([0, 1]), each rounded to :data:`DECIMALS`, and a ``note`` (meaning classes, variant, or why it is missing)."""
    return {"metric": label, "uncertainty": _show(result.uncertainty),
            "normalised": _show(result.normalised_uncertainty), "confidence": _show(result.confidence),
            "note": _note(result)}


def metrics_table(results: Mapping[str, MetricResult], title: str = "") -> Table:
    """One row per metric result (see :func:`metric_row`)."""
    return Table([metric_row(k, r) for k, r in results.items()],
                 columns=["metric", "uncertainty", "normalised", "confidence", "note"], title=title)


def samples_table(samples: SampleSet | Sequence[str], clusterings: Mapping[str, Clustering] | None = None,
                  title: str = "") -> Table:
    """One row per sample: its index, text, mean token log-probability (when the backend gave logprobs) and,
    for each named clustering, the meaning class it put the sample in."""
    samples = as_sample_set(samples)
    lps = samples.length_normalised_logprobs
    clusterings = dict(clusterings or {})
    for label, c in clusterings.items():
        if len(c.labels) != samples.n:
            raise ValueError(f"clustering {label!r} has {len(c.labels)} labels for {samples.n} samples")
    rows = []
    for i, text in enumerate(samples.texts):
        row: dict[str, Any] = {"#": i, "answer": " ".join(text.split())}
        if lps is not None:
            row["mean token logprob"] = _show(lps[i])
        for label, c in clusterings.items():
            row[f"class ({label})"] = c.labels[i]
        rows.append(row)
    columns = ["#", "answer"] + (["mean token logprob"] if lps is not None else []) + [
        f"class ({label})" for label in clusterings]
    return Table(rows, columns=columns, title=title)


def compare_metrics(sets: Mapping[str, SampleSet | Sequence[str]], metrics: Mapping[str, Any],
                    value: str | Mapping[str, str] = "confidence", *, question: str = "",
                    judge: Any = "embedding", title: str = "") -> Table:
    """One row per sample set, one column per metric: the metric's ``value`` (``"confidence"``,
    ``"uncertainty"`` or ``"normalised_uncertainty"``; a dict chooses per metric label). A missing value is
    NaN. ``metrics`` maps a column label to a metric instance or a name (a named judged metric gets ``judge``);
    a plain list of texts is wrapped into a sample set with ``question``."""
    allowed = ("confidence", "uncertainty", "normalised_uncertainty")
    instances = make_metrics(metrics, judge=judge)
    which = {label: value if isinstance(value, str) else value.get(label, "confidence") for label in instances}
    for label, v in which.items():
        if v not in allowed:
            raise ValueError(f"value for {label!r} must be one of {allowed}, got {v!r}")
    rows = []
    for name, s in sets.items():
        s = s if isinstance(s, SampleSet) else SampleSet.from_texts(list(s), question=question)
        row: dict[str, Any] = {"set": name, "n": s.n}
        for label, m in instances.items():
            row[label] = _show(getattr(m.score(s), which[label]))
        rows.append(row)
    return Table(rows, columns=["set", "n", *instances], title=title)


# --- the reachable range of discrete semantic entropy --------------------------------------------------


def entropy_range_table(ns: Sequence[int] = (3, 5, 10), threshold: float = HASSUM_TAU_E,
                        normalised_threshold: float = NORMALISED_TAU_E) -> Table:
    """Per sample count n: ln n (the largest entropy), the number of partitions of n samples into meaning
    classes and of distinct entropy values, how many partitions a raw gate ``H > threshold`` fires on and
    the most agreeing one it fires on, and the same for the normalised gate ``H / ln n > normalised_threshold``."""
    rows = []
    for n in ns:
        if not isinstance(n, int) or isinstance(n, bool) or n < 2:
            raise ValueError(f"every n must be an integer >= 2 (one sample has no spread), got {n!r}")
        parts = reachable_entropies(n)
        raw = partitions_above(threshold, n)
        norm = [(p, h) for p, h in parts if h / math.log(n) > normalised_threshold]
        rows.append({
            "n": n, "ln n": math.log(n), "partitions": len(parts),
            "distinct values": len({round(h, 12) for _, h in parts}),
            f"fires at H > {threshold:g}": len(raw),
            "first raw firing": "+".join(map(str, raw[0][0])) if raw else "never",
            f"fires at H/ln n > {normalised_threshold:g}": len(norm),
            "first normalised firing": "+".join(map(str, norm[0][0])) if norm else "never",
        })
    return Table(rows, title="reachable discrete semantic entropy")


def draw_entropy_range(ns: Sequence[int] = (3, 5, 10), threshold: float = HASSUM_TAU_E,
                       normalised_threshold: float = NORMALISED_TAU_E, axes: Any = None) -> tuple[Any, Table]:
    """Every reachable discrete semantic entropy for each n in ``ns`` (dots; red where a gate fires) with
    ln n marked, on the raw scale with the line ``threshold`` (left) and on the normalised scale H / ln n
    with the line ``normalised_threshold`` (right). Returns ``(figure, entropy_range_table(...))``."""
    import matplotlib.pyplot as plt

    table = entropy_range_table(ns, threshold, normalised_threshold)
    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(10, 4), constrained_layout=True)
    fig = axes[0].figure
    ax_raw, ax_norm = axes
    for x, n in enumerate(ns):
        values = np.array(sorted({round(h, 12) for _, h in reachable_entropies(n)}))
        ln_n = math.log(n)
        for ax, v, tau in ((ax_raw, values, threshold), (ax_norm, values / ln_n, normalised_threshold)):
            fires = v > tau
            ax.plot(np.full((~fires).sum(), x), v[~fires], "o", color="C0", ms=5, alpha=0.8)
            ax.plot(np.full(fires.sum(), x), v[fires], "o", color="C3", ms=5, alpha=0.8)
        ax_raw.plot([x - 0.3, x + 0.3], [ln_n, ln_n], color="k", lw=1)
        ax_raw.annotate(f"ln {n} = {ln_n:.3f}", (x, ln_n), textcoords="offset points", xytext=(0, 5),
                        ha="center", fontsize=8)
    ax_raw.axhline(threshold, color="C3", ls="--", lw=1, label=f"HASSUM τ_E = {threshold:g} nats")
    ax_norm.axhline(normalised_threshold, color="C3", ls="--", lw=1, label=f"τ = {normalised_threshold:g} on H / ln n")
    for ax, ylabel, title in ((ax_raw, "discrete semantic entropy H (nats)", "raw scale: the reach grows with n"),
                              (ax_norm, "normalised entropy H / ln n", "normalised: one threshold for every n")):
        ax.set_xticks(range(len(ns)), [f"n = {n}" for n in ns])
        ax.set_xlim(-0.6, len(ns) - 0.4)
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize="medium")
        ax.legend(loc="upper left", fontsize="small")
    ax_raw.set_ylim(-0.05, max(math.log(max(ns)), threshold) + 0.35)
    ax_norm.set_ylim(-0.05, 1.15)
    return fig, table


# --- calibration on a question set -------------------------------------------------------------------


@dataclass
class CalibrationRun:
    """Per question: the sample set, the grading of the answer that was graded (sample 0, sampled like the
    others — HASSUM §6), and every metric's result. ``correct`` is a bool array; ``confidence(label)`` a
    float array with NaN where the metric was missing."""

    items: list[Any]
    samples: list[SampleSet]
    grades: list[Any]
    results: list[dict[str, MetricResult]]
    labels: list[str]
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def correct(self) -> np.ndarray:
        return np.array([bool(g.correct) for g in self.grades], dtype=bool)

    def confidence(self, label: str) -> np.ndarray:
        if label not in self.labels:
            raise KeyError(f"no metric {label!r}; the run scored {self.labels}")
        return np.array([r[label].confidence for r in self.results], dtype=float)

    def table(self, labels: Sequence[str] | None = None) -> Table:
        """One row per question: id, the graded answer, right or wrong, and the chosen metrics' confidences."""
        labels = list(labels or self.labels)
        rows = []
        for item, s, g, r in zip(self.items, self.samples, self.grades, self.results, strict=True):
            answer = " ".join(s.texts[0].split()) if s.n else ""
            row: dict[str, Any] = {"id": item.id, "answer (sample 0)": answer[:70] + ("…" if len(answer) > 70 else ""),
                                   "gold": item.answers[0], "correct": bool(g.correct)}
            row.update({label: _show(r[label].confidence) for label in labels})
            rows.append(row)
        return Table(rows, columns=["id", "answer (sample 0)", "gold", "correct", *labels],
                     title="confidence per question")


def calibration_run(llm: Any, items: Sequence[Any], metrics: Sequence[Any] | Mapping[str, Any], *, n: int = 5,
                    temperature: float = 1.0, seed: int = 0, max_tokens: int = 32, judge: Any = "embedding",
                    grader: Any = None, system: str | None = "Answer the question in a few words.",
                    progress: bool = True) -> CalibrationRun:
    """For each question item (``.question``, ``.answers``): sample ``n`` answers, grade sample 0 against the
    gold aliases with ``grader`` (default: normalised containment, ``AnswerGrader("contains")``), and score
    every metric on the sample set. Sample 0 is graded because it was sampled like the others; a separately
    sampled greedy answer would make the metrics partly measure the difference of format (HASSUM §6)."""
    from tqdm.auto import tqdm

    from ..semantic.correctness import AnswerGrader

    if n < 2:
        raise ValueError(f"n must be >= 2 samples per question (metrics need a spread), got {n!r}")
    items = list(items)
    if not items:
        raise ValueError("items is empty; pass question items, e.g. load_qa_questions('factual')[:8]")
    grader = grader or AnswerGrader("contains")
    instances = make_metrics(metrics, judge=judge, llm=llm)
    samples, grades, results = [], [], []
    for k, item in enumerate(tqdm(items, desc="questions", disable=not progress)):
        s = sample_answers(llm, item.question, n=n, temperature=temperature, seed=seed + k, max_tokens=max_tokens,
                           system=system)
        samples.append(s)
        grades.append(grader.check(s.texts[0], item.answers, item.question))
        results.append({label: m.score(s) for label, m in instances.items()})
    settings = {"n": n, "temperature": temperature, "seed": seed, "max_tokens": max_tokens, "system": system,
                "grader": getattr(grader, "method", type(grader).__name__),
                "backend": getattr(llm, "label", str(llm))}
    return CalibrationRun(items, samples, grades, results, list(instances), settings)


def auroc_table(run: CalibrationRun, labels: Sequence[str] | None = None, *, n_boot: int = 1000,
                level: float = 0.95, seed: int = 0) -> Table:
    """Per metric: AUROC of its confidence for predicting a right answer, with a percentile bootstrap
    interval, over the questions where the metric is not missing (``used``; ``missing`` says how many were
    left out). 0.5 = chance. Undefined (NaN) when the kept answers are all right or all wrong."""
    from ..semantic.evaluation import auroc, bootstrap_ci

    y = run.correct
    rows = []
    for label in labels or run.labels:
        c = run.confidence(label)
        keep = ~np.isnan(c)
        row: dict[str, Any] = {"metric": label, "AUROC": math.nan, "low": math.nan, "high": math.nan,
                               "used": int(keep.sum()), "missing": int((~keep).sum()), "note": ""}
        if keep.sum() == 0:
            reasons = {r[label].details.get("missing") for r in run.results}
            row["note"] = "missing for every question: " + "; ".join(sorted(str(x) for x in reasons))
        elif y[keep].all() or not y[keep].any():
            row["note"] = f"undefined: the {int(keep.sum())} graded answers are all {'right' if y[keep].all() else 'wrong'}"
        else:
            ci = bootstrap_ci(auroc, c[keep], y[keep], n_boot=n_boot, level=level, seed=seed)
            row.update({"AUROC": _show(ci.estimate), "low": _show(ci.low), "high": _show(ci.high)})
            row["note"] = f"{int(y[keep].sum())} right, {int((~y[keep]).sum())} wrong" + (
                f"; {ci.n_skipped} one-class resamples skipped" if ci.n_skipped else "")
        rows.append(row)
    return Table(rows, columns=["metric", "AUROC", "low", "high", "used", "missing", "note"],
                 title=f"AUROC for predicting a right answer ({level:.0%} percentile bootstrap, {n_boot} resamples)")


# --- the playground --------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlaygroundResult:
    """What one playground run produced: the ``samples``, their ``clustering`` by the chosen judge and method,
    each metric's ``results``, and ``table`` (one row per metric, see :func:`metric_row`)."""

    samples: SampleSet
    clustering: Clustering
    results: dict[str, MetricResult]
    table: Table
    judge: str
    settings: dict[str, Any]

    def __repr__(self) -> str:
        return (f"PlaygroundResult({self.samples.question!r}: {self.samples.n} samples, "
                f"{self.clustering.n_clusters} class(es) by {self.judge} ({self.clustering.method}), "
                f"metrics {list(self.results)})")

    def samples_table(self) -> Table:
        return samples_table(self.samples, {self.judge: self.clustering}, title="samples")

    def clusters_text(self) -> list[str]:
        """One line per meaning class: its size and its members' texts (shortened)."""
        lines = []
        for k, members in enumerate(self.clustering.clusters):
            texts = [" ".join(self.samples.texts[i].split()) for i in members]
            shown = " | ".join(t[:60] + ("…" if len(t) > 60 else "") for t in dict.fromkeys(texts))
            lines.append(f"class {k} ({len(members)} of {self.samples.n}): {shown}")
        return lines

    def _repr_html_(self) -> str:
        s = self.settings
        head = (f"<b>Q: {html.escape(self.samples.question)}</b><br><small>{html.escape(str(s.get('backend')))}, "
                f"n = {s.get('n')}, T = {s.get('temperature')}, seed = {s.get('seed')}, "
                f"judge {html.escape(self.judge)} ({html.escape(self.clustering.method)})</small>")
        clusters = "".join(f"<li>{html.escape(line)}</li>" for line in self.clusters_text())
        return (head + self.samples_table()._repr_html_()
                + f"<p><b>{self.clustering.n_clusters} meaning class(es)</b></p><ul>{clusters}</ul>"
                + self.table._repr_html_())


def run_playground(llm: Any, question: str, n: int = 5, temperature: float = 1.0, judge: Any = "embedding",
                   metrics: Sequence[Any] | Mapping[str, Any] = DEFAULT_METRICS, seed: int = 0, *,
                   max_tokens: int = 48, clustering: str = "greedy", judge_params: Mapping[str, Any] | None = None,
                   system: str | None = None) -> PlaygroundResult:
    """Sample ``n`` answers to ``question`` at ``temperature``, cluster them with ``judge`` (a name, with
    ``judge_params``, or an instance) by ``clustering`` (``"greedy"`` or ``"transitive"``), and score each of
    ``metrics`` on the one sample set (judged metrics use the same judge and clustering method).
    ``n``, ``temperature`` and ``max_tokens`` must lie in :data:`RANGES`."""
    if not isinstance(question, str) or not question.strip():
        raise ValueError("question must be a non-empty string; type a question into the box")
    RANGES["n"].check("n", n, int)
    RANGES["temperature"].check("temperature", temperature, float)
    RANGES["max_tokens"].check("max_tokens", max_tokens, int)
    if clustering not in ("greedy", "transitive"):
        raise ValueError(f"clustering must be 'greedy' or 'transitive', got {clustering!r}")
    judge_obj = make_judge(judge, judge_params, llm=llm)
    judge_name = judge if isinstance(judge, str) else getattr(judge_obj, "name", type(judge_obj).__name__)
    instances = make_metrics(metrics, judge=judge_obj, llm=llm, clustering=clustering)
    samples = sample_answers(llm, question.strip(), n=int(n), temperature=float(temperature), seed=seed,
                             max_tokens=int(max_tokens), system=system)
    c = cluster(samples.texts, judge_obj, samples.question, clustering)
    results = {label: m.score(samples) for label, m in instances.items()}
    settings = {"n": int(n), "temperature": float(temperature), "seed": seed, "max_tokens": int(max_tokens),
                "clustering": clustering, "backend": getattr(llm, "label", type(llm).__name__)}
    return PlaygroundResult(samples, c, results, metrics_table(results, title="metrics"), judge_name, settings)


class SemanticPlayground(widgets.VBox):
    """A question box, sliders for n, temperature and answer length, a seed, a judge picker (with the
    judge's own parameters), the clustering method, a metric multi-select and a Run button; the output shows
    the samples, their meaning classes and the metric table. ``.run()`` does what the button does and returns
    the :class:`PlaygroundResult` (also kept as ``.result``); an error is shown in ``.status``."""

    def __init__(self, llm: Any = None, *, question: str = "What is the capital city of Australia?",
                 judge: str = "embedding", metrics: Sequence[str] = DEFAULT_METRICS, seed: int = 0,
                 system: str | None = None, **values: float):
        super().__init__()
        if llm is None or isinstance(llm, str):
            from ..llm import get_llm

            llm = get_llm(llm or "auto", quiet=True)
        self.llm = llm
        self.system = system
        unknown = set(values) - set(RANGES)
        if unknown:
            raise ValueError(f"unknown control(s) {sorted(unknown)}; the sliders are {list(RANGES)}")
        self.question = widgets.Textarea(value=question, description="question", rows=2, style=dict(_STYLE),
                                         layout={"width": "640px"})
        self.sliders: dict[str, widgets.ValueWidget] = {}
        for name, r in RANGES.items():
            value = values.get(name, r.value)
            if not r.min <= value <= r.max:
                raise ValueError(f"{name}={value} is outside the slider range [{r.min:g}, {r.max:g}]")
            cls = widgets.FloatSlider if name == "temperature" else widgets.IntSlider
            kw = {"readout_format": ".1f"} if name == "temperature" else {}
            conv = float if name == "temperature" else int
            self.sliders[name] = cls(value=conv(value), min=conv(r.min), max=conv(r.max), step=conv(r.step),
                                     description=name, continuous_update=False, style=dict(_STYLE),
                                     layout={"width": "420px"}, **kw)
        self.seed = widgets.BoundedIntText(value=int(seed), min=0, max=10**6, description="seed",
                                           layout={"width": "160px"})
        self.judge: PluginPicker = plugin_picker("equivalence_judges", value=judge)
        self.clustering = widgets.Dropdown(options=["greedy", "transitive"], value="greedy",
                                           description="clustering", style=dict(_STYLE))
        names = registry.names("metrics")
        chosen = [m for m in metrics if m in names]
        self.metrics = widgets.SelectMultiple(options=names, value=chosen, rows=min(10, len(names)),
                                              description="metrics", style=dict(_STYLE), layout={"width": "420px"})
        self.run_button = widgets.Button(description="Run", button_style="primary", icon="play")
        self.run_button.on_click(self._on_run)
        self.status = widgets.HTML()
        self.output = widgets.Output()
        self.result: PlaygroundResult | None = None
        note = widgets.HTML("<small style='color:#666'>offline judges: exact, embedding; llm_entailment asks the "
                            "running model; nli_cross_encoder needs a local NLI model folder. "
                            "verbalized_confidence makes one extra model call.</small>")
        self.children = (self.question,
                         widgets.HBox([widgets.VBox(list(self.sliders.values())), self.seed]),
                         widgets.HBox([widgets.VBox([self.judge, self.clustering]), self.metrics]),
                         note, self.run_button, self.status, self.output)

    @property
    def values(self) -> dict[str, Any]:
        """The arguments the Run button passes to :func:`run_playground` (the judge's parameters validated)."""
        return {"question": self.question.value, "n": int(self.sliders["n"].value),
                "temperature": round(float(self.sliders["temperature"].value), 6), "judge": self.judge.name,
                "judge_params": self.judge.params, "metrics": list(self.metrics.value), "seed": int(self.seed.value),
                "max_tokens": int(self.sliders["max_tokens"].value), "clustering": self.clustering.value}

    def _on_run(self, button: Any = None) -> None:
        self.run()

    def run(self) -> PlaygroundResult | None:
        """Sample, cluster and score with the current controls; show and return the result (None on error)."""
        self.status.value = "<i>sampling…</i>"
        try:
            result = run_playground(self.llm, system=self.system, **self.values)
        except Exception as exc:  # a bad setting must be shown, not lost in the kernel's log
            self.status.value = (f"<span style='color:#a33'><b>{html.escape(type(exc).__name__)}</b>: "
                                 f"{html.escape(str(exc))}</span>")
            self.result = None
            return None
        self.result = result
        self.status.value = (f"<small>{result.samples.n} samples, {result.clustering.n_clusters} meaning class(es) "
                             f"by the {html.escape(result.judge)} judge ({result.clustering.method})</small>")
        self.output.outputs = ()  # replace, not append; works outside a kernel too (tests)
        self.output.append_display_data(result)
        return result


def semantic_playground(llm: Any = None, **options: Any) -> SemanticPlayground:
    """The semantic-uncertainty playground for ``llm`` (a backend, a spec string, or None for ``"auto"``);
    ``options``: ``question``, ``judge``, ``metrics``, ``seed``, ``system`` and starting slider values
    (``n``, ``temperature``, ``max_tokens``)."""
    return SemanticPlayground(llm, **options)
