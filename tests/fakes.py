"""The stand-ins the tests share, in one place: embedders with hand-made vectors, language-model backends with
canned or scripted replies, equivalence judges with hand-made outcomes, a finished search episode, and the
executor tests' backends (picklable, so a config carries them to worker processes, which import this module by
name: ``EchoLLM`` answers a hash of the request, ``KillOnce`` kills its process on its first generation,
``Refusing`` shares ``EchoLLM``'s cache keys but never generates). A test
imports the fake it needs from here (``from fakes import OneHotEmbedder``) instead of writing its own; a fake
that only one test needs (a spy, a backend that is down) stays in that test."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from uncertainty_lab.llm import Completion, LLMBackend, LLMError, sample_seed
from uncertainty_lab.orchestration.scripted import ScriptedLLM as RoleScriptedLLM
from uncertainty_lab.semantic.judges import LABELS, EquivalenceJudge, Judgement, NLIJudge, Verdict

# --- embedders ------------------------------------------------------------------------------------------------


class FakeEmbedder:
    """Hand-made vectors per text, like Embedder.encode: normalised float32 rows, or (``normalise=False``) the
    table's rows as they are, in float64."""

    def __init__(self, vectors: dict[str, Any], *, normalise: bool = True):
        self.vectors = {k: np.asarray(v, dtype=float) for k, v in vectors.items()}
        self.normalise = normalise

    def encode(self, texts):
        if isinstance(texts, str):
            texts = [texts]
        if not self.normalise:
            return np.array([self.vectors[t] for t in texts], dtype=float)
        rows = [self.vectors[t] / np.linalg.norm(self.vectors[t]) for t in texts]
        return np.stack(rows).astype(np.float32)


def unit(deg: float) -> np.ndarray:
    """The 2-D unit vector at ``deg`` degrees (cosine of two of them = cos of the angle between)."""
    r = np.deg2rad(deg)
    return np.array([np.cos(r), np.sin(r)])


class OneHotEmbedder:
    """Identical (normalised) texts share a unit vector, different texts are orthogonal ones — so an embedding
    kernel is 1 for the same answer and 0 otherwise."""

    def __init__(self):
        self.index: dict[str, int] = {}

    def encode(self, texts):
        out = np.zeros((len(texts), 64))
        for i, t in enumerate(texts):
            out[i, self.index.setdefault(t.strip().lower(), len(self.index))] = 1.0
        return out


class HashEmbedder:
    """Unit vectors seeded by each text's hash (for tests that need only some embedding); ``shift`` is added to
    every coordinate before normalising (1.5: cosines mostly positive)."""

    name = "hash"

    def __init__(self, shift: float = 0.0):
        self.shift = shift

    def encode(self, texts):
        rows = [np.random.default_rng(int(hashlib.sha1(t.encode()).hexdigest()[:8], 16)).normal(size=8) + self.shift
                for t in texts]
        return np.stack([r / np.linalg.norm(r) for r in rows]).astype(np.float32)


# --- language models ------------------------------------------------------------------------------------------


@dataclass
class _FakeCompletion:
    text: str
    logprobs: Any = None
    cached: bool = False
    finish_reason: str = "stop"


class CannedLLM:
    """A backend stand-in: ``reply(prompt) -> text`` (the prompt is the last message); records every prompt."""

    supports_logprobs = False

    def __init__(self, reply):
        self.reply = reply
        self.prompts: list[str] = []

    def complete(self, messages, *, n=1, temperature=0.7, seed=0, max_tokens=128, logprobs=False, **kw):
        prompt = messages if isinstance(messages, str) else messages[-1]["content"]
        self.prompts.append(prompt)
        return [_FakeCompletion(self.reply(prompt)) for _ in range(n)]


