"""A ``kernels`` plugin: the triangular excitation kernel.

Protocol (see ``uncertainty_lab.hawkes.kernels``): a kernel holds the *shape* s(u) of the excitation; the
amplitudes α live in the model (``alpha[j, i]`` = from source j to target i). ``value(u, alpha)`` returns
α·s(u), ``integral(u, alpha)`` returns α ∫_0^u s, ``l1_norm(alpha)`` returns α ‖s‖₁; all vectorised with
numpy broadcasting, and s(u) = 0 for u < 0. Optional extras the engine uses when present:
``sample_delays(rng, size)`` (draws from s / ‖s‖₁) and ``decreasing = True`` (s never increases).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from uncertainty_lab.contracts import HawkesError


@dataclass
class TriangularKernel:
    """φ(u) = α max(0, 1 − u/w): excitation that falls linearly to zero at u = w and stays there.

    ∫_0^u s = u − u²/(2w) for 0 ≤ u ≤ w, and w/2 after; ‖s‖₁ = w/2, so the branching matrix is G = α w/2.
    A finite memory: an event older than w excites nothing (unlike the exponential, whose tail never ends).
    """

    name: ClassVar[str] = "triangular"
    summary: ClassVar[str] = "φ(u) = α max(0, 1 − u/w): linear decay to zero at u = w; G = α w/2 (template)"
    reference: ClassVar[str] = "uncertainty-lab plugin template"
    decreasing: ClassVar[bool] = True

    width: float = field(
        default=2.0,
        metadata={"min": 0.01, "max": 100.0, "step": 0.01, "help": "w: the delay after which an event excites nothing"},
    )

    def __post_init__(self):
        ok = isinstance(self.width, (int, float)) and not isinstance(self.width, bool)
        if not (ok and math.isfinite(self.width) and self.width > 0):
            raise HawkesError(f"triangular kernel: width must be a finite number > 0, got {self.width!r}")
        self.width = float(self.width)

    def value(self, u: Any, alpha: Any = 1.0) -> np.ndarray:
        """α max(0, 1 − u/w) for u ≥ 0, else 0."""
        u = np.asarray(u, dtype=float)
        s = np.where(u >= 0, np.clip(1.0 - u / self.width, 0.0, None), 0.0)
        return np.asarray(alpha) * s

    def integral(self, u: Any, alpha: Any = 1.0) -> np.ndarray:
        """α ∫_0^u s = α (v − v²/(2w)) with v = clip(u, 0, w)."""
        v = np.clip(np.asarray(u, dtype=float), 0.0, self.width)
        return np.asarray(alpha) * (v - v * v / (2.0 * self.width))

    def l1_norm(self, alpha: Any = 1.0) -> Any:
        """α w / 2."""
        norm = self.width / 2.0
        return np.asarray(alpha) * norm if np.ndim(alpha) else float(alpha) * norm

    def sample_delays(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """Inverse CDF of the density (2/w)(1 − u/w) on [0, w]: F(u) = 1 − (1 − u/w)², so u = w (1 − √(1 − U))."""
        return self.width * (1.0 - np.sqrt(1.0 - rng.random(size)))
