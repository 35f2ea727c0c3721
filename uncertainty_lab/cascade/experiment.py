"""The HawkesLLM experiment: memory selectors × memory budgets k × seeded runs on the chronological split of a
news cascade, with the paper's table and figure (HawkesLLM §4; the choices the paper leaves open are named here).

:class:`CascadeExperiment` follows the lab contract (``docs/ARCHITECTURE.md``):

1. **prepare** — data and split: the events ``data`` names (:mod:`uncertainty_lab.datasets.source`; default the
   shipped cascade, or GDELT files you downloaded), sorted by time, split chronologically: the first ``n_train`` =
   198 events train, the remaining 50 are held out. GDELT's tie report goes to the fit, which warns when the
   decay it chose is the spacing the loader invented for tied timestamps (``FitResult.warnings``, first in the
   report). **Fit, on the
   training events only** (no leakage): the training window is [0, last training event]; the held-out events
   never enter the likelihood, their times included. The exponential kernel's decay β is chosen from
   ``beta_grid`` (per hour) by likelihood among the stable fits (ρ(G) < 1). **Seed event** e_0 = the last
   training event, so the simulated events fall in the held-out window, whose headlines are the alignment
   references. Then the selectors, the metric, the language model and the evaluation embedder.
2. **units** — one per selector × k × run r = 0..runs−1, seeded ``seed + r`` (:func:`run_seed`) and journalled
   to ``out_dir/runs/<selector>__k<k>__run<r>.jsonl``. Because the event schedule draws from generators seeded
   by (seed, step) and depends only on earlier times and nodes, run r has **the same event times and nodes for
   every selector and every k**: only the memory, and hence the prompt and the text, differ — the paper's "same
   schedule and prompt, only the memory selector changes".
3. **run_unit** — :func:`~uncertainty_lab.cascade.run.simulate_cascade` with the config's template
   (:func:`~uncertainty_lab.cascade.prompt.headline_prompt` by default: the paper's prompt strings are unknown,
   and this one is what a 135M model follows best) and, with ``clean`` (default),
   :func:`~uncertainty_lab.cascade.headlines.clean_headline` on every text; a rerun resumes each run file.
4. **collect** — :func:`~uncertainty_lab.cascade.diagnostics.evaluate_run` per run: alignment S_t with the
   held-out texts of the same node within ±``window`` h (widened to ±``wide_window`` h), global and local drift,
   per-run mean / trend / late-stage mean. The embedder is all-MiniLM-L6-v2, a sentence encoder **independent of
   the generator** — the paper embedded with the same Qwen2.5 source that generated the text, a limitation it
   states, since a shared source can inflate self-consistency (circular evaluation). The table and figure are
   :class:`~uncertainty_lab.cascade.result.CascadeResult`'s (``table.md``, ``results.json``, ``figure.png``).

``run_experiment(config)`` (or ``EXPERIMENT.run``; ``uncertainty-lab cascade run --config FILE``) does it all.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from .. import registry
from ..contracts.memory import CascadeError, Event, NodeSpec
from ..datasets.source import describe_data, load_data
from ..lab import Experiment, Unit
from .config import DEFAULT_BETA_GRID, DEFAULT_NODE_INSTRUCTIONS, CascadeConfig, load_config
from .diagnostics import evaluate_run
from .headlines import clean_headline, copy_rate
from .prompt import PROMPTS, headline_prompt
from .record import CascadeResumeError, CascadeRun
from .result import CascadeExperimentResult, CascadeResult, _penalty_text
from .run import simulate_cascade

__all__ = [
    "EXPERIMENT",
    "CascadeContext",
    "CascadeExperiment",
    "CascadeSetup",
    "node_specs_for",
    "prepare",
    "run_experiment",
    "run_seed",
    # where they were before 0.2 (now in config, prompt, headlines and result), kept for code that imports them here
    "DEFAULT_BETA_GRID",
    "DEFAULT_NODE_INSTRUCTIONS",
    "PROMPTS",
    "CascadeConfig",
    "CascadeExperimentResult",
    "clean_headline",
    "copy_rate",
    "headline_prompt",
    "load_config",
]


def run_seed(seed: int, run: int) -> int:
    """The seed of run ``run`` (0-based): ``seed + run``. Every selector and k uses the same seed for run r,
    so they share its event schedule (times and nodes)."""
    return int(seed) + int(run)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "x"


# --- the data: split and fit -------------------------------------------------------------------------------------


@dataclass
class CascadeSetup:
    """The data every run shares: the events, the chronological split, the training stream and the Hawkes fit
    on it, the node specs (name, a_i), the seed event e_0 (the last training event) and the held-out
    references (Events with node ids; held-out events without a headline are left out)."""

    events: list[Any]
    train: list[Any]
    test: list[Any]
    nodes: tuple[str, ...]
    node_specs: tuple[NodeSpec, ...]
    train_stream: Any
    fit: Any
    seed_event: Event
    references: list[Event]
    data: dict[str, Any] | None = None
    data_report: Any = None
    #: the process that made the data when it is known (a cascade world's ``.truth``: nodes, mu, alpha, beta), else None
    truth: dict[str, Any] | None = None

    @property
    def model(self):
        """The fitted HawkesModel (``alpha[source, target]``, hours)."""
        return self.fit.model

    def node_index(self, name: str) -> int:
        return self.nodes.index(name)

    def describe(self) -> str:
        m = self.model
        counts_tr = Counter(e.node for e in self.train)
        counts_te = Counter(e.node for e in self.test)
        lines = [f"WARNING: {w}" for w in self.fit.warnings] + [
            f"data: {describe_data(self.data or {'loader': 'shipped_news'})}",
            f"{len(self.events)} events: train {len(self.train)} (t ≤ {self.train[-1].time_h:.1f} h), "
            f"held out {len(self.test)} (t = {self.test[0].time_h:.1f} … {self.test[-1].time_h:.1f} h)",
            *([f"{len(self.test) - len(self.references)} held-out events have no headline: not references"]
              if len(self.references) < len(self.test) else []),
            "per node (train / held out): " + ", ".join(f"{n} {counts_tr.get(n, 0)}/{counts_te.get(n, 0)}"
                                                        for n in self.nodes),
            f"Hawkes fit on the {self.train_stream.n_events} training events, window [{self.train_stream.start_time:g}, "
            f"{self.train_stream.end_time:.1f}] h: β = {_beta_text(self.fit)}, ρ(G) = {m.spectral_radius():.3f}"
            + _penalty_text(self.fit),
            f"seed event e_0: t = {self.seed_event.time:.1f} h, {self.nodes[self.seed_event.node]}: "
            f"{self.seed_event.text}",
        ]
        if self.data_report is not None:
            lines.append(self.data_report.summary())
        return "\n".join(lines)


def _beta_text(fit: Any) -> str:
    """``"2 /h"``, or ``"undetermined"`` when the likelihood is flat over the β grid (:attr:`FitResult.beta_note`)."""
    return "undetermined" if fit.beta is None else f"{fit.beta:g} /h"


def node_specs_for(nodes: Sequence[str], instructions: Mapping[str, str] | None = None) -> tuple[NodeSpec, ...]:
    """NodeSpecs for ``nodes``: ``instructions[name]`` where given, else :data:`DEFAULT_NODE_INSTRUCTIONS`."""
    instructions = dict(instructions or {})
    unknown = sorted(set(instructions) - set(nodes))
    if unknown:
        raise CascadeError(f"node_instructions names node(s) {unknown} that are not among the nodes {list(nodes)}")
    out = []
    for name in nodes:
        text = instructions.get(name, DEFAULT_NODE_INSTRUCTIONS.get(name))
        if text is None:
            raise CascadeError(f"node {name!r} has no instruction: add it to node_instructions")
        out.append(NodeSpec(name, text))
    return tuple(out)


def prepare(config: CascadeConfig | Mapping[str, Any] | None = None) -> CascadeSetup:
    """Load the cascade, split it chronologically, fit the Hawkes model on the training events only, and build
    the node specs, the seed event and the held-out references (the data half of
    :meth:`CascadeExperiment.prepare`; see the module docstring)."""
    from ..datasets.news import NODES, chronological_split, news_event_stream
    from ..hawkes import fit_hawkes

    config = CascadeConfig.coerce(config)
    events = load_data(config.data, kind="news", error=CascadeError)
    try:
        train, test = chronological_split(events, config.n_train)
    except ValueError as exc:
        raise CascadeError(f"n_train: {exc} ({len(events)} events in {describe_data(config.data)})") from None
    found = {e.node for e in events}
    nodes = tuple(config.nodes) if config.nodes else NODES if found <= set(NODES) else tuple(sorted(found))
    specs = node_specs_for(nodes, config.node_instructions)
    # the training window ends at the last training event: nothing about the held-out events (not even the
    # time of the first one) enters the likelihood
    train_stream = news_event_stream(train, nodes, tie_report=getattr(events, "report", None))
    fit = fit_hawkes(train_stream, beta_grid=config.beta_grid, penalty=config.penalty, eta=config.eta,
                     ties=getattr(events, "ties_report", None))
    index = {name: i for i, name in enumerate(nodes)}
    last = train[-1]
    seed_event = Event(last.time_h, index[last.node], last.headline)
    # a held-out event without a headline (GDELT: no page title and an id for a URL slug) is no reference text
    references = [Event(e.time_h, index[e.node], e.headline) for e in test if e.headline.strip()]
    return CascadeSetup(events, train, test, nodes, specs, train_stream, fit, seed_event, references,
                        data=config.data, data_report=getattr(events, "report", None),
                        truth=getattr(events, "truth", None))


# --- what every run shares ----------------------------------------------------------------------------------------


def run_depends(config: CascadeConfig, setup: CascadeSetup) -> dict[str, Any]:
    """What every run file records its evaluation depends on: the data file's hash
    (:func:`~uncertainty_lab.datasets.source.data_provenance`) and content hashes of the training events and of the
    held-out references (what the runs are compared with when the result is collected)."""
    from ..datasets.source import data_provenance
    from ..provenance import content_hash

    return {"data": data_provenance(config.data or {"loader": "shipped_news"}),
            "train": content_hash([[e.time_h, e.node, e.headline] for e in setup.train]),
            "references": content_hash([e.to_record() for e in setup.references])}


@dataclass
class CascadeContext:
    """What :meth:`CascadeExperiment.prepare` builds once: the data and fit (``setup``), the selector instances
    by label, the metric (None without sampling), the language model and the evaluation embedder."""

    setup: CascadeSetup
    selectors: dict[str, Any]
    metric: Any
    llm: Any
    llm_label: str
    embedder: Any
    embedder_name: str
    depends: dict[str, Any] = field(default_factory=dict)


def _make_embedder(spec: Any) -> Any:
    from ..embeddings import Embedder

    if spec is None:
        return Embedder()
    if isinstance(spec, (str, os.PathLike)):
        return Embedder(spec)
    return spec


def _make_selectors(config: CascadeConfig, embedder: Any) -> dict[str, Any]:
    """The selector instances by label; a ``semantic`` selector without its own embedder gets the experiment's."""
    selectors = {}
    for spec in config.selector_specs:
        sel = registry.resolve("memory_selectors", (spec["name"], spec["params"]), what=f"selector {spec['label']!r}")
        if spec["name"] == "semantic" and getattr(sel, "embedder", "x") is None:
            sel.embedder = embedder
        selectors[spec["label"]] = sel
    return selectors


