"""Deprecated alias: :class:`Table` moved to :mod:`uncertainty_lab.table` (it is not a Hawkes thing). Kept for
one release so that ``from uncertainty_lab.hawkes.table import Table`` still works."""

from ..table import Table

__all__ = ["Table"]
