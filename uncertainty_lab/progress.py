"""Progress bars: ``tqdm.auto`` (a widget in a notebook, text in a terminal), off where nobody watches.

Every loop of the package that shows a bar asks :func:`bar`. ``TQDM_DISABLE=1`` turns every bar off — tqdm's own
switch, which its notebook widget ignores when a caller passes ``disable`` — so a headless notebook run (the tour,
the class recording) saves no widget frozen at "0%"."""
from __future__ import annotations

import os
from typing import Any

OFF_VALUES = ("1", "true", "yes", "on")


def wanted(requested: bool = True) -> bool:
    """Whether to show a bar: the caller asked for one and ``TQDM_DISABLE`` does not say no."""
    return bool(requested) and os.environ.get("TQDM_DISABLE", "").strip().lower() not in OFF_VALUES


def bar(iterable: Any = None, *, show: bool = True, **kwargs: Any):
    """A ``tqdm.auto`` bar over ``iterable`` (or a manual one with ``total=``), disabled unless :func:`wanted`."""
    from tqdm.auto import tqdm

    return tqdm(iterable, disable=not wanted(show), **kwargs)
