"""Content hashes of what a journalled result depends on (provenance.py), checked against hashlib directly."""

from __future__ import annotations

import hashlib
import os

import pytest

from uncertainty_lab.orchestration.grading import QAGrader
from uncertainty_lab.provenance import content_hash, data_files, file_hash, grader_settings, item_changes, item_hashes


def test_hashes_are_sha256_of_canonical_json_and_of_the_bytes(tmp_path):
    expected = hashlib.sha256('{"a":[1,"é"],"b":null}'.encode()).hexdigest()[:16]
    assert content_hash({"b": None, "a": [1, "é"]}) == expected  # keys sorted, UTF-8, no spaces
    path = tmp_path / "data.jsonl"
    path.write_bytes(b'{"q": 1}\n')
    assert file_hash(path) == hashlib.sha256(b'{"q": 1}\n').hexdigest()[:16]
    assert data_files(str(path)) == {str(path): file_hash(path)} and data_files(None) == {}
    assert data_files(str(tmp_path / "gone.csv")) == {str(tmp_path / "gone.csv"): None}
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "x.json").write_bytes(b"[]")
    before = file_hash(folder)
    (folder / "x.json").write_bytes(b"[1]")
    assert file_hash(folder) != before


def test_a_changed_question_and_changed_references_are_told_apart():
    item = {"id": "a", "question": "Is water wet?", "answers": ["yes"], "incorrect": ["no"], "category": "x"}
    same = item_hashes({**item, "category": "other"})  # a field nothing depends on
    assert same == item_hashes(item)
    recorded = {"a": item_hashes(item), "b": item_hashes({"question": "Q?", "answers": ["1"]}), "gone": same}
    current = {"a": item_hashes({**item, "answers": ["no"]}), "b": item_hashes({"question": "Q!", "answers": ["1"]})}
    assert item_changes(recorded, current) == (["b"], ["a"])


def test_a_grader_is_recorded_by_its_config_or_its_name():
    assert grader_settings(QAGrader("contains"))["method"] == "contains"
    assert grader_settings(None) is None

    def my_grader(item, answer, raw):
        return {"correct": True}

    assert grader_settings(my_grader) == "my_grader"


def test_a_pipe_or_device_as_data_is_never_opened_for_its_hash(tmp_path):
    """A FIFO with no writer would block ``open`` forever, /dev/zero never ends: both hash as None (the loader then
    refuses them by name); a folder's hash skips them and keeps its regular files."""
    fifo = tmp_path / "data" / "questions.jsonl"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    (tmp_path / "data" / "b.jsonl").write_bytes(b"{}\n")
    assert data_files([str(fifo), "/dev/zero"]) == {str(fifo): None, "/dev/zero": None}
    assert data_files(str(fifo.parent)) == {str(fifo.parent): content_hash([["b.jsonl", file_hash(fifo.parent / "b.jsonl")]])}
    with pytest.raises(ValueError, match="not a regular file"):
        file_hash(fifo)
