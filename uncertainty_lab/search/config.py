"""What a CGDP search experiment runs: :class:`SearchConfig` (every setting with its default and help), its arms
(:class:`Condition`: a policy, a belief and a gate set) and the questions it selects.

Read from a dict, a JSON or a TOML file (:func:`load_config`); a TOML example::

    llm = "embedded"                      # or "oracle", "ollama:llama3.2:3b"
    policies = ["heuristic", "llm"]
    beliefs = ["implicit", "predicate"]
    gate_sets = [["fixed_budget"], ["exhaustion", "fixed_budget"],
                 [{name = "exhaustion", tau_j = 0.5}, "fixed_budget"]]
    hops = [3, 4]
    limit = 20
    max_steps = 8
    out_dir = "search_results"
    # the data (default: the shipped corpus); MuSiQue or HotpotQA files you downloaded instead:
    data = {loader = "musique", path = "musique_full_v1.0_dev.jsonl", split = "dev", sample = 50, seed = 0}
    [policy_params.llm]
    max_tokens = 32
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from .. import registry
from ..datasets.search import Document, SearchQuestion
from ..datasets.source import data_spec, deprecated_data
from ..datasets.source import load_data as load_source
from ..datasets.subset import with_ids
from ..lab import LabConfig, check_caps, setting
from .belief import BELIEFS
from .environment import RETRIEVERS
from .policies import POLICIES

__all__ = ["CORPORA", "DEFAULT_GATE_SETS", "Condition", "SearchConfig", "gate_label", "gate_stop_kind", "load_config",
           "load_data", "own_corpus", "question_documents", "select_questions", "slug"]

DEFAULT_GATE_SETS = (("fixed_budget",), ("exhaustion", "fixed_budget"))
#: what each question searches (the ``corpus`` setting)
CORPORA = ("auto", "own", "shared")


# --- gate specs --------------------------------------------------------------------------------------------


def _gate_name(spec: Any) -> str:
    if isinstance(spec, str):
        return spec
    if isinstance(spec, Mapping):
        return str(spec.get("name", "?"))
    if isinstance(spec, (list, tuple)) and len(spec) == 2 and isinstance(spec[0], str):
        return spec[0]
    return str(getattr(spec, "name", type(spec).__name__))


def _gate_params(spec: Any) -> dict[str, Any]:
    if isinstance(spec, Mapping):
        return {k: v for k, v in spec.items() if k != "name"}
    if isinstance(spec, (list, tuple)) and len(spec) == 2 and isinstance(spec[1], Mapping):
        return dict(spec[1])
    return {}


def gate_label(gates: Sequence[Any]) -> str:
    """A gate set's name: the gate names joined by ``+``, parameters in brackets (``exhaustion(tau_j=0.5)+fixed_budget``)."""
    parts = []
    for g in gates:
        inner = ",".join(f"{k}={v}" for k, v in sorted(_gate_params(g).items()))
        parts.append(_gate_name(g) + (f"({inner})" if inner else ""))
    return "+".join(parts) or "none"


def gate_stop_kind(spec: Any) -> str | None:
    """The stop reason a gate's stops count as: its ``stop_kind`` ("answered" when it declares none, as the
    agent reads it); None for a named plugin that cannot be loaded."""
    if isinstance(spec, (str, Mapping)) or (isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], str)):
        try:
            spec = registry.get("stopping_gates", _gate_name(spec))
        except registry.RegistryError:
            return None
    return str(getattr(spec, "stop_kind", "answered"))


def slug(text: str) -> str:
    """``text`` as a file or folder name (runs of other characters become ``_``)."""
    return re.sub(r"[^A-Za-z0-9._+=-]+", "_", text).strip("_") or "x"


@dataclass(frozen=True)
class _GateSpec(Mapping):
    """A ``{"name", **params}`` gate table as a hashable value (its items, sorted)."""

    items_: tuple[tuple[str, Any], ...]

    def __getitem__(self, key):
        return dict(self.items_)[key]

    def __iter__(self):
        return iter(k for k, _ in self.items_)

    def __len__(self):
        return len(self.items_)


def _freeze(g: Any) -> Any:
    return _GateSpec(tuple(sorted((str(k), v) for k, v in g.items()))) if isinstance(g, Mapping) else g


