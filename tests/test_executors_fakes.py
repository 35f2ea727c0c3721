"""Backends for the executor tests (importable as ``test_executors_fakes`` in worker processes too, so a config can
carry them to a worker), and their own check.

- :class:`EchoLLM`: a cached backend whose text is a pure function of (messages, seed), so every executor must
  produce the same journals; it counts its generations in this process (``EchoLLM.generated``).
- :class:`KillOnce`: the same answers, but the first generation anywhere kills its process (``marker`` file): a
  worker dying mid-run.
- :class:`Refusing`: the same identity, refusing to generate: a run with it proves every answer came from the
  cache or a journal.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from uncertainty_lab.llm import LLMBackend, LLMError

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


def test_echo_is_deterministic_and_refusing_shares_its_cache_keys(tmp_path, monkeypatch):
    from uncertainty_lab.llm import identity

    echo = EchoLLM()
    first = echo.complete("Capital of Australia?", n=2, seed=3)
    assert [c.text for c in first] == [c.text for c in EchoLLM().complete("Capital of Australia?", n=2, seed=3)]
    assert identity(Refusing()) == identity(echo) == identity(KillOnce(marker="x"))
    assert [c.text for c in Refusing().complete("Capital of Australia?", n=2, seed=3)] == [c.text for c in first]
