"""Excitation kernels, registered as ``kernels`` plugins.

A kernel holds the *shape* s(u) of the excitation; the amplitudes live in the model's matrix α, indexed
``alpha[j, i]`` = from source j to target i, so that φ_{j,i}(u) = α_{j,i} s(u) and the branching matrix is
G_{j,i} = ∫_0^∞ φ_{j,i} = α_{j,i} ‖s‖₁. ``value(u, alpha)`` returns α·s(u) (α = 1 gives the shape itself),
``integral(u, alpha)`` returns α ∫_0^u s, ``l1_norm(alpha)`` returns α ‖s‖₁; all are vectorised with numpy
broadcasting and s(u) = 0 for u < 0.

Optional extras the engine uses when present:

- ``sample_delays(rng, size)``: draws from the normalised density s / ‖s‖₁ (branching simulation);
  without it, :func:`sample_delays` inverts ``integral`` numerically.
- ``decreasing = True``: s is non-increasing, so the intensity only decays between events and Ogata
  thinning may use the current intensity as its bound.
- ``components()``: (weights w_k, decays β_k) when s(u) = Σ_k w_k e^{-β_k u}; then sums over the history
  use the O(M·N) recursion R_j(m) = e^{-β(τ_m − τ_{m−1})}(R_j(m−1) + 1[n_{m−1} = j]) instead of O(M²) pairs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .errors import HawkesError

__all__ = [
    "ExponentialKernel",
    "PowerLawKernel",
    "SumOfExponentialsKernel",
    "as_kernel",
    "sample_delays",
]


def _positive(value: Any, name: str, kernel: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise HawkesError(f"{kernel} kernel: {name} must be a number, got {value!r}") from None
    if not (math.isfinite(x) and x > 0):
        raise HawkesError(f"{kernel} kernel: {name} must be a finite number > 0, got {value!r}")
    return x


def _u(u: Any) -> tuple[np.ndarray, np.ndarray]:
    u = np.asarray(u, dtype=float)
    pos = u >= 0
    return np.where(pos, u, 0.0), pos


def _parse_floats(value: Any, name: str) -> np.ndarray:
    if isinstance(value, str):
        parts = [p for p in value.replace(";", ",").replace(" ", ",").split(",") if p]
        try:
            arr = np.array([float(p) for p in parts], dtype=float)
        except ValueError:
            raise HawkesError(
                f"sum_of_exponentials kernel: {name} must be comma-separated numbers, e.g. '0.5, 2, 8'; "
                f"got {value!r}"
            ) from None
    else:
        arr = np.atleast_1d(np.asarray(value, dtype=float))
    return arr


@dataclass
class ExponentialKernel:
    """φ_{j,i}(u) = α_{j,i} e^{-βu}: the paper's kernel, one decay β shared by all pairs; G = α/β."""

    name: ClassVar[str] = "exponential"
    summary: ClassVar[str] = "φ(u) = α e^{-βu}; one decay β for all node pairs; G = α/β (the paper's)"
    reference: ClassVar[str] = "HawkesLLM (Deng, Ye, Xie 2026) §2.2"
    decreasing: ClassVar[bool] = True

    beta: float = field(
        default=1.0,
        metadata={"min": 0.001, "max": 100.0, "step": 0.01, "help": "decay rate β (1 / time unit); larger = shorter memory"},
    )

    def __post_init__(self):
        self.beta = _positive(self.beta, "beta", "exponential")

    def value(self, u: Any, alpha: Any = 1.0) -> np.ndarray:
        """α e^{-βu} for u ≥ 0, else 0."""
        v, pos = _u(u)
        return np.asarray(alpha) * np.where(pos, np.exp(-self.beta * v), 0.0)

    def integral(self, u: Any, alpha: Any = 1.0) -> np.ndarray:
        """∫_0^u α e^{-βs} ds = α (1 − e^{-βu}) / β."""
        v, _ = _u(u)
        return np.asarray(alpha) * (-np.expm1(-self.beta * v) / self.beta)

    def l1_norm(self, alpha: Any = 1.0) -> Any:
        """∫_0^∞ α e^{-βu} du = α / β."""
        return np.asarray(alpha) / self.beta if np.ndim(alpha) else float(alpha) / self.beta

    def sample_delays(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """Draws from β e^{-βu} (exponential with rate β)."""
        return rng.standard_exponential(size) / self.beta

    def components(self) -> tuple[np.ndarray, np.ndarray]:
        """(weights, decays) of s(u) = Σ_k w_k e^{-β_k u}: ([1], [β])."""
        return np.array([1.0]), np.array([self.beta])


@dataclass
class SumOfExponentialsKernel:
    """φ_{j,i}(u) = α_{j,i} Σ_k w_k e^{-β_k u} with fixed decays β_k and weights w_k (default 1/K each).

    Several time scales (minutes and days) under one amplitude matrix α; ‖s‖₁ = Σ_k w_k / β_k.
    """

    name: ClassVar[str] = "sum_of_exponentials"
    summary: ClassVar[str] = "φ(u) = α Σ_k w_k e^{-β_k u}: several fixed decays (time scales) under one α"
    reference: ClassVar[str] = "tick's HawkesSumExpKern (with shared amplitudes)"
    decreasing: ClassVar[bool] = True

    decays: str = field(
        default="0.5, 2, 8", metadata={"help": "fixed decay rates β_k, comma-separated (or a list in code)"}
    )
    weights: str = field(
        default="", metadata={"help": "weights w_k, comma-separated; empty = 1/K each"}
    )
    _decays: np.ndarray = field(init=False, repr=False, compare=False, default=None)
    _weights: np.ndarray = field(init=False, repr=False, compare=False, default=None)

    def __post_init__(self):
        decays = _parse_floats(self.decays, "decays")
        if decays.size == 0 or not np.all(np.isfinite(decays)) or np.any(decays <= 0):
            raise HawkesError(
                f"sum_of_exponentials kernel: decays must be one or more finite numbers > 0, got {self.decays!r}"
            )
        empty = isinstance(self.weights, str) and not self.weights.strip()
        weights = np.full(decays.size, 1.0 / decays.size) if empty else _parse_floats(self.weights, "weights")
        if weights.shape != decays.shape:
            raise HawkesError(
                f"sum_of_exponentials kernel: weights has {weights.size} values but decays has {decays.size}; "
                "give one weight per decay (or none for equal weights)"
            )
        if not np.all(np.isfinite(weights)) or np.any(weights < 0) or weights.sum() <= 0:
            raise HawkesError(
                f"sum_of_exponentials kernel: weights must be finite, >= 0 and not all 0, got {self.weights!r}"
            )
        self._decays, self._weights = decays, weights

    def _shape(self, v: np.ndarray) -> np.ndarray:
        return np.tensordot(np.exp(-np.multiply.outer(v, self._decays)), self._weights, axes=([-1], [0]))

    def value(self, u: Any, alpha: Any = 1.0) -> np.ndarray:
        """α Σ_k w_k e^{-β_k u} for u ≥ 0, else 0."""
        v, pos = _u(u)
        return np.asarray(alpha) * np.where(pos, self._shape(v), 0.0)

    def integral(self, u: Any, alpha: Any = 1.0) -> np.ndarray:
        """α Σ_k w_k (1 − e^{-β_k u}) / β_k."""
        v, _ = _u(u)
        terms = -np.expm1(-np.multiply.outer(v, self._decays)) / self._decays
        return np.asarray(alpha) * np.tensordot(terms, self._weights, axes=([-1], [0]))

    def l1_norm(self, alpha: Any = 1.0) -> Any:
        """α Σ_k w_k / β_k."""
        norm = float(np.sum(self._weights / self._decays))
        return np.asarray(alpha) * norm if np.ndim(alpha) else float(alpha) * norm

    def sample_delays(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """A mixture: component k with probability (w_k/β_k) / Σ (w/β), then Exp(β_k)."""
        mass = self._weights / self._decays
        k = rng.choice(self._decays.size, size=size, p=mass / mass.sum())
        return rng.standard_exponential(size) / self._decays[k]

    def components(self) -> tuple[np.ndarray, np.ndarray]:
        """(weights w_k, decays β_k)."""
        return self._weights.copy(), self._decays.copy()


@dataclass
class PowerLawKernel:
    """φ_{j,i}(u) = α_{j,i} (u + c)^{-(1+θ)}: long memory; ‖s‖₁ = c^{-θ} / θ.

    Heavy-tailed (Omori-like) excitation; the normalised density is a Lomax law, sampled by inverse CDF
    u = c ((1 − U)^{-1/θ} − 1).
    """

    name: ClassVar[str] = "power_law"
    summary: ClassVar[str] = "φ(u) = α (u + c)^{-(1+θ)}: long, heavy-tailed memory; G = α c^{-θ}/θ"
    reference: ClassVar[str] = "Omori-type kernel (e.g. Ogata 1988, ETAS)"
    decreasing: ClassVar[bool] = True

    c: float = field(default=1.0, metadata={"min": 0.001, "max": 100.0, "step": 0.01, "help": "offset c > 0 (time unit)"})
    theta: float = field(
        default=1.0, metadata={"min": 0.01, "max": 10.0, "step": 0.01, "help": "tail exponent θ > 0; smaller = longer memory"}
    )

    def __post_init__(self):
        self.c = _positive(self.c, "c", "power_law")
        self.theta = _positive(self.theta, "theta", "power_law")

    def value(self, u: Any, alpha: Any = 1.0) -> np.ndarray:
        """α (u + c)^{-(1+θ)} for u ≥ 0, else 0."""
        v, pos = _u(u)
        return np.asarray(alpha) * np.where(pos, (v + self.c) ** (-(1.0 + self.theta)), 0.0)

    def integral(self, u: Any, alpha: Any = 1.0) -> np.ndarray:
        """α (c^{-θ} − (u + c)^{-θ}) / θ."""
        v, _ = _u(u)
        c, th = self.c, self.theta
        # c^{-θ}(1 − (1 + u/c)^{-θ}) = −c^{-θ} expm1(−θ log1p(u/c)): no cancellation for small u
        return np.asarray(alpha) * (-(c ** -th) * np.expm1(-th * np.log1p(v / c)) / th)

    def l1_norm(self, alpha: Any = 1.0) -> Any:
        """α c^{-θ} / θ."""
        norm = self.c ** (-self.theta) / self.theta
        return np.asarray(alpha) * norm if np.ndim(alpha) else float(alpha) * norm

    def sample_delays(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """Inverse CDF of θ c^θ (u + c)^{-(1+θ)}: u = c ((1 − U)^{-1/θ} − 1)."""
        v = 1.0 - rng.random(size)  # in (0, 1]
        return self.c * np.expm1(-np.log(v) / self.theta)


def as_kernel(kernel: Any, **params: Any) -> Any:
    """A kernel instance from an instance, a plugin class, or a registered name (with ``params``)."""
    from .. import registry

    if isinstance(kernel, str):
        return registry.create("kernels", kernel, **params)
    if isinstance(kernel, type):
        return kernel(**params)
    missing = [m for m in ("value", "integral", "l1_norm") if not callable(getattr(kernel, m, None))]
    if missing:
        raise HawkesError(
            f"kernel must be a kernels plugin name (e.g. 'exponential') or an object with value, integral and "
            f"l1_norm; {type(kernel).__name__} lacks {', '.join(missing)}"
        )
    if params:
        raise HawkesError("kernel parameters can only be given with a kernel name or class, not an instance")
    return kernel


def sample_delays(kernel: Any, rng: np.random.Generator, size: int) -> np.ndarray:
    """Delays drawn from the normalised kernel s / ‖s‖₁: the kernel's own sampler, else inverse CDF of
    ``integral`` by vectorised bisection (for a student's plugin that defines only the protocol)."""
    own = getattr(kernel, "sample_delays", None)
    if callable(own):
        return np.asarray(own(rng, size), dtype=float)
    total = float(kernel.l1_norm(1.0))
    if not (math.isfinite(total) and total > 0):
        raise HawkesError(f"cannot sample delays of {kernel!r}: its L1 norm is {total}")
    target = rng.random(size) * total
    hi = np.ones(size)
    for _ in range(200):  # grow the bracket until integral(hi) >= target
        short = np.asarray(kernel.integral(hi)) < target
        if not short.any():
            break
        hi[short] *= 2.0
    lo = np.zeros(size)
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        below = np.asarray(kernel.integral(mid)) < target
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    return 0.5 * (lo + hi)
