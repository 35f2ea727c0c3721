"""Sample sets: the answers a model gave to one question, kept apart from any score computed on them.

One :class:`SampleSet` feeds every metric. :func:`sample_answers` is the only place that calls a model
to make one; metrics never sample.

Log-probabilities are stored per token. The sequence probability the metrics use is **length-normalised**:
``length_normalised_logprobs[i]`` is the mean token log-probability of sample i, i.e. the log of the
geometric-mean token probability, ``log p(s_i|x)^{1/L_i}`` (HASSUM §2.2, Qiu & Miikkulainen's weights).
Summed log-probs (``sequence_logprobs``) would make any likelihood weighting depend on answer length.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .text import valid_text

__all__ = ["SampleSet", "as_sample_set", "sample_answers"]


def _token_logprobs(value: Any, where: str) -> list[float]:
    """Accept a list of floats, of ``TokenLogprob`` objects, or of ``(token, logprob)`` pairs."""
    if value is None:
        raise ValueError(f"{where} is None")
    out = []
    for j, t in enumerate(value):
        lp = getattr(t, "logprob", None)
        if lp is None:
            lp = t[1] if isinstance(t, (tuple, list)) else t
        if isinstance(lp, bool) or not isinstance(lp, (int, float, np.floating, np.integer)):
            raise TypeError(f"{where}[{j}] must be a number (a token log-probability), got {lp!r}")
        lp = float(lp)
        if not math.isfinite(lp) or lp > 1e-6:
            raise ValueError(f"{where}[{j}] must be a finite log-probability <= 0, got {lp!r}")
        out.append(min(lp, 0.0))
    return out


def _mean_or_nan(values: list[float] | None) -> float:
    return float(np.mean(values)) if values else math.nan


@dataclass
class SampleSet:
    """Sampled answers to one question.

    - ``texts``: the N sampled answers (duplicates kept: their frequencies are the data).
    - ``logprobs``: per sample, its token log-probabilities (or ``None`` when the backend gave none).
    - ``greedy`` / ``greedy_logprobs``: the most-likely (temperature-0) answer when it was asked for. It is
      *not* one of ``texts``: sample it separately and the same way (HASSUM §6: a terse primary beside verbose
      extras makes the metrics measure format).
    - ``meta``: provenance (backend, model, temperature, seed, finish reasons, an error if sampling failed).

    Every text (``texts``, ``question``, ``greedy``) passes :func:`~uncertainty_lab.semantic.text.valid_text`: a
    code point no UTF-8 text can hold (a lone surrogate) is replaced by U+FFFD with a warning naming the sample.
    """

    texts: list[str]
    question: str = ""
    logprobs: list[list[float]] | None = None
    greedy: str | None = None
    greedy_logprobs: list[float] | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        if isinstance(self.texts, str):
            raise TypeError("texts must be a list of strings, not one string; wrap it: [text]")
        self.texts = list(self.texts)
        for i, t in enumerate(self.texts):
            if not isinstance(t, str):
                raise TypeError(f"texts[{i}] must be a string, got {type(t).__name__}")
            self.texts[i] = valid_text(t, f"texts[{i}]")
        if not isinstance(self.question, str):
            raise TypeError(f"question must be a string, got {type(self.question).__name__}")
        self.question = valid_text(self.question, "question")
        if self.logprobs is not None:
            lps = list(self.logprobs)
            if len(lps) != len(self.texts):
                raise ValueError(
                    f"logprobs must have one entry per text: got {len(lps)} for {len(self.texts)} texts "
                    "(pass None for a sample without logprobs)"
                )
            self.logprobs = [None if lp is None else _token_logprobs(lp, f"logprobs[{i}]") for i, lp in enumerate(lps)]
        if self.greedy is not None and not isinstance(self.greedy, str):
            raise TypeError(f"greedy must be a string or None, got {type(self.greedy).__name__}")
        if self.greedy is not None:
            self.greedy = valid_text(self.greedy, "greedy")
        if self.greedy_logprobs is not None:
            if self.greedy is None:
                raise ValueError("greedy_logprobs given without a greedy answer")
            self.greedy_logprobs = _token_logprobs(self.greedy_logprobs, "greedy_logprobs")
        self.meta = dict(self.meta)

    # -- construction -------------------------------------------------------------------------------
    @classmethod
    def from_texts(cls, texts: Sequence[str], logprobs: Sequence[Sequence[float] | None] | None = None,
                   question: str = "", *, greedy: str | None = None,
                   greedy_logprobs: Sequence[float] | None = None) -> SampleSet:
        """A sample set from plain texts and, optionally, each text's token log-probabilities."""
        return cls(texts=list(texts), question=question, logprobs=None if logprobs is None else list(logprobs),
                   greedy=greedy, greedy_logprobs=None if greedy_logprobs is None else list(greedy_logprobs))

    @classmethod
    def from_completions(cls, completions: Sequence[Any], question: str = "", *, greedy: Any = None,
                         meta: dict[str, Any] | None = None) -> SampleSet:
        """From backend ``Completion`` objects (their ``.text`` and ``.logprobs``)."""
        texts = [c.text for c in completions]
        lps = [None if c.logprobs is None else [t.logprob for t in c.logprobs] for c in completions]
        have = any(lp is not None for lp in lps)
        g_text = greedy.text if greedy is not None else None
        g_lp = [t.logprob for t in greedy.logprobs] if greedy is not None and greedy.logprobs is not None else None
        return cls(texts=texts, question=question, logprobs=lps if have else None, greedy=g_text,
                   greedy_logprobs=g_lp, meta=dict(meta or {}))

    # -- views -------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.texts)

    @property
    def n(self) -> int:
        return len(self.texts)

    @property
    def has_logprobs(self) -> bool:
        """True when every sample has at least one token log-probability."""
        return self.logprobs is not None and all(lp for lp in self.logprobs)

    @property
    def sequence_logprobs(self) -> np.ndarray | None:
        """log p(s_i|x) = Σ_t log p(token_t), per sample (NaN where missing); None without logprobs."""
        if self.logprobs is None:
            return None
        return np.array([math.nan if lp is None else float(sum(lp)) for lp in self.logprobs], dtype=float)

    @property
    def length_normalised_logprobs(self) -> np.ndarray | None:
        """(1/L_i) Σ_t log p(token_t) = log of the geometric-mean token probability = log p(s_i|x)^{1/L_i},
        per sample (NaN for a sample without tokens); None without logprobs."""
        if self.logprobs is None:
            return None
        return np.array([_mean_or_nan(lp) for lp in self.logprobs], dtype=float)

    @property
    def greedy_length_normalised_logprob(self) -> float | None:
        return None if self.greedy_logprobs is None else _mean_or_nan(self.greedy_logprobs)

    def missing_logprobs_reason(self) -> str | None:
        """Why likelihood weights cannot be computed, or None when they can."""
        if self.logprobs is None:
            return "the sample set has no token logprobs (sample with logprobs=True on a backend that gives them, e.g. embedded)"
        empty = [i for i, lp in enumerate(self.logprobs) if not lp]
        if empty:
            return f"samples {empty} have no token logprobs"
        return None

    # -- JSON ----------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {"question": self.question, "texts": list(self.texts), "logprobs": self.logprobs,
                "greedy": self.greedy, "greedy_logprobs": self.greedy_logprobs, "meta": self.meta}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SampleSet:
        if "texts" not in d:
            raise ValueError("a SampleSet record needs 'texts'")
        return cls(texts=d["texts"], question=d.get("question", ""), logprobs=d.get("logprobs"),
                   greedy=d.get("greedy"), greedy_logprobs=d.get("greedy_logprobs"), meta=d.get("meta") or {})

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> SampleSet:
        return cls.from_dict(json.loads(text))


