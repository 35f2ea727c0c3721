"""Experiment config files: one reader for JSON and TOML, the config dataclass built from what it reads,
and the config written back as JSON values.

The cascade, orchestration and search experiments share it, so a config file is checked the same way
everywhere: a missing file, a wrong suffix, a syntax error (with its line) or an unknown setting (with
the closest valid one) is an error that names the file and the fix.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import os
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["as_dict", "build", "load", "read_mapping"]

T = TypeVar("T")
SUFFIXES = (".json", ".toml")


def read_mapping(path: str | os.PathLike, *, error: type[Exception] = ValueError) -> dict[str, Any]:
    """The settings in a ``.json`` or ``.toml`` file, chosen by suffix. A missing file is a
    FileNotFoundError; a wrong suffix, a syntax error or a top level that is not a table/object is ``error``."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no config file at {path}; check the path (a .json or .toml file)")
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise error(f"{path}: a config must be a .json or .toml file, got {suffix or 'no suffix'}; "
                    "rename it or rewrite it in JSON or TOML")
    text = path.read_text(encoding="utf-8")
    if suffix == ".toml":
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:  # its message ends "(at line L, column C)"
            raise error(f"{path} is not valid TOML: {exc}; correct the file there") from None
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise error(f"{path} is not valid JSON: {exc.msg} (at line {exc.lineno}, column {exc.colno}); "
                        "correct the file there") from None
    if not isinstance(data, dict):
        raise error(f"{path}: the top level must be an object of settings, e.g. {{\"seed\": 0}}, "
                    f"got a JSON {type(data).__name__}")
    return data


def build(cls: type[T], data: Mapping[str, Any], *, what: str, error: type[Exception] = ValueError) -> T:
    """``cls(**data)`` for a config dataclass. A key that is not a field is ``error`` naming the closest field;
    a TypeError from the dataclass (a value of the wrong kind) becomes ``error`` too."""
    if not isinstance(data, Mapping):
        article = "an" if what[:1] in "aeiou" else "a"
        raise error(f"{article} {what} config must be a table/object, got {type(data).__name__}")
    fields = [f.name for f in dataclasses.fields(cls)]
    unknown = [k for k in data if k not in fields]
    if unknown:
        close = difflib.get_close_matches(unknown[0], fields, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise error(f"unknown {what} setting {unknown[0]!r}{hint}; settings are {fields}")
    try:
        return cls(**dict(data))
    except TypeError as exc:
        raise error(str(exc)) from None


def load(path: str | os.PathLike, from_mapping: Callable[[dict[str, Any]], T], *,
         error: type[Exception] = ValueError) -> T:
    """``from_mapping(read_mapping(path))``; a bad setting is ``error`` prefixed with the path."""
    data = read_mapping(path, error=error)
    try:
        return from_mapping(data)
    except (ValueError, TypeError) as exc:
        raise error(f"{path}: {exc}") from None


def as_dict(config: Any, *, backend: str) -> dict[str, Any]:
    """A config dataclass as JSON values (what results files record): a backend instance in field ``backend``
    becomes its label, any other value JSON cannot hold its repr."""
    d = {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}
    if not isinstance(d[backend], str):
        d[backend] = getattr(d[backend], "label", type(d[backend]).__name__)
    return json.loads(json.dumps(d, default=repr))
