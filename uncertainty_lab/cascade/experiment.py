"""The HawkesLLM experiment: memory selectors × memory budgets k × seeded runs on the chronological split of a
news cascade, with the paper's table (mean S_t, trend, late-stage S_t, global vs local drift) and figure.

What :func:`run_experiment` does, in order (HawkesLLM §4; the choices the paper leaves open are named here):

1. **Data and split.** The shipped cascade (or ``dataset``, a JSONL in its schema), sorted by time, split
   chronologically: the first ``n_train`` = 198 events train, the remaining 50 are held out.
2. **Fit, on the training events only** (no leakage). The training window is [0, last training event]; the
   held-out events never enter the likelihood, their times included. The exponential kernel's decay β is
   chosen from ``beta_grid`` (per hour) by likelihood among the stable fits (ρ(G) < 1).
3. **Seed event.** e_0 = the last training event (its time, node and headline), so the simulated events fall
   in the held-out window, where the held-out headlines serve as the alignment references.
4. **Runs.** For every selector, every k and every run r = 0..runs−1, :func:`simulate_cascade` with seed
   ``seed + r`` — streamed to ``out_dir/runs/<selector>__k<k>__run<r>.jsonl`` and resumed from there after an
   interruption (a finished run costs nothing; an interrupted one continues at its next step). Because the
   event schedule draws from generators seeded by (seed, step) and depends only on earlier times and nodes,
   run r has **the same event times and nodes for every selector and every k**: only the memory, and hence
   the prompt and the text, differ — the paper's "same schedule and prompt, only the memory selector changes".
5. **Prompt**: :func:`headline_prompt` by default (``prompt = "default"`` for the package's ``build_prompt``):
   the paper's prompt strings are unknown, and this template is the one a 135M model follows best.
6. **Text cleaning** (``clean``, on by default): small models often answer with an echo of the prompt's memory
   lines (``[weight 0.50] (node, t=… h) …``), a preamble ("The next item for …:") or several lines.
   :func:`clean_headline` keeps the first line that reads like a headline; the model's own text is kept in the
   run file as ``raw_text``. Say ``clean = false`` to study the raw answers.
7. **Diagnostics** with :func:`~uncertainty_lab.cascade.metrics.evaluate_run`: alignment S_t with the
   held-out texts of the same node within ±``window`` h (widened to ±``wide_window`` h), global and local
   drift, per run mean / trend / late-stage mean (the last third of the steps). The embedder is
   all-MiniLM-L6-v2 (``uncertainty_lab.embeddings.Embedder``), a sentence encoder **independent of the
   generator** — the paper embedded with the same Qwen2.5 source that generated the text, a limitation it
   states, since a shared source can inflate self-consistency (circular evaluation).
8. **Table** per selector × k: mean S ± sd over runs, the trend of the run-averaged S_t curve (OLS slope CI)
   with the per-run trend labels, late-stage S ± sd, global and local drift ± sd, how many runs had global >
   local drift, the share of steps where S_t is defined (a reference exists) and the share of texts that copy
   an earlier one verbatim. Written as ``table.md`` and ``results.json``; ``figure.png`` shows the S_t curves
   with 95% bands per selector (late window shaded) and global vs local drift per run.

Configure with :class:`CascadeConfig`, a dict, or a JSON / TOML file (:func:`load_config`); the CLI
``uncertainty-lab cascade run --config FILE`` runs it headless. A TOML example::

    selectors = ["hawkes", "recency", "random"]
    ks = [3, 5, 7]
    runs = 3
    steps = 20
    llm = "ollama:qwen2.5:3b"     # or "embedded" (default), "auto"
    out_dir = "cascade_results"
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import configfile
from ..contracts.memory import CascadeError, Event, NodeSpec
from ..lab import save_outputs
from .loop import CascadeResumeError, CascadeRun, simulate_cascade
from .metrics import RunDiagnostics, curve_band, evaluate_run, interval, trend
from .prompt import build_prompt

__all__ = [
    "DEFAULT_BETA_GRID",
    "DEFAULT_NODE_INSTRUCTIONS",
    "PROMPTS",
    "CascadeConfig",
    "CascadeExperimentResult",
    "CascadeSetup",
    "clean_headline",
    "copy_rate",
    "headline_prompt",
    "load_config",
    "prepare",
    "run_experiment",
    "run_seed",
]

#: The fixed style instruction a_i of each node of the shipped cascade (written for this package; the paper's
#: prompt strings are not known). Short, concrete and different in register, so that a small model can follow them.
DEFAULT_NODE_INSTRUCTIONS: dict[str, str] = {
    "local_tv": ("You write for a local TV newsroom near the launch site. Write one short headline about how the "
                 "mission touches local people: families, schools, traffic, weather, crowds, local shops."),
    "mass_market": ("You write for a mass-market news website. Write one short, punchy headline about the people and "
                    "the drama: the crew, their families, fear, pride, records. Use everyday words."),
    "specialist_science_tech": ("You write for a specialist space science and technology outlet. Write one precise "
                                "headline about the spacecraft, its systems, the trajectory, engines, sensors or "
                                "engineering data."),
    "business_finance": ("You write for a business and markets desk. Write one headline about the money: contractors, "
                         "contracts, costs, insurers, suppliers, shares and budgets."),
    "general_news": ("You write for a general news wire. Write one neutral, factual headline that says who did what "
                     "and when, as a news agency would."),
}

#: Candidate decays β (per hour) for the exponential kernel: influence lasting from ~10 h down to ~12 min.
DEFAULT_BETA_GRID: tuple[float, ...] = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0)

DEFAULT_SELECTORS = ("hawkes", "recency", "random")


# --- the prompt -----------------------------------------------------------------------------------------------


def _readable(name: str) -> str:
    return " ".join("TV" if w.lower() == "tv" else w for w in name.split("_"))


def headline_prompt(event_time: float, node: int, node_spec: NodeSpec, memory_items: Sequence, history: Any,
                    node_specs: Sequence[NodeSpec], *, time_unit: str = "h") -> list[dict[str, str]]:
    """The experiment's default template, written for small models: the node's instruction a_i as the system
    message; the remembered headlines as a quoted list, each with its node and its normalised weight w_{j,t}
    written as a text annotation *after* the text, as a share of influence (0.58 → 58%); then the request naming
    the target node and the event time::

        Recent headlines, with the share of influence each has on your next headline:
        - "Aldmark Heavy Industries raises full-year guidance on Tern Heavy orders" (business finance, 58%)
        Now, at t = 211.8 h, write one new headline for general news.

    With an empty memory only the request remains. Same contract as
    :func:`~uncertainty_lab.cascade.prompt.build_prompt` (deterministic; swappable). Why not that template:
    SmolLM2-135M copies its ``[weight 0.58] (node, t=… h)`` line prefixes and its closing sentence into the
    answer far more often than it writes a headline; with the weight after a quoted text it mostly writes one
    (and the word "weight" itself leaked into its headlines, hence a percentage).
    """
    system = f"{node_spec.instruction} Reply with the headline only: one line, no explanation."
    lines = []
    if memory_items:
        lines.append("Recent headlines, with the share of influence each has on your next headline:")
        for it in memory_items:
            ev = history[it.index]
            name = node_specs[ev.node].name if node_specs else f"node {ev.node}"
            text = " ".join(ev.text.split())
            lines.append(f'- "{text}" ({_readable(name)}, {it.weight:.0%})')
    lines.append(f"Now, at t = {event_time:.1f} {time_unit}, write one new headline for {_readable(node_spec.name)}.")
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n".join(lines)}]


#: the prompt templates a config can name (``prompt = "headline"`` or ``"default"``)
PROMPTS = {"headline": headline_prompt, "default": build_prompt}


# --- text cleaning ------------------------------------------------------------------------------------------

_WEIGHT = re.compile(r"^\[\s*weight\b[^\]\n]*\]?\s*", re.I)
_NODE_TIME = re.compile(r"^\(\s*[\w .&/-]*,\s*t\s*=\s*[-\d.]*\s*(?:h(?:ours?)?)?\s*\)?\s*", re.I)
_LABEL = re.compile(r"^(?:(?:a|the)\s+)?(?:new\s+|next\s+|recent\s+)?(?:headline|item|title|news\s+item)\s*\d*\s*"
                    r"[:\-–—]\s*", re.I)
_BULLET = re.compile(r"^(?:[-*•#>]+\s*|\d+[.)]\s+)")
_PREAMBLE = re.compile(r"^(?:the\s+)?(?:next|new)\s+item\s+for\b|^(?:here\s+is|here's|sure)\b"
                       r"|^(?:(?:a|the)\s+)?(?:recent|new|next)\s+headlines?\b", re.I)


_TRAILING = re.compile(r"\s*\((?:[\w .&/-]*,\s*)?(?:weight\s*\d(?:\.\d+)?|\d{1,3}(?:\.\d+)?\s*%)\)\s*$", re.I)
_QUOTED = re.compile(r'^["“]([^"”]{3,})["”]\s*(?:[(\-–—].*)?$')


def _strip_line(line: str) -> str:
    prev = None
    line = line.strip()
    while line != prev:
        prev = line
        for pattern in (_WEIGHT, _NODE_TIME, _LABEL, _BULLET):
            line = pattern.sub("", line, count=1).strip()
        line = _TRAILING.sub("", line).strip()  # an echoed '(business finance, 58%)' after the text
        quoted = _QUOTED.match(line)  # '"A headline" (node, weight 0.40)': keep the quoted part
        if quoted:
            line = quoted.group(1)
        line = line.strip("*_`").strip()
        if len(line) >= 2 and line[0] in "\"'“‘" and line[-1] in "\"'”’":
            line = line[1:-1].strip()
        elif line[:1] in "\"“" and not any(q in line[1:] for q in "\"”"):  # a quote cut off by max_tokens
            line = line[1:].strip()
        elif line[-1:] in "\"”" and not any(q in line[:-1] for q in "\"“"):
            line = line[:-1].strip()
    return " ".join(line.split())


def _reads_like_text(line: str) -> bool:
    return sum(1 for w in line.split() if any(c.isalpha() for c in w)) >= 2


def clean_headline(text: str) -> str:
    """The first line of ``text`` that reads like a headline, with what small models wrap around one removed:
    an echoed memory annotation (``[weight 0.50] (node, t=216.5 h)``), a label ("Headline:"), a bullet,
    quotes or asterisks, and preamble lines ("The next item for local_tv …:", "Here is …:"). When no line
    qualifies (at least two words with letters), the first line that is not empty once cleaned, else the first
    non-empty line as written; "" for an empty text.

    >>> clean_headline('[weight 0.58] (business_finance, t=210.8 h) Aldmark raises guidance\\n\\nThis')
    'Aldmark raises guidance'
    """
    if not isinstance(text, str):
        raise CascadeError(f"clean_headline needs a string, got {type(text).__name__}")
    lines = [ln for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        if _PREAMBLE.search(ln.strip()) and ln.rstrip().endswith(":"):
            continue
        cleaned = _strip_line(ln)
        if cleaned.endswith(":") and _PREAMBLE.search(cleaned):
            continue
        if _reads_like_text(cleaned):
            return cleaned
    for ln in lines:
        cleaned = _strip_line(ln)
        if cleaned:
            return cleaned
    return " ".join(lines[0].split()) if lines else ""


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w]+", " ", text.lower()).split())


def copy_rate(run: CascadeRun) -> float:
    """The share of generated texts that repeat an earlier text of the run (the seed included) word for word,
    ignoring case and punctuation: how often the model just copies its memory. NaN for a run with no steps."""
    seen = {_norm(run.seed_event.text)}
    copies = 0
    for s in run.steps:
        key = _norm(s.text)
        copies += key in seen
        seen.add(key)
    return copies / len(run.steps) if run.steps else math.nan


# --- configuration --------------------------------------------------------------------------------------------


def _selector_spec(spec: Any) -> dict[str, Any]:
    """A selector spec as ``{"name", "label", "params"}`` from a name or a ``{"name", "label"?, ...params}`` dict."""
    if isinstance(spec, str):
        return {"name": spec, "label": spec, "params": {}}
    if isinstance(spec, Mapping):
        params = dict(spec)
        name = params.pop("name", None)
        if not isinstance(name, str):
            raise CascadeError(f"a selector given as a table needs a 'name', got {dict(spec)!r}")
        label = params.pop("label", None)
        if label is None:
            label = name + ("(" + ",".join(f"{k}={v}" for k, v in sorted(params.items())) + ")" if params else "")
        return {"name": name, "label": str(label), "params": params}
    raise CascadeError(f"selectors must be names or {{'name': ..., 'label': ..., params}} tables, got {spec!r}")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "x"


@dataclass
class CascadeConfig:
    """What :func:`run_experiment` runs. Defaults follow the paper's setup where it states one.

    - ``selectors``: ``memory_selectors`` names, or tables ``{"name", "label"?, ...params}`` (e.g.
      ``{"name": "hawkes", "ranking": "score", "label": "hawkes_score"}``); ``ks``: memory budgets (paper: 3, and
      3, 5, 7 for the sweep); ``runs`` per condition (3), run r seeded ``seed + r``; ``steps`` L per run (20).
    - decoding: ``temperature`` 0.35, ``top_p`` 0.9, ``max_tokens`` 75 (paper); ``llm``: a ``get_llm`` spec
      ("embedded", "auto", "ollama:qwen2.5:3b") or a backend instance; ``prompt``: the template, ``"headline"``
      (:func:`headline_prompt`) or ``"default"`` (the package's :func:`build_prompt`); ``clean``: apply
      :func:`clean_headline`.
    - fit: ``beta_grid`` (per hour), ``penalty`` / ``eta`` (``fit_hawkes``), ``n_train`` (198).
    - data: ``dataset`` (None = the shipped cascade, or a JSONL path in its schema), ``nodes`` (node names in id
      order; default the five categories), ``node_instructions`` ({node: a_i}; missing nodes get
      :data:`DEFAULT_NODE_INSTRUCTIONS`).
    - diagnostics: ``window`` / ``wide_window`` (±12 h, ±24 h; ``wide_window = false`` disables widening),
      ``late_fraction`` (1/3), ``embedder`` (None = all-MiniLM-L6-v2, or a local sentence-transformers folder).
    - per-step uncertainty: ``samples_per_step`` m alternative texts per step at ``sample_temperature``, scored by
      ``metric`` (a ``metrics`` name or ``{"name", ...params}``; default discrete semantic entropy, exact judge).
    - ``horizon``: no event after this time (hours); ``out_dir``; ``overwrite`` (start run files afresh instead of
      resuming); ``progress``; ``figure``.
    """

    selectors: list[Any] = field(default_factory=lambda: list(DEFAULT_SELECTORS))
    ks: list[int] = field(default_factory=lambda: [3])
    runs: int = 3
    steps: int = 20
    seed: int = 0
    temperature: float = 0.35
    top_p: float = 0.9
    max_tokens: int = 75
    llm: Any = "embedded"
    prompt: str = "headline"
    clean: bool = True
    beta_grid: list[float] | None = field(default_factory=lambda: list(DEFAULT_BETA_GRID))
    penalty: str = "none"
    eta: float = 0.0
    n_train: int = 198
    dataset: str | None = None
    nodes: list[str] | None = None
    node_instructions: dict[str, str] = field(default_factory=dict)
    window: float = 12.0
    wide_window: float | None = 24.0
    late_fraction: float = 1 / 3
    embedder: str | None = None
    samples_per_step: int = 0
    metric: Any = "discrete_semantic_entropy"
    sample_temperature: float = 1.0
    horizon: float | None = None
    out_dir: str = "cascade_results"
    overwrite: bool = False
    progress: bool = True
    figure: bool = True

    def __post_init__(self):
        if isinstance(self.selectors, (str, Mapping)):
            self.selectors = [self.selectors]
        if not self.selectors:
            raise CascadeError("selectors is empty; give at least one, e.g. ['hawkes', 'recency']")
        specs = [_selector_spec(s) for s in self.selectors]
        labels = [s["label"] for s in specs]
        if len(set(labels)) != len(labels):
            raise CascadeError(f"selector labels must be unique (they name the run files), got {labels}; "
                               "give tables a distinct 'label'")
        if isinstance(self.ks, int):
            self.ks = [self.ks]
        if not self.ks or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in self.ks):
            raise CascadeError(f"ks must be a list of memory budgets >= 1, e.g. [3] or [3, 5, 7], got {self.ks!r}")
        if len(set(self.ks)) != len(self.ks):
            raise CascadeError(f"ks has repeated values: {self.ks}")
        for name in ("runs", "steps", "max_tokens", "n_train"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise CascadeError(f"{name} must be a positive integer, got {v!r}")
        for name in ("seed", "samples_per_step"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise CascadeError(f"{name} must be an integer >= 0, got {v!r}")
        if self.wide_window is False:
            self.wide_window = None
        if self.beta_grid is not None:
            if isinstance(self.beta_grid, (int, float)):
                self.beta_grid = [self.beta_grid]
            if not self.beta_grid or any(not isinstance(b, (int, float)) or not b > 0 for b in self.beta_grid):
                raise CascadeError(f"beta_grid must be a list of decays > 0 (per hour), got {self.beta_grid!r}")
        if not isinstance(self.node_instructions, Mapping):
            raise CascadeError(f"node_instructions must be a table {{node name: instruction}}, got {self.node_instructions!r}")
        if self.prompt not in PROMPTS:
            raise CascadeError(f"prompt must be one of {list(PROMPTS)}, got {self.prompt!r}")
        if not 0 < float(self.late_fraction) <= 1:
            raise CascadeError(f"late_fraction must be in (0, 1], got {self.late_fraction!r}")

    @property
    def prompt_fn(self):
        """The prompt template the runs use."""
        return PROMPTS[self.prompt]

    @property
    def selector_specs(self) -> list[dict[str, Any]]:
        """The selectors as ``{"name", "label", "params"}``."""
        return [_selector_spec(s) for s in self.selectors]

    @classmethod
    def from_mapping(cls, d: Mapping[str, Any]) -> CascadeConfig:
        """From a dict (a parsed config file); an unknown key is an error naming the closest setting."""
        return configfile.build(cls, d, what="cascade", error=CascadeError)

    def to_dict(self) -> dict[str, Any]:
        return configfile.as_dict(self, backend="llm")

    def fingerprint(self) -> str:
        """A short hash of everything that changes the runs (not ``out_dir``, ``overwrite``, ``progress``,
        ``figure``): a folder name under which a changed configuration never collides with an old one."""
        d = self.to_dict()
        for key in ("out_dir", "overwrite", "progress", "figure"):
            d.pop(key, None)
        blob = json.dumps(d, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:10]


def load_config(path: str | os.PathLike) -> CascadeConfig:
    """A :class:`CascadeConfig` from a ``.json`` or ``.toml`` file."""
    return configfile.load(path, CascadeConfig.from_mapping, error=CascadeError)


def run_seed(seed: int, run: int) -> int:
    """The seed of run ``run`` (0-based): ``seed + run``. Every selector and k uses the same seed for run r,
    so they share its event schedule (times and nodes)."""
    return int(seed) + int(run)


# --- setup: data, split, fit -----------------------------------------------------------------------------------


@dataclass
class CascadeSetup:
    """Everything the runs share: the events, the chronological split, the training stream and the Hawkes fit
    on it, the node specs (name, a_i), the seed event e_0 (the last training event) and the held-out
    references (Events with node ids)."""

    events: list[Any]
    train: list[Any]
    test: list[Any]
    nodes: tuple[str, ...]
    node_specs: tuple[NodeSpec, ...]
    train_stream: Any
    fit: Any
    seed_event: Event
    references: list[Event]

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
        lines = [
            f"{len(self.events)} events: train {len(self.train)} (t ≤ {self.train[-1].time_h:.1f} h), "
            f"held out {len(self.test)} (t = {self.test[0].time_h:.1f} … {self.test[-1].time_h:.1f} h)",
            "per node (train / held out): " + ", ".join(f"{n} {counts_tr.get(n, 0)}/{counts_te.get(n, 0)}"
                                                        for n in self.nodes),
            f"Hawkes fit on the {self.train_stream.n_events} training events, window [{self.train_stream.start_time:g}, "
            f"{self.train_stream.end_time:.1f}] h: β = {m.beta:g} /h, ρ(G) = {m.spectral_radius():.3f}",
            f"seed event e_0: t = {self.seed_event.time:.1f} h, {self.nodes[self.seed_event.node]}: "
            f"{self.seed_event.text}",
        ]
        return "\n".join(lines)


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
    the node specs, the seed event and the held-out references (see the module docstring)."""
    from ..datasets.news import NODES, chronological_split, load_news_cascade, news_event_stream
    from ..hawkes import fit_hawkes

    if config is None:
        config = CascadeConfig()
    elif isinstance(config, Mapping):
        config = CascadeConfig.from_mapping(config)
    events = load_news_cascade(config.dataset)
    train, test = chronological_split(events, config.n_train)
    nodes = tuple(config.nodes) if config.nodes else NODES
    specs = node_specs_for(nodes, config.node_instructions)
    # the training window ends at the last training event: nothing about the held-out events (not even the
    # time of the first one) enters the likelihood
    train_stream = news_event_stream(train, nodes)
    fit = fit_hawkes(train_stream, beta_grid=config.beta_grid, penalty=config.penalty, eta=config.eta)
    index = {name: i for i, name in enumerate(nodes)}
    last = train[-1]
    seed_event = Event(last.time_h, index[last.node], last.headline)
    references = [Event(e.time_h, index[e.node], e.headline) for e in test]
    return CascadeSetup(events, train, test, nodes, specs, train_stream, fit, seed_event, references)


# --- the result ----------------------------------------------------------------------------------------------

RunKey = tuple[str, int, int]  # (selector label, k, run index)


def _clean_json(x: Any) -> Any:
    if isinstance(x, float):
        return None if not math.isfinite(x) else x
    if isinstance(x, (np.floating, np.integer, np.bool_)):
        return _clean_json(x.item())
    if isinstance(x, np.ndarray):
        return [_clean_json(v) for v in x.tolist()]
    if isinstance(x, dict):
        return {str(k): _clean_json(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean_json(v) for v in x]
    return x


def _pm(mean: float, sd: float) -> str:
    if not math.isfinite(mean):
        return "–"
    return f"{mean:.3f}" + (f" ± {sd:.3f}" if math.isfinite(sd) else "")


@dataclass
class CascadeExperimentResult:
    """The runs (keyed ``(selector label, k, run)``), their diagnostics, and the table and figure built from them."""

    config: CascadeConfig
    setup: CascadeSetup
    runs: dict[RunKey, CascadeRun]
    diagnostics: dict[RunKey, RunDiagnostics]
    llm_label: str
    embedder_name: str
    out_dir: Path | None = None
    files: dict[str, Path] = field(default_factory=dict)

    @property
    def conditions(self) -> list[tuple[str, int]]:
        """(selector label, k) in the order run."""
        return list(dict.fromkeys((s, k) for s, k, _ in self.runs))

    def keys(self, selector: str, k: int) -> list[RunKey]:
        return [key for key in self.runs if key[0] == selector and key[1] == k]

    def curves(self, name: str, selector: str, k: int) -> list[np.ndarray]:
        """The per-step curves ``name`` (alignment, global_drift, local_drift, uncertainty) of a condition's runs."""
        out = []
        for key in self.keys(selector, k):
            if name == "uncertainty":
                out.append(self.runs[key].uncertainty)
            else:
                out.append(self.diagnostics[key].curves[name].values)
        return out

    # -- rows -------------------------------------------------------------------------------------------------
    def run_rows(self) -> list[dict[str, Any]]:
        """One row per run: its seed, file, length and summaries."""
        rows = []
        for key, run in self.runs.items():
            d = self.diagnostics[key]
            s = d.summaries
            a = s.get("alignment")
            rows.append({
                "selector": key[0], "k": key[1], "run": key[2], "seed": run.config["seed"],
                "steps": len(run), "stop_reason": run.stop_reason,
                "mean_S": a.mean if a else math.nan, "late_S": a.late_mean if a else math.nan,
                "trend": a.trend.label if a else "undetermined", "slope": a.trend.slope if a else math.nan,
                "slope_ci": [a.trend.ci_low, a.trend.ci_high] if a else [math.nan, math.nan],
                "S_defined": (a.n / len(run)) if a and len(run) else math.nan,
                "global_drift": s["global_drift"].mean, "local_drift": s["local_drift"].mean,
                "global_late": s["global_drift"].late_mean, "local_late": s["local_drift"].late_mean,
                "copies": copy_rate(run),
                "uncertainty": float(np.nanmean(run.uncertainty)) if np.isfinite(run.uncertainty).any() else math.nan,
                "cleaned": sum(1 for st in run.steps if st.raw_text is not None),
                "path": str(run.path) if run.path else None,
            })
        return rows

    def rows(self) -> list[dict[str, Any]]:
        """The paper's table, one row per (selector, k): over runs, mean ± sd of mean S_t, late-stage S_t, global
        and local drift; the trend of the run-averaged S_t curve and the per-run trend labels; how many runs had
        global > local drift; the share of steps with a defined S_t; the copy rate; the mean per-step
        uncertainty when sampled."""
        per_run = self.run_rows()
        out = []
        for sel, k in self.conditions:
            rr = [r for r in per_run if r["selector"] == sel and r["k"] == k]
            mean_s = interval([r["mean_S"] for r in rr])
            late_s = interval([r["late_S"] for r in rr])
            g = interval([r["global_drift"] for r in rr])
            loc = interval([r["local_drift"] for r in rr])
            curves = self.curves("alignment", sel, k)
            avg = curve_band(curves)[0] if curves else np.zeros(0)
            tr = trend(avg)
            defined = [r["S_defined"] for r in rr if math.isfinite(r["S_defined"])]
            unc = interval([r["uncertainty"] for r in rr])
            out.append({
                "selector": sel, "k": k, "runs": len(rr), "steps": max((r["steps"] for r in rr), default=0),
                "mean_S": mean_s.mean, "mean_S_sd": mean_s.sd, "mean_S_ci": [mean_s.ci_low, mean_s.ci_high],
                "trend": tr.label, "trend_slope": tr.slope, "trend_slope_ci": [tr.ci_low, tr.ci_high],
                "run_trends": dict(Counter(r["trend"] for r in rr)),
                "late_S": late_s.mean, "late_S_sd": late_s.sd, "late_S_ci": [late_s.ci_low, late_s.ci_high],
                "global_drift": g.mean, "global_drift_sd": g.sd, "local_drift": loc.mean, "local_drift_sd": loc.sd,
                "global_exceeds_local": sum(1 for r in rr if r["global_drift"] > r["local_drift"]),
                "S_defined": float(np.mean(defined)) if defined else math.nan,
                "copies": float(np.nanmean([r["copies"] for r in rr])) if rr else math.nan,
                "uncertainty": unc.mean, "uncertainty_sd": unc.sd,
            })
        return out

    def table(self) -> str:
        """The table as markdown (what ``table.md`` holds under its heading)."""
        sampled = self.config.samples_per_step > 0
        head = ["selector", "k", "runs", "mean S ± sd", "trend (mean curve; runs)", "late S ± sd",
                "global drift ± sd", "local drift ± sd", "global > local", "S defined", "copies"]
        if sampled:
            head.append("uncertainty ± sd")
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for r in self.rows():
            runs_tr = ", ".join(f"{lab} {n}" for lab, n in sorted(r["run_trends"].items()))
            cells = [r["selector"], str(r["k"]), str(r["runs"]), _pm(r["mean_S"], r["mean_S_sd"]),
                     f"{r['trend']} ({runs_tr})", _pm(r["late_S"], r["late_S_sd"]),
                     _pm(r["global_drift"], r["global_drift_sd"]), _pm(r["local_drift"], r["local_drift_sd"]),
                     f"{r['global_exceeds_local']}/{r['runs']}",
                     "–" if not math.isfinite(r["S_defined"]) else f"{r['S_defined']:.0%}",
                     "–" if not math.isfinite(r["copies"]) else f"{r['copies']:.0%}"]
            if sampled:
                cells.append(_pm(r["uncertainty"], r["uncertainty_sd"]))
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines)

    def report(self) -> str:
        """The table with what it is and how to read it (markdown)."""
        c = self.config
        late = f"the last {c.late_fraction:.0%} of the steps" if c.late_fraction != 1 / 3 else "the last third of the steps"
        m = self.setup.model
        parts = [
            "## HawkesLLM cascade experiment", "",
            f"Generator: {self.llm_label}; temperature {c.temperature:g}, top-p {c.top_p:g}, at most {c.max_tokens} "
            f"new tokens{'; texts cleaned to one headline (clean_headline)' if c.clean else ''}. "
            f"{c.runs} run(s) per condition, {c.steps} steps each, run r seeded {c.seed} + r (shared by every "
            "selector and k: same event schedule, only the memory differs).",
            f"Hawkes model: exponential kernel, β = {m.beta:g} /h chosen from {list(c.beta_grid or [])} by likelihood "
            f"among stable fits, ρ(G) = {m.spectral_radius():.3f}; fitted on the {self.setup.train_stream.n_events} "
            f"training events only (t ≤ {self.setup.train_stream.end_time:.1f} h). Seed event: the last training event.",
            f"Evaluation embedder: {self.embedder_name} — a sentence encoder independent of the generator (the "
            "paper's embedder shared the generator's source, which can inflate alignment). References: the "
            f"{len(self.setup.references)} held-out headlines of the same node within ±{c.window:g} h"
            + (f" (±{c.wide_window:g} h when none)" if c.wide_window else "") + ".",
            "", self.table(), "",
            f"mean S: the run's mean alignment S_t over the steps where it is defined; late S: its mean over {late}; "
            "± sd over runs. trend: OLS slope of the run-averaged S_t on the step, labelled by its 95% CI "
            "(increasing / decreasing / flat when it contains 0), with the per-run labels in brackets. "
            "global > local: runs whose mean global drift exceeds their mean local drift. S defined: share of "
            "steps with a reference text in the window. copies: share of texts that repeat an earlier one word "
            "for word.",
            "",
            "For scale, the paper (Qwen2.5 via Ollama, GDELT Artemis II, k = 3): HawkesLLM 0.636 / increasing / "
            "0.682, chronological 0.581 / decreasing / 0.541, random 0.621 / decreasing / 0.594 (mean / trend / "
            "late); drift global 0.450 ± 0.019 vs local 0.185 ± 0.072. With few runs the ± sd is wide: read "
            "differences between selectors against it.",
        ]
        return "\n".join(parts)

    # -- figure -----------------------------------------------------------------------------------------------
    def figure(self):
        """S_t against the step per selector (mean of runs with a 95% t-band, thin lines per run, the late
        window shaded), one panel per k; global vs local drift per run; and the per-step uncertainty when sampled."""
        from matplotlib.figure import Figure
        from matplotlib.ticker import MaxNLocator

        ks = list(dict.fromkeys(k for _, k in self.conditions))
        selectors = list(dict.fromkeys(s for s, _ in self.conditions))
        sampled = self.config.samples_per_step > 0
        n_panels = len(ks) + 1 + (1 if sampled else 0)
        fig = Figure(figsize=(4.6 * n_panels, 3.9), layout="constrained")
        axes = fig.subplots(1, n_panels, squeeze=False)[0]
        colours = {s: f"C{i % 10}" for i, s in enumerate(selectors)}
        L = self.config.steps
        late_start = L - max(1, math.ceil(self.config.late_fraction * L)) + 1

        def band(ax, name, sel, k, label):
            curves = self.curves(name, sel, k)
            if not curves:
                return
            mean, lo, hi = curve_band(curves)
            steps = np.arange(1, mean.size + 1)
            for c in curves:
                ax.plot(np.arange(1, c.size + 1), c, color=colours[sel], lw=0.6, alpha=0.35)
            ax.plot(steps, mean, color=colours[sel], lw=2, marker="o", ms=3, label=label)
            if np.isfinite(lo).any():
                ax.fill_between(steps, lo, hi, color=colours[sel], alpha=0.15)

        for ax, k in zip(axes[: len(ks)], ks, strict=True):
            ax.axvspan(late_start - 0.5, L + 0.5, color="0.9", zorder=0, label="late window")
            for sel in selectors:
                if (sel, k) in self.conditions:
                    band(ax, "alignment", sel, k, sel)
            ax.set_title(f"alignment S_t, k = {k} (mean of {self.config.runs} run(s), 95% band)", fontsize="medium")
            ax.set_xlabel("step t")
            ax.set_ylabel("S_t = cos(text, local references)")
            ax.set_xlim(0.5, L + 0.5)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            values = np.concatenate([c for sel in selectors for c in self.curves("alignment", sel, k)] or [np.zeros(0)])
            values = values[np.isfinite(values)]
            if values.size:  # the runs set the scale: a t-band from 2 runs can be many times wider
                lo_v, hi_v = float(values.min()), float(values.max())
                pad = 0.25 * (hi_v - lo_v or 0.1)
                ax.set_ylim(max(-1.0, lo_v - pad), min(1.0, hi_v + pad))
            ax.grid(alpha=0.3)
            ax.legend(fontsize="small")

        ax = axes[len(ks)]
        markers = "osD^v<>p*h"
        rows = self.run_rows()
        vals = [v for r in rows for v in (r["global_drift"], r["local_drift"]) if math.isfinite(v)]
        lo, hi = (min(vals), max(vals)) if vals else (0.0, 1.0)
        pad = 0.05 * (hi - lo or 1.0)
        ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], color="0.5", lw=1, ls="--", label="global = local")
        for r in rows:
            first = r["run"] == 0
            ax.scatter(r["local_drift"], r["global_drift"], color=colours[r["selector"]],
                       marker=markers[ks.index(r["k"]) % len(markers)], s=36,
                       label=f"{r['selector']}, k = {r['k']}" if first else None)
        ax.set_xlabel("mean local drift (from the memory centre)")
        ax.set_ylabel("mean global drift (from the seed)")
        ax.set_title("drift per run (above the line: global > local)", fontsize="medium")
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")

        if sampled:
            ax = axes[-1]
            for sel in selectors:
                for k in ks:
                    if (sel, k) in self.conditions:
                        band(ax, "uncertainty", sel, k, f"{sel}, k = {k}")
            ax.set_title(f"per-step uncertainty ({self._metric_name()}, m = {self.config.samples_per_step})",
                         fontsize="medium")
            ax.set_xlabel("step t")
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.set_ylabel("uncertainty of the alternative samples")
            ax.grid(alpha=0.3)
            ax.legend(fontsize="small")
        return fig

    def _metric_name(self) -> str:
        m = self.config.metric
        return m if isinstance(m, str) else (m.get("name", "metric") if isinstance(m, Mapping) else getattr(m, "name", "metric"))

    # -- files ------------------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        s = self.setup
        fit = {
            "beta": s.model.beta, "mu": s.model.mu, "alpha_source_target": s.model.alpha,
            "rho": s.model.spectral_radius(), "log_likelihood": s.fit.log_likelihood,
            "n_events": s.fit.n_events, "train_start": s.train_stream.start_time, "train_end": s.train_stream.end_time,
            "candidates": s.fit.table.to_dicts(),
        }
        curves = {}
        for key in self.runs:
            d = self.diagnostics[key]
            curves[f"{key[0]}/k{key[1]}/run{key[2]}"] = {name: c.values for name, c in d.curves.items()} | {
                "uncertainty": self.runs[key].uncertainty}
        return _clean_json({
            "config": self.config.to_dict(), "llm": self.llm_label, "embedder": self.embedder_name,
            "nodes": list(s.nodes), "seed_event": s.seed_event.to_record(), "fit": fit,
            "table": self.rows(), "runs": self.run_rows(), "curves": curves,
        })

    def save(self, out_dir: str | os.PathLike | None = None, *, figure: bool = True) -> dict[str, Path]:
        """Write ``table.md`` (the report), ``results.json`` and (``figure``) ``figure.png`` to ``out_dir``."""
        return save_outputs(self, out_dir, report="table", figure=figure, dpi=110)


