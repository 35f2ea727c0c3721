"""The CGDP comparison: belief states (implicit vs predicate) × stopping-gate sets × policies on multi-hop
questions — the shipped set by default, or MuSiQue / HotpotQA files that ``data`` names — every episode streamed
to its own resumable JSONL file.

    from uncertainty_lab.search.experiment import run_experiment
    result = run_experiment({"llm": "oracle", "limit": 10, "out_dir": "search_results"})
    print(result.report())

The lab contract (:mod:`uncertainty_lab.lab`): :class:`SearchExperiment` ``prepare``\\ s the corpus, the
questions, the environment (one per question over its own paragraphs with ``corpus = "own"``, the default for
MuSiQue and HotpotQA), the language model and every gate set (an unknown gate or a bad parameter is an
error before anything runs); its ``units`` are one episode per condition × question; ``run_unit`` runs one with
:func:`~uncertainty_lab.search.run.run_episode`, resuming its file; ``collect`` builds the
:class:`~uncertainty_lab.search.result.SearchResult` (what it reports: :mod:`~uncertainty_lab.search.result`).

The **language model** (``llm``): a spec for :func:`~uncertainty_lab.llm.get_llm` (``"embedded"``,
``"ollama:<model>"``, ``"auto"``), a backend instance, or ``"oracle"`` — :class:`~uncertainty_lab.search.oracle.
OracleReader`, a model-free stand-in that reads like a perfect extractor and knows the gold data. The oracle
isolates search and stopping from model quality (with the ``heuristic`` policy nothing in an episode depends
on a model); its accuracy is an upper bound on what the gathered evidence allows, not a model's accuracy. It
cannot choose actions, so it refuses the ``llm`` policy.

Files in ``out_dir``: ``episodes/<policy>__<belief>__<gates>/<question id>.jsonl`` (resumed when present),
``summary.md``, ``results.json`` and ``figure.png`` (tokens vs accuracy per condition with intervals; stop
reasons). Configure with :class:`~uncertainty_lab.search.config.SearchConfig`, a dict, or a JSON / TOML file
(:func:`load_config`); the CLI ``uncertainty-lab search run --config FILE`` runs it headless.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ..datasets.search import SearchQuestion
from ..lab import Experiment, Unit
from ..outdir import unit_file_name
from .config import (
    Condition,
    SearchConfig,
    gate_label,
    load_config,
    load_data,
    own_corpus,
    question_documents,
    select_questions,
)
from .environment import SearchEnvironment
from .gates import make_gates
from .oracle import OracleReader, OracleReaderError  # noqa: F401  (moved to search.oracle; importable here until 0.3)
from .record import Episode, EpisodeResumeError
from .result import SearchExperimentResult, SearchResult
from .run import run_episode

__all__ = [
    "EXPERIMENT",
    "Condition",
    "SearchConfig",
    "SearchContext",
    "SearchExperiment",
    "SearchExperimentResult",
    "SearchResult",
    "gate_label",
    "load_config",
    "make_llm",
    "run_experiment",
    "select_questions",
]

@dataclass
class SearchContext:
    """What every episode of an experiment shares: the environment over every loaded document, the model, the
    selected questions (in file order), the conditions (policies outermost) and, with an own corpus per question
    (``corpus``), each question's environment by id."""

    env: SearchEnvironment
    llm: Any
    questions: list[SearchQuestion]
    conditions: list[Condition]
    corpora: dict[str, SearchEnvironment] = field(default_factory=dict)

    def environment(self, question_id: str) -> SearchEnvironment:
        """What question ``question_id`` searches: its own paragraphs, or the shared corpus."""
        return self.corpora.get(question_id, self.env)


def make_llm(config: SearchConfig, questions: Sequence[SearchQuestion]) -> Any:
    """The config's model: an instance as is, the oracle reader over ``questions``, or ``get_llm(spec,
    **llm_params)`` (an Ollama server checked now, in seconds, so ``--check`` finds it down)."""
    if not isinstance(config.llm, str):
        return config.llm
    if config.llm == "oracle":
        if config.llm_params:
            raise ValueError("llm_params do not apply to the oracle reader")
        return OracleReader(questions)
    from ..llm import check_ready, get_llm

    return check_ready(get_llm(config.llm, quiet=True, **dict(config.llm_params)))


