"""Worlds: simulated environments whose ground truth the user sets, behind the ordinary model protocol.

A world is data — a TOML or JSON file (the package ships some in ``worlds/data/``; any file a user points at works
the same) — with a ``kind`` that says which lab's prompts it answers:

    kind = "qa"        # HASSUM: questions with a latent answer distribution per worker    (worlds/qa.py)
    kind = "cascade"   # HawkesLLM: a known Hawkes process whose events inherit topics      (worlds/cascade.py)
    kind = "search"    # CGDP: a corpus of fact chains and a reader of stated reliability   (worlds/search.py)

``llm = "world:<name or path>"`` makes :class:`WorldLLM`, a ``llm_backends`` plugin like the others: it answers
each prompt by drawing from the world with ``numpy.random.default_rng(sample seed)``, so sample ``i`` of a request
is a function of (request, seed, i) and is cached like any model's answer. Reports name it ``world:<name>``,
never an LLM. A kind registers itself with :func:`world_kind`; reading a world file never imports or calls code
the file names (the kind is looked up in this registry only).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from .. import untrusted
from ..llm.base import LLMBackend

__all__ = ["KINDS", "MAX_WORLD_BYTES", "World", "WorldError", "WorldLLM", "load_world", "shipped_worlds",
           "world_kind"]

#: the largest world file read (bytes)
MAX_WORLD_BYTES = 8 * 2**20
#: kind name -> World subclass (filled by :func:`world_kind`)
KINDS: dict[str, type[World]] = {}


class WorldError(ValueError):
    """A world file that cannot be used: names the file (and the field) and the fix."""


def world_kind(name: str) -> Callable[[type[World]], type[World]]:
    """Class decorator: register a :class:`World` subclass under ``kind = name``."""

    def register(cls: type[World]) -> type[World]:
        cls.kind = name
        KINDS[name] = cls
        return cls

    return register


@dataclass
class World:
    """A world: its ``name``, ``description``, the ``source`` file, its raw ``spec`` (the parsed file) and a
    ``digest`` of it (part of the model id, so an edited world never reuses cached answers of the old one).
    Subclasses build their state in :meth:`setup` and answer prompts in :meth:`respond`."""

    kind: ClassVar[str] = ""
    name: str
    description: str
    source: str
    spec: dict[str, Any] = field(repr=False)
    digest: str = ""

    def __post_init__(self) -> None:
        self.digest = hashlib.sha256(json.dumps(self.spec, sort_keys=True, default=str).encode()).hexdigest()[:10]
        self.setup()

    def setup(self) -> None:
        """Build the world's state from :attr:`spec` (raise :class:`WorldError` naming the field on bad input)."""

    def respond(self, messages: list[dict[str, str]], rng: np.random.Generator, *, temperature: float,
                max_tokens: int) -> str:
        """The world's answer to one prompt (one sample), drawn with ``rng``."""
        raise NotImplementedError

    def with_changes(self, **changes: Any) -> World:
        """This world with some settings of its file changed (a widget's sliders): a new world, named as this one with
        ``*`` (its digest changes with the settings, so cached answers of the original are never reused)."""
        spec = {**self.spec, **changes}
        return type(self)(name=f"{self.name}*", description=self.description, source=f"{self.source} (changed)",
                          spec=spec)

    def error(self, message: str, key: str | None = None) -> WorldError:
        where = f"{self.source}" + (f", {key}" if key else "")
        return WorldError(f"world {where}: {message}")


def _shipped_dir():
    return resources.files("uncertainty_lab.worlds") / "data"