# --- the runner ----------------------------------------------------------------------------------------------


def _make_llm(spec: Any) -> Any:
    if not isinstance(spec, str):
        if not callable(getattr(spec, "complete", None)):
            raise CascadeError(f"llm must be a get_llm spec string or a backend, got {spec!r}")
        return spec
    from ..llm import get_llm

    llm = get_llm(spec, quiet=True)
    check = getattr(llm, "check", None)
    if spec.startswith("ollama") and callable(check):
        check()  # a clear error now (server down, model not pulled), before any run starts
    return llm


def _create(kind: str, name: str, params: Mapping[str, Any], what: str) -> Any:
    """A plugin instance; an unknown name or a bad parameter becomes a CascadeError naming the setting."""
    from .. import registry

    try:
        return registry.create(kind, name, **params)
    except (registry.RegistryError, TypeError, ValueError) as exc:
        raise CascadeError(f"{what}: {exc}") from exc


def _make_metric(spec: Any) -> Any:
    if isinstance(spec, str):
        return _create("metrics", spec, {}, "metric")
    if isinstance(spec, Mapping):
        params = dict(spec)
        name = params.pop("name", None)
        if not isinstance(name, str):
            raise CascadeError(f"metric given as a table needs a 'name', got {dict(spec)!r}")
        return _create("metrics", name, params, "metric")
    return spec


