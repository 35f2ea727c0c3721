"""A small read-only table (a list of row dicts) that prints well in a terminal and a notebook, no pandas."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["Table"]


def _fmt(value: Any) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (float, np.floating)):
        if math.isnan(value):
            return "—"
        return f"{value:.6g}" if abs(value) < 1e6 else f"{value:.6e}"
    return str(value)


class Table(Sequence):
    """Rows of equal keys. ``table[k]`` is a row dict, ``table.column(name)`` a numpy array,
    ``table.to_pandas()`` a DataFrame (if pandas is installed)."""

    def __init__(self, rows: list[dict[str, Any]], columns: Sequence[str] | None = None, title: str = ""):
        self._rows = [dict(r) for r in rows]
        self.columns = list(columns) if columns is not None else (list(self._rows[0]) if self._rows else [])
        self.title = title

    def __getitem__(self, index):
        return self._rows[index]

    def __len__(self) -> int:
        return len(self._rows)

    def column(self, name: str) -> np.ndarray:
        """One column as a numpy array."""
        if name not in self.columns:
            raise KeyError(f"no column {name!r}; columns are {self.columns}")
        return np.array([r.get(name) for r in self._rows])

    def to_dicts(self) -> list[dict[str, Any]]:
        """The rows as plain dicts (copies)."""
        return [dict(r) for r in self._rows]

    def to_pandas(self):
        """A pandas DataFrame of the rows (pandas is optional)."""
        import pandas as pd

        return pd.DataFrame(self.to_dicts(), columns=self.columns)

    def __repr__(self) -> str:
        cells = [[_fmt(r.get(c, "")) for c in self.columns] for r in self._rows]
        widths = [max([len(c)] + [len(row[k]) for row in cells]) for k, c in enumerate(self.columns)]
        lines = [self.title] if self.title else []
        lines.append("  ".join(c.rjust(w) for c, w in zip(self.columns, widths, strict=True)))
        lines += ["  ".join(x.rjust(w) for x, w in zip(row, widths, strict=True)) for row in cells]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{html.escape(c)}</th>" for c in self.columns)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(_fmt(r.get(c, '')))}</td>" for c in self.columns) + "</tr>"
            for r in self._rows
        )
        caption = f"<caption>{html.escape(self.title)}</caption>" if self.title else ""
        return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
