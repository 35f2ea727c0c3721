"""The shared experiment-config reader: JSON and TOML alike, and every bad file named with its fix."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

import pytest

from uncertainty_lab import configfile
from uncertainty_lab.cascade import CascadeError
from uncertainty_lab.cascade import experiment as cascade
from uncertainty_lab.orchestration import experiment as orchestration
from uncertainty_lab.search import experiment as search

SETTINGS = {"seed": 3, "name": "tiny run", "ratio": 0.25, "flags": [True, False], "ids": ["a", "b"],
            "grading": {"method": "contains", "case": False}}
TOML = ('seed = 3\nname = "tiny run"\nratio = 0.25\nflags = [true, false]\nids = ["a", "b"]\n'
        '[grading]\nmethod = "contains"\ncase = false\n')


@dataclass
class Tiny:
    seed: int = 0
    steps: int = 1
    names: list[str] = field(default_factory=list)

    def __post_init__(self):
        if self.steps < 1:
            raise ValueError(f"steps must be >= 1, got {self.steps}")


@dataclass
class Loose:
    steps: Any = 1

    def __post_init__(self):
        if self.steps < 1:
            raise ValueError(f"steps must be >= 1, got {self.steps}")


def test_json_and_toml_read_the_same_settings(tmp_path):
    (tmp_path / "c.json").write_text(json.dumps(SETTINGS), encoding="utf-8")
    (tmp_path / "c.toml").write_text(TOML, encoding="utf-8")
    (tmp_path / "upper.JSON").write_text(json.dumps(SETTINGS), encoding="utf-8")
    assert configfile.read_mapping(tmp_path / "c.json") == SETTINGS
    assert configfile.read_mapping(str(tmp_path / "c.toml")) == SETTINGS
    assert configfile.read_mapping(tmp_path / "upper.JSON") == SETTINGS


def test_a_missing_file_names_the_path(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"no config file at .*nope\.toml; check the path"):
        configfile.read_mapping(tmp_path / "nope.toml")
    (tmp_path / "folder.json").mkdir()
    with pytest.raises(ValueError, match="folder.json: is a folder; the config file must name the file itself"):
        configfile.read_mapping(tmp_path / "folder.json")


def test_an_unknown_suffix_asks_for_json_or_toml(tmp_path):
    (tmp_path / "c.yaml").write_text("seed: 3\n")
    (tmp_path / "config").write_text("{}")
    with pytest.raises(ValueError, match=r"c\.yaml: a config must be a \.json or \.toml file, got \.yaml; rename"):
        configfile.read_mapping(tmp_path / "c.yaml")
    with pytest.raises(ValueError, match="got no suffix"):
        configfile.read_mapping(tmp_path / "config")
    with pytest.raises(CascadeError, match=r"\.json or \.toml"):
        configfile.read_mapping(tmp_path / "c.yaml", error=CascadeError)


@pytest.mark.parametrize(("name", "text", "line"), [
    ("bad.json", '{\n  "seed": 3,\n  "name": oops\n}\n', 3),
    ("bad.toml", 'seed = 3\nname = "a"\nratio = = 1\n', 3),
    ("trailing.json", '{"seed": 3,}\n', 1),
])
def test_a_syntax_error_names_the_file_and_line(tmp_path, name, text, line):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    kind = "JSON" if name.endswith(".json") else "TOML"
    with pytest.raises(ValueError, match=rf"{name} is not valid {kind}: .*at line {line}, column \d+\); correct"):
        configfile.read_mapping(path)


@pytest.mark.parametrize("text", ["[1, 2]", '"seed"', "3", "null"])
def test_a_top_level_that_is_not_an_object_is_refused(tmp_path, text):
    path = tmp_path / "c.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=r"c\.json: the top level must be an object of settings"):
        configfile.read_mapping(path)


def test_build_names_the_closest_setting_and_turns_type_errors_into_the_error_class():
    assert configfile.build(Tiny, {"seed": 4, "names": ["x"]}, what="tiny") == Tiny(seed=4, names=["x"])
    with pytest.raises(ValueError, match=r"unknown tiny setting 'sed' \(did you mean 'seed'\?\); settings are "
                                         r"\['seed', 'steps', 'names'\]"):
        configfile.build(Tiny, {"sed": 4}, what="tiny")
    with pytest.raises(ValueError, match=r"unknown tiny setting 'zzz'; settings are"):
        configfile.build(Tiny, {"zzz": 4}, what="tiny")
    with pytest.raises(CascadeError, match=r"steps must be an integer, got 'x'"):  # the annotation says int
        configfile.build(Tiny, {"steps": "x"}, what="tiny", error=CascadeError)
    with pytest.raises(CascadeError, match="not supported between"):  # "x" < 1 inside __post_init__
        configfile.build(Loose, {"steps": "x"}, what="tiny", error=CascadeError)
    with pytest.raises(ValueError, match="an experiment config must be a table/object, got list"):
        configfile.build(Tiny, [("seed", 1)], what="experiment")
    with pytest.raises(ValueError, match="a tiny config must be a table/object, got str"):
        configfile.build(Tiny, "seed", what="tiny")


@dataclass
class Kinds:
    n: int = 0
    x: float = 0.0
    flag: bool = False
    name: str = ""
    ids: list[str] = field(default_factory=list)
    specs: list[Any] = field(default_factory=list)
    table: dict[str, int] = field(default_factory=dict)
    limit: int | None = None
    anything: Any = None


@pytest.mark.parametrize(("setting", "value"), [
    ("n", 3), ("x", 2), ("x", 0.5), ("flag", True), ("name", "a"), ("ids", ["a", "b"]), ("ids", "a"),
    ("specs", ["a", {"name": "b"}, 3]), ("specs", {"name": "b"}), ("table", {"a": 1}), ("limit", None),
    ("limit", 4), ("limit", False), ("anything", object()),
])
def test_values_that_fit_their_annotation_pass(setting, value):
    built = getattr(configfile.build(Kinds, {setting: value}, what="kinds"), setting)
    if setting in ("ids", "specs") and not isinstance(value, list):
        assert built == [value]  # one item for a list setting is a list of it
    else:
        assert built is value


@pytest.mark.parametrize(("setting", "value", "message"), [
    ("n", 2.5, "n must be an integer, got 2.5"), ("n", True, "n must be an integer, got True"),
    ("x", "hot", "x must be a number, got 'hot'"), ("flag", "yes", "flag must be true or false, got 'yes'"),
    ("flag", 1, "flag must be true or false, got 1"), ("name", 3, "name must be a string, got 3"),
    ("ids", [1], "ids must be a list of strings, got [1]"), ("specs", 3, "specs must be a list, got 3"),
    ("table", {"a": "b"}, "table must be a table/dict of integers, got {'a': 'b'}"),
    ("limit", "ten", "limit must be an integer or none (leave the setting out), got 'ten'"),
])
def test_a_value_of_the_wrong_kind_says_what_its_setting_takes(setting, value, message):
    with pytest.raises(CascadeError, match="^" + re.escape(message) + "$"):
        configfile.build(Kinds, {setting: value}, what="kinds", error=CascadeError)


def test_a_config_with_a_byte_order_mark_reads_and_a_binary_one_is_named(tmp_path):
    (tmp_path / "bom.json").write_bytes(b"\xef\xbb\xbf" + json.dumps({"seed": 1}).encode())
    assert configfile.read_mapping(tmp_path / "bom.json") == {"seed": 1}
    (tmp_path / "latin1.toml").write_bytes("name = 'caf\xe9'\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin1\.toml, line 1: not UTF-8 text .*; save the file as UTF-8; a config must be a small JSON or TOML"):
        configfile.read_mapping(tmp_path / "latin1.toml")


def test_load_prefixes_a_bad_setting_with_the_path(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text("seed = 2\nnames = [\"a\"]\n")
    assert configfile.load(path, lambda d: configfile.build(Tiny, d, what="tiny")) == Tiny(seed=2, names=["a"])
    path.write_text("steps = 0\n")
    with pytest.raises(CascadeError, match=r"c\.toml: steps must be >= 1, got 0"):
        configfile.load(path, lambda d: configfile.build(Tiny, d, what="tiny"), error=CascadeError)


@pytest.mark.parametrize(("load_config", "what", "error", "setting"), [
    (orchestration.load_config, "orchestration", ValueError, "n_samples"),
    (cascade.load_config, "cascade", CascadeError, "runs"),
    (search.load_config, "search", ValueError, "max_steps"),
])
def test_the_three_experiments_read_their_config_files_through_it(tmp_path, load_config, what, error, setting):
    (tmp_path / "c.json").write_text(json.dumps({setting: 2, "seed": 5}))
    (tmp_path / "c.toml").write_text(f"{setting} = 2\nseed = 5\n")
    from_json = load_config(tmp_path / "c.json")
    assert from_json == load_config(tmp_path / "c.toml")
    assert (getattr(from_json, setting), from_json.seed) == (2, 5)
    (tmp_path / "typo.toml").write_text(f"{setting[:-1]} = 2\n")
    with pytest.raises(error, match=rf"typo\.toml: unknown {what} setting '{setting[:-1]}' "
                                    rf"\(did you mean '{setting}'\?\)"):
        load_config(tmp_path / "typo.toml")
    (tmp_path / "list.json").write_text("[]")
    with pytest.raises(error, match="the top level must be an object"):
        load_config(tmp_path / "list.json")


@dataclass
class WithBackend:
    llm: object = "embedded"
    path: object = None
    seed: int = 0


class FakeBackend:
    label = "fake:model"


def test_as_dict_writes_a_backend_as_its_label_and_the_rest_as_json():
    assert configfile.as_dict(WithBackend(), backend="llm") == {"llm": "embedded", "path": None, "seed": 0}
    d = configfile.as_dict(WithBackend(llm=FakeBackend(), path=object.__new__(FakeBackend)), backend="llm")
    assert d["llm"] == "fake:model" and d["path"].startswith("<") and "FakeBackend object" in d["path"]
    assert configfile.as_dict(WithBackend(llm=3), backend="llm")["llm"] == "int"  # no label: the type's name
    assert orchestration.OrchestrationConfig(llm=FakeBackend()).to_dict()["llm"] == "fake:model"
    assert search.SearchConfig(llm=FakeBackend()).to_dict()["llm"] == "fake:model"
    assert cascade.CascadeConfig(llm=FakeBackend()).to_dict()["llm"] == "fake:model"


def test_hostile_config_files_are_one_clear_error(tmp_path):
    """Deep nesting, a huge integer, a FIFO or a device: the package's error naming the file, never a traceback
    or a hang."""
    (tmp_path / "deep.json").write_text('{"seed": ' + "[" * 50_000 + "]" * 50_000 + "}")
    (tmp_path / "deep.toml").write_text("seed = " + "[" * 50_000 + "]" * 50_000 + "\n")
    (tmp_path / "big.json").write_text('{"seed": ' + "7" * 10_000 + "}")
    for name, why in (("deep.json", "nested 50001 levels deep"), ("deep.toml", "nested 50000 levels deep"),
                      ("big.json", "an integer of 10000 digits")):
        with pytest.raises(ValueError, match=f"{name}: {why}"):
            configfile.read_mapping(tmp_path / name)
    os.mkfifo(tmp_path / "pipe.toml")
    with pytest.raises(ValueError, match="pipe.toml: is a named pipe"):
        configfile.read_mapping(tmp_path / "pipe.toml")