def check_gates(conditions: Sequence[Condition]) -> None:
    """Build every gate set once before anything runs: an unknown gate or a bad parameter is a ValueError now,
    naming the gate set (caused by the registry's error)."""
    from ..registry import RegistryError

    for c in conditions:
        try:
            make_gates(c.episode_gates(), what=None)
        except (RegistryError, ValueError, TypeError) as exc:
            raise ValueError(f"gate set {c.gate_label!r}: {exc}") from exc


class SearchExperiment(Experiment):
    """Policies × beliefs × gate sets over the selected questions, one resumable episode file per condition and
    question (see the module doc)."""

    name: ClassVar[str] = "search"
    config_class: ClassVar[type[SearchConfig]] = SearchConfig
    resume_error: ClassVar[type[Exception]] = EpisodeResumeError
    unit_name: ClassVar[str] = "episode"

    def prepare(self, config: SearchConfig, *, llm: Any = None, **resources: Any) -> SearchContext:
        """The data, the questions, the model (``llm=`` a backend to use instead of the config's), the
        environment and the conditions, every gate set checked."""
        documents, all_questions = load_data(config)
        questions = select_questions(config, all_questions)
        llm = make_llm(config, all_questions) if llm is None else llm
        env = SearchEnvironment(documents, retriever=config.retriever, k=config.k)
        corpora = {q.id: SearchEnvironment(question_documents(q, documents), retriever=config.retriever, k=config.k,
                                           embedder=env.embedder)
                   for q in questions} if own_corpus(config) else {}
        conditions = config.conditions()
        check_gates(conditions)
        return SearchContext(env, llm, questions, conditions, corpora)

    def units(self, config: SearchConfig, context: SearchContext) -> list[Unit]:
        """One episode per condition × question, conditions outermost; its file under ``out_dir/episodes``."""
        out = Path(config.out_dir) / "episodes"
        return [Unit((c, q.id), f"{c.label} · {q.id}", out / c.slug / f"{unit_file_name(q.id)}.jsonl",
                     {"condition": c, "question": q})
                for c in context.conditions for q in context.questions]

    def run_unit(self, unit: Unit, config: SearchConfig, context: SearchContext) -> Episode:
        """Run (or resume, or read back) one episode."""
        c: Condition = unit.spec["condition"]
        return run_episode(
            unit.spec["question"], context.environment(unit.spec["question"].id), llm=context.llm, policy=c.policy,
            policy_params=config.policy_params.get(c.policy) or None, belief=c.belief,
            belief_params=config.belief_params.get(c.belief) or None, gates=c.episode_gates(),
            max_steps=config.max_steps, seed=config.seed, lam=config.lam, out=unit.path,
            resume=not config.overwrite, answer_max_tokens=config.answer_max_tokens)

    def collect(self, config: SearchConfig, context: SearchContext, records: dict[tuple, Any]) -> SearchResult:
        """The episodes by condition, in question order."""
        episodes = {c: [records[(c, q.id)] for q in context.questions] for c in context.conditions}
        return SearchResult(config, episodes, Path(config.out_dir),
                            llm_label=getattr(context.llm, "label", type(context.llm).__name__))


EXPERIMENT = SearchExperiment()


def run_experiment(config: SearchConfig | Mapping[str, Any] | str | os.PathLike | None = None, *, save: bool = True,
                   **overrides: Any) -> SearchResult:
    """Run every condition of ``config`` (a config, a dict, or a .json / .toml path; ``overrides`` replace
    settings) over the selected questions, resuming any episode file already in ``out_dir/episodes``; write
    the summary, results and figure when ``save``."""
    return EXPERIMENT.run(config, save=save, **overrides)
