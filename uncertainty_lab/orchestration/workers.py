"""Workers: a language model with a role (system prompt) and a sampling temperature, asked one (sub)task.

Asking a worker returns a :class:`WorkerAnswer`: the **primary** answer the coordinator reads plus the
sample set the metrics score. Primary and extras are sampled **alike** — one request of ``n`` samples at
the worker's temperature and ``max_tokens``; the primary is sample 0 (HASSUM §6: a terse primary at the
default temperature beside verbose extras at 0.85 makes the metrics measure format and length, not meaning).

Every completion goes through :func:`extract_answer`, which pulls a short final answer out of a possibly
chatty completion. The metrics score the *extracted* answers (compare normalised final answers, §6); the
raw completions stay in ``samples.meta["raw_texts"]``. Extraction first removes what the completion echoes of
its instructions (the worker's system prompt and the prompt: :func:`~uncertainty_lab.semantic.echo.strip_instructions`),
so an echo never reaches a metric or the final answer. Extraction never returns an empty answer silently:
an empty completion, or one that only echoed its instructions (``method="echo"``), is recorded as a failed
extraction, left out of the scored set, and the answer is invalid (``WorkerAnswer.valid`` is False, with
``problem`` saying why). A backend that fails (after its retries, :mod:`uncertainty_lab.llm.retry`) is an
error raised to the run — never an answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..semantic import SampleSet, sample_answers
from ..semantic.echo import strip_instructions

__all__ = ["DEFAULT_SYSTEM", "WORKER_ROLES", "Extraction", "Worker", "WorkerAnswer", "default_workers",
           "extract_answer"]

DEFAULT_SYSTEM = "You answer quiz questions. Reply with the short answer only: a name, a number, yes or no, or a few words."

#: Roles of the default worker pool (reassignment and delegation pick other roles of the same model).
WORKER_ROLES: dict[str, str] = {
    "direct": DEFAULT_SYSTEM,
    "careful": ("You are a careful expert. First check that the question makes sense; if its premise is false, "
                "say so. Reply with the short answer only."),
    "plain": "Give a brief, factual answer in one short sentence. If you should not help with a request, say you can't help.",
}

# "Final answer: X", "Answer: X", "The (correct) answer (to this question) is: X"
_MARKER = re.compile(r"\banswer\b(?:\s+to\s+(?:this|the|your)\s+question)?\s*(?:is\b|would\s+be\b|:|-)\s*:?\s*(.+)",
                     re.IGNORECASE | re.DOTALL)
_QUOTED = re.compile(r"^[\"“'‘*]+([^\"”'’*\n]+)[\"”'’*]")
_SENTENCE_END = re.compile(r"[.!?](?=\s)|\n")
_ABBREVIATIONS = frozenset({"dr", "mr", "mrs", "ms", "st", "prof", "vs", "etc", "e.g", "i.e", "jr", "sr", "mt"})
_WRAP = " \t\r\n\"'`*_“”‘’«»()[]"
MAX_ANSWER_CHARS = 200


@dataclass(frozen=True)
class Extraction:
    """How a short answer was pulled out of one completion: ``method`` is ``marker`` (an "Answer:" line),
    ``first_sentence`` (no marker: the first sentence), ``echo`` (the completion only echoed its instructions;
    ``answer`` is "") or ``failed`` (nothing usable; ``answer`` is "")."""

    answer: str
    method: str
    raw: str

    @property
    def ok(self) -> bool:
        return self.method not in ("failed", "echo")

    def to_dict(self) -> dict[str, str]:
        return {"answer": self.answer, "method": self.method}


def _first_sentence(text: str) -> str:
    """Up to the first sentence end (., !, ? before a space, or a newline), skipping abbreviations (Dr., St.)."""
    text = text.strip().strip(_WRAP).strip()
    for m in _SENTENCE_END.finditer(text):
        words = text[:m.start()].split()
        if m.group() == "." and words and words[-1].lower().strip(_WRAP) in _ABBREVIATIONS:
            continue
        return text[:m.start()].strip()
    return text


def _clean(text: str) -> str:
    text = text.strip().strip(_WRAP).rstrip(".!?,;:").strip(_WRAP).strip()
    return text[:MAX_ANSWER_CHARS].strip()


def extract_answer(text: str, instructions: Iterable[str | None] = ()) -> Extraction:
    """The short final answer in ``text`` once the ``instructions`` it echoes are removed: what follows the last
    "Answer:" / "The answer is" marker (up to the end of its sentence), else the first sentence; quotes, markdown
    and trailing punctuation are stripped and the result is capped at 200 characters. ``method="echo"`` with
    ``answer=""`` when the completion only echoed its instructions; ``method="failed"`` with ``answer=""`` when it
    holds nothing (check the model and ``max_tokens``). ``raw`` is always the completion as written."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    if not text.strip():
        return Extraction("", "failed", text)
    stripped = strip_instructions(text, instructions)
    if stripped.only_echo:
        return Extraction("", "echo", text)
    found = _extract(stripped.text)
    return Extraction(found.answer, found.method, text)


