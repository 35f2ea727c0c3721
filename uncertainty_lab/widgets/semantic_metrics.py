"""Notebook 03's judges and metrics by name, and small tables (no pandas) of what they say.

- :func:`make_judge` / :func:`make_metrics` — judges and metrics by name, with the running language model handed to
  the plugins that call one (``llm_entailment``, ``verbalized_confidence``);
- :func:`samples_table`, :func:`metrics_table`, :func:`compare_metrics` — samples with their meaning classes,
  metric results, and many metrics over many sample sets, values rounded to :data:`DECIMALS`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from .. import registry
from ..parameters import parameters
from ..semantic import Clustering, MetricResult, SampleSet, as_sample_set, resolve_judge
from ..table import Table

__all__ = [
    "DECIMALS",
    "MODEL_CALLING_METRICS",
    "OFFLINE_JUDGES",
    "compare_metrics",
    "make_judge",
    "make_metrics",
    "metric_row",
    "metrics_table",
    "samples_table",
    "rounded",
]

#: the judges that need neither a network nor a model of their own
OFFLINE_JUDGES = ("exact", "embedding")
#: metrics that call a language model themselves (one extra call per sample set)
MODEL_CALLING_METRICS = ("verbalized_confidence",)
#: tables are for reading: values are rounded to this many decimals (the exact ones stay in the results)
DECIMALS = 4


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


def rounded(x: Any) -> float:
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
    return {"metric": label, "uncertainty": rounded(result.uncertainty),
            "normalised": rounded(result.normalised_uncertainty), "confidence": rounded(result.confidence),
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
            row["mean token logprob"] = rounded(lps[i])
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
            row[label] = rounded(getattr(m.score(s), which[label]))
        rows.append(row)
    return Table(rows, columns=["set", "n", *instances], title=title)
