"""``get_llm``: one call that turns a spec string into a ready backend, and says what it picked."""

from __future__ import annotations

from .. import registry
from .base import LLMBackend, LLMUnavailableError
from .cache import CompletionCache

AUTO_PROBE_TIMEOUT = 2.0  # seconds to wait for an Ollama server before falling back to embedded


def get_llm(spec: str = "auto", *, cache: CompletionCache | None = None, quiet: bool = False, **params) -> LLMBackend:
    """A language model from a spec:

    - ``"auto"``: Ollama when a server answers with the configured model, else ``embedded``;
    - ``"embedded"``, ``"replay"`` or any registered backend name;
    - ``"ollama:<model>"`` (or ``"ollama"`` for ``$UL_OLLAMA_MODEL``).

    ``params`` go to the backend (validated); ``cache`` replaces the default completion cache.
    """
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"spec must be a non-empty string such as 'auto', 'embedded' or 'ollama:llama3.2:3b', got {spec!r}")
    name, _, rest = spec.partition(":")
    if name == "auto":
        llm, reason = _auto(**params)
        if not quiet:
            print(f"uncertainty_lab: using {llm.label} ({reason})")
    else:
        if rest:
            params.setdefault("model", rest)
        llm = registry.create("llm_backends", name, **params)
    if cache is not None:
        llm.cache = cache
    return llm


def _auto(**params) -> tuple[LLMBackend, str]:
    ollama_params = {k: params.pop(k) for k in ("model", "host") if k in params}
    try:  # creating it can fail too (a malformed OLLAMA_HOST, the client missing): fall back, and say why
        ollama = registry.create("llm_backends", "ollama", **ollama_params)
        ollama.check(timeout=AUTO_PROBE_TIMEOUT)
        return ollama, f"Ollama at {ollama.host} has {ollama.model}"
    except LLMUnavailableError as exc:
        reason = str(exc).split(". ")[0]
    except Exception as exc:  # a misbehaving server must not stop the lab: fall back, and say why
        reason = f"Ollama check failed: {type(exc).__name__}: {exc}"
    return registry.create("llm_backends", "embedded", **params), f"fallback: {reason}"
