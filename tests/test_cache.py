"""The completion cache: content addressing, concurrent writers, export/import, location."""

from __future__ import annotations

import multiprocessing as mp
import sqlite3

import pytest

from uncertainty_lab.llm import CompletionCache, cache_dir, default_cache
from uncertainty_lab.llm.cache import request_key


def _request(i: int, model: str = "m") -> dict:
    return {"backend": "embedded", "model": model, "messages": [{"role": "user", "content": f"q{i}"}],
            "params": {"temperature": 1.0}, "seed": 0, "index": i}


def _answer(request: dict, text: str) -> dict:
    """A completion record of ``request`` (what ``Completion.to_record`` stores), as import verifies it."""
    return {"text": text, "finish_reason": "stop", "backend": request["backend"], "model": request["model"],
            "seed": request["seed"], "index": request["index"], "logprobs": None}


def _writer(path: str, start: int, count: int) -> None:
    cache = CompletionCache(path)
    for i in range(start, start + count):
        req = _request(i)
        cache.put(request_key(req), req, {"text": f"a{i}"})
        cache.put(request_key(_request(0)), _request(0), {"text": "a0"})  # every writer hits one shared key


def test_key_is_canonical_and_sensitive_to_every_field():
    base = _request(1)
    reordered = dict(reversed(list(base.items())))
    assert request_key(base) == request_key(reordered)
    for field, value in [("backend", "ollama"), ("model", "x"), ("seed", 1), ("index", 2),
                         ("params", {"temperature": 0.9}), ("messages", [{"role": "user", "content": "Q1"}])]:
        assert request_key({**base, field: value}) != request_key(base), field


def test_put_get_and_idempotent_writes(tmp_path):
    cache = CompletionCache(tmp_path / "c.sqlite")
    req = _request(1)
    assert cache.get(request_key(req)) is None
    cache.put(request_key(req), req, {"text": "first"})
    cache.put(request_key(req), req, {"text": "second"})  # content-addressed: the first answer stays
    assert cache.get(request_key(req)) == {"text": "first"}
    assert len(cache) == 1
    assert cache.models() == [("embedded", "m")]


def test_two_processes_writing_at_once_corrupt_nothing(tmp_path):
    path = str(tmp_path / "shared.sqlite")
    CompletionCache(path)
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, 1 + k * 300, 300)) for k in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    cache = CompletionCache(path)
    assert len(cache) == 601
    assert all(cache.get(request_key(_request(i))) == {"text": f"a{i}"} for i in range(601))
    assert sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_stats_clear_export_import(tmp_path):
    cache = CompletionCache(tmp_path / "c.sqlite")
    for i in range(5):
        cache.put(request_key(_request(i)), _request(i), _answer(_request(i), str(i)))
    cache.put(request_key(_request(0, "other")), _request(0, "other"), _answer(_request(0, "other"), "o"))
    stats = cache.stats()
    assert stats.entries == 6 and stats.by_model == {"embedded:m": 5, "embedded:other": 1}
    assert stats.size_bytes > 0

    exported = cache.export(tmp_path / "out" / "export.sqlite")
    assert sqlite3.connect(exported).execute("PRAGMA journal_mode").fetchone() == ("delete",)  # one plain file
    with pytest.raises(ValueError, match="live cache itself"):
        cache.export(cache.path)
    fresh = CompletionCache(tmp_path / "fresh.sqlite")
    assert fresh.import_from(exported) == 6
    assert fresh.get(request_key(_request(3))) == _answer(_request(3), "3")
    assert cache.clear() == 6 and len(cache) == 0
    assert fresh.import_from(exported) == 0

    with pytest.raises(FileNotFoundError, match="exported cache"):
        fresh.import_from(tmp_path / "missing.sqlite")
    not_a_cache = tmp_path / "junk.sqlite"
    sqlite3.connect(not_a_cache).execute("CREATE TABLE t (x)")
    with pytest.raises(ValueError, match="not an uncertainty-lab cache export"):
        fresh.import_from(not_a_cache)


def test_location_follows_ul_cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("UL_CACHE_DIR", str(tmp_path / "here"))
    assert cache_dir() == tmp_path / "here"
    assert default_cache().path == tmp_path / "here" / "completions.sqlite"
    monkeypatch.setenv("UL_CACHE_DIR", str(tmp_path / "there"))
    assert default_cache().path == tmp_path / "there" / "completions.sqlite"
