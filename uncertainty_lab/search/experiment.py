"""The CGDP comparison: belief states (implicit vs predicate) × stopping-gate sets × policies on the shipped
multi-hop questions (or a subset), every episode streamed to its own resumable JSONL file.

    from uncertainty_lab.search.experiment import run_experiment
    result = run_experiment({"llm": "oracle", "limit": 10, "out_dir": "search_results"})
    print(result.report())

Reported per condition (policy · belief · gates): accuracy as exact match with a Wilson interval and token F1
with a bootstrap interval; tokens with bootstrap intervals — *context tokens* Σ_t Cost(a_t) (what the
observations put into the agent's context; paper Eq. 1) and *model tokens* (prompt + completion of every
model call of the episode, counted with the lab's token proxy); steps; loop rate and premature-stop rate
(Wilson; definitions in :mod:`~uncertainty_lab.search.episode`); mean support recall; stop reasons; invalid
answers and policy parse failures. Paired comparisons (McNemar on exact match, same questions) between
conditions that differ in one factor. **Token savings of the exhaustion gate**: for each gate set G holding
``exhaustion`` whose twin G − {exhaustion} also ran, (tokens without − tokens with) / tokens without on the
same questions, with a paired bootstrap interval — always printed next to the accuracy difference (with −
without) and its interval, and saying plainly whether accuracy was the same; a saving bought with a loss of
accuracy is not the paper's claim (up to 39 % fewer tokens *with no loss of accuracy*). The belief-state
result of the paper (up to +11.4 % multi-hop accuracy) is a separate experiment; the report keeps them apart.

The **language model** (``llm``): a spec for :func:`~uncertainty_lab.llm.get_llm` (``"embedded"``,
``"ollama:<model>"``, ``"auto"``), a backend instance, or ``"oracle"`` — :class:`OracleReader`, a model-free
stand-in that reads like a perfect extractor and knows the gold data. The oracle isolates search and
stopping from model quality (with the ``heuristic`` policy nothing in an episode depends on a model); its
accuracy is an upper bound on what the gathered evidence allows, not a model's accuracy. It cannot choose
actions, so it refuses the ``llm`` policy.

Files in ``out_dir``: ``episodes/<policy>__<belief>__<gates>/<question id>.jsonl`` (resumed when present),
``summary.md``, ``results.json`` and ``figure.png`` (tokens vs accuracy per condition with intervals; stop
reasons). Configure with :class:`SearchConfig`, a dict, or a JSON / TOML file (:func:`load_config`); the CLI
``uncertainty-lab search run --config FILE`` runs it headless. A TOML example::

    llm = "embedded"                      # or "oracle", "ollama:llama3.2:3b"
    policies = ["heuristic", "llm"]
    beliefs = ["implicit", "predicate"]
    gate_sets = [["fixed_budget"], ["exhaustion", "fixed_budget"],
                 [{name = "exhaustion", tau_j = 0.5}, "fixed_budget"]]
    hops = [3, 4]
    limit = 20
    max_steps = 8
    out_dir = "search_results"
    [policy_params.llm]
    max_tokens = 32
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from .. import configfile
from ..datasets.search import Document, SearchQuestion
from ..lab import save_outputs
from ..semantic.text import normalise_answer
from .agent import run_episode
from .environment import RETRIEVERS, SearchEnvironment
from .episode import Episode, EpisodeResumeError, EpisodeScore
from .policies import POLICIES
from .text import find_doc_ids

__all__ = [
    "Condition",
    "OracleReader",
    "OracleReaderError",
    "SearchConfig",
    "SearchExperimentResult",
    "gate_label",
    "load_config",
    "run_experiment",
    "select_questions",
]

DEFAULT_GATE_SETS = (("fixed_budget",), ("exhaustion", "fixed_budget"))
STOP_REASONS = ("answered", "exhausted", "budget")


# ----------------------------------------------------------------------------------------------------------
# the oracle reader
# ----------------------------------------------------------------------------------------------------------


class OracleReaderError(ValueError):
    """The oracle reader was asked for something it does not do (choose an action) or about an unknown question."""


_PASSAGE = re.compile(r"^\[(?P<id>[^\]]+)\]\s*(?P<title>[^:\n]*):\s*(?P<text>.*)$")
_PREDICATE = re.compile(r"^Q(?P<n>\d+)\.\s*(?P<text>.*?)\s*\(open\)\s*$")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _norm_q(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9#]+", text.lower()))


@dataclass
class OracleReader:
    """A model-free, deterministic stand-in for the language model that reads like a perfect extractor.

    It knows each question's gold data (``questions``; default: the shipped set) and answers the lab's prompts
    (recognised by their system text, :mod:`~uncertainty_lab.search.prompts`):

    - **final answer** (every exit, and ``answer_convergence``'s samples): the gold answer when the notes it is
      given cite *every* supporting document of the question (their ids appear in the state: a passage line of
      the implicit history, or a finding's / question's evidence in the predicate belief) — the evidence was
      gathered *and* survived truncation or eviction; otherwise ``unknown`` (an abstention, scored wrong). A
      question without supporting ids is answered when its gold answer appears in the notes.
    - **extraction** (predicate belief): one ``FACT: <title>: <sentence> [id]`` per shown passage that is a
      supporting document (the sentence naming that hop's answer, else the first), then ``DONE: Qn — <answer>
      [ids]`` for each open question now settled: a gold sub-question (exact text, ``#k`` included) whose
      document is shown or already cited, or the question itself once every supporting document is. Passages
      that support nothing get no line (an empty update, recorded as such). JSON format when asked.
    - **decomposition** (``init="llm"``): the gold sub-questions as ``OPEN:`` lines.
    - **policy** prompts: refused (:class:`OracleReaderError`) — pair it with the ``heuristic`` policy.

    Token counts are still recorded by the agent from the prompts, so "model tokens" say what a model would
    have read. The oracle's accuracy measures the search and its stopping, not a model.
    """

    questions: Sequence[SearchQuestion] | None = None
    name: ClassVar[str] = "oracle"
    summary: ClassVar[str] = "model-free reader that knows the gold data (isolates search and stopping from model quality)"
    supports_logprobs: ClassVar[bool] = False

    def __post_init__(self):
        if self.questions is None:
            from ..datasets.search import load_search_questions

            self.questions = load_search_questions()
        self.questions = list(self.questions)
        self._by_text = {_norm_q(q.question): q for q in self.questions}
        from .prompts import ANSWER_SYSTEM, EXTRACTION_SYSTEM_JSON, EXTRACTION_SYSTEM_TEXT, POLICY_SYSTEM

        self._systems = {POLICY_SYSTEM: "policy", EXTRACTION_SYSTEM_TEXT: "extraction",
                         EXTRACTION_SYSTEM_JSON: "extraction_json", ANSWER_SYSTEM: "answer"}
        self.calls: dict[str, int] = {}

    # identity (what an episode header records) --------------------------------------------------------------
    def model_id(self) -> str:
        return "gold-reader-1"

    def cache_backend_name(self) -> str:
        return self.name

    @property
    def label(self) -> str:
        return f"{self.name}:{self.model_id()}"

    def __repr__(self) -> str:
        return f"OracleReader({len(self.questions)} questions)"

    # the protocol ---------------------------------------------------------------------------------------------
    def complete(self, messages: Any, *, n: int = 1, temperature: float = 0.0, max_tokens: int = 128,
                 seed: int | None = 0, **kwargs: Any) -> list[Any]:
        from ..llm import Completion

        if isinstance(messages, str):
            messages = [{"role": "user", "content": messages}]
        system = messages[0]["content"] if messages and messages[0].get("role") == "system" else ""
        user = messages[-1]["content"] if messages else ""
        kind = self._systems.get(system)
        if kind is None and system.startswith("Split a question"):
            kind = "decomposition"
        self.calls[kind or "other"] = self.calls.get(kind or "other", 0) + 1
        if kind == "policy":
            raise OracleReaderError("the oracle reader reads and answers; it does not choose actions. Use "
                                    "policy='heuristic' with it, or a real model (llm='embedded') for the llm policy")
        if kind == "answer":
            text = self.answer(user)
        elif kind in ("extraction", "extraction_json"):
            text = self.extract(user, json_format=kind == "extraction_json")
        elif kind == "decomposition":
            text = self.decompose(user)
        else:
            raise OracleReaderError(f"the oracle reader only answers the search lab's prompts; got a system "
                                    f"prompt {system[:60]!r}")
        return [Completion(text, "stop", self.name, self.model_id(), seed, i) for i in range(int(n))]

    # pieces -----------------------------------------------------------------------------------------------------
    def question(self, text: str) -> SearchQuestion | None:
        """The known question whose text this is (case and punctuation ignored), else None."""
        return self._by_text.get(_norm_q(text))

    def answer(self, user: str) -> str:
        notes, _, rest = user.rpartition("\n\nQuestion: ")
        q = self.question(rest.removesuffix("Answer:").strip())
        if q is None:
            return "unknown"
        notes = notes.removeprefix("Notes:\n")
        if q.supporting_ids:
            cited = set(find_doc_ids(notes))
            return q.answer if all(i in cited for i in q.supporting_ids) else "unknown"
        golds = [g for g in (q.answer, *q.aliases) if normalise_answer(g)]
        return q.answer if any(normalise_answer(g) in normalise_answer(notes) for g in golds) else "unknown"

    def extract(self, user: str, *, json_format: bool = False) -> str:
        state, _, rest = user.partition("\n\nLast action: ")
        first = state.splitlines()[0] if state else ""
        q = self.question(first.removeprefix("Question:").strip())
        if q is None:
            return ""
        block = rest.partition("\nPassages:\n")[2].rpartition("\n\nNotebook update:")[0]
        shown: dict[str, tuple[str, str]] = {}
        for line in block.splitlines():
            m = _PASSAGE.match(line.strip())
            if m:
                shown[m.group("id")] = (m.group("title").strip(), m.group("text").strip())
        cited = set(find_doc_ids(state))
        known = cited | set(shown)
        facts: list[tuple[str, str]] = []
        for doc_id, (title, text) in shown.items():
            if doc_id not in q.supporting_ids:
                continue
            hop = next((s for s in q.decomposition if s.support_id == doc_id), None)
            sentences = [s for s in _SENTENCE.split(text) if s.strip()] or [text]
            pick = next((s for s in sentences if hop and hop.answer and hop.answer.lower() in s.lower()), sentences[0])
            facts.append((f"{title}: {pick.strip()}" if title else pick.strip(), doc_id))
        done: list[tuple[int, str, list[str]]] = []
        for line in state.splitlines():
            m = _PREDICATE.match(line.strip())
            if not m:
                continue
            n, text = int(m.group("n")), m.group("text")
            if _norm_q(text) == _norm_q(q.question):
                if q.supporting_ids and all(i in known for i in q.supporting_ids):
                    done.append((n, q.answer, list(q.supporting_ids)))
                continue
            hop = next((s for s in q.decomposition if _norm_q(s.question) == _norm_q(text)), None)
            if hop is not None and hop.support_id and hop.support_id in known:
                done.append((n, hop.answer, [hop.support_id]))
        if json_format:
            if not facts and not done:
                return "{}"
            return json.dumps({"facts": [{"text": t, "doc_ids": [i]} for t, i in facts],
                               "done": [{"question": f"Q{n} — {a}", "doc_ids": ids} for n, a, ids in done]},
                              ensure_ascii=False)
        lines = [f"FACT: {t} [{i}]" for t, i in facts]
        lines += [f"DONE: Q{n} — {a} [{', '.join(ids)}]" for n, a, ids in done]
        return "\n".join(lines)

    def decompose(self, user: str) -> str:
        q = self.question(user.removeprefix("Question:").strip())
        if q is None or not q.decomposition:
            return ""
        return "\n".join(f"OPEN: {s.question}" for s in q.decomposition)


# ----------------------------------------------------------------------------------------------------------
# configuration
# ----------------------------------------------------------------------------------------------------------


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
        params = _gate_params(g)
        inner = ",".join(f"{k}={v}" for k, v in sorted(params.items()))
        parts.append(_gate_name(g) + (f"({inner})" if inner else ""))
    return "+".join(parts) or "none"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._+=-]+", "_", text).strip("_") or "x"


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
        return _slug(f"{self.policy}__{self.belief}__{self.gate_label}")

    def gate_names(self) -> list[str]:
        return [_gate_name(g) for g in self.gates]


@dataclass
class SearchConfig:
    """What to run.

    Arms: ``beliefs`` ("implicit", "predicate"), ``gate_sets`` (each a list of ``stopping_gates`` names or
    ``{"name": ..., **params}`` tables; a ``fixed_budget`` without ``max_steps`` gets this config's
    ``max_steps``), ``policies`` ("heuristic", "llm"); ``belief_params`` / ``policy_params``: per name, e.g.
    ``{"predicate": {"max_findings": 4}}``. Questions: the shipped set (or ``corpus_path`` + ``questions_path``,
    files in its schema), filtered by ``questions`` (ids), ``hops`` (e.g. [3, 4]), then the first ``limit``.
    Episodes: ``max_steps``, ``lam`` (λ of Eq. 1, per token), ``seed`` (the same for every episode, so arms
    share their model calls up to where they differ), ``answer_max_tokens``. Model: ``llm`` (a spec,
    ``"oracle"`` or an instance) with ``llm_params`` (e.g. ``{"n_threads": 1}``). Environment: ``retriever``
    ("bm25", "embedding", "hybrid") and ``k``. Scoring: ``loop_threshold``, interval ``level``, ``n_boot``.
    Output: ``out_dir``; ``overwrite`` starts every episode afresh instead of resuming; ``progress``; ``figure``.
    """

    beliefs: list[str] = field(default_factory=lambda: ["implicit", "predicate"])
    gate_sets: list[list[Any]] = field(default_factory=lambda: [list(g) for g in DEFAULT_GATE_SETS])
    policies: list[str] = field(default_factory=lambda: ["heuristic"])
    belief_params: dict[str, dict[str, Any]] = field(default_factory=dict)
    policy_params: dict[str, dict[str, Any]] = field(default_factory=dict)
    questions: list[str] | None = None
    hops: list[int] | None = None
    limit: int | None = None
    corpus_path: str | None = None
    questions_path: str | None = None
    max_steps: int = 8
    lam: float = 1e-3
    seed: int = 0
    answer_max_tokens: int = 24
    llm: Any = "embedded"
    llm_params: dict[str, Any] = field(default_factory=dict)
    retriever: str = "bm25"
    k: int = 3
    loop_threshold: float = 0.9
    level: float = 0.95
    n_boot: int = 2000
    out_dir: str = "search_results"
    overwrite: bool = False
    progress: bool = True
    figure: bool = True

    def __post_init__(self):
        for name in ("beliefs", "policies"):
            v = getattr(self, name)
            if isinstance(v, str):
                setattr(self, name, [v])
            if not getattr(self, name):
                raise ValueError(f"{name} is empty; give at least one")
        for b in self.beliefs:
            if b not in ("implicit", "predicate"):
                close = difflib.get_close_matches(str(b), ["implicit", "predicate"], n=1)
                raise ValueError(f"beliefs: unknown belief {b!r}" + (f" (did you mean {close[0]!r}?)" if close else "")
                                 + "; choose from 'implicit', 'predicate'")
        for p in self.policies:
            if p not in POLICIES:
                close = difflib.get_close_matches(str(p), list(POLICIES), n=1)
                raise ValueError(f"policies: unknown policy {p!r}" + (f" (did you mean {close[0]!r}?)" if close else "")
                                 + f"; choose from {sorted(POLICIES)}")
        if isinstance(self.gate_sets, (str, Mapping)) or not self.gate_sets:
            raise ValueError("gate_sets must be a non-empty list of gate lists, e.g. [['fixed_budget'], "
                             "['exhaustion', 'fixed_budget']]")
        sets = []
        for i, gs in enumerate(self.gate_sets):
            if isinstance(gs, (str, Mapping)):
                gs = [gs]
            if not isinstance(gs, (list, tuple)) or not gs:
                raise ValueError(f"gate_sets[{i}] must be a non-empty list of gate names or tables, got {gs!r}")
            sets.append(list(gs))
        self.gate_sets = sets
        labels = [gate_label(g) for g in self.gate_sets]
        if len(set(labels)) != len(labels):
            raise ValueError(f"gate sets must differ (they name the run folders), got {labels}")
        for name in ("limit", "max_steps", "answer_max_tokens", "k", "n_boot"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 1):
                raise ValueError(f"{name} must be a positive integer" + (" or None" if name == "limit" else "")
                                 + f", got {v!r}")
        if self.max_steps is None:
            raise ValueError("max_steps must be a positive integer")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed!r}")
        if not isinstance(self.lam, (int, float)) or isinstance(self.lam, bool) or not self.lam >= 0:
            raise ValueError(f"lam must be a number >= 0 (the price of one token), got {self.lam!r}")
        if self.retriever not in RETRIEVERS:
            raise ValueError(f"retriever must be one of {RETRIEVERS}, got {self.retriever!r}")
        if not 0 < float(self.level) < 1:
            raise ValueError(f"level must be in (0, 1), e.g. 0.95, got {self.level!r}")
        if self.hops is not None:
            if isinstance(self.hops, int):
                self.hops = [self.hops]
            if not all(isinstance(h, int) and not isinstance(h, bool) and h >= 1 for h in self.hops):
                raise ValueError(f"hops must be a list of positive integers, e.g. [3, 4], got {self.hops!r}")
        if isinstance(self.questions, str):
            self.questions = [self.questions]
        if isinstance(self.llm, str) and self.llm == "oracle" and "llm" in self.policies:
            raise ValueError("the 'oracle' reader cannot choose actions: run the 'llm' policy with a real model "
                             "(llm = 'embedded' or 'ollama:<model>'), or keep only the 'heuristic' policy")
        for name in ("belief_params", "policy_params", "llm_params"):
            if not isinstance(getattr(self, name), Mapping):
                raise ValueError(f"{name} must be a table/dict, got {getattr(self, name)!r}")
        if (self.corpus_path is None) != (self.questions_path is None):
            raise ValueError("give corpus_path and questions_path together (your own data in the shipped schema), "
                             "or neither (the shipped corpus)")

    @classmethod
    def from_mapping(cls, d: Mapping[str, Any]) -> SearchConfig:
        """From a dict (a parsed config file); an unknown key is an error naming the closest field."""
        return configfile.build(cls, d, what="search")

    def to_dict(self) -> dict[str, Any]:
        return configfile.as_dict(self, backend="llm")

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


def _freeze(g: Any) -> Any:
    """A gate spec as a hashable value (dicts become sorted tuples of items inside a _GateSpec)."""
    if isinstance(g, Mapping):
        return _GateSpec(tuple(sorted((str(k), v) for k, v in g.items())))
    return g


@dataclass(frozen=True)
class _GateSpec(Mapping):
    items_: tuple[tuple[str, Any], ...]

    def __getitem__(self, key):
        return dict(self.items_)[key]

    def __iter__(self):
        return iter(k for k, _ in self.items_)

    def __len__(self):
        return len(self.items_)


def _gate_for_episode(g: Any) -> Any:
    if isinstance(g, Mapping):
        params = {k: v for k, v in g.items() if k != "name"}
        return (g["name"], params)
    return g


def load_config(path: str | os.PathLike) -> SearchConfig:
    """A :class:`SearchConfig` from a ``.json`` or ``.toml`` file."""
    return configfile.load(path, SearchConfig.from_mapping)


def _dataset(config: SearchConfig) -> tuple[list[Document] | None, list[SearchQuestion]]:
    from ..datasets.search import load_search_dataset, load_search_questions

    if config.corpus_path is not None:
        return load_search_dataset(config.corpus_path, config.questions_path)
    return None, load_search_questions()


def select_questions(config: SearchConfig, questions: Sequence[SearchQuestion] | None = None) -> list[SearchQuestion]:
    """The questions the config asks for, in file order: ``questions`` (ids), then ``hops``, then ``limit``."""
    items = list(questions) if questions is not None else _dataset(config)[1]
    if config.questions is not None:
        by_id = {q.id: q for q in items}
        unknown = [i for i in config.questions if i not in by_id]
        if unknown:
            raise ValueError(f"questions {unknown[:5]} are not in the data set (ids look like {items[0].id!r})")
        wanted = set(config.questions)
        items = [q for q in items if q.id in wanted]
    if config.hops is not None:
        items = [q for q in items if q.hops in set(config.hops)]
    if config.limit is not None:
        items = items[:config.limit]
    if not items:
        raise ValueError("the selection is empty; check questions, hops and limit")
    return items


# ----------------------------------------------------------------------------------------------------------
# statistics helpers
# ----------------------------------------------------------------------------------------------------------


def _batched(fn):
    fn.supports_batches = True
    return fn


@_batched
def _mean(x: np.ndarray):
    return np.asarray(x, dtype=float).mean(axis=-1)


@_batched
def _saving(without: np.ndarray, with_: np.ndarray):
    """(mean without − mean with) / mean without, per resample row."""
    a = np.asarray(without, dtype=float).mean(axis=-1)
    b = np.asarray(with_, dtype=float).mean(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(a > 0, (a - b) / np.where(a > 0, a, 1.0), np.nan)


def _mean_ci(x: Sequence[float], n_boot: int, level: float, seed: int) -> dict[str, float]:
    from ..semantic.evaluation import bootstrap_ci

    arr = np.asarray(x, dtype=float)
    arr = arr[np.isfinite(arr)]
    if arr.size == 0:
        return {"mean": math.nan, "low": math.nan, "high": math.nan}
    ci = bootstrap_ci(_mean, arr, n_boot=n_boot, level=level, seed=seed)
    return {"mean": float(arr.mean()), "low": ci.low, "high": ci.high}


def _prop(flags: Sequence[bool], level: float) -> dict[str, float]:
    from ..semantic.evaluation import accuracy_ci

    ci = accuracy_ci(np.asarray(flags, dtype=bool), level=level)
    return {"rate": ci.estimate, "low": ci.low, "high": ci.high, "count": ci.successes, "n": ci.n}


def _pct(x: float) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.0%}"


def _num(x: float, digits: int = 0) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:,.{digits}f}"


# ----------------------------------------------------------------------------------------------------------
# the result
# ----------------------------------------------------------------------------------------------------------


@dataclass
class SearchExperimentResult:
    """The episodes of an experiment keyed by :class:`Condition` (each a list in question order), with the
    tables, paired tests, token savings and figures built from them."""

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

    # -- per condition ----------------------------------------------------------------------------------------
    def summary_rows(self) -> list[dict[str, Any]]:
        """One row per condition (see the module doc for every number)."""
        if "rows" not in self._cache:
            self._cache["rows"] = self._summary_rows()
        return [dict(r) for r in self._cache["rows"]]

    def _summary_rows(self) -> list[dict[str, Any]]:
        cfg = self.config
        rows = []
        for k, c in enumerate(self.conditions):
            sc = self.scores(c)
            eps = self.episodes[c]
            em = [s.exact_match == 1.0 for s in sc]
            seed = cfg.seed + k
            reasons = {r: sum(s.stop_reason == r for s in sc) for r in STOP_REASONS}
            rows.append({
                "condition": c.label, "policy": c.policy, "belief": c.belief, "gates": c.gate_label, "n": len(sc),
                "exact_match": _prop(em, cfg.level),
                "f1": _mean_ci([0.0 if math.isnan(s.f1) else s.f1 for s in sc], cfg.n_boot, cfg.level, seed),
                "context_tokens": _mean_ci([s.cost for s in sc], cfg.n_boot, cfg.level, seed),
                "model_tokens": _mean_ci([s.llm_tokens for s in sc], cfg.n_boot, cfg.level, seed),
                "steps": float(np.mean([s.steps for s in sc])),
                "loop": _prop([s.loop for s in sc], cfg.level),
                "premature_stop": _prop([s.premature_stop for s in sc], cfg.level),
                "support_recall": float(np.nanmean([s.support_recall for s in sc])) if any(
                    not math.isnan(s.support_recall) for s in sc) else math.nan,
                "objective": float(np.mean([s.objective for s in sc])),
                "stop_reasons": reasons,
                "invalid_answers": sum(not s.valid for s in sc),
                "parse_failures": sum(len(ep.parse_failures) for ep in eps),
                "policy_steps": sum(len(ep.steps) for ep in eps) if c.policy == "llm" else 0,
            })
        return rows

    def summary_table(self) -> str:
        """The condition table (markdown), intervals at the configured level."""
        lvl = f"{self.config.level:.0%}"
        head = ["condition", "n", f"exact match [{lvl} Wilson]", f"F1 [{lvl} boot]", f"context tokens [{lvl} boot]",
                f"model tokens [{lvl} boot]", "steps", "loop rate", "premature stop", "support recall",
                "stops answered/exhausted/budget", "invalid"]
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for r in self.summary_rows():
            em, f1, ct, mt = r["exact_match"], r["f1"], r["context_tokens"], r["model_tokens"]
            lp, pm = r["loop"], r["premature_stop"]
            sr = r["stop_reasons"]
            lines.append("| " + " | ".join([
                r["condition"], str(r["n"]),
                f"{em['rate']:.0%} [{em['low']:.0%}, {em['high']:.0%}] ({em['count']}/{em['n']})",
                f"{f1['mean']:.2f} [{f1['low']:.2f}, {f1['high']:.2f}]",
                f"{_num(ct['mean'])} [{_num(ct['low'])}, {_num(ct['high'])}]",
                f"{_num(mt['mean'])} [{_num(mt['low'])}, {_num(mt['high'])}]",
                f"{r['steps']:.1f}",
                f"{lp['rate']:.0%} [{lp['low']:.0%}, {lp['high']:.0%}]",
                f"{pm['rate']:.0%} [{pm['low']:.0%}, {pm['high']:.0%}]",
                _pct(r["support_recall"]),
                f"{sr['answered']}/{sr['exhausted']}/{sr['budget']}",
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
                "support recall": r["support_recall"], "answered": r["stop_reasons"]["answered"],
                "exhausted": r["stop_reasons"]["exhausted"], "budget": r["stop_reasons"]["budget"],
            })
        return Table(flat, title=f"{len(flat)} conditions, {self.config.level:.0%} intervals")

    # -- paired ------------------------------------------------------------------------------------------------
    def _paired_arrays(self, a: Condition, b: Condition):
        sa = {s.question_id: s for s in self.scores(a)}
        sb = {s.question_id: s for s in self.scores(b)}
        ids = [i for i in sa if i in sb]
        return ids, [sa[i] for i in ids], [sb[i] for i in ids]

    def paired(self) -> list[dict[str, Any]]:
        """McNemar comparisons (exact match, same questions) between conditions that differ in one factor:
        predicate vs implicit, each pair of gate sets, each pair of policies. Each row carries the
        :class:`~uncertainty_lab.semantic.evaluation.PairedComparison` and the mean context-token difference."""
        from ..semantic.evaluation import paired_comparison

        out = []
        conds = self.conditions
        for i, a in enumerate(conds):
            for b in conds[i + 1:]:
                same = [a.policy == b.policy, a.belief == b.belief, a.gate_label == b.gate_label]
                if sum(same) != 2:
                    continue
                factor = ("policy", "belief", "gates")[same.index(False)]
                # orient: predicate − implicit; later gate set − earlier; later policy − earlier
                first, second = (b, a)
                if factor == "belief" and b.belief == "implicit":
                    first, second = a, b
                ids, s1, s2 = self._paired_arrays(first, second)
                if not ids:
                    continue
                name = {"policy": lambda c: c.policy, "belief": lambda c: c.belief,
                        "gates": lambda c: c.gate_label}[factor]
                fixed = " · ".join(x for x, keep in zip((a.policy, a.belief, a.gate_label), same, strict=True) if keep)
                pc = paired_comparison([s.exact_match == 1.0 for s in s1], [s.exact_match == 1.0 for s in s2],
                                       names=(name(first), name(second)), level=self.config.level)
                out.append({"factor": factor, "fixed": fixed, "a": first.label, "b": second.label, "n": len(ids),
                            "comparison": pc,
                            "context_tokens_a": float(np.mean([s.cost for s in s1])),
                            "context_tokens_b": float(np.mean([s.cost for s in s2]))})
        return out

    # -- the exhaustion gate's saving ------------------------------------------------------------------------
    def token_savings(self) -> list[dict[str, Any]]:
        """For each condition whose gate set holds ``exhaustion`` and whose twin without it ran (same policy,
        belief and other gates): the saving (tokens without − tokens with) / tokens without on the same
        questions, for context and model tokens, each with a paired bootstrap interval, next to the accuracy
        difference (with − without), its interval and a plain statement of whether accuracy was the same."""
        from ..semantic.evaluation import bootstrap_ci, paired_comparison

        cfg = self.config
        out = []
        by_key = {(c.policy, c.belief, tuple(str(g) for g in c.gates)): c for c in self.conditions}
        for c in self.conditions:
            names = c.gate_names()
            if "exhaustion" not in names:
                continue
            rest = tuple(str(g) for g, n in zip(c.gates, names, strict=True) if n != "exhaustion")
            twin = by_key.get((c.policy, c.belief, rest))
            if twin is None:
                continue
            ids, s_with, s_without = self._paired_arrays(c, twin)
            if not ids:
                continue
            row: dict[str, Any] = {"policy": c.policy, "belief": c.belief, "with": c.gate_label,
                                   "without": twin.gate_label, "n": len(ids)}
            for key, get in (("context_tokens", lambda s: s.cost), ("model_tokens", lambda s: s.llm_tokens)):
                w = np.array([get(s) for s in s_with], dtype=float)
                wo = np.array([get(s) for s in s_without], dtype=float)
                if wo.mean() > 0:
                    ci = bootstrap_ci(_saving, wo, w, n_boot=cfg.n_boot, level=cfg.level, seed=cfg.seed)
                    row[key] = {"without": float(wo.mean()), "with": float(w.mean()),
                                "saving": float(_saving(wo, w)), "low": ci.low, "high": ci.high}
                else:
                    row[key] = {"without": float(wo.mean()), "with": float(w.mean()), "saving": math.nan,
                                "low": math.nan, "high": math.nan}
            pc = paired_comparison([s.exact_match == 1.0 for s in s_with], [s.exact_match == 1.0 for s in s_without],
                                   names=("with", "without"), level=cfg.level)
            row["accuracy_with"], row["accuracy_without"] = pc.accuracy_a, pc.accuracy_b
            row["accuracy_difference"] = {"difference": pc.difference, "low": pc.ci_low, "high": pc.ci_high,
                                          "p_value": pc.p_value, "only_with": pc.only_a, "only_without": pc.only_b}
            if pc.only_a + pc.only_b == 0:
                row["accuracy_same"] = True
                row["accuracy_note"] = (f"equal accuracy: right on exactly the same {len(ids)} questions with and "
                                        "without the gate")
                if pc.accuracy_a in (0.0, 1.0):
                    row["accuracy_note"] += (f" — but both arms are at {pc.accuracy_a:.0%}, so this says nothing about "
                                             "whether the gate can cost accuracy")
            else:
                row["accuracy_same"] = False
                diff = (f"{100 * pc.difference:+.1f} points, {cfg.level:.0%} CI [{100 * pc.ci_low:+.1f}, "
                        f"{100 * pc.ci_high:+.1f}], McNemar p = {pc.p_value:.2g}")
                if pc.ci_low > 0 or pc.ci_high < 0:
                    row["accuracy_note"] = f"accuracy NOT equal: with − without = {diff}"
                else:
                    row["accuracy_note"] = (f"accuracy not equal on these questions (with − without = {diff}); the "
                                            "difference is within noise, which is not the same as no loss")
            out.append(row)
        return out

    def savings_table(self) -> str:
        lvl = f"{self.config.level:.0%}"
        head = ["policy · belief", "without → with", "n", f"context-token saving [{lvl} boot]",
                f"model-token saving [{lvl} boot]", f"accuracy with − without [{lvl} Newcombe]", "accuracy"]
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for r in self.token_savings():
            cells = [f"{r['policy']} · {r['belief']}", f"{r['without']} → {r['with']}", str(r["n"])]
            for key in ("context_tokens", "model_tokens"):
                t = r[key]
                if math.isnan(t["saving"]):
                    cells.append(f"— ({_num(t['without'])} → {_num(t['with'])})")
                else:
                    cells.append(f"{t['saving']:+.0%} [{t['low']:+.0%}, {t['high']:+.0%}] "
                                 f"({_num(t['without'])} → {_num(t['with'])})")
            d = r["accuracy_difference"]
            cells.append(f"{100 * d['difference']:+.1f} pts [{100 * d['low']:+.1f}, {100 * d['high']:+.1f}] "
                         f"({r['accuracy_without']:.0%} → {r['accuracy_with']:.0%})")
            cells.append(r["accuracy_note"])
            lines.append("| " + " | ".join(cells) + " |")
        if len(lines) == 2:
            return "(no gate set with `exhaustion` has a twin without it in this experiment)"
        return "\n".join(lines)

    # -- report ------------------------------------------------------------------------------------------------
    def report(self) -> str:
        """The whole summary as markdown."""
        cfg = self.config
        n_q = max((len(v) for v in self.episodes.values()), default=0)
        oracle = isinstance(cfg.llm, OracleReader) or cfg.llm == "oracle"
        parts = [
            "# CGDP search experiment", "",
            f"{n_q} questions × {len(self.conditions)} conditions; model {self.llm_label}; retriever {cfg.retriever}, "
            f"k = {cfg.k}; max_steps = {cfg.max_steps}; λ = {cfg.lam:g} per token; seed {cfg.seed}.", "",
            "## Conditions", "", self.summary_table(), "",
            "Context tokens = Σ_t Cost(a_t), the observation tokens that entered the agent's context (paper Eq. 1); "
            "model tokens = prompt + completion of every model call (token proxy of `search.text.count_tokens`). "
            "Loop: a search/read that repeats an earlier one (Jaccard ≥ "
            f"{cfg.loop_threshold}) and shows nothing new. Premature stop: a gate or the model stopped before every "
            "supporting document was seen.", "",
            "## Token savings of the exhaustion gate", "", self.savings_table(), "",
            "Paper (GPT-4o-mini, four harnesses, three domains): *up to 39% fewer tokens with no loss of task "
            "accuracy* from the exhaustion gate. A saving here counts as \"at equal accuracy\" only where the "
            "accuracy column says so. The paper's belief-state result (up to +11.4% multi-hop accuracy) comes from a "
            "separate experiment; compare it with the belief rows below, not with the savings.", "",
            "## Paired comparisons (McNemar on exact match, same questions)", "",
        ]
        paired = self.paired()
        parts += [f"- **{p['factor']}** ({p['fixed']}): {p['comparison'].verdict}; mean context tokens "
                  f"{p['context_tokens_a']:,.0f} vs {p['context_tokens_b']:,.0f}" for p in paired] or ["- (one condition only)"]
        caveats = [f"{n_q} questions give wide intervals: read the intervals and verdicts, not the point estimates."]
        if oracle:
            caveats.append("The model is the **oracle reader** (model-free; it answers right exactly when its notes "
                           "cite every supporting document): accuracy here measures the search and its stopping, "
                           "not a language model.")
        fails = sum(r["parse_failures"] for r in self.summary_rows())
        if fails:
            steps = sum(r["policy_steps"] for r in self.summary_rows())
            caveats.append(f"{fails} of {steps} llm-policy steps could not be parsed and fell back to searching the "
                           "question (recorded per step).")
        parts += ["", "## Caveats", ""] + [f"- {c}" for c in caveats]
        return "\n".join(parts)

    # -- figures ----------------------------------------------------------------------------------------------
    def draw_tokens_accuracy(self, ax: Any = None, tokens: str = "context_tokens"):
        """Mean tokens (x, bootstrap interval) vs exact match (y, Wilson interval), one point per condition;
        colour = belief, marker = gate set, filled = heuristic / open = llm policy."""
        from matplotlib.figure import Figure

        fig = None
        if ax is None:
            fig = Figure(figsize=(6, 4.2), layout="constrained")
            ax = fig.subplots()
        rows = self.summary_rows()
        colours = {"implicit": "tab:blue", "predicate": "tab:orange"}
        markers = ["o", "s", "^", "D", "v", "P", "X"]
        gate_sets = list(dict.fromkeys(r["gates"] for r in rows))
        for r in rows:
            t, em = r[tokens], r["exact_match"]
            colour = colours.get(r["belief"], "tab:gray")
            marker = markers[gate_sets.index(r["gates"]) % len(markers)]
            face = colour if r["policy"] == "heuristic" else "none"
            xerr = np.maximum(0.0, np.nan_to_num([[t["mean"] - t["low"]], [t["high"] - t["mean"]]]))
            yerr = np.maximum(0.0, [[em["rate"] - em["low"]], [em["high"] - em["rate"]]])
            ax.errorbar([t["mean"]], [em["rate"]], xerr=xerr, yerr=yerr, fmt=marker, color=colour,
                        mfc=face, capsize=3, ms=7, label=r["condition"])
        ax.set_xlabel(("context tokens Σ Cost(a_t)" if tokens == "context_tokens" else "model tokens")
                      + " per episode (mean)")
        ax.set_ylabel("exact match")
        ax.set_ylim(-0.03, 1.03)
        ax.grid(alpha=0.3)
        ax.set_title(f"tokens vs accuracy ({self.config.level:.0%} intervals)")
        ax.legend(fontsize="x-small", loc="best")
        return fig if fig is not None else ax.figure

    def draw_stop_reasons(self, ax: Any = None):
        """Stacked bars: how each condition's episodes stopped (answered / exhausted / budget)."""
        from matplotlib.figure import Figure

        fig = None
        if ax is None:
            fig = Figure(figsize=(6, 0.5 + 0.45 * len(self.conditions)), layout="constrained")
            ax = fig.subplots()
        rows = self.summary_rows()
        y = np.arange(len(rows))
        left = np.zeros(len(rows))
        colours = {"answered": "tab:green", "exhausted": "tab:purple", "budget": "tab:gray"}
        for reason in STOP_REASONS:
            vals = np.array([r["stop_reasons"][reason] / max(r["n"], 1) for r in rows])
            ax.barh(y, vals, left=left, color=colours[reason], label=reason)
            left += vals
        ax.set_yticks(y, [r["condition"] for r in rows], fontsize="small")
        ax.invert_yaxis()
        ax.set_xlim(0, 1)
        ax.set_xlabel("share of episodes")
        ax.set_title("stop reasons")
        ax.legend(fontsize="x-small", loc="lower right")
        return fig if fig is not None else ax.figure

    def figure(self):
        """Three panels: context tokens vs accuracy, model tokens vs accuracy, stop reasons."""
        from matplotlib.figure import Figure

        fig = Figure(figsize=(17, 4.8), layout="constrained")
        a, b, c = fig.subplots(1, 3, gridspec_kw={"width_ratios": [1, 1, 1.1]})
        self.draw_tokens_accuracy(a, "context_tokens")
        self.draw_tokens_accuracy(b, "model_tokens")
        b.get_legend().remove()
        self.draw_stop_reasons(c)
        return fig

    # -- files ------------------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        def clean(x):
            if isinstance(x, float) and not math.isfinite(x):
                return None
            if isinstance(x, (np.floating, np.integer)):
                return clean(x.item())
            if isinstance(x, dict):
                return {str(k): clean(v) for k, v in x.items()}
            if isinstance(x, (list, tuple)):
                return [clean(v) for v in x]
            return x

        paired = [{**{k: v for k, v in p.items() if k != "comparison"},
                   "difference": p["comparison"].difference, "ci_low": p["comparison"].ci_low,
                   "ci_high": p["comparison"].ci_high, "p_value": p["comparison"].p_value,
                   "verdict": p["comparison"].verdict} for p in self.paired()]
        return clean({
            "config": self.config.to_dict(), "llm": self.llm_label, "summary": self.summary_rows(),
            "token_savings": self.token_savings(), "paired": paired,
            "episodes": {c.label: {ep.question_id: str(ep.path) if ep.path else None for ep in eps}
                         for c, eps in self.episodes.items()},
        })

    def save(self, out_dir: str | os.PathLike | None = None, *, figure: bool = True) -> dict[str, Path]:
        """Write ``summary.md``, ``results.json`` and (``figure``) ``figure.png`` to ``out_dir``."""
        return save_outputs(self, out_dir, report="summary", figure=figure, dpi=100)


# ----------------------------------------------------------------------------------------------------------
# running
# ----------------------------------------------------------------------------------------------------------


def _make_llm(config: SearchConfig, questions: Sequence[SearchQuestion]) -> Any:
    if not isinstance(config.llm, str):
        return config.llm
    if config.llm == "oracle":
        if config.llm_params:
            raise ValueError("llm_params do not apply to the oracle reader")
        return OracleReader(questions)
    from ..llm import get_llm

    return get_llm(config.llm, quiet=True, **dict(config.llm_params))


def _check_gates(conditions: Sequence[Condition]) -> None:
    """Build every gate set once before anything runs: an unknown gate or a bad parameter is a ValueError now."""
    from ..registry import RegistryError
    from .gates import make_gates

    for c in conditions:
        try:
            make_gates([_gate_for_episode(g) for g in c.gates])
        except (RegistryError, ValueError, TypeError) as exc:
            raise ValueError(f"gate set {c.gate_label!r}: {exc}") from exc


def run_experiment(config: SearchConfig | Mapping[str, Any] | str | os.PathLike, *, save: bool = True,
                   **overrides: Any) -> SearchExperimentResult:
    """Run every condition of ``config`` (a config, a dict, or a .json / .toml path; ``overrides`` replace
    settings) over the selected questions, resuming any episode file already in ``out_dir/episodes``; write
    the summary, results and figure when ``save``."""
    from tqdm.auto import tqdm

    if isinstance(config, (str, os.PathLike)):
        config = load_config(config)
    elif isinstance(config, Mapping):
        config = SearchConfig.from_mapping(config)
    if overrides:
        SearchConfig.from_mapping(overrides)  # names unknown settings clearly
        config = dataclasses.replace(config, **overrides)
    documents, all_questions = _dataset(config)
    questions = select_questions(config, all_questions)
    llm = _make_llm(config, all_questions)
    env = SearchEnvironment(documents, retriever=config.retriever, k=config.k)
    conditions = config.conditions()
    _check_gates(conditions)
    out = Path(config.out_dir)
    episodes: dict[Condition, list[Episode]] = {c: [] for c in conditions}
    bar = tqdm(total=len(conditions) * len(questions), desc="search episodes", disable=not config.progress,
               unit="episode")
    try:
        for c in conditions:
            bar.set_postfix_str(c.label, refresh=False)
            for q in questions:
                path = out / "episodes" / c.slug / f"{_slug(q.id)}.jsonl"
                try:
                    ep = run_episode(
                        q, env, llm=llm, policy=c.policy, policy_params=config.policy_params.get(c.policy) or None,
                        belief=c.belief, belief_params=config.belief_params.get(c.belief) or None,
                        gates=[_gate_for_episode(g) for g in c.gates], max_steps=config.max_steps, seed=config.seed,
                        lam=config.lam, out=path, resume=not config.overwrite,
                        answer_max_tokens=config.answer_max_tokens)
                except EpisodeResumeError as exc:
                    raise EpisodeResumeError(f"{exc}. In an experiment: choose another out_dir, or set "
                                             "overwrite = true to start afresh") from None
                episodes[c].append(ep)
                bar.update(1)
    finally:
        bar.close()
    result = SearchExperimentResult(config, episodes, out, llm_label=getattr(llm, "label", type(llm).__name__))
    if save:
        result.save(out, figure=config.figure)
    return result
