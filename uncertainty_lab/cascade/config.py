"""The cascade experiment's settings: :class:`CascadeConfig`, read from a dict or a JSON / TOML file
(:func:`load_config`; ``uncertainty-lab cascade run --config FILE``). Defaults follow the paper where it states
one (HawkesLLM §4: k = 3, temperature 0.35, top-p 0.9, at most 75 new tokens, 198 training events). A TOML
example::

    selectors = ["hawkes", "recency", "random"]
    ks = [3, 5, 7]
    runs = 3
    steps = 20
    llm = "ollama:qwen2.5:3b"     # or "embedded" (default), "auto"
    out_dir = "cascade_results"
    # the data (default: the shipped cascade); GDELT files you downloaded, mapped to the five nodes:
    data = {loader = "gdelt", path = "20310902163000.export.CSV", format = "events", gkg = "20310902163000.gkg.csv",
            domain_to_node = {"reuters.com" = "general_news", "msn.com" = "mass_market"}}
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ..contracts.memory import CascadeError
from ..datasets.source import data_spec, deprecated_data
from ..lab import LabConfig, check_caps, setting
from .prompt import PROMPTS

__all__ = ["DEFAULT_BETA_GRID", "DEFAULT_NODE_INSTRUCTIONS", "DEFAULT_SELECTORS", "CascadeConfig", "load_config",
           "selector_spec"]

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

DEFAULT_SELECTORS: tuple[str, ...] = ("hawkes", "recency", "random")


def selector_spec(spec: Any) -> dict[str, Any]:
    """A selector setting as ``{"name", "label", "params"}``, from a name or a ``{"name", "label"?, ...params}``
    table; the label (default: the name and its parameters) names the selector's rows and run files."""
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


@dataclass
class CascadeConfig(LabConfig):
    """What the cascade experiment runs: every selector × k × run (see :mod:`uncertainty_lab.cascade.experiment`).
    ``llm``, ``seed``, ``out_dir``, ``overwrite``, ``progress`` and ``figure`` are the settings every lab shares."""

    what: ClassVar[str] = "cascade"
    error: ClassVar[type[Exception]] = CascadeError

    selectors: list[Any] = setting(list(DEFAULT_SELECTORS), "memory_selectors names, or tables {name, label?, "
                                   "...params} such as {name = 'hawkes', ranking = 'score', label = 'hawkes_score'}")
    ks: list[int] = setting([3], "memory budgets k to compare (the paper: 3, and 3, 5, 7 for its sweep)")
    runs: int = setting(3, "runs per selector and k; run r is seeded seed + r, the same for every selector and k")
    steps: int = setting(20, "generation steps L per run")
    temperature: float = setting(0.35, "decoding temperature of the generated texts (the paper: 0.35)")
    top_p: float = setting(0.9, "nucleus sampling top-p (the paper: 0.9)")
    max_tokens: int = setting(75, "the most new tokens per text (the paper: 75)")
    prompt: str = setting("headline", "the prompt template: 'headline' (headline_prompt) or 'default' (build_prompt)")
    clean: bool = setting(True, "keep the first line that reads like a headline (clean_headline); raw_text keeps "
                                "the model's own")
    beta_grid: list[float] | None = setting(list(DEFAULT_BETA_GRID), "candidate decays β of the exponential kernel "
                                            "(per hour), chosen by likelihood among stable fits")
    penalty: str = setting("none", "fit_hawkes penalty on α ('none', 'l1', 'l2')")
    eta: float | str = setting(0.0, "fit_hawkes penalty strength η >= 0, or 'bic' with penalty 'l1': the η of least "
                                    "BIC on the L1 path, chosen on the training events alone")
    n_train: int = setting(198, "events of the chronological split that train the fit; the rest are held out")
    data: Any = setting({"loader": "shipped_news"}, "the events: {loader, path?, ...options} with loader "
                        "'shipped_news' (path: a JSONL in its schema) or 'gdelt' (path, domain_to_node, format, "
                        "gkg, ties, bin_hours, ...); limit, sample, seed as every loader takes them")
    dataset: str | None = setting(None, "deprecated: write data = {loader = 'shipped_news', path = ...}")
    nodes: list[str] | None = setting(None, "node names in id order; None: the five categories of the shipped data "
                                            "(or, when the data has other nodes, its node names sorted)")
    node_instructions: dict[str, str] = setting({}, "{node: instruction a_i}; nodes left out get "
                                                    "DEFAULT_NODE_INSTRUCTIONS")
    window: float = setting(12.0, "±hours around τ_t in which held-out texts of the same node are references")
    wide_window: float | None = setting(24.0, "±hours the window widens to when it holds no reference; "
                                              "false: never widen")
    late_fraction: float = setting(1 / 3, "share of the last steps that make the late-stage mean")
    embedder: str | None = setting(None, "evaluation embedder: None (all-MiniLM-L6-v2) or a local "
                                         "sentence-transformers folder")
    samples_per_step: int = setting(0, "alternative texts m per step scored by metric (0: none)")
    metric: Any = setting("discrete_semantic_entropy", "the metrics plugin that scores the alternative texts "
                                                       "(a name or {name, ...params})")
    sample_temperature: float = setting(1.0, "temperature of the alternative texts")
    horizon: float | None = setting(None, "no event after this time (hours); None: no horizon")
    out_dir: str = setting("cascade_results", "folder for runs/*.jsonl, table.md, results.json and figure.png")

    def __post_init__(self) -> None:
        self.selectors = _checked_selectors(self.selectors)
        self.ks = _checked_ks(self.ks)
        _check_counts(self)
        if self.wide_window is False:
            self.wide_window = None
        self.beta_grid = _checked_beta_grid(self.beta_grid)
        _check_penalty(self.penalty, self.eta)
        _check_text_settings(self)
        if self.dataset is not None:
            self.data = deprecated_data(self.data, {"loader": "shipped_news", "path": self.dataset}, old="dataset",
                                        what=self.what, kind="news", error=CascadeError)
            self.dataset = None
        self.data = data_spec(self.data, kind="news", error=CascadeError)

    @property
    def prompt_fn(self) -> Callable:
        """The prompt template the runs use."""
        return PROMPTS[self.prompt]

    @property
    def selector_specs(self) -> list[dict[str, Any]]:
        """The selectors as ``{"name", "label", "params"}`` (:func:`selector_spec`)."""
        return [selector_spec(s) for s in self.selectors]


