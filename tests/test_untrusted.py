"""The bounded reader of untrusted files (uncertainty_lab/untrusted.py): kinds of file, caps counted while reading,
depth before parsing, decoding errors with the line, short escaped excerpts; fuzzed with hypothesis."""

from __future__ import annotations

import gzip
import json
import os
import threading
import tomllib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from uncertainty_lab import untrusted as u
from uncertainty_lab.untrusted import UntrustedFileError


def test_regular_file_read_and_gzip_by_magic(tmp_path):
    plain = tmp_path / "a.txt"
    plain.write_bytes("héllo\r\nworld\n".encode())
    assert u.read_text(plain) == "héllo\nworld\n"
    packed = tmp_path / "b.bin"  # gzip is found by its magic bytes, not the name
    packed.write_bytes(gzip.compress(b"one\ntwo\n"))
    assert u.read_text(packed) == "one\ntwo\n"
    assert [n for n, _ in u.iter_lines(packed)] == [1, 2]


def test_folder_missing_and_dangling_link(tmp_path):
    with pytest.raises(UntrustedFileError, match="is a folder; data.path must name the file itself"):
        u.read_text(tmp_path, what="data.path")
    with pytest.raises(FileNotFoundError, match="no such file"):
        u.read_text(tmp_path / "nope.json")
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    with pytest.raises(FileNotFoundError, match="points at nothing"):
        u.check_path(tmp_path / "dangling")


def test_symlink_loop_is_named(tmp_path):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(UntrustedFileError, match="cannot be read"):
        u.check_path(tmp_path / "a", what="data.path")


def test_devices_are_refused_not_read_forever():
    with pytest.raises(UntrustedFileError, match="is a device, not a regular file"):
        u.read_bytes("/dev/zero", what="data.path")


def test_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    result: list[BaseException] = []

    def read():
        try:
            u.read_text(fifo, what="data.path")
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            result.append(exc)

    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(5)
    assert not t.is_alive(), "reading a FIFO blocked"
    assert isinstance(result[0], UntrustedFileError) and "named pipe" in str(result[0])


def test_cap_is_counted_while_reading_decompressed_bytes(tmp_path):
    bomb = tmp_path / "bomb.gz"
    bomb.write_bytes(gzip.compress(b"x" * 3_000_000))  # a few KB on disk
    assert bomb.stat().st_size < 20_000
    with pytest.raises(UntrustedFileError, match="max_bytes=1000000"):
        u.read_bytes(bomb, max_bytes=1_000_000)
    budget = u.Budget(4_000_000)  # one budget across two reads
    u.read_bytes(bomb, budget=budget)
    with pytest.raises(UntrustedFileError, match="max_bytes"):
        u.read_bytes(bomb, budget=budget)


def test_one_huge_line_is_refused_before_it_is_read(tmp_path):
    f = tmp_path / "one_line.csv.gz"
    f.write_bytes(gzip.compress(b"a" * 5_000_000))
    lines = u.iter_lines(f, max_line=1000)
    with pytest.raises(UntrustedFileError, match=r"line 1.*longer than max_line=1000"):
        next(lines)


def test_truncated_gzip_is_named(tmp_path):
    f = tmp_path / "cut.gz"
    f.write_bytes(gzip.compress(b"line\n" * 1000)[:-20])
    with pytest.raises(UntrustedFileError, match="not a readable gzip archive"):
        u.read_bytes(f)


def test_bad_utf8_names_the_line_and_quotes_escaped(tmp_path):
    f = tmp_path / "bad.jsonl"
    f.write_bytes(b'{"a": 1}\n{"b": "\xff\xfe"}\n')
    with pytest.raises(UntrustedFileError, match=r"line 2.*not UTF-8") as exc:
        u.read_text(f)
    assert "\\xff" in str(exc.value) and "\xff" not in str(exc.value)


def test_excerpt_is_short_and_escaped():
    secret = "PATH=/usr/bin\x00HOME=/root\x1b[31m" * 100
    shown = u.excerpt(secret)
    assert len(shown) < 100 and "\x00" not in shown and "\x1b" not in shown and shown.endswith("…'")


