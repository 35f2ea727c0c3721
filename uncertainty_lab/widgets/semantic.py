"""Notebook 03's playground: semantic uncertainty on one sample set — sample, cluster, score.

:func:`run_playground` is the playground's whole computation (a test calls it without a browser): a
:class:`PlaygroundResult` with the samples, their clustering and a metric table. :class:`SemanticPlayground`
(from :func:`semantic_playground`) only wires it to controls. Its judge control is a :func:`plugin_picker` of
the ``equivalence_judges`` plugins, so a judge's own parameters (the embedding judge's cosine threshold, an
entailment judge's relation) appear as controls.

The notebook's other helpers live in :mod:`.semantic_metrics` (judges and metrics by name, tables) and
:mod:`.semantic_analysis` (the reachable entropy range, calibration); their names stay importable from here
until 0.3.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets

from .. import registry
from ..semantic import Clustering, MetricResult, SampleSet, cluster, sample_answers
from ..table import Table
from .controls import SliderRange
from .picker import PluginPicker, plugin_picker

# deprecated here (moved to semantic_metrics and semantic_analysis); removed in 0.3
from .semantic_analysis import (  # noqa: F401
    HASSUM_TAU_D,
    HASSUM_TAU_E,
    NORMALISED_TAU_E,
    CalibrationRun,
    auroc_table,
    calibration_run,
    draw_entropy_range,
    entropy_range_table,
)
from .semantic_metrics import (  # noqa: F401
    DECIMALS,
    MODEL_CALLING_METRICS,
    OFFLINE_JUDGES,
    compare_metrics,
    make_judge,
    make_metrics,
    metric_row,
    metrics_table,
    samples_table,
)

__all__ = [
    "DEFAULT_METRICS",
    "RANGES",
    "PlaygroundResult",
    "SemanticPlayground",
    "run_playground",
    "semantic_playground",
]

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
        from ..llm import as_backend

        self.llm = as_backend("auto" if llm is None else llm, error=ValueError)
        self.system = system
        unknown = set(values) - set(RANGES)
        if unknown:
            raise ValueError(f"unknown control(s) {sorted(unknown)}; the sliders are {list(RANGES)}")
        self.question = widgets.Textarea(value=question, description="question", rows=2, style=dict(_STYLE),
                                         layout={"width": "640px"})
        self.sliders: dict[str, widgets.ValueWidget] = {}
        for name, r in RANGES.items():
            value = values.get(name, r.value)
            conv = float if name == "temperature" else int
            r.check(name, value, conv)
            cls = widgets.FloatSlider if name == "temperature" else widgets.IntSlider
            kw = {"readout_format": ".1f"} if name == "temperature" else {}
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
