"""A cascade's run record (:class:`CascadeRun`: the seed event e_0 and the steps e_1..e_L) and its run file.

The file (:data:`FORMAT`, the one journal grammar of :mod:`uncertainty_lab.journal`): a header ``{"type":
"header", "format", "config", "steps"}``, one ``{"type": "step", ...}`` per step, and ``{"type": "end",
"reason", "n_steps"}`` when the run finishes (``reason`` "steps" or "horizon").

Loading a file never imports or calls code the file names: :meth:`CascadeRun.prompt` rebuilds a prompt with one
of the package's templates (:data:`~uncertainty_lab.cascade.prompt.PROMPTS`, found by the name the file
records) or with the ``prompt_fn`` the caller passes.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..contracts.memory import CascadeError, Event, History, MemoryItem, NodeSpec, as_node_specs
from ..journal import Journal, JournalFormat
from .prompt import PROMPTS, build_prompt, prompt_hash

__all__ = ["FORMAT", "MOVED_NAMES", "CascadeResumeError", "CascadeRun", "CascadeStep", "function_name",
           "known_template", "load"]


class CascadeResumeError(CascadeError):
    """An existing run file cannot be continued with these arguments (a different configuration)."""


FORMAT = JournalFormat("uncertainty_lab.cascade/1", body=("step",), end="end", error=CascadeError,
                       resume_error=CascadeResumeError, what="cascade run")

#: the names run files written before 0.2 record for functions that have moved since: {old name: new name}
MOVED_NAMES: dict[str, str] = {
    "uncertainty_lab.cascade.experiment.headline_prompt": "uncertainty_lab.cascade.prompt.headline_prompt",
    "uncertainty_lab.cascade.experiment.clean_headline": "uncertainty_lab.cascade.headlines.clean_headline",
}


def function_name(fn: Callable) -> str:
    """``module.qualname`` of a function: how a run's configuration names its template and postprocess."""
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', type(fn).__name__)}"


def known_template(recorded: Any) -> Callable | None:
    """The package template a run file names (a :data:`PROMPTS` key, or the recorded ``module.qualname`` of one,
    old names included); None for any other name. Nothing is imported: the name is only looked up."""
    if not isinstance(recorded, str):
        return None
    recorded = MOVED_NAMES.get(recorded, recorded)
    for key, fn in PROMPTS.items():
        if recorded in (key, function_name(fn)):
            return fn
    return None


@dataclass(frozen=True)
class CascadeStep:
    """One generated event with what produced it: its memory (indices into the run's events, 0 = seed, and the
    normalised weights), the prompt's hash, the language-model seed and, when sampled, the alternative texts and
    the metric's result on them (``{"metric", "uncertainty", "confidence", ...}``). ``raw_text``: what the model
    wrote, kept only when a ``postprocess`` function changed it into ``text``."""

    step: int
    time: float
    node: int
    text: str
    memory: tuple[MemoryItem, ...]
    prompt_hash: str
    llm_seed: int
    finish_reason: str = "stop"
    samples: tuple[str, ...] | None = None
    metric: dict[str, Any] | None = None
    raw_text: str | None = None

    @property
    def event(self) -> Event:
        return Event(self.time, self.node, self.text)

    @property
    def uncertainty(self) -> float:
        return float(self.metric["uncertainty"]) if self.metric else math.nan

    @property
    def confidence(self) -> float:
        return float(self.metric["confidence"]) if self.metric else math.nan

    def to_record(self) -> dict[str, Any]:
        rec: dict[str, Any] = {
            "type": "step", "step": self.step, "time": self.time, "node": self.node, "text": self.text,
            "memory": [m.to_record() for m in self.memory], "prompt_hash": self.prompt_hash,
            "llm_seed": self.llm_seed, "finish_reason": self.finish_reason,
        }
        if self.samples is not None:
            rec["samples"] = list(self.samples)
            rec["metric"] = self.metric
        if self.raw_text is not None:
            rec["raw_text"] = self.raw_text
        return rec

    @classmethod
    def from_record(cls, rec: dict[str, Any]) -> CascadeStep:
        samples = rec.get("samples")
        return cls(
            step=int(rec["step"]), time=float(rec["time"]), node=int(rec["node"]), text=rec["text"],
            memory=tuple(MemoryItem.from_record(m) for m in rec.get("memory", ())),
            prompt_hash=rec.get("prompt_hash", ""), llm_seed=int(rec.get("llm_seed", -1)),
            finish_reason=rec.get("finish_reason", "stop"),
            samples=None if samples is None else tuple(samples), metric=rec.get("metric"),
            raw_text=rec.get("raw_text"),
        )


