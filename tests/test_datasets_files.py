"""The one file reader every loader uses (JSON list or JSON lines by content, cut-short files, the byte cap) and
the subset every loader takes (split files, seeded sample, limit)."""

from __future__ import annotations

import json

import pytest

from uncertainty_lab.datasets.files import DatasetFormatError, ReadBudget, json_records, read_text
from uncertainty_lab.datasets.search import SearchDataFormatError
from uncertainty_lab.datasets.subset import split_file, take

RECORDS = [{"id": "a", "question": "Q1?"}, {"id": "b", "question": "Q2?"}, {"id": "c", "question": "Q3?"}]
CUT = r"ends in the middle of a record at line {line} \(the file looks truncated: download it again\)"


def records(text, **kw):
    return json_records(text, "f.json", record_keys=("id",), **kw)


def test_json_list_and_json_lines_are_told_apart_by_content():
    as_list = records(json.dumps(RECORDS, indent=2))
    as_lines = records("".join(json.dumps(r) + "\n" for r in RECORDS))
    assert [r for _, r in as_list] == [r for _, r in as_lines] == RECORDS
    assert [label for label, _ in as_list] == ["record 1", "record 2", "record 3"]
    assert [label for label, _ in as_lines] == ["line 1", "line 2", "line 3"]
    spaced = "\n" + json.dumps(RECORDS[0]) + "\n\n" + json.dumps(RECORDS[1]) + "\n"
    assert [label for label, _ in records(spaced)] == ["line 2", "line 4"]
    assert records(json.dumps(RECORDS[0], indent=2)) == [("record 1", RECORDS[0])]  # one pretty-printed record
    assert records(json.dumps(RECORDS[0])) == [("line 1", RECORDS[0])]  # one record on one line
    assert records("[]") == []


def test_what_is_not_a_list_of_records_is_named():
    with pytest.raises(DatasetFormatError, match=r"f\.json: expected a JSON list of records .*got a dict .*keys "
                                                 r"'data', 'version'"):
        records(json.dumps({"data": RECORDS, "version": "1.0"}))
    with pytest.raises(DatasetFormatError, match=r"expected a JSON list of records .*starts with 'id,question"):
        records("id,question\na,Q1?\n")
    with pytest.raises(DatasetFormatError, match="the file is empty"):
        records("  \n")


@pytest.mark.parametrize("cut", [
    lambda t: t[:-25],  # inside a string of the last record
    lambda t: t[: t.index('"id": "b"') - 6],  # between two records
    lambda t: t[:-2],  # the closing brackets missing
])
def test_a_json_list_cut_short_says_so(cut):
    text = cut(json.dumps(RECORDS, indent=2))
    with pytest.raises(DatasetFormatError, match="f.json " + CUT.format(line=text.rstrip().count("\n") + 1)) as info:
        records(text)
    assert info.value.truncated


def test_json_lines_cut_short_say_so_and_broken_lines_do_not():
    lines = [json.dumps(r) for r in RECORDS]
    text = "\n".join(lines)[:-12]  # the download stopped inside line 3
    with pytest.raises(DatasetFormatError, match="f.json " + CUT.format(line=3)) as info:
        records(text)
    assert info.value.truncated and info.value.row == "line 3"
    with pytest.raises(DatasetFormatError, match="f.json " + CUT.format(line=1)):
        records(lines[0][:-5])  # a one-record file cut short
    broken = lines[0] + "\n{not json}\n" + lines[2] + "\n"
    with pytest.raises(DatasetFormatError, match=r"f\.json, line 2: not valid JSON") as info:
        records(broken)
    assert not info.value.truncated


def test_errors_come_in_the_loaders_class():
    with pytest.raises(SearchDataFormatError) as info:
        json_records(json.dumps(RECORDS)[:-10], "q.json", error=SearchDataFormatError)
    assert info.value.truncated and info.value.record == "line 1"