def test_depth_is_checked_before_parsing():
    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(UntrustedFileError, match="nested 100000 levels deep"):
        u.load_json(deep, "deep.json")
    toml = "x = " + "[" * 5000 + "]" * 5000
    with pytest.raises(UntrustedFileError, match="nested 5000 levels"):
        u.load_toml(toml, "deep.toml")


def test_brackets_inside_strings_and_comments_do_not_count():
    assert u.nesting_depth('{"a": "[[[[{{{{", "b": [1, [2]]}') == 3
    assert u.nesting_depth('{"a": "\\"[[[["}') == 1
    assert u.nesting_depth("a = '[[[[' # [[[[[\n[t]\nb = \"\"\"[[[\"\"\"\n", toml=True) == 1


def test_depth_agrees_with_the_parser_on_what_it_accepts():
    doc = {"a": [1, {"b": [[2]]}], "c": "[{"}
    text = json.dumps(doc)
    assert u.nesting_depth(text) == 5  # { [ { [ [
    assert u.load_json(text, "x.json", max_depth=5) == doc
    with pytest.raises(UntrustedFileError):
        u.load_json(text, "x.json", max_depth=4)


def test_huge_integer_and_lone_surrogate_name_the_file():
    with pytest.raises(UntrustedFileError, match=r"run.jsonl, line 7: an integer of 10000 digits"):
        u.load_json("9" * 10_000, "run.jsonl", row="line 7")
    with pytest.raises(UntrustedFileError, match="lone surrogate"):
        u.load_json('{"q": "Paris\\ud800"}', "qa.json")
    assert u.load_json('{"q": "\\ud83d\\ude00"}', "qa.json") == {"q": "😀"}  # a proper pair is fine


@pytest.mark.parametrize("bad", [5, None, b"bytes", "", "x" * 5000, "a\x00b"])
def test_a_path_that_is_not_a_path_names_the_setting(bad):
    with pytest.raises((TypeError, ValueError), match="data.path"):
        u.check_path(bad, what="data.path")


# -- fuzzing: any bytes give data or the package's own error, never another exception ---------------------------

_ADVERSARIAL = st.one_of(
    st.binary(max_size=400),
    st.builds(lambda n: b"[" * n + b"]" * n, st.integers(0, 3000)),
    st.builds(lambda n: b'{"a":' * n + b"1" + b"}" * n, st.integers(0, 3000)),
    st.builds(lambda d: b"[" + b"9" * d + b"]", st.integers(1, 6000)),
    st.builds(lambda s, k: s[:k], st.sampled_from([b'{"q": "a", "r": [1, 2]}', b'x = [1, {a = 2}]\n']),
              st.integers(0, 25)),
    st.sampled_from([b"\xff\xfe\x00", b'"\\ud800"', b"\x00\x00", b"\xef\xbb\xbf{}", b"NaN", b"1e99999"]),
)


@settings(max_examples=150, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
@given(data=_ADVERSARIAL)
def test_fuzz_json_gives_data_or_our_error(data):
    try:
        u.load_json(data, "fuzz.json")
    except (UntrustedFileError, json.JSONDecodeError):
        pass


@settings(max_examples=150, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
@given(data=_ADVERSARIAL)
def test_fuzz_toml_gives_data_or_our_error(data):
    try:
        text = u.decode(data, "fuzz.toml")
        u.load_toml(text, "fuzz.toml")
    except (UntrustedFileError, tomllib.TOMLDecodeError):
        pass


def _depth(value) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(alphabet="[]{}\"\\'ab", max_size=6),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
                     max_leaves=20)


@settings(max_examples=200, deadline=2000)
@given(value=_JSON)
def test_depth_scan_equals_the_parsed_value_depth(value):
    """The linear scan agrees with the depth of the value the parser builds (brackets in strings included)."""
    assert u.nesting_depth(json.dumps(value)) == _depth(value)