def as_sample_set(samples: SampleSet | Sequence[str]) -> SampleSet:
    """A :class:`SampleSet` as is, or a list of texts wrapped with :meth:`SampleSet.from_texts`."""
    if isinstance(samples, SampleSet):
        return samples
    if isinstance(samples, str):
        raise TypeError("samples must be a SampleSet or a list of strings, not one string")
    if isinstance(samples, Sequence):
        return SampleSet.from_texts(list(samples))
    raise TypeError(f"samples must be a SampleSet or a list of strings, got {type(samples).__name__}")


def sample_answers(llm: Any, question: str, n: int = 5, temperature: float = 1.0, seed: int | None = 0, *,
                   max_tokens: int = 64, logprobs: bool | None = None, greedy: bool = False,
                   system: str | None = None, on_error: str = "raise") -> SampleSet:
    """Sample ``n`` answers to ``question`` (and the greedy answer when ``greedy=True``).

    ``llm`` is a backend instance or a spec for :func:`uncertainty_lab.llm.get_llm` (``"embedded"``, ``"auto"``…).
    ``logprobs=None`` asks for token logprobs when the backend can give them. Sample i uses the backend's
    per-sample seed, so the same seed gives the same set. The greedy answer is sampled at temperature 0
    with the same prompt; it is stored apart from ``texts``.

    ``on_error="missing"`` turns a backend failure into an *empty* sample set whose ``meta["error"]`` says
    why, so every metric then reports a missing value (NaN) instead of a confident one.
    """
    from ..llm import LLMError, as_backend

    if on_error not in ("raise", "missing"):
        raise ValueError(f"on_error must be 'raise' or 'missing', got {on_error!r}")
    if not isinstance(question, str) or not question.strip():
        raise ValueError("question must be a non-empty string")
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"n must be a positive integer (number of samples), got {n!r}")
    llm = as_backend(llm)
    if logprobs is None:
        logprobs = bool(getattr(llm, "supports_logprobs", False))
    messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": question}]
    label = getattr(llm, "label", type(llm).__name__)
    meta: dict[str, Any] = {"backend": label, "temperature": float(temperature), "seed": seed, "n": n,
                            "max_tokens": max_tokens, "logprobs": bool(logprobs), "system": system}
    try:
        completions = llm.complete(messages, n=n, temperature=temperature, seed=seed, max_tokens=max_tokens,
                                   logprobs=logprobs)
        g = None
        if greedy:
            (g,) = llm.complete(messages, n=1, temperature=0.0, seed=seed, max_tokens=max_tokens, logprobs=logprobs)
    except LLMError as exc:
        if on_error == "raise":
            raise
        meta["error"] = f"{type(exc).__name__}: {exc}"
        return SampleSet(texts=[], question=question, meta=meta)
    meta["finish_reasons"] = [c.finish_reason for c in completions]
    meta["cached"] = [bool(getattr(c, "cached", False)) for c in completions]
    return SampleSet.from_completions(completions, question, greedy=g, meta=meta)
