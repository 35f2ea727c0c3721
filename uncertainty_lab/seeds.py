"""Seed derivation: one integer seed per purpose, from the run's seed and the keys that name the purpose.

Every stochastic step of the labs takes its seed from here, so a unit of work (a cascade step, a sample, a
question, a search step) draws the same numbers whether it runs first or last, alone or resumed:

    derive_seed(seed, *keys) = SeedSequence([seed, *keys]).generate_state(1, uint32)[0] & 0x7FFFFFFF

a non-negative 31-bit integer (what every language-model backend accepts). String keys enter as their CRC-32.
"""

from __future__ import annotations

import zlib

import numpy as np

__all__ = ["derive_rng", "derive_seed"]


def _entropy(keys: tuple[int | str, ...]) -> list[int]:
    out = []
    for k in keys:
        if isinstance(k, str):
            out.append(zlib.crc32(k.encode("utf-8")))
        elif isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 0:
            raise ValueError(f"seed keys must be non-negative integers or strings, got {k!r}")
        else:
            out.append(int(k))
    return out


def derive_seed(*keys: int | str) -> int:
    """A seed in [0, 2^31) for the purpose named by ``keys`` (e.g. ``derive_seed(seed, step, 2)``)."""
    return int(np.random.SeedSequence(_entropy(keys)).generate_state(1, np.uint32)[0] & 0x7FFFFFFF)


def derive_rng(*keys: int | str) -> np.random.Generator:
    """A numpy Generator for the purpose named by ``keys`` (``default_rng(SeedSequence(keys))``)."""
    return np.random.default_rng(_entropy(keys))
