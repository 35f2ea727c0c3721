"""``get_llm``: one call that turns a spec string into a ready backend, and says what it picked;
``as_backend``: the same for a setting that may hold a spec or a backend instance (every place that takes either
uses it); ``ready_backend``: ``as_backend``, with an Ollama server checked before a run starts."""

from __future__ import annotations

import os
from typing import Any

from .. import registry
from ..parameters import parameters
from .base import LLMBackend, LLMError, LLMUnavailableError
from .cache import CompletionCache

AUTO_PROBE_TIMEOUT = 2.0  # seconds in all for an Ollama server's answer before falling back to embedded
#: environment variable: the spec ``"auto"`` stands for (a class replaying a recorded cache sets ``replay``)
LLM_ENV = "UL_LLM"


def get_llm(spec: str = "auto", *, cache: CompletionCache | None = None, quiet: bool = False, **params) -> LLMBackend:
    """A language model from a spec:

    - ``"auto"``: the spec in ``$UL_LLM`` when set; else Ollama when a server answers with the configured
      model, else ``embedded`` (each gets the ``params`` it declares: ``n_threads`` is the embedded model's);
    - ``"embedded"``, ``"replay"`` or any registered backend name;
    - ``"ollama:<model>"`` (or ``"ollama"`` for ``$UL_OLLAMA_MODEL``);
    - ``"replay:<backend>"`` / ``"replay:<backend>:<model>"``: answers recorded by that backend (and model).

    ``params`` go to the backend (validated); ``cache`` replaces the default completion cache.
    """
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"spec must be a non-empty string such as 'auto', 'embedded' or 'ollama:llama3.2:3b', got {spec!r}")
    name, _, rest = spec.partition(":")
    chosen = os.environ.get(LLM_ENV, "").strip() if name == "auto" else ""
    reason = ""
    if chosen:
        if chosen.partition(":")[0] == "auto":
            raise ValueError(f"{LLM_ENV}={chosen!r} would pick 'auto' again: set it to a backend spec such as "
                             "'embedded', 'replay' or 'ollama:llama3.2:3b', or unset it")
        takes = {p.name for p in parameters(registry.get("llm_backends", chosen.partition(":")[0]))}
        llm = get_llm(chosen, quiet=True, **{k: v for k, v in params.items() if k in takes})
        reason = f"{LLM_ENV}={chosen}"
    elif name == "auto":
        llm, reason = _auto(**params)
    else:
        if name == "replay" and rest:
            recorded_by, _, rest = rest.partition(":")
            params.setdefault("backend", recorded_by)
        if rest:
            params.setdefault("model", rest)
        llm = registry.create("llm_backends", name, **params)
    if cache is not None:
        llm.cache = cache
    if reason and not quiet:
        print(f"uncertainty_lab: using {llm.label} ({reason})")
    return llm


def _auto(**params) -> tuple[LLMBackend, str]:
    ollama_params = {k: params.pop(k) for k in ("model", "host") if k in params}
    try:  # creating it can fail too (a malformed OLLAMA_HOST, the client missing): fall back, and say why
        ollama = registry.create("llm_backends", "ollama", **ollama_params)
        ollama.check(timeout=AUTO_PROBE_TIMEOUT)
        return ollama, f"Ollama at {ollama.host} has {ollama.model}"
    except LLMUnavailableError as exc:
        reason = str(exc).split(". ")[0]
    except LLMError as exc:  # e.g. no whole answer within AUTO_PROBE_TIMEOUT (a hung or trickling server)
        reason = str(exc).split("; ")[0]
    except Exception as exc:  # a misbehaving server must not stop the lab: fall back, and say why
        reason = f"Ollama check failed: {type(exc).__name__}: {exc}"
    return registry.create("llm_backends", "embedded", **params), f"fallback: {reason}"


def as_backend(spec: Any, *, what: str = "llm", error: type[Exception] = TypeError, quiet: bool = True,
               why: str = "") -> Any:
    """The backend a setting names: a :func:`get_llm` spec string (made here) or a backend instance (anything with
    ``complete``, returned as it is). Anything else is an ``error`` naming ``what`` (``why`` says what it is for)."""
    if isinstance(spec, str):
        return get_llm(spec, quiet=quiet)
    if not callable(getattr(spec, "complete", None)):
        raise error(f"{what} must be a language-model backend (with .complete) or a get_llm spec string such as "
                    f"'embedded', 'auto' or 'ollama:<model>', got {type(spec).__name__} {spec!r:.80}{why}")
    return spec


def check_ready(llm: Any, check_timeout: float | None = None) -> Any:
    """``llm``, its server checked now when it is an Ollama backend (within ``check_timeout`` seconds in all,
    default the backend's start-up deadline, a few seconds): a server that is down, silent, dripping or not Ollama,
    or a model not pulled, is a clear error naming the host before any run starts."""
    check = getattr(llm, "check", None)
    if getattr(llm, "name", None) == "ollama" and callable(check):
        check(timeout=check_timeout)
    return llm


def ready_backend(spec: Any, *, what: str = "llm", error: type[Exception] = ValueError,
                  check_timeout: float | None = None) -> Any:
    """:func:`as_backend`, and an Ollama spec is checked now (:func:`check_ready`), so a server that is down
    or a model not pulled is a clear error before any run starts, not a stack trace later."""
    llm = as_backend(spec, what=what, error=error)
    if not isinstance(spec, str):
        return llm
    return check_ready(llm, check_timeout)
