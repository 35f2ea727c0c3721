"""The orchestration experiment's settings (:class:`OrchestrationConfig`) and the questions they select.

Items: ``data`` names a loader and its file (default: the shipped QA set), then ``categories``, ``per_category``,
``ids``, ``limit`` filter it (:func:`select_items`); models: ``llm`` and optionally ``ollama_model``; sampling:
``n_samples``, ``temperature``, ``max_tokens``; policies: ``policies`` plus overrides applied to every gated one
(:meth:`OrchestrationConfig.policy_objects`) or ``calibrate`` (thresholds chosen on a dev split, :mod:`.calibration`);
scoring: ``judge``, ``metrics``, ``extra_metrics``, ``grading``. Read from a dict or a JSON / TOML file
(:func:`load_config`); the old name ``backend`` of ``llm`` still works, with a FutureWarning.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from dataclasses import InitVar, dataclass
from typing import Any, ClassVar

from ..lab import LabConfig, check_caps, setting
from .calibration import CalibrationSpec
from .policy import Policy, get_policy

__all__ = ["DATA_LOADERS", "DEFAULT_POLICIES", "ExperimentConfig", "OrchestrationConfig", "describe_data",
           "load_config", "load_data", "select_items"]

DEFAULT_POLICIES = ("none", "entropy_only", "density_only", "both")
#: The loaders (:data:`uncertainty_lab.datasets.LOADERS`) whose items are short-answer questions with gold answers
#: (HotpotQA and MuSiQue closed book: :mod:`uncertainty_lab.datasets.closed_book`).
DATA_LOADERS = ("truthfulqa", "strategyqa", "shipped_qa", "gsm8k", "hotpotqa", "musique", "world")


@dataclass
class OrchestrationConfig(LabConfig):
    """What to run: the policies, on which questions, with which model(s), metrics and grading (each setting's
    ``help`` says what it does; ``uncertainty-lab orchestrate run --help`` lists them)."""

    what: ClassVar[str] = "orchestration"
    renamed: ClassVar[dict[str, str]] = {"backend": "llm"}
    run_only: ClassVar[tuple[str, ...]] = (*LabConfig.run_only, "questions_per_unit")

    out_dir: str = setting("orchestration_results", "folder for the run files (runs/), summary.md, results.json "
                                                    "and figure.png")
    policies: list[Any] = setting(list(DEFAULT_POLICIES), "policies to compare: preset names (none, entropy_only, "
                                                          "density_only, both) or policy tables")
    data: dict[str, Any] | None = setting(None, "the questions: {loader (truthfulqa, strategyqa, shipped_qa, gsm8k; "
                                                "hotpotqa, musique closed book: the question only), path "
                                                "(relative to the working directory), split (where the data set has "
                                                "splits), limit, sample, seed, ...the loader's options}; None = the "
                                                "shipped QA set")
    categories: list[str] | None = setting(None, "question categories to use (None = all five)")
    per_category: int | None = setting(None, "use the first k questions of each category")
    ids: list[str] | None = setting(None, "use only these question ids")
    limit: int | None = setting(None, "use the first n questions after the other filters")
    ollama_model: str | None = setting(None, "also run this Ollama model (its server is checked first)")
    n_samples: int = setting(5, "answers sampled per worker call, the primary included (HASSUM uses 5)")
    temperature: float = setting(0.7, "sampling temperature of every worker")
    max_tokens: int = setting(32, "tokens per answer")
    max_rounds: int | None = setting(None, "round cap of every gated policy (None = the preset's)")
    entropy_threshold: float | None = setting(None, "τ_E on H / ln n for every gated policy (None = the preset's)")
    raw_entropy_threshold: float | None = setting(None, "τ_E in nats, converted with n_samples (refused when no "
                                                        "outcome of n_samples can exceed it)")
    density_threshold: float | None = setting(None, "τ_D for every gated policy (None = the preset's)")
    judge: Any = setting("embedding", "the equivalence judge every metric shares: a name or {name, ...params}")
    metrics: dict[str, Any] | None = setting(None, "{role: metric spec} (None = entropy: discrete_semantic_entropy, "
                                                   "density: semantic_density)")
    extra_metrics: list[str] = setting([], "metrics logged beside the gated ones (for their AUROC), never gated")
    calibrate: dict[str, Any] | None = setting(None, "choose τ_E and τ_D per model on a seeded dev share of the "
                                                     "questions (kept out of the reported ones): {target_rate = 0.3, "
                                                     "dev_fraction = 0.3}; None = fixed thresholds")
    grading: Any = setting({"method": "strict"}, "how answers are graded: a grader name (strict, hassum, contains, "
                                                 "normalised, embedding, llm, or a registered one), a {name, "
                                                 "...params} table, or {method, options: {...AnswerGrader options}}")
    share_cache: bool = setting(True, "all policies share the completion cache (the first round is generated once, "
                                      "so wall times are not comparable); false: one cache per policy under "
                                      "out_dir/cache")
    questions_per_unit: int = setting(10, "questions per unit of work (one run file each, runs/<model>__<policy>/"
                                          "q<first>-q<last>.jsonl): the grain a pool of workers shares out; 0 = one "
                                          "unit per model and policy (runs/<model>__<policy>.jsonl, the layout before "
                                          "0.2). It changes no answer")
    backend: InitVar[Any] = None  # the old name of ``llm``: accepted with a FutureWarning; removed in 0.3

    def __post_init__(self, backend: Any = None):
        if backend is not None:
            if self.llm != "embedded":
                raise ValueError("'backend' is the old name of 'llm'; give only 'llm'")
            warnings.warn(f"the {self.what} setting 'backend' is now called 'llm'; the old name will stop working in "
                          "the next release", FutureWarning, stacklevel=3)
            self.llm = backend
        if not self.policies:
            raise ValueError("policies is empty; give at least one, e.g. ['none', 'both']")
        if isinstance(self.categories, str):
            self.categories = [self.categories]
        for name in ("per_category", "limit", "n_samples", "max_tokens", "max_rounds"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 1):
                raise ValueError(f"{name} must be a positive integer or None, got {v!r}")
        check_caps(self, ("n_samples", "max_tokens", "max_rounds"))
        q = self.questions_per_unit
        if not isinstance(q, int) or isinstance(q, bool) or q < 0:
            raise ValueError(f"questions_per_unit must be an integer >= 0 (0 = one unit per model and policy), got {q!r}")
        if self.entropy_threshold is not None and self.raw_entropy_threshold is not None:
            raise ValueError("give entropy_threshold (normalised H/ln n) or raw_entropy_threshold (nats), not both")
        if isinstance(self.grading, Mapping) and not ({"method", "name"} & set(self.grading)):
            raise ValueError(f"grading must be a grader name, a {{name, ...params}} table or a {{method, options}} "
                             f"table, got {self.grading!r}")
        _check_data(self.data)
        if self.calibrate is not None:
            CalibrationSpec.from_setting(self.calibrate)
            fixed = [n for n in ("entropy_threshold", "raw_entropy_threshold", "density_threshold")
                     if getattr(self, n) is not None]
            if fixed:
                raise ValueError(f"calibrate chooses the thresholds; drop {', '.join(fixed)} (or drop calibrate)")

    @property
    def calibration(self) -> CalibrationSpec | None:
        """The ``calibrate`` setting as a :class:`~.calibration.CalibrationSpec` (None: fixed thresholds)."""
        return None if self.calibrate is None else CalibrationSpec.from_setting(self.calibrate)

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


#: Deprecated alias of :class:`OrchestrationConfig` (the old name); removed in 0.3.
ExperimentConfig = OrchestrationConfig


def load_config(path: str | os.PathLike) -> OrchestrationConfig:
    """An :class:`OrchestrationConfig` from a ``.json`` or ``.toml`` file."""
    return OrchestrationConfig.load(path)


def _check_data(data: Any) -> None:
    """A ``data`` setting that cannot work, as one error naming the setting: not a table, no or an unknown loader, a
    missing file, a data set with splits and no ``split``."""
    import inspect
    from pathlib import Path

    from ..datasets import LOADERS

    if data is None:
        return
    if not isinstance(data, Mapping) or not isinstance(data.get("loader"), str):
        raise ValueError(f"data must be a table with a loader, e.g. {{loader = \"truthfulqa\", path = \"TruthfulQA.csv\"}}, "
                         f"got {data!r}")
    name = data["loader"]
    if name not in DATA_LOADERS:
        other = " (it holds no short-answer questions with gold answers)" if name in LOADERS else ""
        raise ValueError(f"data.loader {name!r} is not a question loader{other}; choose from {', '.join(DATA_LOADERS)}")
    params = inspect.signature(LOADERS[name]).parameters
    path = data.get("path")
    if path is None and name not in ("shipped_qa", "world"):
        raise ValueError(f"data.path is missing: the {name} loader reads a file you downloaded (nothing is downloaded)")
    if path is not None and (not isinstance(path, (str, os.PathLike)) or not os.fspath(path)):
        from ..untrusted import excerpt

        raise ValueError(f"data.path must be a file or folder name (a string in quotes), got {type(path).__name__} "
                         f"{excerpt(repr(path))}; e.g. path = \"TruthfulQA.csv\"")
    if path is not None and not Path(path).exists():
        raise ValueError(f"data.path: no file or folder at {path} (loader {name!r}; nothing is downloaded)")
    if "split" in params and data.get("split") is None:
        raise ValueError(f"data.split is missing: {name} has splits; say which one (e.g. split = \"train\")")


def load_data(config: OrchestrationConfig) -> list[Any]:
    """The items of the configured data set (the shipped QA set when ``data`` is None, its ``categories`` checked
    by name), before the other filters."""
    from ..datasets.closed_book import load_questions
    from ..datasets.qa import load_qa_questions

    if config.data is None and isinstance(config.llm, str) and config.llm.startswith("world:"):
        return load_questions("world", world=config.llm.partition(":")[2])  # a QA world's own questions
    if config.data is None:
        return load_qa_questions(config.categories)
    options = {k: v for k, v in config.data.items() if k not in ("loader", "path")}
    try:
        return load_questions(config.data["loader"], config.data.get("path"), **options)
    except (ValueError, OSError) as exc:
        raise ValueError(f"data ({config.data['loader']}): {exc}") from None


def describe_data(config: OrchestrationConfig) -> str:
    """The data setting in words, for the report."""
    if config.data is None and isinstance(config.llm, str) and config.llm.startswith("world:"):
        return f"the questions of {config.llm} (a simulated world with a known truth, not a data set)"
    if config.data is None:
        return "the shipped QA set (uncertainty_lab/datasets/data/qa_questions.jsonl)"
    from ..datasets.closed_book import CLOSED_BOOK

    parts = [f"{k} = {v}" for k, v in config.data.items() if k not in ("loader", "path")]
    if config.data["loader"] in CLOSED_BOOK:
        parts.append("closed book: the question only, none of its paragraphs")
    where = f" from {config.data['path']}" if config.data.get("path") else " (the shipped file)"
    return f"{config.data['loader']}{where}" + (f" ({', '.join(parts)})" if parts else "")


def select_items(config: OrchestrationConfig) -> list[Any]:
    """The items the config asks for (``data``, then ``categories``, ``ids``, ``per_category``, ``limit``), in
    file order."""
    from ..datasets.subset import with_ids

    items = load_data(config)
    where = "the shipped set" if config.data is None else f"the data set ({config.data['loader']})"
    if config.categories is not None and config.data is not None:
        items = [it for it in items if it.category in config.categories]
    if config.ids is not None:
        items, unknown = with_ids(items, config.ids)
        if unknown:
            raise ValueError(f"ids {unknown[:5]} are not in {where} (or not in categories {config.categories})")
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
