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
from .outdir import Manifest, OutDirError, OutDirLock, check_out_dir

__all__ = ["CAPS", "MAX_UNITS", "Experiment", "check_caps", "LabConfig", "LabResult", "Unit", "save_outputs", "setting"]

#: the most units one run makes (each is a journal file): a config past it is refused, naming the cap
MAX_UNITS = 100_000
#: upper bounds of the count settings: past one a run would compute and write without bound (a mistyped
#: ``steps = 1000000000``), so the config is refused, naming the cap
CAPS: dict[str, int] = {"steps": 10_000, "runs": 1_000, "samples_per_step": 100, "max_steps": 1_000, "k": 100,
                        "n_samples": 100, "max_rounds": 100, "max_tokens": 4_096, "answer_max_tokens": 4_096,
                        "n_boot": 100_000}


def check_caps(config: Any, names: tuple[str, ...], error: type[Exception] = ValueError) -> None:
    """Each integer setting of ``names`` at most its :data:`CAPS` value; else ``error`` naming the setting and cap."""
    for name in names:
        value = getattr(config, name, None)
        if isinstance(value, int) and not isinstance(value, bool) and value > CAPS[name]:
            raise error(f"{name} = {value} is over its cap of {CAPS[name]}; give at most {CAPS[name]} (the caps keep a "
                        "mistyped setting from running and writing without bound: uncertainty_lab.lab.CAPS)")


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
    run_only: ClassVar[tuple[str, ...]] = ("out_dir", "overwrite", "progress", "figure", "executor", "workers",
                                           "scheduler", "llm_hosts")

    llm: Any = setting("embedded", "the language model: a get_llm spec ('embedded', 'auto', 'ollama:qwen2.5:3b', "
                                   "'replay') or a backend instance")
    seed: int = setting(0, "the seed every unit's randomness derives from")
    out_dir: str = setting("results", "folder for the run journals, the report, results.json and figure.png")
    overwrite: bool = setting(False, "start the run files afresh instead of resuming them")
    progress: bool = setting(True, "show progress bars")
    figure: bool = setting(True, "write figure.png")
    executor: str = setting("serial", "where the units run: 'serial' (one after another in this process), "
                                      "'processes' (a pool of local worker processes) or 'dask' (dask.distributed: a "
                                      "LocalCluster, or the cluster at scheduler); the results are the same")
    workers: int | None = setting(None, "worker processes of 'processes' and of the LocalCluster 'dask' starts "
                                        "(None = the number of CPU cores)")
    scheduler: str | None = setting(None, "address of a running dask scheduler, e.g. 'tcp://host:8786' (with "
                                          "executor = 'dask'); None = start a LocalCluster for the run")
    llm_hosts: list[str] | None = setting(None, "Ollama servers to spread the units over, e.g. ['http://a:11434', "
                                                "'http://b:11434'] (None = $OLLAMA_HOST, which may list several "
                                                "separated by commas)")

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
    the paths to ``result.files`` and return them, keyed ``report`` / ``"results"`` / ``"figure"``. A file there
    that the lab did not write (:class:`~uncertainty_lab.outdir.Manifest`) is refused, naming it, unless the
    config says ``overwrite = true``."""
    config = getattr(result, "config", None)
    out = check_out_dir(out_dir if out_dir is not None else (result.out_dir or config.out_dir), create=True)
    files = {report: out / f"{report}.md", "results": out / "results.json"}
    if figure:
        files["figure"] = out / "figure.png"
    manifest = _mine(out, list(files.values()), config)
    files[report].write_text(result.report() + "\n", encoding="utf-8")
    files["results"].write_text(json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if figure:
        result.figure().savefig(files["figure"], dpi=dpi)
    manifest.record(list(files.values()))
    result.files.update(files)
    return files


def _mine(out: Path, paths: list[Path], config: Any) -> Manifest:
    """The folder's manifest, once no file of ``paths`` is one the lab did not write (else an error naming them,
    unless ``config.overwrite``)."""
    manifest = Manifest(out)
    foreign = manifest.foreign(paths)
    if foreign and not getattr(config, "overwrite", False):
        raise OutDirError(f"out_dir {out} already holds {', '.join(p.name for p in foreign)}, which this lab did not "
                          "write (or which changed since); move them away, choose another out_dir, or set "
                          "overwrite = true to replace them")
    return manifest


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
    #: the files :meth:`run` writes into ``out_dir`` besides the journals (checked before anything runs)
    outputs: ClassVar[tuple[str, ...]] = ("summary.md", "results.json", "figure.png")

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

    def check_outputs(self, config: Any) -> Path:
        """``out_dir`` usable (:func:`~uncertainty_lab.outdir.check_out_dir`, nothing created) and none of
        :attr:`outputs` there a file the lab did not write (unless ``overwrite``); ``run`` and ``--check`` call it."""
        out = check_out_dir(config.out_dir)
        if out.is_dir():
            _mine(out, [out / name for name in self.outputs], config)
        return out

    def check_units(self, config: Any, units: list[Unit]) -> list[Unit]:
        """``units`` once there are at most :data:`MAX_UNITS` and no two share a run file (labels that differ only
        in punctuation could); else the config's error naming the cap or the two units."""
        if len(units) > MAX_UNITS:
            raise config.error(f"this configuration makes {len(units)} {self.unit_name}s, over the cap of {MAX_UNITS}; "
                               "run fewer (a smaller data sample, fewer settings to sweep)")
        seen: dict[Path, Unit] = {}
        for unit in units:
            if unit.path is not None and unit.path in seen:
                raise config.error(f"the {self.unit_name}s {seen[unit.path].label!r} and {unit.label!r} would share the "
                                   f"run file {unit.path}; rename one of them (their names differ only in characters a "
                                   "file name cannot hold)")
            if unit.path is not None:
                seen[unit.path] = unit
        return units

    def run(self, config: Any = None, *, save: bool = True, resources: Mapping[str, Any] | None = None,
            log: Callable[[int, int, str, float], None] | None = None, **overrides: Any) -> LabResult:
        """Run every unit of ``config`` (a config, a dict, a .json / .toml path or None; ``overrides`` replace
        settings), resuming the run files already in ``out_dir``; collect the result and, with ``save``, write it.
        ``log(done, total, label, seconds)`` is called after each unit (the CLI's progress without bars).

        Where the units run is the config's ``executor`` (``serial``, ``processes``, ``dask``; with ``workers``,
        ``scheduler``) and which Ollama servers serve them its ``llm_hosts`` (:mod:`uncertainty_lab.executors`):
        the records are the same whatever runs them. Units whose ``spec`` has a ``stage`` run after every unit of
        a lower stage (default 0); ``spec["needs"]`` lists the finished run files a unit reads (a worker gets them
        with the unit)."""
        from .executors import Plan

        config = self.config_class.coerce(config, overrides)
        plan = Plan(config, resources)
        self.check_outputs(config)  # before anything runs; made and locked once the model is known to answer
        context = plan.prepare(lambda: self.prepare(config, **{k: v for k, v in (resources or {}).items()
                                                               if v is not None}))
        out = check_out_dir(config.out_dir, create=True)
        with OutDirLock(out):
            Manifest(out).adopt()
            self.check_outputs(config)
            units = self.check_units(config, self.units(config, context))
            records = plan.run(self, config, context, units, log)
            result = plan.annotate(self.collect(config, context, records))
            if save:
                result.save(config.out_dir, figure=config.figure)
        return result
