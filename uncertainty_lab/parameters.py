"""Plugin parameters: declared as dataclass fields whose ``metadata`` carries ``min``, ``max``,
``step``, ``choices`` and ``help``; read here once so widgets, the CLI and validation agree.

    @dataclass
    class MyMetric:
        threshold: float = field(default=0.5, metadata=dict(min=0, max=1, step=0.05, help="..."))
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
import types
import typing
from dataclasses import dataclass
from typing import Any

_TYPES = {"bool": bool, "int": int, "float": float, "str": str}


class ParameterError(ValueError):
    """A plugin parameter is unknown, of the wrong type, out of bounds or not among its choices."""


@dataclass(frozen=True)
class Parameter:
    """One declared parameter of a plugin: its type, default and the bounds a widget or CLI offers."""

    name: str
    type: type
    default: Any
    min: float | None = None
    max: float | None = None
    step: float | None = None
    choices: tuple | None = None
    help: str = ""

    @property
    def required(self) -> bool:
        return self.default is dataclasses.MISSING

    def validate(self, value: Any, *, owner: str = "plugin") -> Any:
        """Return ``value`` (ints widened to float where a float is declared) or raise ParameterError."""
        where = f"{owner} parameter {self.name!r}"
        if value is None and self.default is None:
            return None
        if self.choices is not None:
            if not any(value == c and type(value) is type(c) for c in self.choices):
                raise ParameterError(
                    f"{where} must be one of {list(self.choices)}, got {value!r}"
                    + _closest_hint(value, [str(c) for c in self.choices])
                )
            return value
        if self.type is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        expected = self.type
        ok = isinstance(value, expected) and not (expected in (int, float) and isinstance(value, bool))
        if not ok:
            raise ParameterError(
                f"{where} must be {expected.__name__}, got {type(value).__name__} {value!r}; "
                f"pass e.g. {self.name}={self.default!r}"
            )
        if expected is float and not math.isfinite(value):
            raise ParameterError(f"{where} must be a finite number, got {value!r}")
        if self.min is not None and value < self.min:
            raise ParameterError(f"{where} must be >= {self.min}, got {value!r}")
        if self.max is not None and value > self.max:
            raise ParameterError(f"{where} must be <= {self.max}, got {value!r}")
        return value


@functools.lru_cache(maxsize=512)
def _type_hints(cls: type) -> dict[str, Any]:
    """``typing.get_type_hints(cls)``, evaluated once per class (it compiles every string annotation, and a plugin's
    parameters are read every time the registry builds one)."""
    return typing.get_type_hints(cls)


def _resolve_type(cls: type, f: dataclasses.Field) -> tuple[type, tuple | None]:
    """The value type of a field's annotation (``X | None`` -> X) and its ``Literal`` choices, if any."""
    annotation = f.type
    if isinstance(annotation, str):
        try:
            annotation = _type_hints(cls)[f.name]
        except Exception:  # an unresolvable annotation: fall back to the textual name
            annotation = _TYPES.get(annotation.split("|")[0].strip(), object)
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if args and typing.get_origin(annotation) in (typing.Union, types.UnionType):
        annotation = args[0]
    if annotation is typing.Any:  # accepts anything (e.g. a plugin name or an instance); isinstance(x, Any) raises
        return object, None
    if typing.get_origin(annotation) is typing.Literal:
        choices = typing.get_args(annotation)
        return type(choices[0]), choices
    return (annotation if isinstance(annotation, type) else object), None


def parameters(cls: type) -> list[Parameter]:
    """The declared parameters of a plugin class (its ``init`` dataclass fields), in order."""
    if not dataclasses.is_dataclass(cls):
        return []
    out = []
    for f in dataclasses.fields(cls):
        if not f.init or f.name.startswith("_") or f.metadata.get("hidden"):
            continue
        md = f.metadata
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = dataclasses.MISSING
        annotation, literal_choices = _resolve_type(cls, f)
        choices = md.get("choices", literal_choices)
        out.append(
            Parameter(
                name=f.name,
                type=annotation,
                default=default,
                min=md.get("min"),
                max=md.get("max"),
                step=md.get("step"),
                choices=tuple(choices) if choices is not None else None,
                help=md.get("help", ""),
            )
        )
    return out


def validate(cls: type, params: dict[str, Any], *, owner: str = "plugin") -> dict[str, Any]:
    """Check ``params`` against the declared parameters of ``cls``; return them normalised."""
    declared = {p.name: p for p in parameters(cls)}
    out = {}
    for key, value in params.items():
        if key not in declared:
            known = sorted(declared)
            raise ParameterError(
                f"{owner} has no parameter {key!r}; its parameters are {known or 'none'}"
                + _closest_hint(key, known)
            )
        out[key] = declared[key].validate(value, owner=owner)
    missing = [p.name for p in declared.values() if p.required and p.name not in out]
    if missing:
        raise ParameterError(f"{owner} needs parameter(s) {missing}; pass them as keyword arguments")
    return out


def settings(obj: Any) -> dict[str, Any]:
    """What a plugin instance was configured with, as JSON values: ``{"name", "params": {declared parameter:
    value}}`` (a parameter holding an object, e.g. a judge or a backend, records its label or name). Run
    journals record it, and a resumed run compares it."""
    from .jsonsafe import jsonable

    params = {p.name: jsonable(getattr(obj, p.name, None)) for p in parameters(type(obj))}
    return {"name": getattr(obj, "name", type(obj).__name__), "params": params}


def _closest_hint(value: Any, options: list[str]) -> str:
    match = difflib.get_close_matches(str(value), options, n=1, cutoff=0.5)
    return f" (did you mean {match[0]!r}?)" if match else ""
