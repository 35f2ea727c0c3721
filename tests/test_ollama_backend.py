"""The ``ollama`` backend through the real ``ollama`` client, against the loopback server in
``fake_ollama.py`` (backed by the embedded SmolLM2 model): generation, seeds, logprobs, the cache, the
errors a real server produces, ``OLLAMA_HOST`` and ``get_llm("auto")``."""

from __future__ import annotations

import math
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import ollama
import pytest
from fake_ollama import FakeOllama

from uncertainty_lab import registry
from uncertainty_lab.llm import (
    Completion,
    CompletionCache,
    LLMCapabilityError,
    LLMError,
    LLMUnavailableError,
    TokenLogprob,
    get_llm,
    sample_seed,
)
from uncertainty_lab.llm import select as llm_select
from uncertainty_lab.llm.embedded import EmbeddedLLM
from uncertainty_lab.llm.ollama_backend import OllamaLLM, default_host, normalise_host

MODEL = "smollm2:135m"
PROMPT = "Name a colour."
OPEN_PROMPT = "Write a one-line headline about the weather tomorrow."


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, tmp_path):
    """A private cache, and no Ollama settings leaking in from the environment."""
    monkeypatch.setenv("UL_CACHE_DIR", str(tmp_path / "cache"))
    for var in ("OLLAMA_HOST", "UL_OLLAMA_MODEL", "OLLAMA_API_KEY"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def fake():
    with FakeOllama(models=[MODEL]) as server:
        yield server
    # a bug in the fake's handlers would otherwise only show as a confusing client error
    assert all(isinstance(e, ConnectionError) for e in server.errors), server.errors


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _llm(server: FakeOllama, model: str = MODEL, **params) -> OllamaLLM:
    llm = get_llm(f"ollama:{model}", host=server.url, **params)
    assert isinstance(llm, OllamaLLM)
    return llm


# --- generation ---------------------------------------------------------------------------------


def test_get_llm_returns_text_and_sends_ollamas_request(fake):
    llm = _llm(fake)
    [c] = llm.complete(PROMPT, max_tokens=12, seed=1, temperature=0.9, top_p=0.8, stop=["\n\n"])
    assert isinstance(c, Completion)
    assert isinstance(c.text, str) and c.text.strip()
    assert (c.backend, c.model, c.seed, c.index, c.cached) == ("ollama", MODEL, 1, 0, False)
    assert c.finish_reason in ("stop", "length")
    assert c.logprobs is None
    [body] = fake.bodies("/api/chat")
    assert body["model"] == MODEL and body["stream"] is False
    assert body["messages"] == [{"role": "user", "content": PROMPT}]
    assert body["options"] == {"temperature": 0.9, "top_p": 0.8, "num_predict": 12,
                               "seed": sample_seed(1, 0), "stop": ["\n\n"]}
    assert "logprobs" not in body


def test_options_reach_the_model(fake):
    """Seed, temperature, top_p and num_predict really drive generation: the same request to the
    embedded model (same per-sample seed) gives the same text."""
    kw = dict(max_tokens=16, seed=5, temperature=1.0, top_p=0.95, use_cache=False)
    via_ollama = _llm(fake).complete(OPEN_PROMPT, **kw)[0]
    direct = EmbeddedLLM().complete(OPEN_PROMPT, **kw)[0]
    assert via_ollama.text == direct.text
    assert via_ollama.finish_reason == direct.finish_reason


def test_registry_create_builds_a_working_backend(fake):
    llm = registry.create("llm_backends", "ollama", model=MODEL, host=fake.url, timeout=30.0)
    assert isinstance(llm, OllamaLLM)
    assert llm.label == f"ollama:{MODEL}"
    assert llm.available_models() == [MODEL]
    llm.check()  # the server has the model: no error
    messages = [{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": PROMPT}]
    [c] = llm.complete(messages, max_tokens=8, seed=2)
    assert c.text.strip()
    assert fake.bodies("/api/chat")[0]["messages"][0] == {"role": "system", "content": "Answer briefly."}


def test_same_seed_same_text(fake):
    llm = _llm(fake)
    a = llm.complete(OPEN_PROMPT, max_tokens=16, temperature=1.0, seed=11, use_cache=False)[0]
    b = _llm(fake).complete(OPEN_PROMPT, max_tokens=16, temperature=1.0, seed=11, use_cache=False)[0]
    assert a.text == b.text
    assert fake.count("/api/chat") == 2  # both generated, neither came from a cache
    seeds = [body["options"]["seed"] for body in fake.bodies("/api/chat")]
    assert seeds == [sample_seed(11, 0)] * 2


def test_n_samples_use_per_sample_seeds_and_differ(fake):
    llm = _llm(fake)
    out = llm.complete(OPEN_PROMPT, n=3, temperature=1.0, max_tokens=16, seed=7)
    assert [c.index for c in out] == [0, 1, 2]
    assert all(c.seed == 7 for c in out)
    sent = [body["options"]["seed"] for body in fake.bodies("/api/chat")]
    assert sent == [sample_seed(7, i) for i in range(3)]
    assert len(set(sent)) == 3
    assert len({c.text for c in out}) >= 2
    # sample i does not depend on how many were asked for
    [first] = llm.complete(OPEN_PROMPT, n=1, temperature=1.0, max_tokens=16, seed=7, use_cache=False)
    assert first.text == out[0].text


def test_logprobs_are_parsed_into_token_logprobs(fake):
    fake.version = "0.12.11"  # the first release with logprobs
    llm = _llm(fake, top_logprobs=3)
    [c] = llm.complete(PROMPT, max_tokens=10, temperature=1.0, seed=3, logprobs=True)
    [body] = fake.bodies("/api/chat")
    assert body["logprobs"] is True and body["top_logprobs"] == 3
    assert c.logprobs and all(isinstance(t, TokenLogprob) for t in c.logprobs)
    assert "".join(t.token for t in c.logprobs) == c.text
    for t in c.logprobs:
        assert t.logprob <= 0.0 and math.isfinite(t.logprob)
        assert len(t.top) == 3
        assert all(isinstance(tok, str) and isinstance(lp, float) and lp <= 0.0 for tok, lp in t.top)
        assert [lp for _, lp in t.top] == sorted((lp for _, lp in t.top), reverse=True)
    assert c.sequence_logprob == pytest.approx(sum(t.logprob for t in c.logprobs))
    assert c.sequence_logprob < 0
    # the same numbers the embedded model gives for the same request
    direct = EmbeddedLLM(top_logprobs=3).complete(PROMPT, max_tokens=10, temperature=1.0, seed=3,
                                                   logprobs=True, use_cache=False)[0]
    assert [t.token for t in c.logprobs] == [t.token for t in direct.logprobs]
    assert [t.logprob for t in c.logprobs] == pytest.approx([t.logprob for t in direct.logprobs], abs=1e-5)


def test_second_identical_call_is_served_from_the_cache(fake, tmp_path):
    cache = CompletionCache(tmp_path / "c.sqlite")
    llm = get_llm(f"ollama:{MODEL}", host=fake.url, cache=cache)
    kw = dict(max_tokens=12, temperature=1.0, seed=4, logprobs=True)
    [first] = llm.complete(PROMPT, **kw)
    assert first.cached is False and fake.count("/api/chat") == 1
    [again] = llm.complete(PROMPT, **kw)
    assert again.cached is True
    assert fake.count("/api/chat") == 1  # the server saw no second generation
    assert again.text == first.text and again.finish_reason == first.finish_reason
    assert again.logprobs == first.logprobs
    assert len(cache) == 1
    # a different request is not a hit
    llm.complete(PROMPT, **{**kw, "max_tokens": 13})
    assert fake.count("/api/chat") == 2


def test_cached_answers_need_no_server(tmp_path):
    """A cache hit is answered without contacting the server at all, logprobs included."""
    cache = CompletionCache(tmp_path / "c.sqlite")
    kw = dict(max_tokens=8, seed=9, logprobs=True)
    with FakeOllama(models=[MODEL]) as server:
        url = server.url
        [first] = get_llm(f"ollama:{MODEL}", host=url, cache=cache).complete(PROMPT, **kw)
    # the server is gone; a fresh backend (no memoised version) still gets the cached answer
    [again] = get_llm(f"ollama:{MODEL}", host=url, cache=cache, timeout=1.0).complete(PROMPT, **kw)
    assert again.cached is True and again.text == first.text and again.logprobs == first.logprobs
    with pytest.raises(LLMUnavailableError):  # and a miss says the server is down
        get_llm(f"ollama:{MODEL}", host=url, cache=cache, timeout=1.0).complete(PROMPT, **{**kw, "seed": 10})


# --- errors -------------------------------------------------------------------------------------


@pytest.mark.parametrize("logprobs", [False, True])
def test_connection_refused_says_how_to_start_ollama(closed_port, logprobs):
    host = f"http://127.0.0.1:{closed_port}"
    llm = get_llm(f"ollama:{MODEL}", host=host, timeout=5.0)
    with pytest.raises(LLMUnavailableError) as info:
        llm.complete(PROMPT, max_tokens=4, seed=0, logprobs=logprobs)
    msg = str(info.value)
    assert "ollama serve" in msg and "OLLAMA_HOST" in msg and host in msg
    with pytest.raises(LLMUnavailableError, match="ollama serve"):
        llm.check(timeout=1.0)


def test_missing_model_names_ollama_pull(fake):
    llm = _llm(fake, model="llama3.2:3b")
    with pytest.raises(LLMUnavailableError) as info:
        llm.complete(PROMPT, max_tokens=4, seed=0)
    assert "`ollama pull llama3.2:3b`" in str(info.value)
    assert fake.count("/api/chat") == 1  # the server was asked and answered 404
    with pytest.raises(LLMUnavailableError) as info:
        llm.check()
    assert "ollama pull llama3.2:3b" in str(info.value) and MODEL in str(info.value)  # says what it has


def test_untagged_model_name_matches_latest():
    with FakeOllama(models=["tiny:latest"]) as server:
        llm = get_llm("ollama:tiny", host=server.url)
        llm.check()
        assert llm.complete(PROMPT, max_tokens=4, seed=0)[0].text


def test_slow_server_times_out(fake):
    fake.delay, fake.delay_paths = 3.0, ("/api/chat",)
    llm = _llm(fake, timeout=0.5)
    t0 = time.monotonic()
    with pytest.raises(LLMError) as info:
        llm.complete(PROMPT, max_tokens=4, seed=0)
    elapsed = time.monotonic() - t0
    assert not isinstance(info.value, LLMUnavailableError)
    assert "timeout" in str(info.value) and "0.5 s" in str(info.value)
    assert 0.4 <= elapsed < 2.5  # the client gave up; it did not wait for the server
    assert fake.count("/api/chat") == 1


def test_old_server_refuses_logprobs_before_sampling():
    with FakeOllama(models=[MODEL], version="0.12.10") as server:
        llm = _llm(server)
        with pytest.raises(LLMCapabilityError) as info:
            llm.complete(PROMPT, max_tokens=4, seed=0, logprobs=True)
        assert "0.12.10" in str(info.value) and "0.12.11" in str(info.value)
        assert server.count("/api/chat") == 0 and server.count("/api/version") == 1
        assert llm.complete(PROMPT, max_tokens=4, seed=0)[0].text  # plain text still works


def test_server_that_returns_no_logprobs_is_a_capability_error():
    with FakeOllama(models=[MODEL], logprobs_supported=False) as server:
        with pytest.raises(LLMCapabilityError, match="no logprobs"):
            _llm(server).complete(PROMPT, max_tokens=4, seed=0, logprobs=True)
        assert server.count("/api/chat") == 1


def test_server_error_is_reported_with_its_status(fake):
    fake.n_ctx = 256  # a separate small-context model instance: this prompt cannot fit
    with pytest.raises(LLMError) as info:
        _llm(fake).complete("word " * 400, max_tokens=4, seed=0)
    assert not isinstance(info.value, LLMUnavailableError)
    assert "500" in str(info.value) and fake.url in str(info.value)


class _NotOllama(BaseHTTPRequestHandler):
    """Some other web service on the port: 404 for every path, or a dropped connection."""

    drop = False

    def log_message(self, *args):
        pass

    def _answer(self):
        if self.drop:
            self.close_connection = True
            return
        data = b"<html>not found</html>"
        self.send_response(404)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = _answer


@pytest.fixture(params=[False, True], ids=["404-everywhere", "drops-connections"])
def not_ollama(request):
    handler = type("Handler", (_NotOllama,), {"drop": request.param})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_something_else_on_the_port_is_an_llm_error(not_ollama, monkeypatch, capsys):
    llm = get_llm(f"ollama:{MODEL}", host=not_ollama, timeout=2.0)
    with pytest.raises(LLMUnavailableError) as info:
        llm.check()
    assert not_ollama in str(info.value)
    assert "not as an Ollama server" in str(info.value)
    with pytest.raises(LLMError) as info:
        llm.complete(PROMPT, max_tokens=4, seed=0)
    assert not_ollama in str(info.value) and "ollama pull" not in str(info.value)
    monkeypatch.setenv("OLLAMA_HOST", not_ollama)
    monkeypatch.setenv("UL_OLLAMA_MODEL", MODEL)
    assert isinstance(get_llm("auto"), EmbeddedLLM)
    assert "fallback" in capsys.readouterr().out


# --- OLLAMA_HOST and host= ----------------------------------------------------------------------


@pytest.mark.parametrize("form", ["http://127.0.0.1:{port}", "127.0.0.1:{port}", "http://127.0.0.1:{port}/",
                                  ":{port}"])
def test_ollama_host_env_is_honoured(fake, monkeypatch, form):
    monkeypatch.setenv("OLLAMA_HOST", form.format(port=fake.port))
    llm = get_llm(f"ollama:{MODEL}")
    assert llm.host == fake.url
    assert llm.complete(PROMPT, max_tokens=4, seed=0)[0].text
    assert fake.count("/api/chat") == 1


def test_host_param_without_scheme_works(fake):
    llm = get_llm(f"ollama:{MODEL}", host=f"127.0.0.1:{fake.port}")
    assert llm.host == fake.url
    assert llm.available_models() == [MODEL]
    assert llm.complete(PROMPT, max_tokens=4, seed=0)[0].text


@pytest.mark.parametrize(("value", "expected"), [
    ("", "http://127.0.0.1:11434"),
    ("127.0.0.1", "http://127.0.0.1:11434"),  # no scheme: Ollama's own port, not 80
    ("0.0.0.0", "http://0.0.0.0:11434"),  # the usual server-side setting, read by a client
    ("example.com:8080", "http://example.com:8080"),
    ("http://example.com", "http://example.com:80"),
    ("https://example.com", "https://example.com:443"),
    ("https://example.com:8443/ollama/", "https://example.com:8443/ollama"),
    ("[::1]", "http://[::1]:11434"),
    ("[::1]:8080", "http://[::1]:8080"),
])
def test_host_forms_follow_ollamas_rules(monkeypatch, value, expected):
    assert normalise_host(value) == expected
    monkeypatch.setenv("OLLAMA_HOST", value)
    assert default_host() == expected
    # the official client reads them the same way (httpx drops a scheme's default port when printing)
    client = ollama.Client(host=value or None)
    client_url = client._client.base_url
    client.close()
    assert str(client_url).rstrip("/") == str(httpx.URL(expected)).rstrip("/")


# --- get_llm("auto") ----------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["http://", ""])
def test_auto_picks_ollama_when_the_server_has_the_model(fake, monkeypatch, capsys, scheme):
    monkeypatch.setenv("OLLAMA_HOST", f"{scheme}127.0.0.1:{fake.port}")
    monkeypatch.setenv("UL_OLLAMA_MODEL", MODEL)
    llm = get_llm("auto")
    assert isinstance(llm, OllamaLLM) and llm.model == MODEL and llm.host == fake.url
    out = capsys.readouterr().out
    assert f"using ollama:{MODEL}" in out and fake.url in out
    assert fake.count("/api/tags") == 1
    assert llm.complete(PROMPT, max_tokens=4, seed=0)[0].backend == "ollama"


def test_auto_falls_back_to_embedded_when_no_server_answers(closed_port, monkeypatch, capsys):
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{closed_port}")
    monkeypatch.setenv("UL_OLLAMA_MODEL", MODEL)
    llm = get_llm("auto")
    assert isinstance(llm, EmbeddedLLM)
    out = capsys.readouterr().out
    assert "using embedded:" in out and "fallback" in out
    assert f"no Ollama server answers at http://127.0.0.1:{closed_port}" in out
    [c] = llm.complete(PROMPT, max_tokens=4, seed=0)
    assert c.backend == "embedded" and c.text


def test_auto_falls_back_on_a_malformed_ollama_host(monkeypatch, capsys):
    monkeypatch.setenv("OLLAMA_HOST", "ftp://127.0.0.1:21")
    with pytest.raises(ValueError, match="http:// or https://"):
        default_host()
    assert isinstance(get_llm("auto"), EmbeddedLLM)
    out = capsys.readouterr().out
    assert "fallback" in out and "http:// or https://" in out


def test_auto_falls_back_when_the_model_is_not_pulled(fake, monkeypatch, capsys):
    monkeypatch.setenv("OLLAMA_HOST", fake.url)
    monkeypatch.setenv("UL_OLLAMA_MODEL", "llama3.2:3b")
    assert isinstance(get_llm("auto"), EmbeddedLLM)
    out = capsys.readouterr().out
    assert "fallback" in out and "does not have model 'llama3.2:3b'" in out
    assert fake.count("/api/chat") == 0


def test_auto_falls_back_quickly_from_a_hung_server(fake, monkeypatch, capsys):
    monkeypatch.setattr(llm_select, "AUTO_PROBE_TIMEOUT", 0.3)
    fake.delay = 3.0
    monkeypatch.setenv("OLLAMA_HOST", fake.url)
    monkeypatch.setenv("UL_OLLAMA_MODEL", MODEL)
    t0 = time.monotonic()
    llm = get_llm("auto")
    assert time.monotonic() - t0 < 2.5  # not the 3 s the server would take
    assert isinstance(llm, EmbeddedLLM)
    out = capsys.readouterr().out
    assert "fallback" in out and "did not answer within 0.3 s" in out


# --- the fake server itself speaks Ollama's API -------------------------------------------------


def test_fake_server_speaks_ollamas_api_to_the_official_client(fake):
    client = ollama.Client(host=fake.url, timeout=30)
    try:
        _speaks_ollama(client)
    finally:
        client.close()


def _speaks_ollama(client: ollama.Client) -> None:
    listed = client.list().models
    assert [m.model for m in listed] == [MODEL] and listed[0].details.format == "gguf"
    assert client.show(MODEL).details.quantization_level == "Q4_1"
    with pytest.raises(ollama.ResponseError) as info:
        client.show("nope")
    assert info.value.status_code == 404 and info.value.error == "model 'nope' not found"
    with pytest.raises(ollama.ResponseError) as info:
        client.chat(model="nope", messages=[{"role": "user", "content": "hi"}])
    assert info.value.status_code == 404 and "try pulling it first" in info.value.error

    kw = dict(model=MODEL, messages=[{"role": "user", "content": PROMPT}],
              options={"seed": 21, "num_predict": 12, "temperature": 1.0}, logprobs=True, top_logprobs=2)
    whole = client.chat(stream=False, **kw)
    parts = list(client.chat(stream=True, **kw))
    assert all(not p.done for p in parts[:-1]) and parts[-1].done
    assert parts[-1].done_reason == whole.done_reason and parts[-1].eval_count == whole.eval_count > 0
    assert "".join(p.message.content for p in parts) == whole.message.content
    streamed = [lp for p in parts[:-1] for lp in p.logprobs]
    assert [lp.token for lp in streamed] == [lp.token for lp in whole.logprobs][: len(streamed)]
    assert all(len(lp.top_logprobs) == 2 for lp in whole.logprobs)