@dataclass
class ScriptedLLM:
    """A backend stand-in: ``reply(messages, index, seed) -> text`` (or a fixed string, or a list consumed in
    order); records every request. ``fail_after`` raises after that many calls (an interruption)."""

    reply: Any = "Drasir"
    fail_after: int | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)
    name: str = "scripted"
    supports_logprobs: bool = False

    def model_id(self) -> str:
        return "scripted-1"

    def cache_backend_name(self) -> str:
        return self.name

    @property
    def label(self) -> str:
        return f"{self.name}:{self.model_id()}"

    def _text(self, messages, i: int, seed: int) -> str:
        if callable(self.reply):
            return self.reply(messages, i, seed)
        if isinstance(self.reply, list):
            return self.reply.pop(0)
        return self.reply

    def complete(self, messages, *, n: int = 1, temperature: float = 0.7, max_tokens: int = 128, seed: int = 0,
                 **kw) -> list[Completion]:
        if self.fail_after is not None and len(self.calls) >= self.fail_after:
            raise KeyboardInterrupt("scripted interruption")
        self.calls.append({"messages": messages, "n": n, "temperature": temperature, "seed": seed,
                           "max_tokens": max_tokens})
        return [Completion(self._text(messages, i, seed), "stop", self.name, "scripted-1", seed, i) for i in range(n)]


def by_system(**replies: str | Callable) -> Callable:
    """A :class:`ScriptedLLM` reply choosing by which search prompt it is: policy / extraction / answer /
    decomposition."""

    def reply(messages, i, seed):
        system = messages[0]["content"]
        kind = ("policy" if system.startswith("You are a search agent") else
                "extraction" if "research notebook" in system else
                "decomposition" if system.startswith("Split a question") else "answer")
        r = replies.get(kind, "")
        return r(messages, i, seed) if callable(r) else r

    return reply


@dataclass
class FakeLLM:
    """A deterministic headline generator for cascades: completion i is :meth:`text` of the prompt's hash, the
    seed and i; records (prompt hash, n, temperature, seed) per call."""

    name = "fake"
    supports_logprobs = False
    calls: list = field(default_factory=list)

    def model_id(self):
        return "echo-1"

    def text(self, h: str, seed: int, i: int) -> str:
        return f"  item {h[:6]} v{sample_seed(seed, i) % 3}\n"

    def complete(self, messages, *, n=1, temperature=0.7, top_p=0.95, max_tokens=128, seed=0, **kw):
        from uncertainty_lab.cascade import prompt_hash  # imported here: the other fakes do without the cascade

        h = prompt_hash(messages)
        self.calls.append((h, n, temperature, seed))
        return [Completion(text=self.text(h, seed, i), finish_reason="stop", backend="fake", model="echo-1", seed=seed,
                           index=i) for i in range(n)]


class ByQuestion(RoleScriptedLLM):
    """The orchestration lab's scripted backend, keyed by question instead of worker role: every sample of a
    question gets the texts of the first ``script`` key its question (the prompt's first line) starts with
    (``""`` matches any question)."""

    def reply(self, system, user, index):
        question = user.split("\n")[0]
        return next(texts[index % len(texts)] for key, texts in self.script.items() if question.startswith(key))


class Counting:
    """Wraps a backend (same identity: label, model id, cache) and counts ``complete`` calls; with ``fail_after``
    it raises on call number ``fail_after + 1`` (a simulated crash)."""

    def __init__(self, llm, fail_after=None):
        self.llm, self.fail_after, self.calls = llm, fail_after, 0

    def __getattr__(self, name):
        return getattr(self.llm, name)

    def complete(self, messages, **kw):
        self.calls += 1
        if self.fail_after is not None and self.calls > self.fail_after:
            raise RuntimeError("simulated interruption")
        return self.llm.complete(messages, **kw)


# --- equivalence judges ---------------------------------------------------------------------------------------

ONE_HOT = {"contradiction": (1.0, 0.0, 0.0), "neutral": (0.0, 1.0, 0.0), "entailment": (0.0, 0.0, 1.0)}