@dataclass(frozen=True)
class Condition:
    """One arm of the experiment: a policy, a belief and a gate set — ``gates`` as the episodes get them
    (a bare ``fixed_budget`` holds the config's ``max_steps``), ``gate_label`` as the config wrote them."""

    policy: str
    belief: str
    gates: tuple[Any, ...]
    gate_label: str = ""

    def __post_init__(self):
        if not self.gate_label:
            object.__setattr__(self, "gate_label", gate_label(self.gates))

    @property
    def label(self) -> str:
        return f"{self.policy} · {self.belief} · {self.gate_label}"

    @property
    def slug(self) -> str:
        """The folder of this condition's episode files."""
        return slug(f"{self.policy}__{self.belief}__{self.gate_label}")

    def gate_names(self) -> list[str]:
        return [_gate_name(g) for g in self.gates]

    def episode_gates(self) -> list[Any]:
        """The gates as :func:`~uncertainty_lab.search.run.run_episode` takes them (tables as ``(name, params)``)."""
        return [(g["name"], {k: v for k, v in g.items() if k != "name"}) if isinstance(g, Mapping) else g
                for g in self.gates]


# --- the config ------------------------------------------------------------------------------------------


@dataclass
class SearchConfig(LabConfig):
    """What to run: the arms (policies × beliefs × gate sets), the questions, the episodes, the model, the
    environment, the scoring and the output. Every setting's help is printed by ``search run --help``."""

    what: ClassVar[str] = "search"

    llm: Any = setting("embedded", "the language model: a get_llm spec ('embedded', 'auto', 'ollama:<model>'), "
                                   "'oracle' (a model-free reader that knows the gold data) or a backend instance")
    out_dir: str = setting("search_results", "folder for episodes/<condition>/<question>.jsonl, summary.md, "
                                             "results.json and figure.png")
    beliefs: list[str] = setting(["implicit", "predicate"], "belief states to compare: 'implicit', 'predicate'")
    gate_sets: list[list[Any]] = setting([list(g) for g in DEFAULT_GATE_SETS],
                                         "gate sets, each a list of stopping_gates names or {name, **params} tables; "
                                         "a fixed_budget without max_steps gets this config's max_steps")
    policies: list[str] = setting(["heuristic"], "action policies to compare: 'heuristic', 'llm'")
    belief_params: dict[str, dict[str, Any]] = setting({}, "parameters per belief, e.g. {predicate = {max_findings = 4}}")
    policy_params: dict[str, dict[str, Any]] = setting({}, "parameters per policy, e.g. {llm = {max_tokens = 32}}")
    questions: list[str] | None = setting(None, "question ids to run (default: all)")
    hops: list[int] | None = setting(None, "keep questions with these hop counts, e.g. [3, 4]")
    limit: int | None = setting(None, "then keep the first limit questions")
    data: Any = setting({"loader": "shipped_search"}, "the questions and their corpus: {loader, path?, "
                        "...options} with loader 'shipped_search' (path: a corpus file or folder, questions_path), "
                        "'musique' or 'hotpotqa' (path: the file you downloaded; each question brings its own paragraphs, "
                        "see corpus), 'world' (world: a world's name, else the llm's 'world:<name>'; worlds/); "
                        "split, limit, sample, seed as every loader takes them")
    corpus: str = setting("auto", "what each question searches: 'own' (its own paragraphs, supporting and "
                                  "distractors: MuSiQue's and HotpotQA's distractor setting), 'shared' (every "
                                  "loaded document), 'auto' (own for musique / hotpotqa, shared for shipped_search)")
    corpus_path: str | None = setting(None, "deprecated: write data = {loader = 'shipped_search', path = ..., "
                                            "questions_path = ...}")
    questions_path: str | None = setting(None, "deprecated: see corpus_path")
    max_steps: int = setting(8, "step budget of every episode")
    lam: float = setting(1e-3, "λ of Eq. 1: the price of one context token in the objective")
    answer_max_tokens: int = setting(24, "tokens of the final answer")
    llm_params: dict[str, Any] = setting({}, "keyword arguments of get_llm, e.g. {n_threads = 1}")
    retriever: str = setting("bm25", "retriever of the environment: 'bm25', 'embedding', 'hybrid'")
    k: int = setting(3, "passages per search")
    loop_threshold: float = setting(0.9, "Jaccard at which a repeated search/read counts as a loop")
    level: float = setting(0.95, "confidence level of every interval")
    n_boot: int = setting(2000, "bootstrap resamples per interval")

    def __post_init__(self):
        for check in (_check_choices, _check_gate_sets, _check_counts, _check_numbers, _check_selection,
                      _check_data, _check_model, _check_tables):
            check(self)

    def conditions(self) -> list[Condition]:
        """Every (policy, belief, gate set), policies outermost; a bare ``fixed_budget`` gets ``max_steps``."""
        sets = []
        for gs in self.gate_sets:
            fixed = []
            for g in gs:
                if g == "fixed_budget":
                    g = {"name": "fixed_budget", "max_steps": self.max_steps}
                elif isinstance(g, Mapping) and g.get("name") == "fixed_budget" and "max_steps" not in g:
                    g = {**g, "max_steps": self.max_steps}
                fixed.append(_freeze(g))
            sets.append((tuple(fixed), gate_label(gs)))
        return [Condition(p, b, gs, label) for p in self.policies for b in self.beliefs for gs, label in sets]


