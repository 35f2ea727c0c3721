"""The plugin registry: seven kinds, each an entry-point group ``uncertainty_lab.<kind>``.

Entry points are scanned once (cached) and loaded lazily, one name at a time; ``refresh()`` re-scans,
so a ``pip install`` inside a running kernel becomes visible (editable installs too: it applies the
``.pth`` files that appeared since start-up, :func:`_apply_new_pth_files`). ``@register(kind, name)`` adds
a plugin from a notebook cell. A broken plugin is reported with its distribution and entry point and never
hides the healthy ones.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import importlib.metadata
import os
import re
import site
import sys
import threading
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .contracts import PROTOCOLS
from .parameters import Parameter, ParameterError, parameters, validate
from .plugin_errors import (
    PluginLoadError,
    PluginWarning,
    RegistryError,
    UnknownKindError,
    UnknownPluginError,
    ctrl_c_watch,
)

KINDS: tuple[str, ...] = (
    "kernels",
    "memory_selectors",
    "metrics",
    "stopping_gates",
    "llm_backends",
    "equivalence_judges",
    "graders",
)

__all__ = [
    "KINDS",
    "PROTOCOLS",
    "Parameter",
    "ParameterError",
    "PluginInfo",
    "PluginLoadError",
    "PluginWarning",
    "RegistryError",
    "UnknownKindError",
    "UnknownPluginError",
    "Catalogue",
    "create",
    "describe",
    "get",
    "group",
    "names",
    "refresh",
    "register",
    "resolve",
    "unregister",
]


def group(kind: str) -> str:
    """The entry-point group of a kind: ``uncertainty_lab.<kind>``."""
    return f"uncertainty_lab.{_check_kind(kind)}"


@dataclass
class _Entry:
    kind: str
    name: str
    distribution: str
    target: str  # "module:attr" for an entry point, "<registered>" for an in-process plugin
    entry_point: importlib.metadata.EntryPoint | None = None
    obj: Any = None
    error: PluginLoadError | None = None

    @property
    def loaded(self) -> bool:
        return self.obj is not None or self.error is not None


@dataclass(frozen=True)
class PluginInfo:
    """What :func:`describe` reports for one plugin."""

    kind: str
    name: str
    distribution: str
    entry_point: str
    summary: str
    reference: str
    parameters: list[Parameter] = field(default_factory=list)
    status: str = "ok"  # "ok" or "error"
    error: str = ""


_lock = threading.RLock()
_scanned: dict[str, dict[str, _Entry]] | None = None
_refused: dict[str, list[_Entry]] = {k: [] for k in KINDS}  # entry points shadowing a built-in (see _add)
_registered: dict[str, dict[str, _Entry]] = {k: {} for k in KINDS}


def _check_kind(kind: str) -> str:
    if kind not in KINDS:
        raise UnknownKindError(f"unknown plugin kind {kind!r}; kinds are {list(KINDS)}" + _hint(kind, KINDS))
    return kind


def _hint(name: str, options) -> str:
    match = difflib.get_close_matches(name, list(options), n=1, cutoff=0.4)
    return f"; closest match: {match[0]!r}" if match else ""


BUILTIN_DISTRIBUTION = "uncertainty-lab"
_BUILTIN_KINDS = frozenset(KINDS)  # every kind has built-ins: none found means an install older than the kind


def _normalise(dist: str) -> str:  # PEP 503
    return re.sub(r"[-_.]+", "-", dist).lower()


def _scan(strict: bool = False) -> dict[str, dict[str, _Entry]]:
    global _scanned
    with _lock:
        if _scanned is None:
            found: dict[str, dict[str, _Entry]] = {k: {} for k in KINDS}
            for kind in KINDS:
                _refused[kind] = []
                for ep in importlib.metadata.entry_points(group=f"uncertainty_lab.{kind}"):
                    _add(found[kind], kind, _Entry(kind, ep.name, ep.dist.name if ep.dist is not None else "?",
                                                   ep.value, entry_point=ep), strict)
            _scanned = found
        return _scanned


def _add(found: dict[str, _Entry], kind: str, entry: _Entry, strict: bool) -> None:
    """Add one scanned entry point. A built-in (distribution ``uncertainty-lab``) always keeps its name, whatever
    the ``sys.path`` order: a plugin registering the same name is refused and listed as a broken row naming both.
    Between two other distributions the first on ``sys.path`` wins, with a warning."""
    first = found.setdefault(entry.name, entry)
    if first is entry or _normalise(first.distribution) == _normalise(entry.distribution):
        return  # a new name, or the same distribution seen twice on sys.path
    kept = next((e for e in (first, entry) if _normalise(e.distribution) == BUILTIN_DISTRIBUTION), None)
    if kept is None:
        return _warn(f"{kind} plugin {entry.name!r} is registered by both {first.distribution!r} and "
                     f"{entry.distribution!r}; using {first.distribution!r}. Uninstall one or rename its entry "
                     "point.", strict)
    shadow = entry if kept is first else first
    found[entry.name] = kept
    shadow.error = PluginLoadError(
        f"{kind} plugin {entry.name!r} of distribution {shadow.distribution!r} ({shadow.target}) is refused: the "
        f"name belongs to the built-in plugin of {kept.distribution!r}, which stays in use. Rename the entry point "
        f"in {shadow.distribution!r}.", kind=kind, name=entry.name, distribution=shadow.distribution,
        entry_point=shadow.target)
    _refused[kind].append(shadow)
    _warn(str(shadow.error), strict, shadow.error)


def _warn(message: str, strict: bool, error: Exception | None = None) -> None:
    if strict:
        raise error if error is not None else RegistryError(message)
    warnings.warn(message, PluginWarning, stacklevel=3)


def _entries(kind: str) -> dict[str, _Entry]:
    merged = dict(_scan()[_check_kind(kind)])
    merged.update(_registered[kind])  # a plugin registered in-process shadows an entry point
    return merged


def refresh(*, strict: bool = False) -> None:
    """Forget the entry-point scan and every loaded entry-point plugin, then scan again.

    First applies site-packages ``.pth`` files that appeared since start-up (:func:`_apply_new_pth_files`)
    and clears the import system's caches, so a ``pip install`` (editable or not) done in this process is
    importable as well as listed.
    """
    global _scanned
    with _lock:
        _apply_new_pth_files()
        _scanned = None
        importlib.invalidate_caches()
        _scan(strict=strict)


_seen_pth: set[tuple[str, int]] = set()  # (path, mtime_ns) of .pth files already looked at by refresh()
_IMPORT_LINE = re.compile(r"import[ \t]+([\w.]+)")


def _site_dirs() -> list[str]:
    dirs = list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    return dirs


def _apply_new_pth_files() -> list[str]:
    """Do what :mod:`site` does for ``*.pth`` files at start-up, for those that appeared later; return
    the files applied.

    Python reads site-packages ``.pth`` files only when it starts, and an editable install
    (``pip install -e``) works through one: a path line (the source folder) or an import line that installs
    an import hook (setuptools' ``import __editable___<dist>_finder; ...install()``). Without this, a
    ``pip install -e`` in a running kernel gives entry points that are listed but fail to import.

    Safe to repeat, so it needs no record of what start-up did: a path line is added only when it is not
    on ``sys.path`` yet (``site``'s own rule), and an import line runs only when the first module it
    imports is not imported yet. So a line that ran at start-up never runs twice, nor does one starting
    with a standard-library import (``import os; ...``: shims, not install hooks — the hooks editable
    installs write import a module named after their distribution). Each file version (path, mtime) is
    read once per process; a failing line is skipped with a warning, as ``site`` skips it.
    """
    applied = []
    for sitedir in _site_dirs():
        try:
            names = sorted(n for n in os.listdir(sitedir) if n.endswith(".pth") and not n.startswith("."))
        except OSError:
            continue
        on_path = {os.path.normcase(os.path.abspath(p)) for p in sys.path if isinstance(p, str)}
        if os.path.normcase(os.path.abspath(sitedir)) not in on_path:  # e.g. a user site made by pip install --user
            sys.path.append(sitedir)
            on_path.add(os.path.normcase(os.path.abspath(sitedir)))
        for name in names:
            path = os.path.join(sitedir, name)
            try:
                key = (path, os.stat(path).st_mtime_ns)
                if key in _seen_pth:
                    continue
                _seen_pth.add(key)
                with open(path, encoding="utf-8-sig", errors="replace") as f:
                    lines = f.read().splitlines()
            except OSError:
                continue
            changed = False
            for line in lines:
                if not line.strip() or line.startswith("#"):
                    continue
                match = _IMPORT_LINE.match(line)
                if match:
                    if match.group(1) in sys.modules:
                        continue
                    try:
                        exec(line, {"__name__": "__pth__"})
                    except KeyboardInterrupt:
                        raise
                    except BaseException as exc:  # like site: report the line, keep going (SystemExit too)
                        warnings.warn(f"{path}: {line!r} failed: {type(exc).__name__}: {exc}", PluginWarning,
                                      stacklevel=3)
                        continue
                    changed = True
                    continue
                entry = os.path.abspath(os.path.join(sitedir, line.rstrip()))
                if os.path.normcase(entry) not in on_path and os.path.isdir(entry):
                    sys.path.append(entry)
                    on_path.add(os.path.normcase(entry))
                    changed = True
            if changed:
                applied.append(path)
    return applied


def names(kind: str) -> list[str]:
    """The names of all plugins of ``kind`` (discovered, not imported), sorted."""
    with _lock:
        return sorted(_entries(kind))


def _entry(kind: str, name: str) -> _Entry:
    entries = _entries(kind)
    if name not in entries:
        available = sorted(entries)
        stale = "" if available or kind not in _BUILTIN_KINDS else (
            f" (uncertainty-lab ships built-in {kind}: if it was installed before they existed, run "
            "pip install -e . again)")
        raise UnknownPluginError(
            f"no {kind} plugin named {name!r}; available: {', '.join(available) or 'none'}"
            + _hint(name, available) + stale
        )
    return entries[name]


def _load(entry: _Entry) -> None:
    if entry.loaded:
        return
    where = f"entry point {entry.name} = {entry.target} in distribution {entry.distribution!r}"
    try:
        with ctrl_c_watch() as ctrl_c:
            obj = entry.entry_point.load() if entry.entry_point is not None else entry.obj
            missing = _protocol_gaps(entry.kind, obj)
    except BaseException as exc:  # SystemExit and the like too: a plugin must not end the process that lists it
        if isinstance(exc, KeyboardInterrupt) and ctrl_c.is_set():  # a real Ctrl-C, not the plugin's own raise
            raise
        what = {SystemExit: " (the plugin exits the process when imported)",
                KeyboardInterrupt: " (the plugin raises KeyboardInterrupt itself; no Ctrl-C was pressed)"}.get(
            type(exc), "")
        entry.error = PluginLoadError(
            f"{entry.kind} plugin {entry.name!r} failed to import ({where}): {type(exc).__name__}: {exc}{what}",
            kind=entry.kind, name=entry.name, distribution=entry.distribution, entry_point=entry.target,
        )
        entry.error.__cause__ = exc
        return
    if missing:
        entry.error = PluginLoadError(
            f"{entry.kind} plugin {entry.name!r} ({where}) breaks the {entry.kind} protocol: "
            f"missing {', '.join(missing)}. A {entry.kind} plugin must define "
            f"{', '.join(PROTOCOLS[entry.kind])}.",
            kind=entry.kind, name=entry.name, distribution=entry.distribution, entry_point=entry.target,
        )
        return
    entry.obj = obj


def _protocol_gaps(kind: str, obj: Any) -> list[str]:
    if not isinstance(obj, type):
        return ["(a plugin must be a class)"]
    return [m for m in PROTOCOLS[kind] if not callable(getattr(obj, m, None))]


def get(kind: str, name: str) -> type:
    """The plugin class registered as ``name`` under ``kind``, imported on first use."""
    with _lock:
        entry = _entry(kind, name)
        _load(entry)
        if entry.error is not None:
            raise entry.error
        return entry.obj


def create(kind: str, name: str, **params: Any) -> Any:
    """An instance of plugin ``name`` with ``params`` validated against its declared parameters."""
    cls = get(kind, name)
    return cls(**validate(cls, params, owner=f"{kind} plugin {name!r}"))


@dataclass(frozen=True)
class Catalogue:
    """A small name → class table for choices that are not one of the seven plugin kinds (the search lab's belief
    states and action policies): the same lookup, errors and :func:`resolve` as the registry, no entry points."""

    what: str
    classes: Mapping[str, type]
    protocol: tuple[str, ...] = ()

    def names(self) -> list[str]:
        return sorted(self.classes)

    def get(self, name: str) -> type:
        if name not in self.classes:
            raise UnknownPluginError(f"no {self.what} named {name!r}; available: {', '.join(self.names())}"
                                     + _hint(name, self.names()))
        return self.classes[name]


def resolve(kind: str | Catalogue, spec: Any, *, what: str | None = None,
            defaults: Mapping[str, Any] | None = None) -> Any:
    """One plugin instance from any of the ways a user names it:

    - a name (``"semantic_entropy"``), created with its defaults;
    - a table ``{"name": ..., **params}`` or a pair ``(name, {params})``;
    - a class, created with its defaults;
    - an instance that has the kind's protocol methods, returned as it is.

    ``kind`` is a plugin kind or a :class:`Catalogue`. ``defaults`` are passed to a plugin created here only when
    its class declares them and the spec does not set them (e.g. a lab's equivalence judge for its metrics).
    Parameters are validated against the declared ones; an init field marked ``hidden`` is passed through.
    ``what`` (e.g. ``"metrics['entropy']"``) prefixes every error, so the message names the setting to fix.
    """
    catalogue = kind if isinstance(kind, Catalogue) else None
    protocol = catalogue.protocol if catalogue else PROTOCOLS[_check_kind(kind)]
    label = what or (catalogue.what if catalogue else f"{kind} plugin")
    try:
        name, params = _spec_parts(spec, label)
        if name is None:
            if isinstance(spec, type):
                return _instantiate(spec, {}, defaults, label)
            missing = [m for m in protocol if not callable(getattr(spec, m, None))]
            if missing:
                kinds = catalogue.what if catalogue else f"a {kind} plugin"
                raise RegistryError(f"{label} must be a name, a {{'name': ..., **params}} table or {kinds} "
                                    f"instance with {', '.join(protocol)}; got {type(spec).__name__} {spec!r:.80}")
            return spec
        cls = catalogue.get(name) if catalogue else get(kind, name)
        owner = f"{catalogue.what} {name!r}" if catalogue else f"{kind} plugin {name!r}"
        return _instantiate(cls, params, defaults, owner)
    except (RegistryError, ParameterError) as exc:
        if what and not str(exc).startswith(what):
            exc.args = (f"{what}: {exc.args[0]}", *exc.args[1:])
        raise


def _spec_parts(spec: Any, label: str) -> tuple[str | None, dict[str, Any]]:
    if isinstance(spec, str):
        return spec, {}
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], str) and isinstance(spec[1], Mapping):
        return spec[0], dict(spec[1])
    if isinstance(spec, Mapping):
        params = dict(spec)
        name = params.pop("name", None)
        if not isinstance(name, str):
            raise RegistryError(f"{label} given as a table needs a 'name', got {dict(spec)!r}")
        return name, params
    return None, {}


def _instantiate(cls: type, params: dict[str, Any], defaults: Mapping[str, Any] | None, owner: str) -> Any:
    declared = {p.name for p in parameters(cls)}
    hidden = {f.name for f in dataclasses.fields(cls) if f.init and f.name not in declared} \
        if dataclasses.is_dataclass(cls) else set()
    checked = validate(cls, {k: v for k, v in params.items() if k not in hidden}, owner=owner)
    checked.update({k: v for k, v in params.items() if k in hidden})
    for key, value in (defaults or {}).items():
        if key not in checked and (key in declared or key in hidden):
            checked[key] = value
    return cls(**checked)


def register(kind: str, name: str | None = None) -> Callable[[type], type]:
    """Class decorator: register a plugin in this process (e.g. from a notebook cell).

    The class is checked against the kind's protocol now; re-registering a name replaces it.
    """
    _check_kind(kind)

    def decorator(cls: type) -> type:
        plugin_name = name or getattr(cls, "name", None) or cls.__name__
        missing = _protocol_gaps(kind, cls)
        if missing:
            raise PluginLoadError(
                f"cannot register {cls!r} as {kind} plugin {plugin_name!r}: missing {', '.join(missing)}; "
                f"a {kind} plugin must define {', '.join(PROTOCOLS[kind])}",
                kind=kind, name=plugin_name, distribution="<registered>", entry_point=cls.__qualname__,
            )
        with _lock:
            module = getattr(cls, "__module__", "?")
            _registered[kind][plugin_name] = _Entry(kind, plugin_name, "<registered>", f"{module}:{cls.__qualname__}", obj=cls)
        return cls

    return decorator


def unregister(kind: str, name: str) -> None:
    """Remove an in-process registration (entry-point plugins are removed by uninstalling them)."""
    with _lock:
        _registered[_check_kind(kind)].pop(name, None)


def _summary(obj: Any) -> str:
    summary = getattr(obj, "summary", None)
    if isinstance(summary, str) and summary:
        return summary
    doc = (getattr(obj, "__doc__", None) or "").strip()
    return doc.splitlines()[0] if doc else ""


def describe(kind: str, *, strict: bool = False) -> list[PluginInfo]:
    """Every plugin of ``kind`` with its distribution, summary, parameters and load status.

    A plugin that fails to load (or that is refused for taking a built-in's name) is listed with
    ``status="error"`` and a :class:`PluginWarning`; with ``strict=True`` its :class:`PluginLoadError` is
    raised instead.
    """
    out = []
    with _lock:
        for plugin_name, entry in sorted(_entries(kind).items()) + [(e.name, e) for e in _refused[kind]]:
            _load(entry)
            if entry.error is not None:
                _warn(str(entry.error), strict, entry.error)
                out.append(PluginInfo(kind, plugin_name, entry.distribution, entry.target, "", "", [], "error", str(entry.error)))
                continue
            obj = entry.obj
            out.append(
                PluginInfo(
                    kind, plugin_name, entry.distribution, entry.target, _summary(obj),
                    getattr(obj, "reference", "") or "", parameters(obj),
                )
            )
    return out