# --- the experiment -----------------------------------------------------------------------------------------------


class CascadeExperiment(Experiment):
    """Selectors × k × runs of the HawkesLLM cascade: :meth:`prepare` → :meth:`units` → :meth:`run_unit` →
    :meth:`collect` (the module docstring says what each does)."""

    name: ClassVar[str] = "cascade"
    config_class: ClassVar[type[CascadeConfig]] = CascadeConfig
    resume_error: ClassVar[type[Exception]] = CascadeResumeError
    unit_name: ClassVar[str] = "run"
    outputs: ClassVar[tuple[str, ...]] = ("table.md", "results.json", "figure.png")

    def prepare(self, config: CascadeConfig, *, llm: Any = None, embedder: Any = None,
                setup: CascadeSetup | None = None) -> CascadeContext:
        """The data and fit (:func:`prepare`, or ``setup`` prepared from the same data settings), the embedder
        (``embedder`` or ``config.embedder``), the metric, the selectors and last, since it may load a model, the
        language model (``llm`` or ``config.llm``). A bad plugin is an error here, before any run starts."""
        setup = setup if setup is not None else prepare(config)
        emb = _make_embedder(embedder if embedder is not None else config.embedder)
        metric = registry.resolve("metrics", config.metric, what="metric") if config.samples_per_step else None
        selectors = _make_selectors(config, emb)
        from ..llm import ready_backend

        backend = ready_backend(llm if llm is not None else config.llm, error=CascadeError)
        return CascadeContext(setup, selectors, metric, backend, getattr(backend, "label", None)
                              or type(backend).__name__, emb, getattr(emb, "name", type(emb).__name__),
                              depends=run_depends(config, setup))

    def units(self, config: CascadeConfig, context: CascadeContext) -> list[Unit]:
        """One unit per selector label × k × run r, seeded ``run_seed(config.seed, r)``, journalled to
        ``out_dir/runs/<label>__k<k>__run<r>.jsonl``."""
        runs_dir = Path(config.out_dir) / "runs"
        return [Unit((label, k, r), f"{label}, k={k}, run {r}", runs_dir / f"{_slug(label)}__k{k}__run{r}.jsonl",
                     {"selector": label, "k": k, "seed": run_seed(config.seed, r)})
                for label in context.selectors for k in config.ks for r in range(config.runs)]

    def run_unit(self, unit: Unit, config: CascadeConfig, context: CascadeContext) -> CascadeRun:
        """Run (or resume) one cascade into its run file."""
        s = context.setup
        return simulate_cascade(
            s.seed_event, s.model, context.selectors[unit.spec["selector"]], context.llm, steps=config.steps,
            k=unit.spec["k"], seed=unit.spec["seed"], node_specs=s.node_specs, prompt_fn=config.prompt_fn,
            temperature=config.temperature, top_p=config.top_p, max_tokens=config.max_tokens, out=unit.path,
            resume=not config.overwrite, samples_per_step=config.samples_per_step, metric=context.metric,
            horizon=config.horizon, progress=config.progress, sample_temperature=config.sample_temperature,
            postprocess=clean_headline if config.clean else None, depends=context.depends)

    def collect(self, config: CascadeConfig, context: CascadeContext,
                records: dict[tuple, CascadeRun]) -> CascadeResult:
        """Evaluate every run against the held-out references and build the result."""
        diagnostics = {key: evaluate_run(run, context.setup.references, embedder=context.embedder,
                                         window=config.window, wide_window=config.wide_window,
                                         late_fraction=config.late_fraction)
                       for key, run in records.items()}
        if context.setup.truth is not None:
            _add_memory_precision(diagnostics, records, context.setup, config.late_fraction)
        return CascadeResult(config, context.setup, records, diagnostics, context.llm_label, context.embedder_name,
                             Path(config.out_dir))