def _check_choices(cfg: SearchConfig) -> None:
    """``beliefs`` and ``policies``: non-empty lists of known names (a single name is a list of one)."""
    for name, catalogue in (("beliefs", BELIEFS), ("policies", POLICIES)):
        values = getattr(cfg, name)
        values = [values] if isinstance(values, str) else values
        if not values:
            raise ValueError(f"{name} is empty; give at least one")
        for v in values:
            if v not in catalogue.classes:
                close = difflib.get_close_matches(str(v), catalogue.names(), n=1)
                raise ValueError(f"{name}: unknown {catalogue.what} {v!r}"
                                 + (f" (did you mean {close[0]!r}?)" if close else "")
                                 + f"; choose from {', '.join(map(repr, catalogue.names()))}")
        setattr(cfg, name, list(values))


def _check_gate_sets(cfg: SearchConfig) -> None:
    """A non-empty list of non-empty gate lists (a single gate is a list of one), with distinct labels."""
    if isinstance(cfg.gate_sets, (str, Mapping)) or not cfg.gate_sets:
        raise ValueError("gate_sets must be a non-empty list of gate lists, e.g. [['fixed_budget'], "
                         "['exhaustion', 'fixed_budget']]")
    sets = []
    for i, gs in enumerate(cfg.gate_sets):
        if isinstance(gs, (str, Mapping)):
            gs = [gs]
        if not isinstance(gs, (list, tuple)) or not gs:
            raise ValueError(f"gate_sets[{i}] must be a non-empty list of gate names or tables, got {gs!r}")
        sets.append(list(gs))
    cfg.gate_sets = sets
    labels = [gate_label(g) for g in sets]
    if len(set(labels)) != len(labels):
        raise ValueError(f"gate sets must differ (they name the run folders), got {labels}")


def _check_counts(cfg: SearchConfig) -> None:
    """Positive integers: ``limit`` (or None), ``max_steps``, ``answer_max_tokens``, ``k``, ``n_boot``."""
    if cfg.max_steps is None:
        raise ValueError("max_steps must be a positive integer")
    for name in ("limit", "max_steps", "answer_max_tokens", "k", "n_boot"):
        v = getattr(cfg, name)
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 1):
            raise ValueError(f"{name} must be a positive integer" + (" or None" if name == "limit" else "")
                             + f", got {v!r}")
    check_caps(cfg, ("max_steps", "answer_max_tokens", "k", "n_boot"))


def _check_numbers(cfg: SearchConfig) -> None:
    """``seed`` ≥ 0 an integer, ``lam`` ≥ 0, ``level`` in (0, 1), a known ``retriever``."""
    if not isinstance(cfg.seed, int) or isinstance(cfg.seed, bool) or cfg.seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {cfg.seed!r}")
    if not isinstance(cfg.lam, (int, float)) or isinstance(cfg.lam, bool) or not cfg.lam >= 0:
        raise ValueError(f"lam must be a number >= 0 (the price of one token), got {cfg.lam!r}")
    if cfg.retriever not in RETRIEVERS:
        raise ValueError(f"retriever must be one of {RETRIEVERS}, got {cfg.retriever!r}")
    if not 0 < float(cfg.level) < 1:
        raise ValueError(f"level must be in (0, 1), e.g. 0.95, got {cfg.level!r}")


def _check_selection(cfg: SearchConfig) -> None:
    """``hops``: positive integers (one is a list of one); ``questions``: ids (one is a list of one); the data
    paths together or not at all."""
    if cfg.hops is not None:
        if isinstance(cfg.hops, int):
            cfg.hops = [cfg.hops]
        if not all(isinstance(h, int) and not isinstance(h, bool) and h >= 1 for h in cfg.hops):
            raise ValueError(f"hops must be a list of positive integers, e.g. [3, 4], got {cfg.hops!r}")
    if isinstance(cfg.questions, str):
        cfg.questions = [cfg.questions]