def _make_embedder(spec: Any) -> Any:
    from ..embeddings import Embedder

    if spec is None:
        return Embedder()
    if isinstance(spec, (str, os.PathLike)):
        return Embedder(spec)
    return spec


def run_experiment(config: CascadeConfig | Mapping[str, Any] | str | os.PathLike | None = None, *,
                   llm: Any = None, embedder: Any = None, setup: CascadeSetup | None = None, save: bool = True,
                   **overrides: Any) -> CascadeExperimentResult:
    """Run every selector × k × run of ``config`` (a config, a dict, or a .json / .toml path; ``overrides``
    replace settings), resuming the run files already in ``out_dir/runs``; evaluate them; write the table,
    results and figure when ``save``.

    ``llm``: a backend instance to use instead of ``config.llm`` (e.g. a wrapped one); ``embedder``: an object with
    ``encode(texts)`` instead of ``config.embedder``; ``setup``: a :func:`prepare` result to reuse (it must have
    been prepared from the same data settings).
    """
    from tqdm.auto import tqdm

    if config is None:
        config = CascadeConfig()
    elif isinstance(config, (str, os.PathLike)):
        config = load_config(config)
    elif isinstance(config, Mapping):
        config = CascadeConfig.from_mapping(config)
    if overrides:
        CascadeConfig.from_mapping(overrides)  # names an unknown setting clearly
        config = dataclasses.replace(config, **overrides)
    if setup is None:
        setup = prepare(config)
    emb = _make_embedder(embedder if embedder is not None else config.embedder)
    emb_name = getattr(emb, "name", type(emb).__name__)
    metric = _make_metric(config.metric) if config.samples_per_step else None
    selectors = []
    for spec in config.selector_specs:
        sel = _create("memory_selectors", spec["name"], spec["params"], f"selector {spec['label']!r}")
        if spec["name"] == "semantic" and getattr(sel, "embedder", "x") is None:
            sel.embedder = emb
        selectors.append((spec["label"], sel))
    backend = _make_llm(llm if llm is not None else config.llm)  # after the cheap checks: it may load a model
    label = getattr(backend, "label", None) or type(backend).__name__
    postprocess = clean_headline if config.clean else None
    out = Path(config.out_dir)
    runs: dict[RunKey, CascadeRun] = {}
    keys = [(lab, k, r) for lab, _ in selectors for k in config.ks for r in range(config.runs)]
    by_label = dict(selectors)
    bar = tqdm(keys, desc="cascade runs", disable=not config.progress)
    try:
        for lab, k, r in bar:
            bar.set_postfix_str(f"{lab}, k={k}, run {r}")
            path = out / "runs" / f"{_slug(lab)}__k{k}__run{r}.jsonl"
            try:
                runs[(lab, k, r)] = simulate_cascade(
                    setup.seed_event, setup.model, by_label[lab], backend, steps=config.steps, k=k,
                    seed=run_seed(config.seed, r), node_specs=setup.node_specs, prompt_fn=config.prompt_fn,
                    temperature=config.temperature,
                    top_p=config.top_p, max_tokens=config.max_tokens, out=path, resume=not config.overwrite,
                    samples_per_step=config.samples_per_step, metric=metric, horizon=config.horizon,
                    progress=config.progress, sample_temperature=config.sample_temperature, postprocess=postprocess)
            except CascadeResumeError as exc:
                raise CascadeResumeError(f"{exc}. In an experiment: choose another out_dir (e.g. one named by "
                                         "config.fingerprint()), or set overwrite = true to start afresh") from None
    finally:
        bar.close()
    diagnostics = {key: evaluate_run(run, setup.references, embedder=emb, window=config.window,
                                     wide_window=config.wide_window, late_fraction=config.late_fraction)
                   for key, run in runs.items()}
    result = CascadeExperimentResult(config, setup, runs, diagnostics, label, emb_name, out)
    if save:
        result.save(out, figure=config.figure)
    return result
