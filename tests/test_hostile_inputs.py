"""Hostile inputs and faults: untrusted files, slow servers and broken plugins never crash, hang, replace or lose
anything. Each test is named for what it breaks, and builds its fault for real: a loopback server that trickles
bytes, a damaged or forged cache file, a folder owned by someone else, a throwaway plugin distribution.

Add a test here for every new way in which a file, a server or a plugin can misbehave."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import stat
import sys
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
from test_registry import GOOD_METRIC, make_distribution

from uncertainty_lab import cli, registry
from uncertainty_lab.cli import main
from uncertainty_lab.llm import CacheError, CacheWarning, CompletionCache, LLMBackend, LLMError, get_llm
from uncertainty_lab.llm import select as llm_select
from uncertainty_lab.llm.cache import request_key
from uncertainty_lab.llm.embedded import EmbeddedLLM
from uncertainty_lab.llm.ollama_backend import OllamaLLM
from uncertainty_lab.llm.replay import ReplayLLM, ReplayMissError

TRICKLE_FOR = 12.0  # the trickling server gives up after this long, so the code from before the fix fails, not hangs


@pytest.fixture(autouse=True)
def _environment(monkeypatch, tmp_path):
    monkeypatch.setenv("UL_CACHE_DIR", str(tmp_path / "cache"))
    for var in ("OLLAMA_HOST", "UL_OLLAMA_MODEL", "UL_LLM", "UL_EMBEDDED_GGUF"):
        monkeypatch.delenv(var, raising=False)


@dataclass
class EchoLLM(LLMBackend):
    """A backend that answers at once ("echo <question>"): the cache, not a model, is under test."""

    name: ClassVar[str] = "echo"
    calls: int = 0

    def model_id(self) -> str:
        return "m"

    def _generate(self, messages, **kwargs):
        self.calls += 1
        return {"text": "echo " + messages[-1]["content"], "finish_reason": "stop", "logprobs": None}


def _request(question: str) -> dict:
    """The request EchoLLM().complete(question, seed=0) makes (defaults as in LLMBackend.complete)."""
    params = {"temperature": 0.7, "top_p": 0.95, "max_tokens": 128, "stop": None, "logprobs": False}
    return {"backend": "echo", "model": "m", "messages": [{"role": "user", "content": question}],
            "params": params, "seed": 0, "index": 0}


def _answer(request: dict, text: str) -> dict:
    return {"text": text, "finish_reason": "stop", "backend": request["backend"], "model": request["model"],
            "seed": request["seed"], "index": request["index"], "logprobs": None}


def _row(question: str, text: str | None = None) -> tuple:
    """A trustworthy row (key, backend, model, request, response, created) answering ``question``."""
    req = _request(question)
    return (request_key(req), "echo", "m", json.dumps(req), json.dumps(_answer(req, text or f"echo {question}")), 1.0)


def _export_file(path: Path, rows: list[tuple], schema: str | None = None) -> Path:
    con = sqlite3.connect(path)
    con.execute(schema or "CREATE TABLE completions (key TEXT PRIMARY KEY, backend TEXT, model TEXT, request TEXT, "
                          "response TEXT, created REAL)")
    con.executemany("INSERT INTO completions (key, backend, model, request, response, created) VALUES (?,?,?,?,?,?)",
                    rows)
    con.commit()
    con.close()
    return path


def _store(cache: CompletionCache, rows: list[tuple]) -> None:
    """Write rows straight into a cache's file, as a forger (or a bug) would: nothing checks them."""
    con = sqlite3.connect(cache.path)
    con.executemany("INSERT INTO completions (key, backend, model, request, response, created) VALUES (?,?,?,?,?,?)",
                    rows)
    con.commit()
    con.close()


def _cache_warnings(caught) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]