def _check_data(cfg: SearchConfig) -> None:
    """``data`` names a search loader and its options; the old ``corpus_path`` / ``questions_path`` (together)
    become ``data = {loader = "shipped_search", path, questions_path}`` with a FutureWarning."""
    if cfg.corpus_path is not None or cfg.questions_path is not None:
        if (cfg.corpus_path is None) != (cfg.questions_path is None):
            raise ValueError("give corpus_path and questions_path together, or better: data = {loader = "
                             "'shipped_search', path = <corpus>, questions_path = <questions>}")
        cfg.data = deprecated_data(cfg.data, {"loader": "shipped_search", "path": cfg.corpus_path,
                                              "questions_path": cfg.questions_path},
                                   old="corpus_path", what=cfg.what, kind="search")
        cfg.corpus_path = cfg.questions_path = None
    cfg.data = data_spec(cfg.data, kind="search")
    if cfg.data["loader"] == "world" and "path" not in cfg.data and "world" not in cfg.data:
        if not (isinstance(cfg.llm, str) and cfg.llm.startswith("world:")):
            raise ValueError("data = {loader = 'world'} needs the world: world = '<name>' (or path = '<file>'), "
                             "or llm = 'world:<name>' to take it from")
        cfg.data["world"] = cfg.llm.split(":", 1)[1]
    if cfg.corpus not in CORPORA:
        raise ValueError(f"corpus must be one of {', '.join(map(repr, CORPORA))}, got {cfg.corpus!r}")


def _check_model(cfg: SearchConfig) -> None:
    """The oracle reader cannot choose actions: no ``llm`` policy with it."""
    if isinstance(cfg.llm, str) and cfg.llm == "oracle" and "llm" in cfg.policies:
        raise ValueError("the 'oracle' reader cannot choose actions: run the 'llm' policy with a real model "
                         "(llm = 'embedded' or 'ollama:<model>'), or keep only the 'heuristic' policy")


def _check_tables(cfg: SearchConfig) -> None:
    """``belief_params``, ``policy_params`` and ``llm_params`` are tables."""
    for name in ("belief_params", "policy_params", "llm_params"):
        if not isinstance(getattr(cfg, name), Mapping):
            raise ValueError(f"{name} must be a table/dict, got {getattr(cfg, name)!r}")


# --- files and questions ---------------------------------------------------------------------------------


def load_config(path: str | os.PathLike) -> SearchConfig:
    """A :class:`SearchConfig` from a ``.json`` or ``.toml`` file."""
    return SearchConfig.load(path)


def load_data(config: SearchConfig) -> tuple[list[Document], list[SearchQuestion]]:
    """(documents, questions) that ``config.data`` names (:mod:`uncertainty_lab.datasets.source`): the shipped
    corpus, or MuSiQue / HotpotQA questions and the paragraphs they bring (every loaded one once; ``corpus`` says
    whether a question searches all of them or only its own, :func:`question_documents`)."""
    return load_source(config.data, kind="search")


def own_corpus(config: SearchConfig) -> bool:
    """Whether each question searches only its own paragraphs (``corpus``; ``auto``: for MuSiQue and HotpotQA)."""
    return config.corpus == "own" or (config.corpus == "auto" and config.data["loader"] != "shipped_search")


def question_documents(question: SearchQuestion, documents: Sequence[Document]) -> list[Document]:
    """A question's own paragraphs (supporting and distractors), ordered by id: the same corpus whatever other
    questions were loaded, and no order that favours the supporting ones."""
    own = {*question.supporting_ids, *question.distractor_ids}
    found = sorted((d for d in documents if d.id in own), key=lambda d: d.id)
    if not found:
        raise ValueError(f"question {question.id!r} names no paragraph of the loaded data; use corpus = 'shared'")
    return found


def select_questions(config: SearchConfig, questions: Sequence[SearchQuestion] | None = None) -> list[SearchQuestion]:
    """The questions the config asks for, in file order: ``questions`` (ids), then ``hops``, then ``limit``."""
    items = list(questions) if questions is not None else load_data(config)[1]
    if config.questions is not None:
        kept, unknown = with_ids(items, config.questions)
        if unknown:
            raise ValueError(f"questions {unknown[:5]} are not in the data set (ids look like {items[0].id!r})")
        items = kept
    if config.hops is not None:
        items = [q for q in items if q.hops in set(config.hops)]
    if config.limit is not None:
        items = items[:config.limit]
    if not items:
        raise ValueError("the selection is empty; check questions, hops and limit")
    return items
