"""The Ollama backend: the official ``ollama`` client against a local (or ``OLLAMA_HOST``) server.

``timeout`` is a deadline for the whole request: httpx (under the ``ollama`` client) times each socket read
only, so a server trickling one byte at a time would hold a call forever. Each request runs in a worker thread
the caller waits on for at most ``timeout`` seconds; past it the client is closed (ending the worker's read)
and replaced.

Several servers: ``OLLAMA_HOST`` may list several, separated by commas (:func:`parse_hosts`; a backend's own
``host`` is the first). Inside :func:`serving` (what :mod:`uncertainty_lab.llm.pool` uses per unit) every backend
sends its requests to the host the pool chose, and a failure of that host is :class:`HostFailover`.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import re
import threading
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import httpx

from .base import LLMBackend, LLMCapabilityError, LLMError, LLMUnavailableError, TokenLogprob

DEFAULT_MODEL = "llama3.2:3b"
DEFAULT_HOST = "http://127.0.0.1:11434"
DEFAULT_PORT = 11434
#: seconds in all a start-up check (:meth:`OllamaLLM.check`, ``/api/tags``) waits: a real server lists its models
#: at once, so a host that accepts and stays silent (or drips bytes) is reported in seconds, not after ``timeout``
CHECK_TIMEOUT = 5.0
#: the longest server address read (httpx refuses URLs over 64 KB with a traceback; a real one is far shorter)
MAX_HOST_CHARS = 2048
_HOST_FIX = "set OLLAMA_HOST (or host=) to the server's address, such as http://127.0.0.1:11434, or unset it"
LOGPROBS_SINCE = (0, 12, 11)  # the first Ollama release whose /api/chat returns logprobs


def normalise_host(host: str | None) -> str:
    """A server address read as Ollama reads ``OLLAMA_HOST`` (and as the ``ollama`` client does):
    without a scheme, ``http`` and port 11434 (``0.0.0.0`` -> ``http://0.0.0.0:11434``, ``:8080`` ->
    ``http://127.0.0.1:8080``); with ``http://``/``https://`` and no port, 80/443."""
    text = (host or "").strip()
    if not text:
        return DEFAULT_HOST
    if len(text) > MAX_HOST_CHARS:
        raise ValueError(f"the Ollama host (OLLAMA_HOST or host=) is {len(text)} characters long, not a server "
                         f"address ({_short(text)}); {_HOST_FIX}")
    scheme, sep, rest = text.partition("://")
    if sep:
        scheme = scheme.lower()
        port = {"http": 80, "https": 443}.get(scheme)
        if port is None:
            raise ValueError(f"Ollama host {_short(host)} must use http:// or https://; {_HOST_FIX}")
    else:
        scheme, rest, port = "http", text, DEFAULT_PORT
    hostport, _, path = rest.partition("/")
    try:
        parts = urllib.parse.urlsplit("//" + hostport)
        port = parts.port or port
    except ValueError:
        raise ValueError(f"Ollama host {_short(host)} has an invalid port; {_HOST_FIX}") from None
    name = parts.hostname or "127.0.0.1"
    if ":" in name:  # IPv6
        name = f"[{name}]"
    path = path.strip("/")
    return f"{scheme}://{name}:{port}" + (f"/{path}" if path else "")


def _short(text: str) -> str:
    """A host as a message may quote it: escaped, at most 80 characters."""
    from ..untrusted import excerpt as quote

    return quote(str(text), 80)


def new_client(ollama: Any, host: str, timeout: float) -> Any:
    """``ollama.Client`` for ``host``; an address httpx cannot use is a ValueError naming OLLAMA_HOST, not a
    traceback."""
    try:
        return ollama.Client(host=host, timeout=timeout)
    except httpx.InvalidURL as exc:
        raise ValueError(f"the Ollama host {_short(host)} is not a usable URL ({exc}); {_HOST_FIX}") from None


def parse_hosts(value: str | Sequence[str] | None) -> list[str]:
    """Several server addresses: a comma-separated string (``$OLLAMA_HOST`` may list several) or a list, each
    normalised (:func:`normalise_host`), in order, duplicates and blanks dropped."""
    items = value.split(",") if isinstance(value, str) else list(value or ())
    out: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise ValueError(f"an Ollama host must be a string like 'http://host:11434', got {_short(repr(item))}")
        if item.strip() and normalise_host(item) not in out:
            out.append(normalise_host(item))
    return out


_import_lock = threading.Lock()


def import_ollama() -> Any:
    """The ``ollama`` package. Importing it builds a default client from ``$OLLAMA_HOST``, which fails on a list of
    several servers, so the first stands in for the list while it imports."""
    with _import_lock:
        listed = os.environ.get("OLLAMA_HOST")
        hosts = parse_hosts(listed) if listed else []  # a malformed value: a ValueError naming OLLAMA_HOST
        if hosts and "," in listed:
            os.environ["OLLAMA_HOST"] = hosts[0]
        else:
            hosts = []
        try:
            import ollama
        except httpx.InvalidURL as exc:  # the client's default from $OLLAMA_HOST
            raise ValueError(f"OLLAMA_HOST={_short(listed or '')} is not a usable URL ({exc}); {_HOST_FIX}") from None
        finally:
            if hosts:
                os.environ["OLLAMA_HOST"] = listed
    return ollama


def default_host() -> str:
    """``$OLLAMA_HOST`` (normalised; the first when it lists several), or http://127.0.0.1:11434."""
    hosts = parse_hosts(os.environ.get("OLLAMA_HOST"))
    return hosts[0] if hosts else DEFAULT_HOST


def default_model() -> str:
    return os.environ.get("UL_OLLAMA_MODEL", "").strip() or DEFAULT_MODEL


_SERVING: contextvars.ContextVar[str | None] = contextvars.ContextVar("uncertainty_lab_ollama_host", default=None)


class HostFailover(BaseException):  # noqa: N818 (a signal to the pool, like KeyboardInterrupt, not an error)
    """The host a pool chose (:func:`serving`) failed: down, timed out, broken, without the model. A BaseException,
    so it passes the labs' handling of model errors (which would journal a missing answer) and ends the unit where
    it is; the pool resumes the unit's journal on another host. ``host`` failed with ``message``."""

    def __init__(self, host: str, message: str):
        super().__init__(message)
        self.host, self.message = host, message


@contextlib.contextmanager
def serving(host: str) -> Iterator[str]:
    """Within this block every Ollama backend sends its requests to ``host`` (normalised), whatever its own
    ``host``, and a failure of that host raises :class:`HostFailover` instead of an LLMError."""
    token = _SERVING.set(normalise_host(host))
    try:
        yield _SERVING.get()
    finally:
        _SERVING.reset(token)


class DeadlineExceeded(TimeoutError):
    """A call ran past its deadline (its worker thread is abandoned)."""


def call_with_deadline(fn: Callable[[], Any], seconds: float, *, name: str = "deadline-call") -> Any:
    """``fn()`` in a daemon worker thread, waited on for at most ``seconds``: its value, or its exception
    re-raised here, or :class:`DeadlineExceeded`. The caller must make an abandoned ``fn`` end (close its
    connection); what it returns or raises afterwards is dropped on purpose, its caller having given up."""
    box: dict[str, Any] = {}
    done = threading.Event()

    def work() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed to the waiting thread, which re-raises it
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=work, name=name, daemon=True).start()
    if not done.wait(seconds):
        raise DeadlineExceeded(f"no answer within {seconds} s")
    if "error" in box:
        raise box["error"]
    return box["value"]


