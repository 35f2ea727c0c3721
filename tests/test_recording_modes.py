"""The notebook mode is part of a recording (uncertainty_lab/llm/modes.py): a cache is marked with the mode
(``UL_FAST=1`` = fast, else full) of each process that wrote answers into it, an export carries the marks and an
import merges them as a set, a replay that misses in a mode the recording lacks says so in one line with the
commands that fix it, and a cache from before the marks replays as before (its misses add the mode hint)."""

from __future__ import annotations

import sqlite3

import pytest
from fakes import EchoLLM

from uncertainty_lab import tour
from uncertainty_lab.cli import main
from uncertainty_lab.llm import CompletionCache
from uncertainty_lab.llm.modes import current_mode, recorded_modes
from uncertainty_lab.llm.replay import ReplayLLM, ReplayMissError

Q = "What is the capital of Australia?"


def record(path, mode: str, monkeypatch, *, max_tokens: int = 8) -> CompletionCache:
    """``Q`` asked of the echo backend by a process in ``mode``, into the cache at ``path``."""
    monkeypatch.setenv("UL_FAST", "1") if mode == "fast" else monkeypatch.delenv("UL_FAST", raising=False)
    cache = CompletionCache(path)
    EchoLLM(cache=cache).complete(Q, n=2, seed=3, max_tokens=max_tokens)
    return cache


def replay(cache, mode: str, monkeypatch, *, max_tokens: int = 8):
    monkeypatch.setenv("UL_FAST", "1") if mode == "fast" else monkeypatch.delenv("UL_FAST", raising=False)
    return ReplayLLM(backend="echo", cache=cache).complete(Q, n=2, seed=3, max_tokens=max_tokens)


def old_cache(path, monkeypatch) -> None:
    """A cache as written before modes were recorded (the same completions table, no ``recorded_modes``): the echo
    backend's answers to ``Q`` (seed 3, 8 tokens), the marks dropped."""
    record(path, "full", monkeypatch).close()
    con = sqlite3.connect(path)
    con.execute("DROP TABLE recorded_modes")
    con.commit()
    con.close()


@pytest.mark.parametrize(("value", "mode"), [("1", "fast"), (None, "full"), ("0", "full"), ("", "full"),
                                             ("true", "full"), (" 1", "full")])
def test_current_mode_is_the_notebooks_test_of_ul_fast(value, mode):
    """The notebooks test ``os.environ.get("UL_FAST") == "1"``: the same test, not a looser one."""
    assert current_mode({} if value is None else {"UL_FAST": value}) == mode


def test_an_answer_written_marks_the_writers_mode_and_marks_merge(tmp_path, monkeypatch):
    path = tmp_path / "c.sqlite"
    cache = record(path, "fast", monkeypatch)
    assert cache.modes() == recorded_modes(path) == {"fast"}
    record(path, "full", monkeypatch, max_tokens=9)  # another process, the other mode, into the same cache
    assert recorded_modes(path) == {"fast", "full"}
    assert CompletionCache(path).stats().modes == {"fast", "full"}
    cache.clear()
    assert recorded_modes(path) == frozenset()  # an empty cache holds answers of no mode
    with pytest.raises(ValueError, match="modes must be among"):
        cache.mark_modes(["turbo"])


def test_a_cache_from_before_the_marks_has_no_mode_and_replays_as_before(tmp_path, monkeypatch):
    path = tmp_path / "old.sqlite"
    old_cache(path, monkeypatch)
    assert recorded_modes(path) == frozenset()
    cache = CompletionCache(path)  # opening it adds the (empty) table, not a mark
    assert cache.modes() == frozenset()
    assert [c.cached for c in replay(cache, "full", monkeypatch)] == [True, True]
    with pytest.raises(ReplayMissError) as err:
        replay(cache, "full", monkeypatch, max_tokens=40)
    text = str(err.value)
    assert text.startswith("no recorded answer for echo:echo-1 sample 0 (seed=3") and "\n" not in text
    assert ("this run is in full mode (UL_FAST unset) and the recording does not say which mode it was made in: "
            "if the class recording was made in fast mode, replay with UL_FAST=1") in text


def test_a_replay_in_the_mode_the_recording_lacks_says_which_mode_in_one_line(tmp_path, monkeypatch):
    cache = record(tmp_path / "class.sqlite", "fast", monkeypatch)
    assert [c.cached for c in replay(cache, "fast", monkeypatch)] == [True, True]
    with pytest.raises(ReplayMissError) as err:
        replay(cache, "full", monkeypatch, max_tokens=40)  # full mode asks for longer answers
    text = str(err.value)
    assert "\n" not in text
    assert text.startswith("this class recording holds fast-mode answers (UL_FAST=1) and this run is in full mode "
                           "(UL_FAST unset)")
    assert "replay in fast mode (UL_LLM=replay UL_FAST=1 uncertainty-lab lab build/student)" in text
    assert "record full mode too (UL_CACHE_DIR=class-cache make tour, then export again)" in text
    assert "first request not recorded: echo:echo-1 sample 0 (seed=3" in text

    full = record(tmp_path / "full.sqlite", "full", monkeypatch)
    with pytest.raises(ReplayMissError, match=r"^this class recording holds full-mode answers \(UL_FAST unset\) and "
                       r"this run is in fast mode \(UL_FAST=1\).*UL_CACHE_DIR=class-cache make tour TOUR_ARGS=--fast"):
        replay(full, "fast", monkeypatch, max_tokens=4)  # fast mode asks for shorter answers


