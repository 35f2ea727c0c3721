"""A class server's shared recording (``UL_REPLAY_DIR``): one ``completions.sqlite`` made by ``cache import``, in a folder
nobody may write, that replay reads while every student keeps a writable cache of their own. Opening it never writes
beside it — not as root, whom no permission bit stops, and not as another user — and a recording that is missing or
is no recording is one error naming the folder and the command that makes it."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

import pytest
from fakes import EchoLLM
from test_hostile_inputs import _as_someone_else

from uncertainty_lab.cli import main
from uncertainty_lab.llm import CompletionCache, LLMError
from uncertainty_lab.llm.cache_file import FILE_NAME, REPLAY_ENV
from uncertainty_lab.llm.replay import ReplayLLM, ReplayMissError

QUESTIONS = ("What is 2 + 2?", "Name a planet.")


def snapshot(folder: Path) -> dict[str, str]:
    """Every file in ``folder`` with a hash of its bytes: what a reader must leave exactly as it was."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


@pytest.fixture
def recording(monkeypatch, capsys):
    """The README's steps on a small recording: answers recorded (EchoLLM) and exported, imported with
    ``UL_CACHE_DIR=<folder> uncertainty-lab cache import class.sqlite`` into a world-readable folder, which is then made
    read-only (555, the file 444). Yields the folder; the test's own UL_CACHE_DIR stays the student's cache."""
    top = Path(tempfile.mkdtemp(prefix="ul-recording-"))
    top.chmod(0o755)
    recorder = CompletionCache(top / "instructor" / FILE_NAME)
    for question in QUESTIONS:
        EchoLLM(cache=recorder).complete(question, seed=3)
    export = recorder.export(top / "class.sqlite")
    folder = top / "recording"
    with monkeypatch.context() as m:
        m.setenv("UL_CACHE_DIR", str(folder))
        assert main(["cache", "import", str(export)]) == 0, capsys.readouterr().err
    assert f"imported {len(QUESTIONS)} new entries" in capsys.readouterr().out
    (folder / FILE_NAME).chmod(0o444)
    folder.chmod(0o555)
    yield folder
    folder.chmod(0o755)
    shutil.rmtree(top)


def replay_texts() -> list[str]:
    return [ReplayLLM(backend="echo").complete(q, seed=3)[0].text for q in QUESTIONS]


def test_replay_reads_the_shared_recording_and_writes_nothing_beside_it(recording, monkeypatch):
    expected = [EchoLLM().complete(q, seed=3)[0].text for q in QUESTIONS]  # into the student's own cache
    before = snapshot(recording)
    assert before == {FILE_NAME: before[FILE_NAME]}  # the import left one file, no -wal or -shm
    monkeypatch.setenv(REPLAY_ENV, str(recording))
    assert replay_texts() == expected
    with _as_someone_else():  # a student who may not write the folder (as root: the identity of 'nobody')
        assert replay_texts() == expected
    assert snapshot(recording) == before


def test_replay_answers_from_the_recording_only_and_a_student_cache_stays_writable(recording, monkeypatch):
    """With UL_REPLAY_DIR set, what the student's own cache holds is no answer for replay, and what the student runs
    with a generating backend is cached in their UL_CACHE_DIR, never in the recording."""
    EchoLLM().complete("Only in my cache", seed=3)
    monkeypatch.setenv(REPLAY_ENV, str(recording))
    before = snapshot(recording)
    with pytest.raises(ReplayMissError, match="Only in my cache"):
        ReplayLLM(backend="echo").complete("Only in my cache", seed=3)
    assert EchoLLM().complete("Mine", seed=1)[0].cached is False
    assert EchoLLM().complete("Mine", seed=1)[0].cached is True
    assert snapshot(recording) == before


def test_many_readers_share_the_recording_at_once(recording, monkeypatch):
    """Eight threads of one process and a second process read the same file together (a class's kernels)."""
    import subprocess
    import sys
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setenv(REPLAY_ENV, str(recording))
    expected = replay_texts()
    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(lambda _: replay_texts(), range(8))) == [expected] * 8
    code = ("from uncertainty_lab.llm.replay import ReplayLLM; "
            f"print([ReplayLLM(backend='echo').complete(q, seed=3)[0].text for q in {QUESTIONS!r}])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=os.environ)
    assert done.returncode == 0 and done.stdout.strip() == repr(expected), done.stderr


def test_a_missing_recording_is_one_error_naming_the_folder_and_the_command(tmp_path, monkeypatch):
    monkeypatch.setenv(REPLAY_ENV, str(tmp_path / "recording"))
    with pytest.raises(LLMError) as caught:
        ReplayLLM(backend="echo").complete("Name a planet.", seed=3)
    message = str(caught.value)
    assert message.startswith("replay cannot read its recorded answers: there is no class recording")
    assert f"`UL_CACHE_DIR={tmp_path / 'recording'} uncertainty-lab cache import class.sqlite`" in message
    assert not (tmp_path / "recording").exists()  # looking made nothing


def test_a_file_that_is_no_recording_is_an_error(tmp_path, monkeypatch):
    folder = tmp_path / "recording"
    folder.mkdir()
    sqlite3.connect(folder / FILE_NAME).execute("CREATE TABLE other (x)").connection.close()
    monkeypatch.setenv(REPLAY_ENV, str(folder))
    with pytest.raises(LLMError, match="is not a class recording .it has no completions table"):
        ReplayLLM(backend="echo").complete("Name a planet.", seed=3)


def test_answers_still_in_a_write_ahead_log_are_read(tmp_path, monkeypatch):
    """A recording whose last answers sit in its -wal file (a writer still open, no checkpoint yet) still serves them:
    immutable=1 would not see them, so that file is read with mode=ro."""
    folder = tmp_path / "recording"
    cache = CompletionCache(folder / FILE_NAME)
    cache._connect().execute("PRAGMA wal_autocheckpoint=0")
    EchoLLM(cache=cache).complete("Name a planet.", seed=3)
    assert (folder / f"{FILE_NAME}-wal").stat().st_size > 0
    monkeypatch.setenv(REPLAY_ENV, str(folder))
    assert ReplayLLM(backend="echo").complete("Name a planet.", seed=3)[0].text == EchoLLM().complete(
        "Name a planet.", seed=3)[0].text
    cache.close()
