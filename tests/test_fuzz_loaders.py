"""Fuzzing every data loader, the config reader and the journal reader with hypothesis: for arbitrary and adversarial
bytes (deep nesting, huge numbers, bad encodings, NULs, truncation of a valid file) the result is data or the
package's own error naming the file — never another exception, never a hang (bounded examples, a deadline each)."""

from __future__ import annotations

import json
import tomllib
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from uncertainty_lab import configfile, journal
from uncertainty_lab.datasets import LOADERS
from uncertainty_lab.untrusted import UntrustedFileError

#: one small valid file per loader (a real layout, written by us), truncated and mutated by the fuzzer
_VALID = {
    "truthfulqa": b"Type,Category,Question,Best Answer,Correct Answers,Incorrect Answers,Source\n"
                  b"Adversarial,Misc,Is the sky green?,No,No; It is blue,Yes,http://a\n",
    "strategyqa": json.dumps([{"qid": "q1", "question": "Is ice cold?", "answer": True}]).encode(),
    "hotpotqa": json.dumps([{"_id": "h1", "question": "Who?", "answer": "Ann", "type": "bridge", "level": "easy",
                             "supporting_facts": [["A", 0]], "context": [["A", ["Ann is here."]]]}]).encode(),
    "musique": json.dumps({"id": "2hop__1_2", "question": "Who?", "answer": "Ann", "answer_aliases": [],
                           "answerable": True, "paragraphs": [{"idx": 0, "title": "A", "paragraph_text": "Ann.",
                                                               "is_supporting": True}],
                           "question_decomposition": []}).encode() + b"\n",
    "shipped_qa": json.dumps({"id": "factual-901", "category": "factual", "question": "What colour is snow?",
                              "answers": ["white"], "incorrect": ["green"], "note": "ours", "decomposition": [],
                              "facts": [], "behaviour": "answer"}).encode() + b"\n",
    "gdelt": "\t".join(["20310902163000-1", "20310902163000", "1", "wire.example",
                        "https://wire.example/2031/09/02/probe-passes-the-moon"] + [""] * 21
                       + ["<PAGE_TITLE>Probe passes the Moon</PAGE_TITLE>"]).encode() + b"\n",
}
_LOADER_ARGS = {"gdelt": {"domain_to_node": {"wire.example": "general_news"}, "warn": False}}

_HOSTILE = st.one_of(
    st.binary(max_size=300),
    st.builds(lambda n: b"[" * n + b"]" * n, st.integers(0, 3000)),
    st.builds(lambda n: b'{"a":' * n + b"1" + b"}" * n + b"\n", st.integers(0, 3000)),
    st.builds(lambda d: b'[{"qid": ' + b"9" * d + b"}]", st.integers(1, 6000)),
    st.sampled_from([b"\xff\xfe\x00\x00", b'[{"question": "\\ud800"}]', b"\x00" * 50, b"\xef\xbb\xbf", b"NaN",
                     b"1e99999", b"\r\r\r", b"\t" * 40 + b"\n"]),
)


def _mutations(valid: bytes):
    """The valid file cut at any point, with bytes overwritten, or with a NUL / a bad byte inserted."""
    return st.one_of(
        st.builds(lambda k: valid[:k], st.integers(0, len(valid))),
        st.builds(lambda k, b: valid[:k] + b + valid[k + len(b):], st.integers(0, len(valid)),
                  st.binary(min_size=1, max_size=4)),
        st.builds(lambda k, b: valid[:k] + b + valid[k:], st.integers(0, len(valid)),
                  st.sampled_from([b"\x00", b"\xff", b'"', b"\\", b"[", b"{", b"\n", b",", b"\t"])),
    )


def _write(folder: Path, name: str, data: bytes) -> Path:
    path = folder / f"{uuid.uuid4().hex}-{name}"
    path.write_bytes(data)
    return path


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


def _load(name: str, path: Path):
    try:
        return LOADERS[name](path, **_LOADER_ARGS.get(name, {}))
    except UntrustedFileError as exc:  # DatasetFormatError and SearchDataFormatError are ones
        assert str(path) in str(exc), f"{name}: error does not name the file: {exc}"


_SETTINGS = settings(max_examples=40, deadline=3000, suppress_health_check=[HealthCheck.too_slow,
                                                                           HealthCheck.function_scoped_fixture])


@pytest.mark.parametrize("name", sorted(_VALID))
def test_each_valid_seed_file_loads(folder, name):
    """The fuzzer starts from files the loaders accept (else it would only test rejection)."""
    assert _load(name, _write(folder, f"ok.{'csv' if name == 'truthfulqa' else 'json'}", _VALID[name]))


@pytest.mark.parametrize("name", sorted(_VALID))
def test_fuzz_loader(folder, name):
    suffix = "csv" if name == "truthfulqa" else "json"

    @_SETTINGS
    @given(data=st.one_of(_HOSTILE, _mutations(_VALID[name])))
    def run(data):
        _load(name, _write(folder, f"f.{suffix}", data))

    run()


@_SETTINGS
@given(data=st.one_of(_HOSTILE, _mutations(b'seed = 3\nllm = "embedded"\n[data]\nloader = "x"\n'),
                      _mutations(b'{"seed": 3, "llm": "embedded", "data": {"loader": "x"}}')))
def test_fuzz_config_reader(folder, data):
    for suffix in ("toml", "json"):
        try:
            configfile.read_mapping(_write(folder, f"c.{suffix}", data))
        except (ValueError, tomllib.TOMLDecodeError) as exc:
            assert "c." + suffix in str(exc)


class Damaged(Exception):
    pass


@_SETTINGS
@given(data=st.one_of(_HOSTILE, _mutations(b'{"type": "header", "format": "x/1"}\n{"type": "step", "n": 1}\n')))
def test_fuzz_journal_reader(folder, data):
    path = _write(folder, "run.jsonl", data)
    try:
        records, good = journal.read_records(path, error=Damaged)
    except Damaged as exc:
        assert str(path) in str(exc)
    else:
        assert 0 <= good <= len(data) and all(isinstance(n, int) for n, _ in records)


def test_gdelt_url_with_an_unclosed_ipv6_bracket_is_a_row_not_a_crash(folder):
    """Found by the fuzzer: ``urlsplit('a://[')`` raises ValueError inside the loader."""
    line = _VALID["gdelt"].replace(b"https://wire.example/2031/09/02/probe-passes-the-moon", b"a://[")
    _load("gdelt", _write(folder, "ipv6.csv", line))