@dataclass
class TableNLIJudge(NLIJudge):
    """Directed NLI outcomes from a table {(premise, hypothesis): label or (p_c, p_n, p_e)}; pairs not in the
    table get ``default``. Counts the directed pairs it was asked about."""

    name: ClassVar[str] = "table_nli"
    table: Any = None
    default: Any = "contradiction"
    asked: list = field(default_factory=list, repr=False)

    def _verdicts_uncached(self, question, directed):
        out = []
        for p, h in directed:
            self.asked.append((p, h))
            v = (self.table or {}).get((p, h), self.default)
            probs = ONE_HOT[v] if isinstance(v, str) else tuple(float(x) for x in v)
            out.append(Verdict(LABELS[int(np.argmax(probs))], probs))
        return out


@dataclass
class TableSimilarityJudge(EquivalenceJudge):
    """Symmetric similarities from a table {frozenset({a, b}): s}; equivalent when s >= 0.5."""

    name: ClassVar[str] = "table_similarity"
    table: Any = None

    def _judge_uncached(self, question, pairs):
        out = []
        for a, b in pairs:
            s = float(self.table[frozenset((a, b))])
            out.append(Judgement(a, b, s >= 0.5, s))
        return out


class PairSetJudge:
    """A minimal student judge: only ``equivalent``, from a set of unordered equivalent pairs."""

    def __init__(self, pairs):
        self.pairs = {frozenset(p) for p in pairs}
        self.calls = 0

    def equivalent(self, question, a, b):
        self.calls += 1
        return a == b or frozenset((a, b)) in self.pairs


# --- search ---------------------------------------------------------------------------------------------------


@dataclass
class FakeEpisode:
    """What a SearchResult reads of a finished episode: its question id and its score (``correct`` sets exact
    match and F1, ``reason`` and ``gate`` the stop, ``cost`` the retrieval cost)."""

    qid: str
    reason: str = "budget"
    correct: bool = True
    cost: int = 10
    gate: str = "fixed_budget"
    steps: list = field(default_factory=list)
    parse_failures: list = field(default_factory=list)

    @property
    def question_id(self):
        return self.qid

    def score(self, loop_threshold=0.9):
        from uncertainty_lab.search.scoring import EpisodeScore

        return EpisodeScore(self.qid, "x", True, float(self.correct), float(self.correct), 1.0, False, 0, False,
                            self.reason, self.gate, 3, self.cost, 10, 0.0, 0.0)


# --- backends for the executor tests ----------------------------------------------------------------------

WORDS = ("Canberra", "Sydney", "Paris", "Lyon", "Oslo", "yes", "no", "1969", "Drasir", "unknown")


def echo_text(messages, seed: int) -> str:
    """A short answer chosen by a hash of the request: deterministic, varied."""
    digest = hashlib.sha256(json.dumps([messages, seed], sort_keys=True).encode()).digest()
    return f"Answer: {WORDS[digest[0] % len(WORDS)]} {WORDS[digest[1] % len(WORDS)]}"


@dataclass
class EchoLLM(LLMBackend):
    """Answers ``echo_text(messages, seed)``; cached like every backend."""

    name: ClassVar[str] = "echo"
    generated: ClassVar[int] = 0

    def model_id(self) -> str:
        return "echo-1"

    def _generate(self, messages, *, temperature, top_p, max_tokens, seed, stop, logprobs):
        type(self).bump()
        return {"text": echo_text(messages, seed), "finish_reason": "stop", "logprobs": None}

    @classmethod
    def bump(cls) -> None:
        EchoLLM.generated += 1


@dataclass
class KillOnce(EchoLLM):
    """:class:`EchoLLM` whose first generation (in any process) creates ``marker`` and kills its process."""

    marker: str = ""

    def _generate(self, messages, **kwargs):
        if self.marker and not os.path.exists(self.marker):
            Path(self.marker).write_text(str(os.getpid()))
            os._exit(3)
        return super()._generate(messages, **kwargs)


@dataclass
class Refusing(EchoLLM):
    """:class:`EchoLLM`'s identity, but every generation is an error."""

    def _generate(self, messages, **kwargs):
        raise LLMError("Refusing was asked to generate: the answer was not cached")
