"""A loopback stand-in for an Ollama server, backed by the embedded SmolLM2 model.

No Ollama binary can be installed here, so the ``ollama`` backend is tested through the *real* ``ollama``
Python client against this server. It speaks the subset of Ollama's REST API the backend uses, in
Ollama's own JSON shapes:

- ``GET /api/version`` -> ``{"version": "0.13.0"}`` (configurable, so a test can present a server older
  than 0.12.11, the first release whose ``/api/chat`` returns logprobs);
- ``GET /api/tags`` -> ``{"models": [{name, model, modified_at, size, digest, details}, ...]}``;
- ``POST /api/show`` ``{"model": name}`` -> model details, or 404 ``{"error": "model 'x' not found"}``;
- ``POST /api/chat`` -> one JSON object (``"stream": false``) or, as Ollama does by default, a stream of
  NDJSON chunks sent with chunked transfer encoding, the last one ``"done": true`` with the counts.
  ``options`` ``temperature``, ``top_p``, ``num_predict``, ``seed`` and ``stop`` map onto the embedded
  model's OpenAI-style request (so the same seed gives the same text); ``logprobs``/``top_logprobs``
  give ``"logprobs": [{token, logprob, bytes, top_logprobs: [{token, logprob, bytes}]}]``. An unknown
  model is a 404 ``{"error": "model \\"x\\" not found, try pulling it first"}``.

Like a real server, a version below 0.12.11 ignores ``logprobs`` (Go's JSON decoding drops fields it
does not know); ``logprobs_supported=False`` imitates a newer server whose model cannot give them.

Every request is recorded (``server.requests``, ``server.count("/api/chat")``) so a test can tell
whether a call reached the server at all. ``delay`` seconds are slept before answering (on every
path, or only on ``delay_paths``) to test client timeouts.

Two knobs make it the shape of a remote GPU server for the scale-out tests and ``benchmarks/scaling.py``:
``reply`` (a text, or a function of the chat body) answers ``/api/chat`` without running the model, so only
``delay`` costs time; ``die_after`` = N answers N chats and then hangs up on every request (a server that died).
``chat_failure`` makes every chat fail as a broken server does: ``"500"`` answers HTTP 500 with Ollama's error
body, ``"malformed"`` answers 200 with a body that is not JSON (None: chats are answered).

Use it as a context manager::

    with FakeOllama(models=["smollm2:135m"]) as server:
        llm = get_llm("ollama:smollm2:135m", host=server.url)

Generation shares the embedded backend's in-process model (``embedded._server``), so the GGUF is
loaded once per process whichever path a test takes.
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

LOGPROBS_SINCE = (0, 12, 11)
DEFAULT_VERSION = "0.13.0"
DEFAULT_NUM_PREDICT = 128  # a real server generates until EOS or num_ctx; keep the fake bounded


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    body: dict[str, Any] | None


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int("".join(c for c in p if c.isdigit()) or 0) for p in text.split("-")[0].split("."))


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _canonical(name: str) -> str:
    """Ollama's model names: a missing tag means ``:latest``."""
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"


def _tag_entry(name: str) -> dict[str, Any]:
    digest = hashlib.sha256(name.encode()).hexdigest()
    return {
        "name": name,
        "model": name,
        "modified_at": "2025-11-20T10:00:00.000000000Z",
        "size": 91_713_696,
        "digest": digest,
        "details": {
            "parent_model": "",
            "format": "gguf",
            "family": "llama",
            "families": ["llama"],
            "parameter_size": "134.52M",
            "quantization_level": "Q4_1",
        },
    }


