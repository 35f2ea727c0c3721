"""Experiment config files: one reader for JSON and TOML, the config dataclass built from what it reads,
and the config written back as JSON values.

The cascade, orchestration and search experiments share it, so a config file is checked the same way
everywhere: a missing file, a wrong suffix, a file that is not UTF-8 text, a syntax error (with its line), an
unknown setting (with the closest valid one) or a value of the wrong kind for its field's annotation (``int``,
``float``, ``bool``, ``str``, ``list[X]``, ``dict[K, V]``, ``X | None``, ``Any``: "temperature must be a number,
got 'hot'") is an error that names the file and the fix, before the config's own validation runs.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import numbers
import os
import tomllib
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar, Union

from . import untrusted

__all__ = ["as_dict", "build", "check_types", "describe_type", "fits", "load", "read_mapping"]

T = TypeVar("T")
SUFFIXES = (".json", ".toml")
#: The largest config file read (bytes): 4 MiB.
MAX_CONFIG_BYTES = 4 * 2**20


def read_mapping(path: str | os.PathLike, *, error: type[Exception] = ValueError) -> dict[str, Any]:
    """The settings in a ``.json`` or ``.toml`` file, chosen by suffix, read through :mod:`.untrusted` (a regular
    file of at most :data:`MAX_CONFIG_BYTES`, nesting checked before parsing). A missing file is a
    FileNotFoundError; a wrong suffix, a syntax error or a top level that is not a table/object is ``error``."""
    if isinstance(path, (str, os.PathLike)) and not isinstance(path, bytes) and not Path(path).exists():
        raise FileNotFoundError(f"no config file at {untrusted.excerpt(str(path), 300, quote=False)}; check the path (a .json or "
                                ".toml file)")
    path = untrusted.check_path(path, what="the config file")
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise error(f"{path}: a config must be a .json or .toml file, got {untrusted.excerpt(suffix or 'no suffix', quote=False)}; "
                    "rename it or rewrite it in JSON or TOML")
    try:
        text = untrusted.read_text(path, what="the config file", max_bytes=MAX_CONFIG_BYTES)
        if suffix == ".toml":
            data = untrusted.load_toml(text, path)
        else:
            data = untrusted.load_json(text, path)
    except untrusted.UntrustedFileError as exc:
        raise error(f"{exc}; a config must be a small JSON or TOML file") from None
    except tomllib.TOMLDecodeError as exc:  # its message ends "(at line L, column C)"
        raise error(f"{path} is not valid TOML: {exc}; correct the file there") from None
    except json.JSONDecodeError as exc:
        raise error(f"{path} is not valid JSON: {exc.msg} (at line {exc.lineno}, column {exc.colno}); "
                    "correct the file there") from None
    if not isinstance(data, dict):
        raise error(f"{path}: the top level must be an object of settings, e.g. {{\"seed\": 0}}, "
                    f"got a JSON {type(data).__name__}")
    return data


def build(cls: type[T], data: Mapping[str, Any], *, what: str, error: type[Exception] = ValueError) -> T:
    """``cls(**data)`` for a config dataclass. A key that is not a field is ``error`` naming the closest field; a
    value that does not fit its field's annotation is ``error`` saying what the field takes (:func:`check_types`,
    before the dataclass's own checks run); a TypeError from the dataclass becomes ``error`` too."""
    if not isinstance(data, Mapping):
        article = "an" if what[:1] in "aeiou" else "a"
        raise error(f"{article} {what} config must be a table/object, got {type(data).__name__}")
    fields = [f.name for f in dataclasses.fields(cls)]
    unknown = [k for k in data if k not in fields]
    if unknown:
        close = difflib.get_close_matches(unknown[0], fields, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise error(f"unknown {what} setting {unknown[0]!r}{hint}; settings are {fields}")
    check_types(cls, data, error=error)
    hints = _hints(cls)
    try:
        return cls(**{k: as_list_if_listed(v, hints.get(k, Any)) for k, v in data.items()})
    except TypeError as exc:
        raise error(str(exc)) from None


# --- value kinds from annotations -----------------------------------------------------------------------------

_SCALARS: dict[Any, tuple[str, str]] = {int: ("an integer", "integers"), float: ("a number", "numbers"),
                                        bool: ("true or false", "true/false values"), str: ("a string", "strings")}


def _args(tp: Any) -> tuple[Any, ...]:
    return typing.get_args(tp)


def _is_union(tp: Any) -> bool:
    return typing.get_origin(tp) in (Union, types.UnionType)


def _container(tp: Any) -> type | None:
    """``list`` for list/tuple/Sequence annotations, ``dict`` for dict/Mapping ones, else None."""
    origin = typing.get_origin(tp) or tp
    if origin in (list, tuple, Sequence):
        return list
    if origin in (dict, Mapping):
        return dict
    return None


def fits(value: Any, tp: Any) -> bool:
    """Whether ``value`` is of the kind annotation ``tp`` names. A list setting also takes one item of its
    kind (the labs read it as a list of one; for ``list[Any]`` only a name or a table); an optional setting
    also takes ``false`` (TOML has no null; the config decides what it means). Unknown annotations fit."""
    if tp is Any or tp is object:
        return True
    if tp is type(None):
        return value is None
    if _is_union(tp):
        return (value is False and type(None) in _args(tp)) or any(fits(value, a) for a in _args(tp))
    if tp is bool:
        return isinstance(value, bool)
    if tp is int:
        return isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if tp is float:
        return isinstance(value, numbers.Real) and not isinstance(value, bool)
    kind = _container(tp)
    if kind is list:
        item = _args(tp)[0] if _args(tp) else Any
        if isinstance(value, (list, tuple)):
            return all(fits(v, item) for v in value)
        return isinstance(value, (str, Mapping)) if item is Any else fits(value, item)
    if kind is dict:
        key, val = _args(tp) if len(_args(tp)) == 2 else (Any, Any)
        return isinstance(value, Mapping) and all(fits(k, key) and fits(v, val) for k, v in value.items())
    return isinstance(value, tp) if isinstance(tp, type) else True


def describe_type(tp: Any, plural: bool = False) -> str:
    """What annotation ``tp`` takes, in words: ``float`` -> "a number", ``list[int] | None`` -> "a list of
    integers or none (leave the setting out)"."""
    if tp in _SCALARS:
        return _SCALARS[tp][plural]
    if _is_union(tp):
        others = [a for a in _args(tp) if a is not type(None)]
        text = " or ".join(describe_type(a, plural) for a in others)
        return text + (" or none (leave the setting out)" if len(others) < len(_args(tp)) else "")
    kind = _container(tp)
    if kind is list:
        item = _args(tp)[0] if _args(tp) else Any
        return "lists" if plural else "a list" + ("" if item is Any else f" of {describe_type(item, True)}")
    if kind is dict:
        val = _args(tp)[1] if len(_args(tp)) == 2 else Any
        return "tables" if plural else "a table/dict" + ("" if val is Any else f" of {describe_type(val, True)}")
    return "values" if plural else f"a {getattr(tp, '__name__', tp)}"


def _hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls)
    except Exception:  # an annotation that does not resolve: such a class is not checked here
        return {}


def as_list_if_listed(value: Any, tp: Any) -> Any:
    """One item given for a list setting, as a list of that item (``policies = "both"`` is ``["both"]``, never
    the string's characters); anything else unchanged."""
    if value is None or value is False or isinstance(value, (list, tuple)):
        return value
    kinds = [a for a in _args(tp)] if _is_union(tp) else [tp]
    if any(_container(k) is list for k in kinds) and not any(fits(value, k) for k in kinds if _container(k) is not list):
        return [value]
    return value


def check_types(cls: type, data: Mapping[str, Any], *, error: type[Exception] = ValueError) -> None:
    """``error`` ("temperature must be a number, got 'hot'") for the first value in ``data`` that does not fit
    its dataclass field's annotation (:func:`fits`); fields annotated ``Any`` take anything."""
    hints = _hints(cls)
    for name, value in data.items():
        tp = hints.get(name, Any)
        if not fits(value, tp):
            shown = repr(value)
            shown = shown if len(shown) <= 80 else shown[:79] + "…"
            raise error(f"{name} must be {describe_type(tp)}, got {shown}")


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