def excerpt(text: str, limit: int = 160) -> str:
    """The start of an error body in one short line: tags dropped, whitespace collapsed, cut at ``limit``."""
    from ..untrusted import excerpt as quote

    flat = " ".join(re.sub(r"<[^>]*>", " ", str(text)).split())
    shown = quote(flat[:limit], limit, quote=False)
    return shown if len(flat) <= limit else shown[: limit - 1].rstrip() + f"… ({len(text)} characters)"


def _version_tuple(text: str) -> tuple[int, ...]:
    parts = []
    for p in text.split("-")[0].split("."):
        digits = "".join(ch for ch in p if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


@dataclass
class OllamaLLM(LLMBackend):
    """A model served by Ollama, through the official ``ollama`` Python client."""

    name: ClassVar[str] = "ollama"
    summary: ClassVar[str] = "a model served by a local Ollama server (official client); logprobs on Ollama >= 0.12.11"

    model: str = field(default_factory=default_model, metadata={"help": "Ollama model tag, e.g. llama3.2:3b ($UL_OLLAMA_MODEL)"})
    host: str = field(default_factory=default_host, metadata={"help": "server URL ($OLLAMA_HOST)"})
    timeout: float = field(default=120.0, metadata={"min": 0.1, "max": 3600.0, "step": 0.1, "help": "seconds per request"})
    top_logprobs: int = field(default=5, metadata={"min": 0, "max": 20, "step": 1, "help": "alternatives kept per token"})

    def __post_init__(self):
        ollama = import_ollama()
        self.host = normalise_host(self.host)

        self._ollama = ollama
        self._client_lock = threading.Lock()
        self._clients = {self.host: new_client(ollama, self.host, self.timeout)}
        self._versions: dict[str, str] = {}

    def model_id(self) -> str:
        return self.model

    def active_host(self) -> str:
        """Where requests go now: the host a pool chose (:func:`serving`), else :attr:`host`."""
        return _SERVING.get() or self.host

    def close(self) -> None:
        """Close the HTTP connection pools of the underlying clients."""
        for client in list(self._clients.values()):
            client._client.close()

    def _client_for(self, host: str) -> Any:
        with self._client_lock:
            if host not in self._clients:
                self._clients[host] = new_client(self._ollama, host, self.timeout)
            return self._clients[host]

    def _within(self, fn: Callable[[Any], Any], timeout: float, what: str) -> Any:
        """``fn(client)`` within ``timeout`` seconds in all (connect, send, every read); past it the client is
        closed, which ends the abandoned read, and replaced, and :meth:`_timed_out` is raised."""
        host = self.active_host()
        client = self._client_for(host)
        try:
            return call_with_deadline(lambda: fn(client), timeout, name=f"ollama {what}")
        except (DeadlineExceeded, KeyboardInterrupt) as exc:
            with self._client_lock:
                if self._clients.get(host) is client:
                    self._clients[host] = self._ollama.Client(host=host, timeout=self.timeout)
            client._client.close()
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise self._timed_out(timeout, what) from None

    def _failing_over(self, fn: Callable[[], Any]) -> Any:
        """``fn()``; under a pool (:func:`serving`) a failure of the host (any LLMError but a missing capability)
        is :class:`HostFailover`, so the pool can move the unit to another host."""
        try:
            return fn()
        except LLMCapabilityError:
            raise
        except LLMError as exc:
            host = _SERVING.get()
            if host is None:
                raise
            raise HostFailover(host, str(exc)) from exc

    # --- server facts -------------------------------------------------------------------------
    def _get(self, path: str, timeout: float | None = None) -> dict[str, Any]:
        return self._failing_over(lambda: self._get_once(path, timeout))

    def _get_once(self, path: str, timeout: float | None = None) -> dict[str, Any]:
        timeout = timeout or self.timeout

        def get(client) -> Any:
            response = client._client.get(path, timeout=timeout)
            response.read()
            return response

        try:
            r = self._within(get, timeout, f"GET {path}")
        except httpx.ConnectError:
            raise self._down() from None
        except httpx.TimeoutException:
            raise self._timed_out(timeout, f"GET {path}") from None
        except httpx.HTTPError as exc:  # the connection broke: not an HTTP server, or it crashed
            raise self._not_ollama(f"GET {path} failed: {type(exc).__name__}: {excerpt(str(exc), 80)}") from None
        answered = f"GET {path} answered HTTP {r.status_code} ({r.headers.get('content-type') or 'no content type'})"
        body = excerpt(r.text, 80) if r.content else "an empty body"
        if not r.is_success:
            raise self._not_ollama(f"{answered}: {body}")
        try:
            data = r.json()
        except ValueError:
            raise self._not_ollama(f"{answered}, not JSON: {body}") from None
        if not isinstance(data, dict):
            raise self._not_ollama(f"{answered}, JSON but not an object: {body}")
        return data

    def server_version(self) -> str:
        """The server's version string from ``/api/version`` (of the active host)."""
        host = self.active_host()
        if host not in self._versions:
            self._versions[host] = str(self._get("/api/version").get("version", "0"))
        return self._versions[host]

    def available_models(self, timeout: float | None = None) -> list[str]:
        """The model tags the server has pulled (``/api/tags``)."""
        listed = self._get("/api/tags", timeout).get("models", [])
        if not isinstance(listed, list) or not all(isinstance(m, dict) for m in listed):
            raise self._not_ollama(f"GET /api/tags answered 'models': {excerpt(json.dumps(listed), 80)}, not a list of "
                                   "model objects")
        return sorted(str(m.get("model") or m.get("name", "")) for m in listed)

    def check(self, timeout: float | None = None) -> None:
        """Raise a clear :class:`LLMUnavailableError` unless the server answers and has the model, within
        ``timeout`` seconds in all (default :data:`CHECK_TIMEOUT`: a start-up check, not a generation)."""
        models = self.available_models(timeout or min(self.timeout, CHECK_TIMEOUT))
        if self.model not in models and f"{self.model}:latest" not in models:
            raise self._missing(models)

    @property
    def supports_logprobs(self) -> bool:  # type: ignore[override]
        return _version_tuple(self.server_version()) >= LOGPROBS_SINCE

    def _check_logprobs(self, logprobs: bool) -> None:
        """Deferred to :meth:`_generate`: a cache hit must not need the server (not even its version)."""

    def _require_logprobs(self) -> None:
        if not self.supports_logprobs:
            raise LLMCapabilityError(
                f"the Ollama server at {self.active_host()} is version {self.server_version()}; logprobs need "
                f">= {'.'.join(map(str, LOGPROBS_SINCE))}. Upgrade Ollama, or use the embedded backend."
            )

    # --- errors -------------------------------------------------------------------------------
    def _down(self) -> LLMUnavailableError:
        return LLMUnavailableError(
            f"no Ollama server answers at {self.active_host()}. Start one with `ollama serve` (install from "
            "ollama.com), or set OLLAMA_HOST to where it runs; or use get_llm('embedded')."
        )

    def _missing(self, models: list[str] | None = None) -> LLMUnavailableError:
        have = f" It has: {', '.join(models)}." if models else ""
        return LLMUnavailableError(
            f"the Ollama server at {self.active_host()} does not have model {self.model!r}. "
            f"Run `ollama pull {self.model}`.{have}"
        )

    def _timed_out(self, timeout: float | None = None, what: str = "") -> LLMError:
        waited = timeout or self.timeout
        if what.startswith("GET"):  # the server's facts: a real server answers at once, whatever the model
            fix = ("a running Ollama server answers this at once: check that OLLAMA_HOST (or host=) names an Ollama "
                   "server and that it is not stuck, or use get_llm('embedded')")
        else:
            fix = "raise `timeout` (a first call loads the model and can be slow), or check that OLLAMA_HOST is an " \
                  "Ollama server"
        return LLMError(f"the Ollama server at {self.active_host()} did not answer within {waited} s"
                        + (f" ({what})" if what else "") + f"; {fix}")

    def _not_ollama(self, what: str) -> LLMUnavailableError:
        error = LLMUnavailableError(
            f"something answers at {self.active_host()} but not as an Ollama server ({what}). Check OLLAMA_HOST "
            "(or host=), start one with `ollama serve`, or use get_llm('embedded')."
        )
        error.answered = what  # what the server did answer (``doctor`` shows it)
        return error

    # --- generation ---------------------------------------------------------------------------
    def _generate(self, messages, **kwargs):
        return self._failing_over(lambda: self._chat(messages, **kwargs))

    def _chat(self, messages, *, temperature, top_p, max_tokens, seed, stop, logprobs):
        options: dict[str, Any] = {"temperature": temperature, "top_p": top_p, "num_predict": max_tokens, "seed": seed}
        if stop:
            options["stop"] = stop
        kwargs: dict[str, Any] = {}
        if logprobs:
            self._require_logprobs()
            kwargs = {"logprobs": True, "top_logprobs": self.top_logprobs}
        def chat(client) -> Any:
            return client.chat(model=self.model, messages=messages, options=options, stream=False, **kwargs)

        try:
            r = self._within(chat, self.timeout, "POST /api/chat")
        except ConnectionError:
            raise self._down() from None
        except httpx.TimeoutException:
            raise self._timed_out() from None
        except self._ollama.ResponseError as exc:
            body = excerpt(exc.error)
            if exc.status_code == 404:  # Ollama: 'model "x" not found, try pulling it first'
                if "model" in body.lower() and "not found" in body.lower():
                    raise self._missing() from None
                raise self._not_ollama(f"POST /api/chat answered HTTP 404: {excerpt(body, 80)}") from None
            raise LLMError(f"the Ollama server at {self.active_host()} answered HTTP {exc.status_code} to POST /api/chat: "
                           f"{body}") from None
        except httpx.HTTPError as exc:  # the connection broke mid-request
            raise LLMError(f"the request to the Ollama server at {self.active_host()} failed: "
                           f"{type(exc).__name__}: {exc}") from None
        except ValueError as exc:  # a 200 that is not Ollama's JSON (JSONDecodeError, ValidationError)
            first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise self._not_ollama(f"POST /api/chat answered something else: {first_line}") from None
        tokens = None
        if logprobs:
            if not r.logprobs:
                raise LLMCapabilityError(f"model {self.model!r} on {self.active_host()} returned no logprobs although asked")
            tokens = tuple(
                TokenLogprob(t.token, float(t.logprob), tuple((a.token, float(a.logprob)) for a in (t.top_logprobs or ())))
                for t in r.logprobs
            )
        return {"text": r.message.content or "", "finish_reason": r.done_reason or "stop", "logprobs": tokens}
