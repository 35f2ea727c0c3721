"""Run journals: complete lines are kept, the line an interruption cut short is dropped, damage elsewhere is an
error naming the line; the writer flushes every record and can refuse NaN."""

from __future__ import annotations

import json
import math

import pytest

from uncertainty_lab.journal import JournalWriter, drop_cut_tail, read_records


class Damaged(Exception):
    pass


def test_complete_lines_and_the_offset_after_them(tmp_path):
    path = tmp_path / "run.jsonl"
    whole = '{"type": "header"}\n\n{"type": "step", "step": 1}\n'
    path.write_text(whole + '{"type": "step", "st', encoding="utf-8")  # the write a crash cut short
    records, good = read_records(path)
    assert records == [(1, {"type": "header"}), (3, {"type": "step", "step": 1})]
    assert good == len(whole.encode())
    drop_cut_tail(path, good)
    assert path.read_text(encoding="utf-8") == whole
    drop_cut_tail(path, good)  # nothing cut short: nothing changes
    assert path.read_text(encoding="utf-8") == whole


def test_a_garbled_last_line_is_cut_short_but_garbage_inside_is_damage(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_text('{"a": 1}\n{"b": \n', encoding="utf-8")
    assert read_records(path) == ([(1, {"a": 1})], len('{"a": 1}\n'))
    path.write_text('{"a": 1}\n{"b": \n{"c": 3}\n', encoding="utf-8")
    with pytest.raises(Damaged, match=r"run.jsonl line 2 is not JSON \(.*\); is this a run\?"):
        read_records(path, error=Damaged, what="is this a run?")
    path.write_text("", encoding="utf-8")
    assert read_records(path) == ([], 0)


def test_writer_flushes_each_record_appends_and_can_refuse_nan(tmp_path):
    path = tmp_path / "run.jsonl"
    writer = JournalWriter(path, "w")
    writer.write({"type": "header", "text": "naïve"})
    assert json.loads(path.read_text(encoding="utf-8")) == {"type": "header", "text": "naïve"}  # before close
    writer.close()
    with JournalWriter(path, "a") as again:
        again.write({"x": math.nan})
    (_, first), (_, second) = read_records(path)[0]
    assert first["type"] == "header" and math.isnan(second["x"])
    with JournalWriter(path, "a", allow_nan=False) as strict, pytest.raises(ValueError, match="not JSON compliant"):
        strict.write({"x": math.inf})
    in_memory = JournalWriter(None)
    in_memory.write({"ignored": True})
    in_memory.close()


@pytest.mark.parametrize("line, why", [
    (b"[" * 100_000 + b"]" * 100_000, "nested 100000 levels deep"),
    (b'{"type": "step", "n": ' + b"1" * 10_000 + b"}", "an integer of 10000 digits"),
    (b'{"type": "step", "a": "\xff\xfe"}', "not UTF-8 text"),
    (b'{"type": "step", "a": "\\udc80"}', "lone surrogate"),
])
def test_a_hostile_line_is_one_error_naming_file_and_line(tmp_path, line, why):
    path = tmp_path / "run.jsonl"
    path.write_bytes(b'{"type": "header"}\n' + line + b'\n{"type": "end"}\n')
    with pytest.raises(Damaged, match=rf"run\.jsonl, line 2: .*{why}.*delete line 2"):
        read_records(path, error=Damaged)


def test_a_run_file_that_is_a_pipe_is_refused(tmp_path):
    import os

    os.mkfifo(tmp_path / "run.jsonl")
    with pytest.raises(Damaged, match="is a named pipe"):
        read_records(tmp_path / "run.jsonl", error=Damaged)