def _extract(text: str) -> Extraction:
    matches = list(_MARKER.finditer(text))
    for m in reversed(matches):
        inner = m.group(1)
        while (again := _MARKER.search(inner)) is not None and again.start() <= 24:  # "Answer: The answer is X"
            inner = again.group(1)
        quoted = _QUOTED.match(inner.strip())
        answer = _clean(quoted.group(1) if quoted else _first_sentence(inner))
        if answer:
            return Extraction(answer, "marker", text)
    answer = _clean(_first_sentence(text))
    if answer:
        return Extraction(answer, "first_sentence", text)
    answer = _clean(text)  # e.g. a completion that is only punctuation and quotes around a word
    return Extraction(answer, "first_sentence", text) if answer else Extraction("", "failed", text)


@dataclass
class WorkerAnswer:
    """One worker call: the primary ``answer`` (sample 0, extracted) and its ``raw`` completion, the
    scored ``samples`` (extracted answers; raw texts, extraction methods and failures in ``meta``), the
    ``prompt`` sent, ``model_calls`` (generations returned, plus one per failed request) and
    ``cached_calls`` (those served by the completion cache), and ``error`` when the backend failed."""

    worker: str
    prompt: str
    answer: str
    raw: str
    samples: SampleSet
    extractions: list[Extraction] = field(default_factory=list)
    error: str | None = None
    model_calls: int = 0
    cached_calls: int = 0

    @property
    def valid(self) -> bool:
        """A usable primary answer: the backend answered and extraction found something."""
        return self.problem is None

    @property
    def problem(self) -> str | None:
        """Why the primary answer is not usable, or None."""
        if self.error is not None:
            return f"backend error: {self.error}"
        if not self.extractions:
            return "no completion"
        if self.extractions[0].method == "echo":
            return "answer extraction failed: the primary completion only echoed its instructions"
        if not self.extractions[0].ok or not self.answer.strip():
            return "answer extraction failed: the primary completion is empty"
        return None

    def to_dict(self) -> dict[str, Any]:
        return {"worker": self.worker, "prompt": self.prompt, "answer": self.answer, "raw": self.raw,
                "samples": self.samples.to_dict(), "extractions": [e.to_dict() for e in self.extractions],
                "error": self.error, "model_calls": self.model_calls, "cached_calls": self.cached_calls}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> WorkerAnswer:
        raws = d["samples"].get("meta", {}).get("raw_texts") or []
        ex = [Extraction(e["answer"], e["method"], raws[i] if i < len(raws) else "") for i, e in enumerate(d["extractions"])]
        return cls(d["worker"], d["prompt"], d["answer"], d["raw"], SampleSet.from_dict(d["samples"]), ex,
                   d.get("error"), d.get("model_calls", 0), d.get("cached_calls", 0))


def _resolve_backend(backend: Any, model: str | None) -> Any:
    from .. import registry
    from ..llm import as_backend, get_llm
    from ..parameters import parameters

    if not isinstance(backend, str):
        backend = as_backend(backend, what="backend")
        if model is not None:
            raise ValueError("model is only for a backend given by name; a backend instance already has its model")
        return backend
    if model is None:
        return get_llm(backend, quiet=True)
    name = backend.partition(":")[0]
    if name == "auto":
        return get_llm("auto", quiet=True, model=model)
    declared = {p.name for p in parameters(registry.get("llm_backends", name))}
    if "model" in declared:
        return get_llm(name, model=model, quiet=True)
    if "gguf" in declared:
        return get_llm(name, gguf=model, quiet=True)
    raise ValueError(f"backend {name!r} takes no model; leave model=None")