def test_a_miss_in_a_recorded_mode_is_the_plain_miss(tmp_path, monkeypatch):
    cache = record(tmp_path / "class.sqlite", "fast", monkeypatch)
    with pytest.raises(ReplayMissError) as err:
        replay(cache, "fast", monkeypatch, max_tokens=9)
    assert str(err.value).startswith("no recorded answer for") and "mode" not in str(err.value)


def test_a_miss_in_a_cache_of_both_modes_names_the_run_mode(tmp_path, monkeypatch):
    """A student's cache after importing a fast recording, with full-mode answers of their own: the marks cannot
    tell which mode the class recording has, so the plain miss adds the hint."""
    cache = record(tmp_path / "student.sqlite", "fast", monkeypatch)
    record(tmp_path / "student.sqlite", "full", monkeypatch, max_tokens=5)
    with pytest.raises(ReplayMissError) as err:
        replay(cache, "full", monkeypatch, max_tokens=40)
    assert str(err.value).startswith("no recorded answer for") and str(err.value).endswith(
        "(this run is in full mode (UL_FAST unset) and the cache holds answers of both modes: if the class recording "
        "was made in fast mode, replay with UL_FAST=1)")


def test_export_carries_the_marks_and_import_merges_them(tmp_path, monkeypatch, capsys):
    teacher = record(tmp_path / "teacher.sqlite", "fast", monkeypatch)
    exported = teacher.export(tmp_path / "class.sqlite")
    assert recorded_modes(exported) == {"fast"}
    student = record(tmp_path / "student.sqlite", "full", monkeypatch, max_tokens=5)  # the student's own answers
    report = student.import_file(exported)
    assert report.added == 2 and report.modes == {"fast"}
    assert student.modes() == {"fast", "full"}
    monkeypatch.setenv("UL_CACHE_DIR", str(tmp_path / "fresh"))
    assert main(["cache", "import", str(exported)]) == 0
    assert "the recording holds answers for fast mode (UL_FAST=1): replay it with UL_LLM=replay UL_FAST=1" in (
        capsys.readouterr().out)
    assert main(["cache", "stats"]) == 0
    assert "modes:   fast mode (UL_FAST=1)" in capsys.readouterr().out


def test_an_import_that_adds_nothing_adds_no_mark(tmp_path, monkeypatch):
    teacher = record(tmp_path / "teacher.sqlite", "full", monkeypatch)
    exported = teacher.export(tmp_path / "class.sqlite")
    con = sqlite3.connect(exported)
    con.execute("UPDATE completions SET key = 'forged' || rowid")  # every row fails verification
    con.commit()
    con.close()
    student = CompletionCache(tmp_path / "student.sqlite")
    report = student.import_file(exported)
    assert report.added == 0 and report.skipped
    assert student.modes() == frozenset()


@pytest.mark.parametrize("table", [
    "CREATE VIEW recorded_modes AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
    "SELECT 'fast' AS mode FROM n",  # a view that would never end: never run
    "CREATE TABLE recorded_modes (mode)",  # values that are no mode name
])
def test_hostile_marks_count_as_none(tmp_path, monkeypatch, table):
    path = tmp_path / "hostile.sqlite"
    old_cache(path, monkeypatch)
    con = sqlite3.connect(path)
    con.execute(table)
    if "VIEW" not in table:
        con.executemany("INSERT INTO recorded_modes VALUES (?)",
                        [("turbo",), (b"fast",), ("fast" * 1000,), (1,), (None,)] + [("x",)] * 20 + [("full",)])
    con.commit()
    con.close()
    assert recorded_modes(path) == frozenset()  # "full" sits past the rows read
    student = CompletionCache(tmp_path / "student.sqlite")
    assert student.import_file(path).modes == frozenset() and student.modes() == frozenset()


def test_recorded_modes_of_what_is_no_cache_names_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="no completion cache at .*missing.sqlite"):
        recorded_modes(tmp_path / "missing.sqlite")
    junk = tmp_path / "notes.txt"
    junk.write_text("not a database " * 100)
    with pytest.raises(ValueError, match=r"notes.txt is not a completion cache .*cache export"):
        recorded_modes(junk)


def test_a_complete_tour_recording_is_marked_with_the_kernels_mode(tmp_path):
    log = tmp_path / "requests.jsonl"
    log.write_text("")
    env = {"UL_CACHE_DIR": str(tmp_path / "class-cache"), "UL_FAST": "1"}
    assert tour.check_kernels_recording(log, env).ok
    assert recorded_modes(tour.kernel_cache(env)) == {"fast"}
    assert tour.recorded_in(env) == "fast mode (UL_FAST=1)"
    log.write_text('{"key": "k", "what": "a request the cache lacks"}\n')
    other = {"UL_CACHE_DIR": str(tmp_path / "other")}
    assert not tour.check_kernels_recording(log, other).ok
    assert recorded_modes(tour.kernel_cache(other)) == frozenset()  # an incomplete recording is not marked


def test_tour_both_records_fast_then_full_into_one_cache(tmp_path, monkeypatch, capsys):
    runs = []

    def fake_run_tour(notebooks, out, *, fast, cache_dir, timeout):
        runs.append((fast, out, cache_dir))
        return tour.Tour([], tour.check_recording(tmp_path / "none.jsonl", CompletionCache(tmp_path / "c.sqlite")))

    monkeypatch.setattr(tour, "run_tour", fake_run_tour)
    assert tour.main(["nb", "--out", str(tmp_path / "t"), "--both", "--cache-dir", "cc"]) == 0
    assert runs == [(True, tmp_path / "t" / "fast", "cc"), (False, tmp_path / "t", "cc")]
    assert capsys.readouterr().out.count("wrote ") == 2
    with pytest.raises(SystemExit):
        tour.main(["nb", "--fast", "--both"])
    assert "not allowed with argument" in capsys.readouterr().err