def _ollama_logprobs(content: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """OpenAI-style ``logprobs.content`` (what llama.cpp returns) -> Ollama's ``logprobs`` list."""
    out = []
    for t in content or ():
        out.append({
            "token": t["token"], "logprob": float(t["logprob"]), "bytes": t.get("bytes"),
            "top_logprobs": [{"token": a["token"], "logprob": float(a["logprob"]), "bytes": a.get("bytes")}
                             for a in t.get("top_logprobs") or ()],
        })
    return out


class FakeOllama:
    """A threaded HTTP server on 127.0.0.1 (a free port) answering like Ollama. See the module docstring.

    ``models``: the tags ``/api/tags`` lists and ``/api/chat`` accepts; ``version``: what
    ``/api/version`` says; ``delay``: seconds to sleep before answering (on ``delay_paths``, or on every
    path when that is None); ``logprobs_supported``: whether chat honours ``logprobs`` (default: when the
    version is >= 0.12.11). All are plain attributes and may be changed while the server runs.
    """

    def __init__(self, models: list[str] | tuple[str, ...] = ("smollm2:135m",), *,
                 version: str = DEFAULT_VERSION, delay: float = 0.0,
                 delay_paths: tuple[str, ...] | None = None, logprobs_supported: bool | None = None,
                 n_ctx: int = 4096, n_threads: int | None = None, reply: Any = None, die_after: int | None = None):
        self.models = list(models)
        self.version = version
        self.delay = delay
        self.delay_paths = delay_paths
        self.logprobs_supported = logprobs_supported
        self.n_ctx = n_ctx
        self.n_threads = n_threads  # None: the embedded backend's default, so both share one loaded model
        self.reply = reply  # a text or a function of the /api/chat body: answer without the model
        self.die_after = die_after  # after this many chats, hang up on every request
        self.chat_failure: str | None = None  # "500" or "malformed": every chat fails so (see the module doc)
        self.chats = 0
        self.requests: list[RecordedRequest] = []
        self.errors: list[BaseException] = []
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle ----------------------------------------------------------------------------
    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the fake Ollama server is not running; use it as a context manager "
                               "or call start()")
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``, what ``OLLAMA_HOST`` or ``host=`` should be set to."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> FakeOllama:
        if self._httpd is not None:
            return self
        self._stopped.clear()
        fake = self

        class Handler(_Handler):
            server_fake = fake

        self._httpd = _Server(("127.0.0.1", 0), Handler)
        self._httpd.fake = self
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"fake-ollama-{self.port}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._stopped.set()  # wakes handlers sleeping in a delay; they hang up without answering
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)
        self._httpd = self._thread = None

    def __enter__(self) -> FakeOllama:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # --- what the tests look at ---------------------------------------------------------------
    def record(self, method: str, path: str, body: dict[str, Any] | None) -> None:
        with self._lock:
            self.requests.append(RecordedRequest(method, path, body))

    def count(self, path: str, method: str | None = None) -> int:
        """How many requests reached ``path`` (optionally with this HTTP method)."""
        with self._lock:
            return sum(1 for r in self.requests if r.path == path and (method is None or r.method == method))

    def bodies(self, path: str) -> list[dict[str, Any] | None]:
        """The JSON bodies of the requests to ``path``, in arrival order."""
        with self._lock:
            return [r.body for r in self.requests if r.path == path]

    def has_model(self, name: str) -> bool:
        return _canonical(name) in {_canonical(m) for m in self.models}

    def honours_logprobs(self) -> bool:
        if self.logprobs_supported is not None:
            return self.logprobs_supported
        return _version_tuple(self.version) >= LOGPROBS_SINCE

    # --- generation ---------------------------------------------------------------------------
    def _engine(self):
        from uncertainty_lab.llm.embedded import _server, default_gguf_path, default_threads

        return _server(default_gguf_path(), self.n_ctx, self.n_threads or default_threads())

    def chat_request(self, body: dict[str, Any]) -> dict[str, Any]:
        """Ollama's ``/api/chat`` body -> the embedded model's OpenAI-style request."""
        opts = body.get("options") or {}
        seed = opts.get("seed")
        if seed is None or int(seed) < 0:  # Ollama: no seed (or -1) means fresh randomness
            seed = random.randrange(2**31)
        num_predict = int(opts.get("num_predict") or -1)  # Ollama: -1 = until the model stops
        messages = body.get("messages") or ()
        request: dict[str, Any] = {
            "messages": [{"role": m["role"], "content": m.get("content") or ""} for m in messages],
            "temperature": float(opts.get("temperature", 0.8)),
            "top_p": float(opts.get("top_p", 0.9)),
            "max_tokens": num_predict if num_predict > 0 else DEFAULT_NUM_PREDICT,
            "seed": int(seed),
            "cache_prompt": False,  # never reuse what an earlier request left in the shared slot (changes numerics)
        }
        if opts.get("stop"):
            request["stop"] = list(opts["stop"])
        if body.get("logprobs") and self.honours_logprobs():
            request.update(logprobs=True, top_logprobs=int(body.get("top_logprobs") or 0))
        return request

    def dead(self, path: str) -> bool:
        """Whether the server has died (``die_after`` chats answered); counts this chat when it has not."""
        with self._lock:
            if self.die_after is not None and self.chats >= self.die_after:
                return True
            if path == "/api/chat":
                self.chats += 1
            return False

    def canned(self, body: dict[str, Any]) -> str:
        """The ``reply`` text for a chat body."""
        return self.reply(body) if callable(self.reply) else str(self.reply)

    def generate(self, request: dict[str, Any]) -> dict[str, Any]:
        server, lock, slot = self._engine()
        with lock:
            slot.messages = None  # the embedded backend's record of what the slot holds is stale now
            return server.handle_chat_completions(request)

    def generate_stream(self, request: dict[str, Any], on_chunk) -> None:
        server, lock, slot = self._engine()
        with lock:
            slot.messages = None
            server.handle_chat_completions({**request, "stream": True}, on_chunk)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeOllama

    def handle_error(self, request, client_address):  # a client that hung up is not a test failure
        import sys

        self.fake.errors.append(sys.exc_info()[1])


