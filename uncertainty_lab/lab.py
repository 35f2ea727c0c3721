"""The lab contract: every lab runs an experiment the same way, **config → units → journals → result → report**.

    config   a :class:`LabConfig` dataclass: every setting a field with its default and ``help``; read from JSON or
             TOML by one reader (:mod:`uncertainty_lab.configfile`); shared settings have the same names in every
             lab (``llm``, ``seed``, ``out_dir``, ``overwrite``, ``progress``, ``figure``)
    context  what every unit shares, built once by :meth:`Experiment.prepare` (data, fitted models, plugins, the
             language model)
    units    :meth:`Experiment.units`: independent pieces of work (a cascade run, a policy over the questions, a
             search episode), each seeded from the config alone and journalled to its own file
    journal  :meth:`Experiment.run_unit` streams one unit to its run file (:mod:`uncertainty_lab.journal`) and
             returns its run record; a rerun resumes where the file ends
    result   :meth:`Experiment.collect` builds a :class:`LabResult` from the records; its ``report()``,
             ``to_dict()`` and ``figure()`` are written by :meth:`LabResult.save` (``<report>.md``,
             ``results.json``, ``figure.png``)

:meth:`Experiment.run` is the one driver of all three labs; ``docs/ARCHITECTURE.md`` has the recipe for a fourth.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from . import configfile

__all__ = ["Experiment", "LabConfig", "LabResult", "Unit", "save_outputs", "setting"]


def setting(default: Any, help: str, **metadata: Any) -> Any:
    """A config field with its ``help`` text (what ``<lab> run --help`` prints); a list or dict default is
    copied per instance."""
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: type(default)(default), metadata={"help": help, **metadata})
    return field(default=default, metadata={"help": help, **metadata})


def _check_llm(llm: Any, error: type[Exception]) -> None:
    """``llm`` is a model spec (a non-empty string) or a backend instance, never a number, a list or a table."""
    if isinstance(llm, str) and llm.strip():
        return
    if llm is None or isinstance(llm, (str, bool, int, float, list, tuple, Mapping)):
        raise error(f"llm must be a model spec string such as 'embedded', 'auto' or 'ollama:qwen2.5:3b', or a "
                    f"backend instance, got {llm!r}")


@dataclass
class LabConfig:
    """Settings every lab shares. A lab's config subclasses this and adds its own fields with :func:`setting`."""

    what: ClassVar[str] = "experiment"
    error: ClassVar[type[Exception]] = ValueError
    #: old setting names still accepted, with a FutureWarning: {old: new}
    renamed: ClassVar[dict[str, str]] = {}
    #: settings that change where and how a run is written, not what it computes (left out of the fingerprint)
    run_only: ClassVar[tuple[str, ...]] = ("out_dir", "overwrite", "progress", "figure")

    llm: Any = setting("embedded", "the language model: a get_llm spec ('embedded', 'auto', 'ollama:qwen2.5:3b', "
                                   "'replay') or a backend instance")
    seed: int = setting(0, "the seed every unit's randomness derives from")
    out_dir: str = setting("results", "folder for the run journals, the report, results.json and figure.png")
    overwrite: bool = setting(False, "start the run files afresh instead of resuming them")
    progress: bool = setting(True, "show progress bars")
    figure: bool = setting(True, "write figure.png")

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> LabConfig:
        """From a dict (a parsed config file): an unknown key is an error naming the closest setting; an old name
        (:attr:`renamed`) is accepted with a FutureWarning; a value of the wrong kind for its field's annotation
        (:func:`configfile.check_types`), or an ``llm`` that is neither a spec string nor a backend, is an error
        saying what the setting takes, before the lab's own checks run."""
        if isinstance(data, Mapping):
            data = dict(data)
            for old, new in cls.renamed.items():
                if old in data:
                    if new in data:
                        raise cls.error(f"{old!r} is the old name of {new!r}; give only {new!r}")
                    warnings.warn(f"the {cls.what} setting {old!r} is now called {new!r}; the old name will stop "
                                  "working in the next release", FutureWarning, stacklevel=3)
                    data[new] = data.pop(old)
            _check_llm(data.get("llm", "embedded"), cls.error)
        return configfile.build(cls, data, what=cls.what, error=cls.error)

    @classmethod
    def load(cls, path: str | os.PathLike) -> LabConfig:
        """From a ``.json`` or ``.toml`` file."""
        return configfile.load(path, cls.from_mapping, error=cls.error)

    @classmethod
    def coerce(cls, config: Any = None, overrides: Mapping[str, Any] | None = None) -> LabConfig:
        """A config from an instance, a dict, a file path or None (the defaults), with ``overrides`` applied."""
        if config is None:
            config = cls()
        elif isinstance(config, (str, os.PathLike)):
            config = cls.load(config)
        elif isinstance(config, Mapping):
            config = cls.from_mapping(config)
        elif not isinstance(config, cls):
            raise cls.error(f"config must be a {cls.__name__}, a dict or a .json/.toml path, got {type(config).__name__}")
        if overrides:
            replaced = {cls.renamed.get(k, k) for k in overrides}  # an override by its old name replaces it too
            current = {f.name: getattr(config, f.name) for f in dataclasses.fields(config) if f.name not in replaced}
            config = cls.from_mapping(current | dict(overrides))
        return config

    @classmethod
    def settings_help(cls) -> list[tuple[str, str, str]]:
        """``(name, default, help)`` of every setting, in order (the CLI's ``run --help``)."""
        out = []
        for f in dataclasses.fields(cls):
            default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
            out.append((f.name, json.dumps(default, ensure_ascii=False, default=repr), f.metadata.get("help", "")))
        return out

    def to_dict(self) -> dict[str, Any]:
        """The settings as JSON values (a backend instance in ``llm`` becomes its label)."""
        return configfile.as_dict(self, backend="llm")

    def fingerprint(self) -> str:
        """A short hash of every setting that changes the results (not :attr:`run_only`): a folder name under which
        a changed configuration never collides with an old one."""
        d = {k: v for k, v in self.to_dict().items() if k not in self.run_only}
        return hashlib.sha256(json.dumps(d, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()[:10]


@dataclass(frozen=True)
class Unit:
    """One independent piece of an experiment: ``key`` (what the result indexes it by), a ``label`` for progress
    and messages, ``path`` (its run journal) and ``spec`` (what :meth:`Experiment.run_unit` needs beyond the config
    and the shared context)."""

    key: tuple
    label: str
    path: Path | None = None
    spec: Mapping[str, Any] = field(default_factory=dict)


def save_outputs(result: Any, out_dir: str | os.PathLike | None, *, report: str, figure: bool = True,
                 dpi: int = 110) -> dict[str, Path]:
    """Write ``result.report()`` to ``<report>.md``, ``result.to_dict()`` to ``results.json`` and (``figure``)
    ``result.figure()`` to ``figure.png`` in ``out_dir`` (default: ``result.out_dir``, else the config's), add
    the paths to ``result.files`` and return them, keyed ``report`` / ``"results"`` / ``"figure"``."""
    out = Path(out_dir if out_dir is not None else (result.out_dir or result.config.out_dir))
    out.mkdir(parents=True, exist_ok=True)
    files = {report: out / f"{report}.md", "results": out / "results.json"}
    files[report].write_text(result.report() + "\n", encoding="utf-8")
    files["results"].write_text(json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if figure:
        files["figure"] = out / "figure.png"
        result.figure().savefig(files["figure"], dpi=dpi)
    result.files.update(files)
    return files


class LabResult:
    """What every lab's result offers (a mixin for the lab's result dataclass, which holds ``config``,
    ``out_dir`` and ``files``): ``report()`` (markdown), ``to_dict()`` (JSON values), ``figure()`` (matplotlib),
    :meth:`save` and :meth:`written`."""

    report_name: ClassVar[str] = "summary"
    #: resolution of figure.png
    figure_dpi: ClassVar[int] = 110

    def report(self) -> str:
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    def figure(self) -> Any:
        raise NotImplementedError

    def save(self, out_dir: str | os.PathLike | None = None, *, figure: bool = True) -> dict[str, Path]:
        """Write ``<report_name>.md``, ``results.json`` and (``figure``) ``figure.png`` to ``out_dir``."""
        return save_outputs(self, out_dir, report=self.report_name, figure=figure, dpi=self.figure_dpi)

    def written(self) -> list[Path]:
        """Every file the experiment wrote: the outputs and the run journals (what the CLI lists)."""
        return list(getattr(self, "files", {}).values())


class Experiment:
    """A lab's experiment: subclasses set :attr:`name`, :attr:`config_class`, :attr:`resume_error` and implement
    :meth:`prepare`, :meth:`units`, :meth:`run_unit` and :meth:`collect`; :meth:`run` drives them."""

    name: ClassVar[str] = "lab"
    config_class: ClassVar[type[LabConfig]] = LabConfig
    resume_error: ClassVar[type[Exception]] = ValueError
    unit_name: ClassVar[str] = "run"

    def prepare(self, config: Any, **resources: Any) -> Any:
        """What every unit shares (data, fits, plugins, the language model), built once; ``resources`` are
        objects a caller passes instead of building them (e.g. ``llm=`` a wrapped backend)."""
        return None

    def units(self, config: Any, context: Any) -> list[Unit]:
        raise NotImplementedError

    def run_unit(self, unit: Unit, config: Any, context: Any) -> Any:
        raise NotImplementedError

    def collect(self, config: Any, context: Any, records: dict[tuple, Any]) -> LabResult:
        raise NotImplementedError

    def run(self, config: Any = None, *, save: bool = True, resources: Mapping[str, Any] | None = None,
            log: Callable[[int, int, str, float], None] | None = None, **overrides: Any) -> LabResult:
        """Run every unit of ``config`` (a config, a dict, a .json / .toml path or None; ``overrides`` replace
        settings), resuming the run files already in ``out_dir``; collect the result and, with ``save``, write it.
        ``log(done, total, label, seconds)`` is called after each unit (the CLI's progress without bars)."""
        import time

        from .progress import bar as progress_bar

        config = self.config_class.coerce(config, overrides)
        context = self.prepare(config, **{k: v for k, v in (resources or {}).items() if v is not None})
        units = self.units(config, context)
        records: dict[tuple, Any] = {}
        bar = progress_bar(units, show=config.progress, desc=f"{self.name} {self.unit_name}s", unit=self.unit_name)
        try:
            for unit in bar:
                bar.set_postfix_str(unit.label, refresh=False)
                start = time.perf_counter()
                try:
                    records[unit.key] = self.run_unit(unit, config, context)
                except self.resume_error as exc:
                    raise type(exc)(f"{exc}. In an experiment: choose another out_dir, or set overwrite = true "
                                    "to start afresh") from None
                if log is not None:
                    log(len(records), len(units), unit.label, time.perf_counter() - start)
        finally:
            bar.close()
        result = self.collect(config, context, records)
        if save:
            result.save(config.out_dir, figure=config.figure)
        return result