@dataclass
class CascadeRun:
    """A cascade: its configuration, the seed event e_0 and the generated steps e_1..e_L.

    ``stop_reason``: "steps" (all L steps done), "horizon" (no further event before the horizon, or the
    intensity died out) or None (interrupted; :func:`~uncertainty_lab.cascade.run.simulate_cascade` with the
    same ``out`` resumes it). ``CascadeRun.load(path)`` reloads a run file into the same object.
    """

    config: dict[str, Any]
    seed_event: Event
    node_specs: tuple[NodeSpec, ...]
    steps: list[CascadeStep] = field(default_factory=list)
    stop_reason: str | None = None
    path: Path | None = None

    def __len__(self) -> int:
        return len(self.steps)

    def __repr__(self) -> str:
        where = f", path={str(self.path)!r}" if self.path else ""
        return (f"CascadeRun({len(self.steps)} steps, selector={self.config.get('selector', {}).get('name')!r}, "
                f"k={self.config.get('k')}, stop_reason={self.stop_reason!r}{where})")

    @property
    def n_steps(self) -> int:
        return len(self.steps)

    @property
    def complete(self) -> bool:
        return self.stop_reason is not None

    @property
    def events(self) -> list[Event]:
        """e_0 (the seed), e_1, …, e_L."""
        return [self.seed_event] + [s.event for s in self.steps]

    @property
    def history(self) -> History:
        return History(self.node_specs, self.events)

    @property
    def texts(self) -> list[str]:
        return [e.text for e in self.events]

    @property
    def times(self) -> np.ndarray:
        return np.array([e.time for e in self.events])

    @property
    def nodes(self) -> np.ndarray:
        return np.array([e.node for e in self.events], dtype=np.int64)

    @property
    def node_names(self) -> list[str]:
        return [s.name for s in self.node_specs]

    @property
    def uncertainty(self) -> np.ndarray:
        """The per-step metric uncertainty on the alternative samples (NaN where none was sampled), shape (L,)."""
        return np.array([s.uncertainty for s in self.steps], dtype=float)

    @property
    def confidence(self) -> np.ndarray:
        return np.array([s.confidence for s in self.steps], dtype=float)

    def template(self) -> Callable:
        """The template the run recorded (``config["prompt_fn"]``), found among the package's templates only; a
        run without one used :func:`~uncertainty_lab.cascade.prompt.build_prompt`. Any other name is an error
        asking for the function: a run file never chooses code to import or call."""
        recorded = self.config.get("prompt_fn")
        if recorded is None:
            return build_prompt
        fn = known_template(recorded)
        if fn is None:
            raise CascadeError(f"the run used the prompt template {recorded!r}, which is not one of the package's "
                               f"templates {sorted(PROMPTS)}; pass that function as prompt_fn= (a run file never "
                               "imports the code it names)")
        return fn

    def prompt(self, step: int, prompt_fn: Callable | None = None, *, verify: bool = True) -> list[dict[str, str]]:
        """Rebuild the messages the model saw at ``step`` (1..L) with ``prompt_fn`` — by default the package
        template the run recorded (:meth:`template`); ``verify`` checks them against the stored prompt hash."""
        if not 1 <= step <= len(self.steps):
            raise CascadeError(f"step must be in 1..{len(self.steps)}, got {step!r}")
        if prompt_fn is None:
            prompt_fn = self.template()
        s = self.steps[step - 1]
        history = History(self.node_specs, self.events[:step])
        messages = prompt_fn(s.time, s.node, self.node_specs[s.node], list(s.memory), history, self.node_specs)
        if verify and s.prompt_hash and prompt_hash(messages) != s.prompt_hash:
            raise CascadeError(
                f"the rebuilt prompt of step {step} does not match the stored hash: the run used another prompt_fn "
                f"({self.config.get('prompt_fn')}); pass it as prompt_fn=, or verify=False"
            )
        return messages

    @classmethod
    def from_journal(cls, journal: Journal) -> CascadeRun:
        """The run a journal holds (:meth:`JournalFormat.read`): steps must be numbered 1, 2, … in order."""
        config = journal.config
        for expected, rec in enumerate(journal.body, start=1):
            if rec.get("step") != expected:
                raise CascadeError(f"{journal.path}: step {rec.get('step')!r} where step {expected} was expected")
        return cls(config=config, seed_event=Event.from_record(config["seed_event"]),
                   node_specs=as_node_specs(config["node_specs"]),
                   steps=[CascadeStep.from_record(r) for r in journal.body],
                   stop_reason=None if journal.end is None else journal.end.get("reason"), path=journal.path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> CascadeRun:
        """Reload a cascade run file (complete or interrupted) into a CascadeRun."""
        return cls.from_journal(FORMAT.load(path))


def load(path: str | os.PathLike) -> CascadeRun:
    """:meth:`CascadeRun.load`."""
    return CascadeRun.load(path)