@dataclass
class Worker:
    """A worker: ``name``, ``backend`` (a spec for :func:`uncertainty_lab.llm.get_llm` or a backend instance),
    ``model`` (for a backend given by name: an Ollama model, or a GGUF path for ``embedded``), ``system``
    prompt (its role), sampling ``temperature`` and ``max_tokens`` — the same for the primary and the extras."""

    name: str
    backend: Any = "embedded"
    model: str | None = None
    system: str = DEFAULT_SYSTEM
    temperature: float = 0.7
    max_tokens: int = 32
    _llm: Any = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")
        if not 0.0 < float(self.temperature) <= 2.0:
            raise ValueError(f"temperature must be in (0, 2] (samples must vary for the metrics to mean anything), "
                             f"got {self.temperature!r}")
        if not isinstance(self.max_tokens, int) or self.max_tokens < 1:
            raise ValueError(f"max_tokens must be a positive integer, got {self.max_tokens!r}")
        if self.system is not None and not isinstance(self.system, str):
            raise TypeError(f"system must be a string or None, got {type(self.system).__name__}")
        if not isinstance(self.backend, str):
            _resolve_backend(self.backend, self.model)  # checks an instance now; a name starts on first use

    @property
    def llm(self) -> Any:
        """The backend, created on first use."""
        if self._llm is None:
            self._llm = _resolve_backend(self.backend, self.model)
        return self._llm

    @property
    def label(self) -> str:
        """``backend:model`` of the worker's model, without starting it when it was given by name."""
        if not isinstance(self.backend, str):
            return getattr(self.backend, "label", type(self.backend).__name__)
        return self.backend + (f":{self.model}" if self.model else "")

    def config(self) -> dict[str, Any]:
        """What the worker's answers depend on (for run headers)."""
        return {"name": self.name, "backend": self.label, "system": self.system, "temperature": float(self.temperature),
                "max_tokens": self.max_tokens}

    def ask(self, prompt: str, n_samples: int, seed: int, *, question: str | None = None) -> WorkerAnswer:
        """Ask ``prompt`` and sample ``n_samples`` answers alike (sample 0 is the primary). ``question`` (default:
        the prompt) is the scored sample set's question — the one equivalence judges see, so a re-prompt's
        answers are judged against the original question. A backend failure (after the backend's retries) is
        raised: a failed call is never an answer (:mod:`uncertainty_lab.llm.retry`)."""
        samples = sample_answers(self.llm, prompt, n=n_samples, temperature=float(self.temperature), seed=seed,
                                 max_tokens=self.max_tokens, system=self.system, on_error="raise")
        error = samples.meta.get("error")
        raw_texts = list(samples.texts)
        extractions = [extract_answer(t, (self.system, prompt)) for t in raw_texts]
        keep = [i for i, e in enumerate(extractions) if e.ok]
        meta = dict(samples.meta, worker=self.name, raw_texts=raw_texts,
                    extraction=[e.method for e in extractions],
                    primary="sample 0 (primary and extras sampled alike: same temperature and max_tokens)")
        dropped = [i for i in range(len(extractions)) if i not in keep]
        if dropped:
            meta["dropped_empty"] = dropped
        lps = samples.logprobs
        scored = SampleSet(texts=[extractions[i].answer for i in keep], question=prompt if question is None else question,
                           logprobs=None if lps is None else [lps[i] for i in keep], meta=meta)
        primary = extractions[0] if extractions else Extraction("", "failed", "")
        calls = len(raw_texts) + (1 if error else 0)
        cached = sum(bool(c) for c in samples.meta.get("cached", []))
        return WorkerAnswer(self.name, prompt, primary.answer, primary.raw, scored, extractions, error, calls, cached)


def default_workers(backend: Any = "embedded", model: str | None = None, *, temperature: float = 0.7,
                    max_tokens: int = 32, roles: dict[str, str] | None = None) -> list[Worker]:
    """One worker per role in :data:`WORKER_ROLES` (``direct`` first: it gets every question first), all on
    the same model: reassignment and delegation then change the role and angle, not the model."""
    roles = WORKER_ROLES if roles is None else roles
    if not roles:
        raise ValueError("roles is empty; give at least one {name: system prompt}")
    return [Worker(name, backend, model, system, temperature, max_tokens) for name, system in roles.items()]