def _one_error_line(err: str, *needles: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


# --- slow and strange servers ---------------------------------------------------------------------


class _Trickle(BaseHTTPRequestHandler):
    """Answers every request with headers (or half a status line) and then one byte every 0.5 s."""

    protocol_version = "HTTP/1.1"
    mode = "body"
    stop: threading.Event

    def log_message(self, *args):
        pass

    def _trickle(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        try:
            if self.mode == "body":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "100000")
                self.end_headers()
            else:
                self.wfile.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
            until = time.monotonic() + TRICKLE_FOR
            while time.monotonic() < until and not self.stop.wait(0.5):
                self.wfile.write(b" " if self.mode == "body" else b"a")
                self.wfile.flush()
        except OSError:  # the client gave up
            pass
        self.close_connection = True

    do_GET = do_POST = _trickle


@pytest.fixture(params=["body", "headers"])
def trickling_server(request):
    """A loopback server that sends headers (or trickles them) and then one byte every 0.5 s."""
    stop = threading.Event()
    handler = type("Handler", (_Trickle,), {"mode": request.param, "stop": stop})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    stop.set()
    httpd.shutdown()
    httpd.server_close()


def test_trickling_server_cannot_hold_ollama_check_past_its_timeout(trickling_server):
    llm = OllamaLLM(host=trickling_server, timeout=3.0)
    t0 = time.monotonic()
    with pytest.raises(LLMError) as info:
        llm.check()
    assert time.monotonic() - t0 < 3.0 + 1.5
    assert "did not answer within 3.0 s" in str(info.value) and trickling_server in str(info.value)


def test_trickling_server_cannot_hold_a_completion_past_its_timeout(trickling_server):
    llm = OllamaLLM(host=trickling_server, model="m", timeout=1.5)
    t0 = time.monotonic()
    with pytest.raises(LLMError, match=r"did not answer within 1.5 s \(POST /api/chat\)"):
        llm.complete("hi", seed=0, use_cache=False)
    assert time.monotonic() - t0 < 1.5 + 1.5
    with pytest.raises(LLMError, match="did not answer within"):  # still usable: a new client replaced the old one
        llm.complete("hi again", seed=0, use_cache=False)


def test_trickling_server_cannot_hold_get_llm_auto(trickling_server, monkeypatch, capsys):
    monkeypatch.setenv("OLLAMA_HOST", trickling_server)
    t0 = time.monotonic()
    llm = get_llm("auto")
    assert time.monotonic() - t0 < llm_select.AUTO_PROBE_TIMEOUT + 2.0
    assert isinstance(llm, EmbeddedLLM)
    out = capsys.readouterr().out
    assert "using embedded:" in out and "fallback" in out
    assert f"did not answer within {llm_select.AUTO_PROBE_TIMEOUT} s" in out


def test_trickling_server_cannot_hold_doctor(trickling_server, monkeypatch, capsys):
    monkeypatch.setenv("OLLAMA_HOST", trickling_server)
    t0 = time.monotonic()
    assert main(["doctor"]) == 0
    assert time.monotonic() - t0 < 2.0 + 4.0
    line = next(x for x in capsys.readouterr().out.splitlines() if "ollama server" in x)
    assert line.startswith("warning") and "did not answer within 2.0 s" in line


class _ErrorPage(BaseHTTPRequestHandler):
    """An Ollama-looking server whose /api/chat answers 501 with a long HTML page (a proxy, an old server)."""

    def log_message(self, *args):
        pass

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self._send(200, json.dumps({"version": "0.13.0", "models": [{"model": "m", "name": "m"}]}).encode(),
                   "application/json")

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        page = ("<!DOCTYPE html><html><head><title>501 Not Implemented</title><style>body{font:12px}</style>"
                "</head><body><h1>Not Implemented</h1>" + "<p>filler paragraph</p>" * 300 + "<p>END-OF-PAGE</p>"
                "</body></html>")
        self._send(501, page.encode(), "text/html")


def test_ollama_error_page_is_cut_to_a_short_excerpt_with_its_status():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _ErrorPage)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        with pytest.raises(LLMError) as info:
            OllamaLLM(host=f"http://127.0.0.1:{httpd.server_address[1]}", model="m").complete("hi", seed=0)
    finally:
        httpd.shutdown()
        httpd.server_close()
    message = str(info.value)
    assert "HTTP 501" in message and "Not Implemented" in message
    assert len(message) < 400 and "<" not in message and "END-OF-PAGE" not in message


