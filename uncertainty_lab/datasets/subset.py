"""Which part of a data set a loader returns: the file of a named split, a seeded sample, the first ``limit``,
the items a config names by id.

Every loader names these the same: ``split`` (where the public data set has splits), ``sample`` (that many items
drawn without replacement with ``seed``: the same seed gives the same items, kept in file order) and ``limit``
(the first that many, applied after ``sample``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol, TypeVar

from uncertainty_lab.seeds import derive_rng

__all__ = ["check_subset", "split_file", "take", "with_ids"]

T = TypeVar("T")


class _HasId(Protocol):
    id: str


Item = TypeVar("Item", bound=_HasId)


def split_file(
    path: str | os.PathLike[str], split: str | None, files: Mapping[str, Sequence[str]], dataset: str
) -> Path:
    """The file to read: the split's file inside the folder ``path``, or the file ``path`` itself.

    ``files`` maps each split to the names the public release gives its files. A file whose name is one of them
    must hold ``split`` when one is given (a renamed file is read as it is).
    """
    p = Path(path)
    if split is not None and split not in files:
        raise ValueError(f"split must be one of {', '.join(map(repr, files))} for {dataset}, got {split!r}")
    table = "; ".join(f"{s}: {' or '.join(names)}" for s, names in files.items())
    if p.is_dir():
        if split is None:
            raise IsADirectoryError(f"{p}: is a folder; pass the data file itself, or split= to choose the "
                                    f"{dataset} file in it ({table})")
        found = [p / name for name in files[split] if (p / name).is_file()]
        if not found:
            raise FileNotFoundError(f"{p}: no {dataset} file for split {split!r} (looked for "
                                    f"{' or '.join(files[split])}; nothing is downloaded)")
        if len(found) > 1:
            raise ValueError(f"{p}: several files hold the {split!r} split ({', '.join(f.name for f in found)}); "
                             "pass the one you want as path")
        return found[0]
    holds = next((s for s, names in files.items() if p.name in names), None)
    if split is not None and holds is not None and holds != split:
        raise ValueError(f"{p.name} holds the {holds!r} split of {dataset}, not {split!r} ({table})")
    return p


def check_subset(limit: int | None, sample: int | None, seed: int) -> None:
    """Bad ``limit`` / ``sample`` / ``seed`` values as errors naming the argument (before any file is read)."""
    for name, value in (("limit", limit), ("sample", sample)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise ValueError(f"{name} must be a positive number of items or None, got {value!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")


def take(items: Sequence[T], *, limit: int | None = None, sample: int | None = None, seed: int = 0) -> list[T]:
    """``sample`` items drawn without replacement (seeded; kept in their order), then the first ``limit``."""
    check_subset(limit, sample, seed)
    items = list(items)
    if sample is not None:
        if sample > len(items):
            raise ValueError(f"sample={sample} is more than the {len(items)} items there are to draw from; "
                             "pass a smaller sample (or sample=None for all)")
        chosen = derive_rng(seed, "datasets.sample").choice(len(items), size=sample, replace=False)
        items = [items[i] for i in sorted(chosen)]
    return items[:limit] if limit is not None else items


def with_ids(items: Sequence[Item], ids: Sequence[str]) -> tuple[list[Item], list[str]]:
    """``(kept, unknown)``: the items whose ``id`` is in ``ids``, in their order, and the ids no item has (the
    caller words the error, naming its own setting)."""
    have = {it.id for it in items}
    wanted = set(ids)
    return [it for it in items if it.id in wanted], [i for i in ids if i not in have]