def test_read_text_caps_what_it_reads(tmp_path):
    path = tmp_path / "big.jsonl"
    path.write_text("".join(json.dumps(r) + "\r\n" for r in RECORDS), encoding="utf-8-sig")
    assert read_text(path).startswith('{"id": "a"') and "\r" not in read_text(path)  # BOM and CRLF handled
    size = path.stat().st_size
    with pytest.raises(DatasetFormatError, match=r"big\.jsonl: more than max_bytes=10 bytes .*untrusted input: pass a "
                                                 r"larger max_bytes= \(or max_bytes=None for no cap\)"):
        read_text(path, max_bytes=10)
    assert read_text(path, max_bytes=size) == read_text(path, max_bytes=None)
    for bad in (0, -1, 2.5, True, "1"):
        with pytest.raises(ValueError, match="max_bytes"):
            ReadBudget(bad)
    with pytest.raises(FileNotFoundError, match="nothing is downloaded"):
        read_text(tmp_path / "absent.json")


# ---------------------------------------------------------------------------------------------------------------
# split, sample, limit
# ---------------------------------------------------------------------------------------------------------------


def test_sample_is_seeded_without_replacement_in_file_order_and_limit_comes_after():
    items = list(range(100))
    a = take(items, sample=10, seed=7)
    assert a == take(items, sample=10, seed=7)  # same seed, same items
    assert a != take(items, sample=10, seed=8)
    assert len(set(a)) == 10 and a == sorted(a)  # without replacement, in file order
    assert take(items, sample=10, limit=3, seed=7) == a[:3]  # limit after sample
    assert take(items, limit=5) == [0, 1, 2, 3, 4] and take(items, limit=500) == items
    assert sorted(take(items, sample=100, seed=1)) == items
    with pytest.raises(ValueError, match="sample=101 is more than the 100 items"):
        take(items, sample=101)
    for name, bad in (("limit", 0), ("sample", -1), ("limit", 2.5), ("sample", True), ("seed", -1), ("seed", "x")):
        with pytest.raises(ValueError, match=name):
            take(items, **{name: bad})


FILES = {"train": ("d_train.json", "d_train.jsonl"), "dev": ("d_dev.json",)}


def test_split_file_picks_the_split_in_a_folder_and_checks_a_file_name(tmp_path):
    (tmp_path / "d_dev.json").write_text("[]")
    assert split_file(tmp_path, "dev", FILES, "D") == tmp_path / "d_dev.json"
    assert split_file(tmp_path / "renamed.json", "dev", FILES, "D") == tmp_path / "renamed.json"
    assert split_file(tmp_path / "d_dev.json", None, FILES, "D") == tmp_path / "d_dev.json"
    with pytest.raises(ValueError, match=r"d_dev\.json holds the 'dev' split of D, not 'train'"):
        split_file(tmp_path / "d_dev.json", "train", FILES, "D")
    with pytest.raises(FileNotFoundError, match=r"no D file for split 'train' \(looked for d_train\.json or "
                                                r"d_train\.jsonl"):
        split_file(tmp_path, "train", FILES, "D")
    with pytest.raises(IsADirectoryError, match=r"pass the data file itself, or split= .*train: d_train\.json or "
                                                r"d_train\.jsonl; dev: d_dev\.json"):
        split_file(tmp_path, None, FILES, "D")
    with pytest.raises(ValueError, match="split must be one of 'train', 'dev' for D, got 'test'"):
        split_file(tmp_path, "test", FILES, "D")
    (tmp_path / "d_train.json").write_text("[]")
    (tmp_path / "d_train.jsonl").write_text("")
    with pytest.raises(ValueError, match="several files hold the 'train' split"):
        split_file(tmp_path, "train", FILES, "D")


@pytest.mark.parametrize("body, why", [
    ("[" * 100_000 + "]" * 100_000, "nested 100000 levels deep"),
    ('{"id": "a", "n": ' + "1" * 10_000 + "}\n", "an integer of 10000 digits"),
    ('[{"id": "a\\ud800"}]', "lone surrogate"),
])
def test_hostile_json_is_the_loaders_error_naming_the_file(tmp_path, body, why):
    path = tmp_path / "hostile.json"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(DatasetFormatError, match=f"hostile.json.*{why}"):
        json_records(read_text(path), path)


@pytest.mark.parametrize("target", ["/dev/zero", "fifo"])
def test_a_device_or_pipe_is_refused_before_reading(tmp_path, target):
    import os

    if target == "fifo":
        target = tmp_path / "data.json"
        os.mkfifo(target)
    with pytest.raises(DatasetFormatError, match="not a regular file"):
        read_text(target)