def _add_memory_precision(diagnostics: dict[tuple, Any], records: dict[tuple, CascadeRun], setup: CascadeSetup,
                          late_fraction: float) -> None:
    """With a known truth, each run's memory precision (:func:`~uncertainty_lab.cascade.truth.memory_precision`)
    joins its curves and summaries."""
    from .diagnostics import summarize
    from .truth import memory_precision

    for key, run in records.items():
        curve = memory_precision(run, setup.truth, setup.nodes)
        diagnostics[key].curves["memory_precision"] = curve
        diagnostics[key].summaries["memory_precision"] = summarize(curve, late_fraction=late_fraction)


EXPERIMENT = CascadeExperiment()


def run_experiment(config: CascadeConfig | Mapping[str, Any] | str | os.PathLike | None = None, *,
                   llm: Any = None, embedder: Any = None, setup: CascadeSetup | None = None, save: bool = True,
                   **overrides: Any) -> CascadeResult:
    """Run every selector × k × run of ``config`` (a config, a dict, or a .json / .toml path; ``overrides``
    replace settings), resuming the run files already in ``out_dir/runs``; evaluate them; write the table,
    results and figure when ``save``.

    ``llm``: a backend instance to use instead of ``config.llm`` (e.g. a wrapped one); ``embedder``: an object with
    ``encode(texts)`` instead of ``config.embedder``; ``setup``: a :func:`prepare` result to reuse (it must have
    been prepared from the same data settings).
    """
    return EXPERIMENT.run(config, save=save, resources={"llm": llm, "embedder": embedder, "setup": setup},
                          **overrides)