# --- a damaged cache file, a file where the folder should be, a folder nobody may write ---------------


@pytest.fixture(params=["garbage", "truncated"])
def damaged_cache(request, tmp_path) -> Path:
    """The default cache file, damaged: random bytes, or a real cache cut in half."""
    path = tmp_path / "cache" / "completions.sqlite"
    path.parent.mkdir()
    if request.param == "garbage":
        path.write_bytes(os.urandom(8192))
    else:
        cache = CompletionCache(path)
        _store(cache, [_row(f"question {i} " + "x" * 2000) for i in range(40)])
        cache.close()
        data = path.read_bytes()
        for extra in Path(f"{path}-wal"), Path(f"{path}-shm"):
            extra.unlink(missing_ok=True)
        path.write_bytes(data[: len(data) // 2])
    return path


@pytest.mark.parametrize("action", [["stats"], ["clear"], ["export", "out.sqlite"], ["import", "in.sqlite"]])
def test_damaged_cache_file_is_one_error_line_for_every_cache_command(damaged_cache, action, capsys, tmp_path):
    before = damaged_cache.read_bytes()
    assert main(["cache", action[0], *(str(tmp_path / a) for a in action[1:])]) == 1
    _one_error_line(capsys.readouterr().err, str(damaged_cache), "damaged",
                    f"mv {damaged_cache} {damaged_cache}.broken", "UL_CACHE_DIR")
    assert damaged_cache.read_bytes() == before  # nothing was replaced


def test_damaged_cache_file_lets_complete_run_uncached_warning_once(damaged_cache):
    llm = EchoLLM()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = llm.complete("Capital of France?", seed=0)
        again = llm.complete("Capital of France?", seed=0)
    assert [c.text for c in first + again] == ["echo Capital of France?"] * 2
    assert not any(c.cached for c in first + again) and llm.calls == 2
    [message] = _cache_warnings(caught)
    assert str(damaged_cache) in message and "mv " in message and "uncached" in message


def test_damaged_cache_file_makes_replay_one_clear_error(damaged_cache):
    with pytest.raises(LLMError) as info:
        ReplayLLM(backend="echo", model="m").complete("Capital of France?", seed=0)
    assert str(damaged_cache) in str(info.value) and "damaged" in str(info.value) and "mv " in str(info.value)
    with pytest.raises(LLMError, match="damaged"):  # and choosing the recorded model is no traceback either
        ReplayLLM(backend="echo").complete("Capital of France?", seed=0)


def test_damaged_cache_file_is_named_by_doctor_with_the_right_fix(damaged_cache):
    check = cli.check_cache()
    assert not check.ok and check.detail.startswith("damaged: ") and str(damaged_cache) in check.detail
    assert check.fix == f"move it aside: mv {damaged_cache} {damaged_cache}.broken, or set UL_CACHE_DIR to another directory"


def test_damaged_cache_file_is_an_llm_error_so_a_run_reports_one_line(damaged_cache):
    with pytest.raises(LLMError) as info:  # what `... run` and notebooks catch for a model that cannot answer
        CompletionCache(damaged_cache)
    assert isinstance(info.value, CacheError) and info.value.fault == "damaged" and info.value.path == damaged_cache


def test_ul_cache_dir_naming_a_file_is_one_line_everywhere(tmp_path, monkeypatch, capsys):
    a_file = tmp_path / "notes.txt"
    a_file.write_text("my notes")
    monkeypatch.setenv("UL_CACHE_DIR", str(a_file))
    assert main(["cache", "stats"]) == 1
    _one_error_line(capsys.readouterr().err, f"UL_CACHE_DIR={a_file} is a file, not a directory")
    check = cli.check_cache()
    assert not check.ok and check.detail.startswith("not a directory: UL_CACHE_DIR=")
    assert "set UL_CACHE_DIR to a directory" in check.fix
    llm = EchoLLM()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert [llm.complete("q", seed=0)[0].text for _ in range(2)] == ["echo q"] * 2
    [message] = _cache_warnings(caught)
    assert "is a file, not a directory" in message
    assert a_file.read_text() == "my notes"


def test_damaged_row_is_a_miss_with_a_warning_and_the_new_answer_replaces_it(tmp_path):
    cache = CompletionCache(tmp_path / "c.sqlite")
    for question, response in (("not json", "{oops"), ("no text", json.dumps({"finish_reason": "stop"}))):
        req = _request(question)
        _store(cache, [(request_key(req), "echo", "m", json.dumps(req), response, 1.0)])
    llm = EchoLLM(cache=cache)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert [c.cached for q in ("not json", "no text") for c in llm.complete(q, seed=0)] == [False, False]
        assert [c.cached for q in ("not json", "no text") for c in llm.complete(q, seed=0)] == [True, True]
    found = _cache_warnings(caught)
    assert len(found) == 2 and all("unusable" in m and str(cache.path) in m for m in found)
    replay = ReplayLLM(backend="echo", model="m", cache=cache)  # replay of a damaged row: a clear error, no KeyError
    for question, response in (("no text either", '{"text": 1}'), ("a list", "[]")):
        _store(cache, [(request_key(_request(question)), "echo", "m", json.dumps(_request(question)), response, 1.0)])
    with pytest.raises(ReplayMissError, match=f"in {cache.path} is damaged \\(the answer's text is not a string\\)"):
        replay.complete("no text either", seed=0)
    with pytest.warns(CacheWarning, match="not a JSON object"), pytest.raises(ReplayMissError, match="no recorded"):
        replay.complete("a list", seed=0)


@contextlib.contextmanager
def _as_someone_else():
    """Run the block as a user who owns none of the test's files: root ignores permission bits, so as root the
    process takes the identity of 'nobody' for the block (its real uid stays root, which takes it back)."""
    if os.geteuid() != 0:
        yield
        return
    groups = os.getgroups()
    os.setgroups([])
    os.setegid(65534)
    os.seteuid(65534)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)
        os.setgroups(groups)


@pytest.fixture
def foreign_folder(monkeypatch):
    """UL_CACHE_DIR names a folder the code under test cannot write into (mode 555; as root, owned by root while
    the code runs as 'nobody'), in a world-readable temporary folder."""
    top = Path(tempfile.mkdtemp(prefix="ul-foreign-"))
    top.chmod(0o755)
    folder = top / "cache"
    folder.mkdir()
    monkeypatch.setenv("UL_CACHE_DIR", str(folder))
    yield folder
    folder.chmod(0o755)
    shutil.rmtree(top)


def _run_in_unwritable(folder: Path) -> dict:
    """Complete "recorded" and "new" twice each with EchoLLM, then ask doctor about the cache, as someone who
    cannot write ``folder``."""
    folder.chmod(0o555)
    llm = EchoLLM()
    with _as_someone_else(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        done = [(c.text, c.cached) for q in ("recorded", "new", "recorded", "new") for c in llm.complete(q, seed=0)]
        check = cli.check_cache()
    return {"done": done, "calls": llm.calls, "check": check, "warnings": _cache_warnings(caught)}


def test_unwritable_cache_folder_warns_once_and_the_run_goes_on_uncached(foreign_folder):
    out = _run_in_unwritable(foreign_folder)
    assert out["done"] == [("echo recorded", False), ("echo new", False)] * 2 and out["calls"] == 4
    [message] = out["warnings"]
    assert str(foreign_folder / "completions.sqlite") in message
    assert "set UL_CACHE_DIR to a writable directory" in message and "uncached" in message
    check = out["check"]
    assert not check.ok and check.detail.startswith("unwritable: cannot write the completion cache")
    assert check.fix == f"make {foreign_folder} writable, or set UL_CACHE_DIR to a writable directory"
    assert not os.listdir(foreign_folder)


def test_unwritable_cache_folder_still_serves_what_it_recorded(foreign_folder):
    cache = CompletionCache(foreign_folder / "completions.sqlite")
    _store(cache, [_row("recorded", "the recorded answer")])
    cache.close()
    out = _run_in_unwritable(foreign_folder)
    assert out["done"] == [("the recorded answer", True), ("echo new", False)] * 2 and out["calls"] == 2
    [message] = out["warnings"]
    assert "cannot write the completion cache" in message
    check = out["check"]
    assert not check.ok and not check.required and check.detail.startswith("read-only: ") and "writable" in check.fix


# --- cache import trusts nothing ---------------------------------------------------------------


def test_import_of_a_file_that_is_not_sqlite_is_one_error_line(tmp_path, capsys):
    junk = tmp_path / "class.sqlite"
    junk.write_bytes(b"PK\x03\x04 this is a zip file, not a cache" * 50)
    assert main(["cache", "import", str(junk)]) == 1
    _one_error_line(capsys.readouterr().err, str(junk), "not an uncertainty-lab cache export")


def test_import_reads_named_columns_so_a_reordered_table_imports_correctly(tmp_path):
    source = _export_file(tmp_path / "x.sqlite", [_row("q1"), _row("q2")],
                          "CREATE TABLE completions (created REAL, response TEXT, request TEXT, model TEXT, "
                          "backend TEXT, key TEXT, note TEXT)")
    cache = CompletionCache(tmp_path / "c.sqlite")
    report = cache.import_file(source)
    assert (report.added, report.skipped, report.stopped) == (2, {}, "")
    assert ReplayLLM(backend="echo", model="m", cache=cache).complete("q2", seed=0)[0].text == "echo q2"


def test_import_skips_forged_rows_and_says_why_so_replay_never_meets_them(tmp_path, capsys):
    good, swapped, not_json, wrong_key, other_seed = (_row(q) for q in ("good", "swapped", "nj", "wk", "os"))
    rows = [good,
            swapped[:3] + (swapped[4], swapped[3]) + swapped[5:],  # request and response columns swapped
            not_json[:4] + ("Sure! Paris.",) + not_json[5:],  # an answer that is no JSON record
            (request_key(_request("another")),) + wrong_key[1:],  # a key that is not its request's hash
            other_seed[:4] + (json.dumps({**json.loads(other_seed[4]), "seed": 9}),) + other_seed[5:]]
    source = _export_file(tmp_path / "forged.sqlite", rows)
    assert main(["cache", "import", str(source)]) == 0
    captured = capsys.readouterr()
    assert "imported 1 new entries" in captured.out
    warned = captured.err.splitlines()
    assert len(warned) == 4 and all(line.startswith("warning: skipped 1 row: ") for line in warned), warned
    assert any("the key is not the hash of its request" in line and "(row 4)" in line for line in warned)
    assert any("the answer is not JSON" in line for line in warned)
    replay = ReplayLLM(backend="echo", model="m")
    assert replay.complete("good", seed=0)[0].text == "echo good"
    for question in ("swapped", "nj", "wk", "os"):
        with pytest.raises(ReplayMissError, match="no recorded answer"):
            replay.complete(question, seed=0)


def test_import_refuses_a_recursive_view_posing_as_the_table(tmp_path):
    bomb = tmp_path / "bomb.sqlite"
    con = sqlite3.connect(bomb)
    req = _request("q")
    con.execute("CREATE VIEW completions (key, backend, model, request, response, created) AS WITH RECURSIVE "
                "n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT 5000000) "
                f"SELECT printf('%064d', i), 'echo', 'm', '{json.dumps(req)}', 'x', 1.0 FROM n")
    con.close()
    assert bomb.stat().st_size < 16_384
    cache = CompletionCache(tmp_path / "c.sqlite")
    t0 = time.monotonic()
    with pytest.raises(ValueError, match="its completions is a view, not a table"):
        cache.import_file(bomb)
    assert time.monotonic() - t0 < 2.0 and len(cache) == 0


def test_import_refuses_computed_columns_posing_as_stored_ones(tmp_path):
    source = tmp_path / "gen.sqlite"
    con = sqlite3.connect(source)
    con.execute("CREATE TABLE completions (key TEXT, backend TEXT, model TEXT, request TEXT, created REAL, "
                "response TEXT GENERATED ALWAYS AS (printf('%.*c', 900000000, 'x')) VIRTUAL)")
    con.close()
    with pytest.raises(ValueError, match="columns response are computed"):
        CompletionCache(tmp_path / "c.sqlite").import_file(source)


def test_import_skips_rows_too_large_to_be_answers(tmp_path):
    huge = [_row(f"q{i}", "y" * (5 << 20)) for i in range(3)]  # 5 MB answers; one row may hold 4 MB
    source = _export_file(tmp_path / "big.sqlite", [_row("small"), *huge])
    cache = CompletionCache(tmp_path / "c.sqlite")
    report = cache.import_file(source)
    assert report.added == 1 and report.skipped == {"larger than 4194304 bytes (max_row_bytes, --max-row-mb)": 3}
    assert cache.stats().size_bytes < 1 << 20


def test_import_stops_at_the_row_and_byte_caps_and_says_so(tmp_path, capsys):
    source = _export_file(tmp_path / "many.sqlite", [_row(f"q{i}") for i in range(30)])
    assert main(["cache", "import", str(source), "--max-rows", "10"]) == 1
    captured = capsys.readouterr()
    assert "imported 10 new entries" in captured.out
    assert "error: stopped after 10 rows (max_rows, --max-rows)" in captured.err
    report = CompletionCache(tmp_path / "c.sqlite").import_file(source, max_bytes=2000)
    assert 0 < report.added < 10 and "max_bytes (--max-mb) is 2000" in report.stopped


# --- cache export never destroys what is at PATH -----------------------------------------------


@pytest.fixture
def recorded(tmp_path) -> CompletionCache:
    cache = CompletionCache()
    _store(cache, [_row("q1"), _row("q2")])
    yield cache
    cache.close()


def test_export_refuses_to_replace_an_existing_file_unless_forced(recorded, tmp_path, capsys):
    precious = tmp_path / "thesis.sqlite"
    precious.write_text("years of work")
    assert main(["cache", "export", str(precious)]) == 1
    _one_error_line(capsys.readouterr().err, str(precious), "already exists", "--force")
    assert precious.read_text() == "years of work"
    assert main(["cache", "export", str(precious), "--force"]) == 0
    assert len(CompletionCache(precious)) == 2


def test_export_refuses_targets_that_are_not_regular_files(recorded, tmp_path, capsys):
    folder = tmp_path / "folder"
    (folder / "inside").mkdir(parents=True)
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    targets = {folder: "a directory", pipe: "a named pipe"}
    if os.geteuid() == 0:  # a device node like /dev/null, made here (never touch the real one)
        device = tmp_path / "null"
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        targets[device] = "a character device"
    for target, kind in targets.items():
        for force in ([], ["--force"]):
            assert main(["cache", "export", str(target), *force]) == 1
            _one_error_line(capsys.readouterr().err, str(target), f"is {kind}, not a regular file")
    assert (folder / "inside").is_dir() and stat.S_ISFIFO(pipe.stat().st_mode)
    if os.geteuid() == 0:
        assert stat.S_ISCHR(device.stat().st_mode)


def test_export_of_an_empty_cache_is_an_error_naming_where_it_looked(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("UL_CACHE_DIR", "class-cache")  # relative, as in the README
    assert main(["cache", "export", "class.sqlite"]) == 1
    _one_error_line(capsys.readouterr().err, "empty", "UL_CACHE_DIR='class-cache'", str(tmp_path / "class-cache"))
    assert not (tmp_path / "class.sqlite").exists()


# --- plugins cannot replace a built-in or end the process ---------------------------------------


@pytest.mark.parametrize("where", ["first", "last"])
def test_plugin_cannot_replace_a_builtin_whatever_the_sys_path_order(plugin_path, monkeypatch, capsys, where):
    """A distribution registering the built-in name ``replay`` (as one could ``semantic_entropy``): the built-in
    stays, the impostor is a refused row naming both distributions and is never imported."""
    make_distribution(plugin_path, "ul-test-shadow", """
        [uncertainty_lab.llm_backends]
        replay = ul_test_shadow_backend:Impostor
        [uncertainty_lab.metrics]
        count_distinct = ul_test_shadow:CountDistinct
    """, {"ul_test_shadow": GOOD_METRIC, "ul_test_shadow_backend": "raise RuntimeError('imported')\n"})
    if where == "last":
        monkeypatch.setattr(sys, "path", [p for p in sys.path if p != str(plugin_path)] + [str(plugin_path)])
    with pytest.warns(registry.PluginWarning, match="is refused"):
        registry.refresh()
    assert registry.get("llm_backends", "replay") is ReplayLLM
    assert registry.get("metrics", "count_distinct").__module__ == "ul_test_shadow"  # its other plugins still work
    assert main(["plugins", "llm_backends"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("replay ")]
    assert len(rows) == 2
    assert any(r.split()[1] == "ok" and "uncertainty-lab" in r for r in rows)
    refused = next(r for r in rows if r.split()[1] == "error")
    assert "ul-test-shadow" in refused and "'uncertainty-lab'" in refused and "refused" in refused
    assert "ul_test_shadow_backend" not in sys.modules


@pytest.mark.parametrize("body", ["import sys\nsys.exit(3)\n",
                                  "class Stop(BaseException):\n    pass\n\nraise Stop('no')\n"],
                         ids=["sys.exit", "BaseException"])
def test_plugin_ending_the_process_at_import_is_a_broken_row(plugin_path, capsys, body):
    make_distribution(plugin_path, "ul-test-exit", """
        [uncertainty_lab.metrics]
        quitter = ul_test_exit:Thing
        count_distinct = ul_test_good:CountDistinct
    """, {"ul_test_exit": body, "ul_test_good": GOOD_METRIC})
    registry.refresh()
    assert main(["plugins", "metrics"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("quitter "))
    assert "error" in row.split() and "ul-test-exit" in row
    assert ("SystemExit: 3" in row) if "sys.exit" in body else ("Stop: no" in row)
    assert next(line for line in out.splitlines() if line.startswith("count_distinct ")).split()[1] == "ok"
    with pytest.raises(registry.PluginLoadError):
        registry.get("metrics", "quitter")


def test_plugin_interrupted_at_import_still_interrupts(plugin_path):
    make_distribution(plugin_path, "ul-test-ctrl-c", """
        [uncertainty_lab.metrics]
        interrupted = ul_test_ctrl_c:Thing
    """, {"ul_test_ctrl_c": "import os, signal, time\nos.kill(os.getpid(), signal.SIGINT)\ntime.sleep(5)\n"})
    registry.refresh()
    with pytest.raises(KeyboardInterrupt):  # a real Ctrl-C while a plugin imports (a plugin's own raise is
        registry.get("metrics", "interrupted")  # a broken plugin: tests/test_hardening2.py)