class _Handler(BaseHTTPRequestHandler):
    """One connection; HTTP/1.1 with keep-alive and chunked streaming, as Ollama's Go server."""

    protocol_version = "HTTP/1.1"
    server_fake: FakeOllama

    def log_message(self, format, *args):  # quiet
        pass

    # --- plumbing -----------------------------------------------------------------------------
    def _body(self) -> dict[str, Any] | None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            return {"__invalid__": raw.decode("utf-8", "replace")}

    def _send_json(self, status: int, obj: dict[str, Any]) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _send_chunk(self, obj: dict[str, Any]) -> None:
        data = (json.dumps(obj) + "\n").encode()
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _dispatch(self, method: str) -> None:
        fake = self.server_fake
        body = self._body() if method == "POST" else None
        path = self.path.split("?", 1)[0]
        fake.record(method, path, body)
        if fake.dead(path):
            self.close_connection = True  # hang up without a word, like a crashed server
            return
        if fake.delay > 0 and (fake.delay_paths is None or path in fake.delay_paths):
            if fake._stopped.wait(fake.delay):
                self.close_connection = True
                return
        routes = {
            ("GET", "/api/version"): self._version,
            ("GET", "/api/tags"): self._tags,
            ("POST", "/api/show"): self._show,
            ("POST", "/api/chat"): self._chat,
        }
        handler = routes.get((method, path))
        if handler is None:
            if path in ("/", "") and method in ("GET", "HEAD"):
                data = b"Ollama is running"
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if method == "GET":
                    self.wfile.write(data)
                return
            self._send_json(404, {"error": "404 page not found"})
            return
        try:
            handler(body)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
            self.close_connection = True

    def do_GET(self):
        self._dispatch("GET")

    def do_POST(self):
        self._dispatch("POST")

    def do_HEAD(self):
        self._dispatch("HEAD")

    # --- endpoints ----------------------------------------------------------------------------
    def _version(self, body) -> None:
        self._send_json(200, {"version": self.server_fake.version})

    def _tags(self, body) -> None:
        self._send_json(200, {"models": [_tag_entry(m) for m in self.server_fake.models]})

    def _show(self, body) -> None:
        name = (body or {}).get("model") or (body or {}).get("name") or ""
        if not self.server_fake.has_model(name):
            self._send_json(404, {"error": f"model '{name}' not found"})
            return
        capabilities = ["completion"]
        self._send_json(200, {
            "modelfile": f"FROM {name}\n",
            "parameters": "stop \"<|im_end|>\"",
            "template": "{{ range .Messages }}<|im_start|>{{ .Role }}\n{{ .Content }}<|im_end|>\n{{ end }}",
            "details": _tag_entry(name)["details"],
            "model_info": {"general.architecture": "llama", "general.parameter_count": 134_515_008,
                           "llama.context_length": 8192},
            "capabilities": capabilities,
            "modified_at": "2025-11-20T10:00:00.000000000Z",
        })

    def _chat(self, body) -> None:
        fake = self.server_fake
        body = body or {}
        if fake.chat_failure == "500":
            self._send_json(500, {"error": "llama runner process has terminated: exit status 2"})
            return
        if fake.chat_failure == "malformed":
            data = b"<html>upstream proxy error</html>"
            self.send_response(200)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        if "__invalid__" in body:
            self._send_json(400, {"error": "invalid character in request body"})
            return
        model = body.get("model") or ""
        if not model:
            self._send_json(400, {"error": "model is required"})
            return
        if not fake.has_model(model):
            self._send_json(404, {"error": f'model "{model}" not found, try pulling it first'})
            return
        if fake.reply is not None:
            text = fake.canned(body)
            out = {"model": model, "created_at": _now(), "done": True, "done_reason": "stop",
                   "message": {"role": "assistant", "content": text}, **self._stats({}, time.perf_counter_ns())}
            if body.get("logprobs") and fake.honours_logprobs():  # one token a word, each with probability 1/2
                out["logprobs"] = [{"token": w, "logprob": -0.6931, "bytes": None, "top_logprobs": []}
                                   for w in text.split()]
            self._send_json(200, out)
            return
        request = fake.chat_request(body)
        want_logprobs = bool(request.get("logprobs"))
        started = time.perf_counter_ns()
        if body.get("stream", True):  # Ollama streams unless told otherwise
            self._chat_stream(model, request, want_logprobs, started)
            return
        response = fake.generate(request)
        if "error" in response:
            err = response["error"]
            message = err.get("message", str(err)) if isinstance(err, dict) else str(err)
            self._send_json(500, {"error": message})
            return
        choice = response["choices"][0]
        out: dict[str, Any] = {
            "model": model,
            "created_at": _now(),
            "message": {"role": "assistant", "content": choice["message"].get("content") or ""},
            "done": True,
            "done_reason": choice.get("finish_reason") or "stop",
            **self._stats(response, started),
        }
        if want_logprobs:
            out["logprobs"] = _ollama_logprobs((choice.get("logprobs") or {}).get("content"))
        self._send_json(200, out)

    def _chat_stream(self, model: str, request: dict[str, Any], want_logprobs: bool, started: int) -> None:
        self._start_stream()
        state: dict[str, Any] = {"broken": False, "final": None}

        def on_chunk(chunk: dict[str, Any]) -> None:
            if state["broken"]:
                return
            choice = (chunk.get("choices") or [{}])[0]
            if choice.get("finish_reason"):
                state["final"] = chunk
                return
            content = (choice.get("delta") or {}).get("content")
            logprobs = (choice.get("logprobs") or {}).get("content")
            if not content and not logprobs:
                return  # llama.cpp's opening role-only delta; Ollama sends none
            out: dict[str, Any] = {"model": model, "created_at": _now(),
                                   "message": {"role": "assistant", "content": content or ""}, "done": False}
            if want_logprobs:
                out["logprobs"] = _ollama_logprobs(logprobs)
            try:
                self._send_chunk(out)
            except OSError:
                state["broken"] = True

        self.server_fake.generate_stream(request, on_chunk)
        if state["broken"]:
            self.close_connection = True
            return
        final = state["final"] or {}
        choice = (final.get("choices") or [{}])[0]
        self._send_chunk({
            "model": model, "created_at": _now(), "message": {"role": "assistant", "content": ""},
            "done": True, "done_reason": choice.get("finish_reason") or "stop", **self._stats(final, started),
        })
        self._end_stream()

    @staticmethod
    def _stats(response: dict[str, Any], started: int) -> dict[str, Any]:
        timings = response.get("timings") or {}
        usage = response.get("usage") or {}
        return {
            "total_duration": time.perf_counter_ns() - started,
            "load_duration": 0,
            "prompt_eval_count": int(usage.get("prompt_tokens") or timings.get("prompt_n") or 0),
            "prompt_eval_duration": int(float(timings.get("prompt_ms") or 0) * 1e6),
            "eval_count": int(usage.get("completion_tokens") or timings.get("predicted_n") or 0),
            "eval_duration": int(float(timings.get("predicted_ms") or 0) * 1e6),
        }


