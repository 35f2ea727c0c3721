"""The plugins the tests look at: uncertainty_lab's own and the distributions a test installs or makes, not whatever
else the environment holds. A lecturer or student who followed the plugin walk-through (plugins/template copied,
renamed and ``pip install -e``'d into the same environment) has more backends than the built-in ones and the
template's plugin names twice; the suite must still pass there. So every plugin distribution already installed when
the tests start (other than ``uncertainty-lab``) is hidden from ``importlib.metadata.entry_points`` — the call the
registry scans with — for the whole run (tests/conftest.py), and from the subprocesses that run a distribution's own
tests (tests/test_plugin_distributions.py). Distributions are told apart by name *and* location, so a copy a test
installs elsewhere stays visible even when one of that name was installed before."""

from __future__ import annotations

import importlib.metadata
import re
from collections.abc import Callable, Iterable

GROUP_PREFIX = "uncertainty_lab."
BUILTIN = "uncertainty-lab"


def _where(dist) -> tuple[str, str] | None:
    """A distribution as (normalised name, the folder its metadata is in), or None when it cannot be told."""
    if dist is None:
        return None
    return re.sub(r"[-_.]+", "-", dist.name or "").lower(), str(dist.locate_file(""))


def foreign_distributions() -> frozenset[tuple[str, str]]:
    """Every distribution installed now, other than uncertainty-lab, that declares an ``uncertainty_lab.*`` entry point."""
    found = set()
    for dist in importlib.metadata.distributions():
        where = _where(dist)
        if where[0] != BUILTIN and any(ep.group.startswith(GROUP_PREFIX) for ep in dist.entry_points):
            found.add(where)
    return frozenset(found)


def hide(foreign: Iterable[tuple[str, str] | list[str]]) -> Callable[[], None]:
    """Make ``importlib.metadata.entry_points`` leave out the ``uncertainty_lab.*`` entry points of ``foreign``
    distributions (pairs from :func:`foreign_distributions`); returns the function that undoes it."""
    hidden = {tuple(d) for d in foreign}
    real = importlib.metadata.entry_points

    def entry_points(**selection):
        found = real(**selection)
        if not isinstance(found, importlib.metadata.EntryPoints):
            return found
        return importlib.metadata.EntryPoints(
            ep for ep in found if not (ep.group.startswith(GROUP_PREFIX) and _where(ep.dist) in hidden))

    importlib.metadata.entry_points = entry_points

    def restore() -> None:
        importlib.metadata.entry_points = real

    return restore


#: the plugin distributions installed when the test run started (this module is first imported by tests/conftest.py)
AT_START = foreign_distributions()
