"""A lab config's ``data`` setting — which loader reads which files, and which part of them — checked when the
config is made and loaded when the experiment prepares: the one place every lab turns what a user wrote into data.

    data = {loader = "musique", path = "musique_ans_v1.0_dev.jsonl", split = "dev", limit = 50, sample = 50, seed = 0}

``loader`` names a :data:`~uncertainty_lab.datasets.loaders.LOADERS` entry; ``path`` is its file or folder
(relative to the working directory; none for the ``shipped_*`` data); every other key is an option of that
loader (``split``, ``limit``, ``sample`` with its ``seed``, ``max_bytes``, and e.g. ``domain_to_node`` for GDELT).
A lab takes the loaders that give its kind of data (:data:`KINDS`).
"""

from __future__ import annotations

import inspect
import os
import warnings
from collections.abc import Mapping
from typing import Any

from uncertainty_lab.datasets.loaders import LOADERS, load
from uncertainty_lab.datasets.subset import check_subset

__all__ = ["KINDS", "data_provenance", "data_spec", "deprecated_data", "describe_data", "load_data"]

#: kind of data → the loaders that give it (the first is the shipped default): what each lab may name
KINDS: dict[str, tuple[str, ...]] = {
    "search": ("shipped_search", "musique", "hotpotqa", "world"),  # (documents, questions)
    "news": ("shipped_news", "gdelt", "world"),  # NewsEvents in time order (world: a cascade world's, with truth)
    "qa": ("shipped_qa", "truthfulqa", "strategyqa", "gsm8k", "hotpotqa", "musique"),  # QAItems (multi-hop: closed book)
}
_SUBSET = ("limit", "sample", "seed")


def data_spec(value: Any, *, kind: str, setting: str = "data", error: type[Exception] = ValueError) -> dict[str, Any]:
    """``value`` (a loader name, a ``{loader, path?, **options}`` table, or None for the shipped data of ``kind``)
    checked without reading a file, as ``{"loader", "path"?, **options}``. Errors name ``setting`` and the fix: an
    unknown or wrong-kind loader, a missing ``path``, an option the loader does not take, a bad limit/sample/seed."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    names = KINDS[kind]
    if value is None:
        value = {"loader": names[0]}
    elif isinstance(value, str):
        value = {"loader": value}
    if not isinstance(value, Mapping):
        raise error(f"{setting} must be a table such as {{loader = {names[1]!r}, path = \"...\"}} or a loader name, "
                    f"got {value!r}")
    spec = dict(value)
    name = spec.get("loader")
    if name not in names:
        other = f" ({name!r} gives another kind of data)" if name in LOADERS else ""
        raise error(f"{setting}.loader must be one of {', '.join(map(repr, names))}{other}, got {name!r}")
    path = spec.get("path")
    if path is not None:
        if not _is_path(path):
            raise error(f"{setting}.path must be a file or folder name (or a list of them), got {path!r}")
        spec["path"] = [os.fspath(p) for p in path] if isinstance(path, list) else os.fspath(path)
    _check_options(spec, setting, error)
    return spec


def _is_path(path: Any) -> bool:
    if isinstance(path, (str, os.PathLike)):
        return bool(str(path))
    return isinstance(path, list) and bool(path) and all(isinstance(p, (str, os.PathLike)) for p in path)


def _check_options(spec: dict[str, Any], setting: str, error: type[Exception]) -> None:
    """The loader takes ``spec``'s options (its required ones given), and limit/sample/seed are valid."""
    name, path = spec["loader"], spec.get("path")
    loader = LOADERS[name]
    params = list(inspect.signature(loader).parameters.values())
    options = {k: v for k, v in spec.items() if k not in ("loader", "path")}
    if path is None and params[0].default is inspect.Parameter.empty:
        raise error(f"{setting}: loader {name!r} reads a file you downloaded; give its path, e.g. {setting} = "
                    f"{{loader = {name!r}, path = \"...\"}} (nothing is downloaded)")
    accepted = [p.name for p in params[1:]]
    unknown = [k for k in options if k not in accepted]
    if unknown:
        raise error(f"{setting}.{unknown[0]}: loader {name!r} takes no such option; it takes {', '.join(accepted)}")
    missing = [p.name for p in params[1:] if p.default is inspect.Parameter.empty and p.name not in options]
    if missing:
        raise error(f"{setting}: loader {name!r} needs {', '.join(missing)}, e.g. {setting}.{missing[0]} = {{...}}")
    try:
        check_subset(options.get("limit"), options.get("sample"), options.get("seed", 0))
    except ValueError as exc:
        raise error(f"{setting}.{exc}") from None


def load_data(spec: Any, *, kind: str, setting: str = "data", error: type[Exception] = ValueError) -> Any:
    """The data ``spec`` names (checked by :func:`data_spec`), read by its loader; a file that is missing or not
    in the loader's format is ``error`` naming ``setting`` and the loader's own message."""
    spec = data_spec(spec, kind=kind, setting=setting, error=error)
    options = {k: v for k, v in spec.items() if k not in ("loader", "path")}
    try:
        if kind == "qa":  # short-answer questions; HotpotQA and MuSiQue closed book
            from uncertainty_lab.datasets.closed_book import load_questions

            return load_questions(spec["loader"], spec.get("path"), **options)
        return load(spec["loader"], spec.get("path"), **options)
    except (OSError, ValueError, TypeError) as exc:
        raise error(f"{setting} = {describe_data(spec)}: {exc}") from exc


def data_provenance(spec: Mapping[str, Any] | None) -> dict[str, Any]:
    """What a run's data came from, for its journals: ``{"loader", "files": {path: content hash}}``
    (:func:`uncertainty_lab.provenance.data_files`; the package's own data: no files, its items' hashes say it)."""
    from ..provenance import data_files

    spec = dict(spec or {})
    return {"loader": spec.get("loader"), "files": data_files(spec.get("path"))}


def describe_data(spec: Mapping[str, Any]) -> str:
    """One line naming the loader, its files and the part taken (``musique: dev.jsonl, sample 50 (seed 0)``)."""
    path = spec.get("path")
    files = ", ".join(map(str, path)) if isinstance(path, list) else str(path) if path is not None else "the " \
        "package's own data"
    parts = [f"{k} {spec[k]!r}" for k in ("split",) if spec.get(k) is not None]
    if spec.get("sample") is not None:
        parts.append(f"sample {spec['sample']} (seed {spec.get('seed', 0)})")
    if spec.get("limit") is not None:
        parts.append(f"limit {spec['limit']}")
    parts += [f"{k} {v!r}" for k, v in spec.items() if k not in ("loader", "path", "split", *_SUBSET)
              and not isinstance(v, Mapping)]
    return f"{spec.get('loader')}: {files}" + (f" ({', '.join(parts)})" if parts else "")


def deprecated_data(data: Any, replacement: Mapping[str, Any], *, old: str, what: str, kind: str,
                    error: type[Exception] = ValueError) -> dict[str, Any]:
    """``replacement`` (the ``data`` table an old setting ``old`` means) with a FutureWarning that shows how to
    write it; ``data`` must still be the default (giving both is ``error``)."""
    if data_spec(data, kind=kind, error=error) != {"loader": KINDS[kind][0]}:
        raise error(f"{old!r} is the old way to name the data; give only data = {{...}}")
    table = ", ".join(f"{k} = {v!r}" for k, v in replacement.items() if v is not None)
    warnings.warn(f"the {what} setting {old!r} is deprecated and will stop working in the next release; write "
                  f"data = {{{table}}}", FutureWarning, stacklevel=4)
    return {k: v for k, v in replacement.items() if v is not None}