def _checked_selectors(selectors: Any) -> list[Any]:
    if isinstance(selectors, (str, Mapping)):
        selectors = [selectors]
    if not selectors:
        raise CascadeError("selectors is empty; give at least one, e.g. ['hawkes', 'recency']")
    labels = [selector_spec(s)["label"] for s in selectors]
    if len(set(labels)) != len(labels):
        raise CascadeError(f"selector labels must be unique (they name the run files), got {labels}; "
                           "give tables a distinct 'label'")
    return selectors


def _checked_ks(ks: Any) -> list[int]:
    if isinstance(ks, int):
        ks = [ks]
    if not ks or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in ks):
        raise CascadeError(f"ks must be a list of memory budgets >= 1, e.g. [3] or [3, 5, 7], got {ks!r}")
    if len(set(ks)) != len(ks):
        raise CascadeError(f"ks has repeated values: {ks}")
    return ks


def _check_counts(config: CascadeConfig) -> None:
    """runs, steps, max_tokens and n_train are positive integers; seed and samples_per_step non-negative ones."""
    for name, least in (("runs", 1), ("steps", 1), ("max_tokens", 1), ("n_train", 1), ("seed", 0),
                        ("samples_per_step", 0)):
        v = getattr(config, name)
        if isinstance(v, bool) or not isinstance(v, int) or v < least:
            what = "a positive integer" if least else "an integer >= 0"
            raise CascadeError(f"{name} must be {what}, got {v!r}")
    check_caps(config, ("runs", "steps", "max_tokens", "samples_per_step"), CascadeError)


def _checked_beta_grid(grid: Any) -> list[float] | None:
    if grid is None:
        return None
    if isinstance(grid, (int, float)):
        grid = [grid]
    if not grid or any(not isinstance(b, (int, float)) or not b > 0 for b in grid):
        raise CascadeError(f"beta_grid must be a list of decays > 0 (per hour), got {grid!r}")
    return grid


def _check_penalty(penalty: Any, eta: Any) -> None:
    """penalty names one of fit_hawkes's; eta is a number >= 0, or 'bic' with penalty 'l1' (read before any data)."""
    from ..hawkes.fit import PENALTIES
    from ..hawkes.l1_path import CRITERIA

    if penalty not in PENALTIES:
        raise CascadeError(f"penalty must be one of {list(PENALTIES)}, got {penalty!r}")
    if isinstance(eta, str):
        if eta not in CRITERIA or penalty != "l1":
            raise CascadeError(f"eta = {eta!r}: a named eta must be one of {list(CRITERIA)} and needs penalty = "
                               f"'l1' (got penalty = {penalty!r}); or give a number >= 0")
    elif isinstance(eta, bool) or not isinstance(eta, (int, float)) or not eta >= 0:
        raise CascadeError(f"eta must be a number >= 0 or 'bic', got {eta!r}")
    elif penalty == "none" and eta != 0:
        raise CascadeError(f"eta = {eta} has no effect with penalty = 'none'; set penalty = 'l1' or 'l2'")


def _check_text_settings(config: CascadeConfig) -> None:
    """node_instructions is a table, prompt names a template, late_fraction lies in (0, 1]."""
    if not isinstance(config.node_instructions, Mapping):
        raise CascadeError(f"node_instructions must be a table {{node name: instruction}}, got "
                           f"{config.node_instructions!r}")
    if config.prompt not in PROMPTS:
        raise CascadeError(f"prompt must be one of {list(PROMPTS)}, got {config.prompt!r}")
    if not 0 < float(config.late_fraction) <= 1:
        raise CascadeError(f"late_fraction must be in (0, 1], got {config.late_fraction!r}")


def load_config(path: str | os.PathLike) -> CascadeConfig:
    """A :class:`CascadeConfig` from a ``.json`` or ``.toml`` file."""
    return CascadeConfig.load(path)
