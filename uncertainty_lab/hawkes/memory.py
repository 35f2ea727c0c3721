"""What ``fit_hawkes`` will need in memory, estimated from the stream before it starts, and the warning when that is
more than the machine has free.

The fit's per-event arrays are the per-target design matrices X_i = [1, E_j(τ_m)] (8·(N + 1) bytes per event, all
built in one pass of the recursion) and, while target i is solved, its temporaries (two Hessian products and a few
vectors, 16·(N + 1) + 32 bytes per event of target i); targets are solved in order and freed, and the β candidates run
one after another, so the peak is

    max_i [ 8(N + 1) Σ_{k ≥ i} M_k + (16(N + 1) + 32) M_i ] + a fixed ~16 MB (one chunk of states, the solver)

whatever the grid. The stream itself (16 bytes per event) is not counted: it exists before the fit.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from .events import EventStream

__all__ = ["available_memory", "fit_memory_estimate", "memory_warning"]

#: what the fit holds besides its per-event arrays: chunks of recursion states and queries, the solver's vectors
FIXED_BYTES = 16 * 2**20
#: warn when the estimate is more than this share of the memory available now
WARN_SHARE = 0.5


def fit_memory_estimate(stream: EventStream) -> int:
    """Peak bytes :func:`~uncertainty_lab.hawkes.fit_hawkes` adds to the process for ``stream`` (exponential-family
    kernels; any β grid), by the formula in this module's docstring."""
    counts = np.bincount(stream.nodes, minlength=stream.n_nodes).astype(float)
    row = 8.0 * (stream.n_nodes + 1)
    held = np.cumsum(counts[::-1])[::-1] * row  # design matrices of targets i, i+1, … while target i is solved
    return int(np.max(held + counts * (2 * row + 32), initial=0.0)) + FIXED_BYTES


def available_memory() -> int | None:
    """Bytes the system can give a process now (Linux ``MemAvailable``, else free physical pages), or None."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, OSError, ValueError):
        return None


def memory_warning(stream: EventStream, available: int | None = None) -> str | None:
    """A warning text when the fit's estimated peak is more than WARN_SHARE of the ``available`` bytes (default: what
    the system has free now), with how to lower it; None otherwise."""
    need = fit_memory_estimate(stream)
    free = available_memory() if available is None else available
    if free is None or need <= WARN_SHARE * free:
        return None
    gb = 2.0**30
    return (
        f"fit_hawkes will need about {need / gb:.1f} GB of memory for {stream.n_events} events on {stream.n_nodes} "
        f"nodes (8·(N+1) = {8 * (stream.n_nodes + 1)} bytes per event for the per-target design matrices, plus the "
        f"largest target's solver temporaries), and {free / gb:.1f} GB are available. To lower it, fit a shorter "
        "window (stream.split(t)[1] keeps the events after t) or fewer nodes; fewer beta values make the fit faster "
        "but not smaller (candidates are fitted one at a time)"
    )