def shipped_worlds() -> dict[str, str]:
    """``{name: kind}`` of the worlds the package ships."""
    out = {}
    for entry in sorted(_shipped_dir().iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            out[entry.name[:-5]] = untrusted.load_toml(entry.read_text(encoding="utf-8"), entry.name).get("kind", "?")
    return out


def load_world(spec: str | os.PathLike[str] | dict[str, Any]) -> World:
    """The world a name (one of :func:`shipped_worlds`) or a ``.toml`` / ``.json`` path names, or a world built from a
    dict of the file's settings (``{"kind": "qa", "name": ..., ...}``)."""
    if isinstance(spec, dict):
        return _from_data(dict(spec), "<dict>", str(spec.get("name", "world")))
    text_spec = os.fspath(spec) if isinstance(spec, (str, os.PathLike)) else spec
    if not isinstance(text_spec, str) or not text_spec:
        raise WorldError(f"a world is a shipped name ({', '.join(shipped_worlds())}) or a .toml/.json path, got "
                         f"{untrusted.excerpt(repr(spec))}")
    shipped = _shipped_dir() / f"{text_spec}.toml"
    if "/" not in text_spec and not text_spec.endswith((".toml", ".json")) and shipped.is_file():
        where, text, suffix = f"{text_spec} (shipped)", shipped.read_text(encoding="utf-8"), ".toml"
    else:
        path = Path(text_spec)
        if not path.exists():
            raise WorldError(f"no world {text_spec!r}: the shipped ones are {', '.join(shipped_worlds())}; or give "
                             "the path of a world file (.toml or .json)")
        suffix = path.suffix.lower()
        if suffix not in (".toml", ".json"):
            raise WorldError(f"world file {path} must be .toml or .json, got {suffix or 'no suffix'}")
        where = str(path)
        try:
            text = untrusted.read_text(path, what="the world file", max_bytes=MAX_WORLD_BYTES)
        except untrusted.UntrustedFileError as exc:
            raise WorldError(str(exc)) from None
    try:
        data = untrusted.load_toml(text, where) if suffix == ".toml" else untrusted.load_json(text, where)
    except untrusted.UntrustedFileError as exc:
        raise WorldError(str(exc)) from None
    except ValueError as exc:  # TOMLDecodeError, JSONDecodeError
        raise WorldError(f"world file {where} is not valid {suffix[1:].upper()}: {exc}") from None
    if not isinstance(data, dict):
        raise WorldError(f"world file {where}: the top level must be a table of settings")
    return _from_data(data, where, Path(text_spec).stem)


def _from_data(data: dict[str, Any], where: str, stem: str) -> World:
    kind = data.get("kind")
    if kind not in KINDS:
        raise WorldError(f"world file {where}: kind must be one of {', '.join(sorted(KINDS))}, got "
                         f"{untrusted.excerpt(repr(kind))}")
    name = data.get("name", stem)
    description = data.get("description", "")
    if not isinstance(name, str) or not isinstance(description, str):
        raise WorldError(f"world file {where}: name and description must be strings")
    return KINDS[kind](name=name, description=description, source=where, spec=data)


@dataclass
class WorldLLM(LLMBackend):
    """``world:<name or path>``: a simulated model whose answers come from a world with a known truth."""

    name: ClassVar[str] = "world"
    summary: ClassVar[str] = "a simulated model drawn from a world with a known truth (worlds/): not an LLM"
    #: a class recording leaves worlds out: they answer the same offline on every machine, with no model
    recorded: ClassVar[bool] = False
    model: str = field(default="calibrated", metadata={"help": "a shipped world's name or a world file's path"})
    _world: World | None = field(default=None, init=False, repr=False, compare=False, metadata={"hidden": True})

    @classmethod
    def from_world(cls, world: World, **kwargs: Any) -> WorldLLM:
        """The backend of a world already built (e.g. :meth:`World.with_changes` of a widget's sliders)."""
        llm = cls(model=world.name, **kwargs)
        llm._world = world
        return llm

    @property
    def world(self) -> World:
        if self._world is None:
            self._world = load_world(self.model)
        return self._world

    def model_id(self) -> str:
        return f"{self.world.name}@{self.world.digest}"

    def _generate(self, messages: list[dict[str, str]], *, temperature: float, top_p: float, max_tokens: int,
                  seed: int, stop: list[str] | None, logprobs: bool) -> dict[str, Any]:
        rng = np.random.default_rng(seed)
        text = self.world.respond(messages, rng, temperature=temperature, max_tokens=max_tokens)
        return {"text": text, "finish_reason": "stop", "logprobs": None}