class Misbehaving:
    """A loopback server at ``url`` that is *not* a working Ollama server, one ``mode`` of failing:

    - ``"silent"``: accepts connections and never sends a byte;
    - ``"drip"``: answers every request with an HTTP 200 header and then one byte of body every ``pace`` seconds,
      never finishing (a trickling proxy);
    - ``"html"``: HTTP 200 ``text/html`` (a web page where the server should be);
    - ``"500"``: HTTP 500 ``text/plain`` with a short error body;
    - ``"garbage"``: HTTP 200 JSON of the wrong shape (``{"models": ["a", "b"]}``, ``{"version": ...}``).
    """

    BODIES = {
        "html": (200, "text/html; charset=utf-8", b"<!DOCTYPE html><html><head><title>Welcome to nginx!</title>"
                 b"</head><body><h1>Welcome to nginx!</h1></body></html>"),
        "500": (500, "text/plain; charset=utf-8", b"upstream exploded\n"),
        "garbage": (200, "application/json", b'{"models": ["a", "b"], "version": "0.13.0"}'),
    }

    def __init__(self, mode: str, pace: float = 0.2):
        import socket

        if mode not in ("silent", "drip", *self.BODIES):
            raise ValueError(f"unknown mode {mode!r}")
        self.mode, self.pace = mode, pace
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self._conns: list[Any] = []
        self._stopped = threading.Event()
        threading.Thread(target=self._accept, daemon=True, name=f"misbehaving-{mode}").start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def address(self) -> str:
        """``tcp://127.0.0.1:<port>`` (for a dask scheduler setting)."""
        return f"tcp://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            self._conns.append(conn)
            if self.mode != "silent":
                threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn) -> None:
        try:
            conn.recv(65536)  # the request (small: a GET)
            if self.mode == "drip":
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
                while not self._stopped.wait(self.pace):
                    conn.sendall(b" ")
                return
            status, kind, body = self.BODIES[self.mode]
            head = (f"HTTP/1.1 {status} X\r\nContent-Type: {kind}\r\nContent-Length: {len(body)}\r\n"
                    "Connection: close\r\n\r\n").encode()
            conn.sendall(head + body)
        except OSError:
            pass

    def close(self) -> None:
        self._stopped.set()
        self._sock.close()
        for conn in self._conns:
            conn.close()

    def __enter__(self) -> Misbehaving:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
