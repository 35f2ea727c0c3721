"""Sums of a kernel over a history — the workhorse behind intensity, compensator and likelihood.

For history events (τ_l, n_l) and query times t, with the kernel's shape s (φ_{j,i} = α_{j,i} s):

- ``excitation``:            E_j(t) = Σ_{τ_l < t, n_l = j} s(t − τ_l)        so λ_i(t) = μ_i + Σ_j α_{j,i} E_j(t)
- ``integrated_excitation``: I_j(t) = Σ_{τ_l < t, n_l = j} ∫_0^{t−τ_l} s       so Λ_i(t) = μ_i t + Σ_j α_{j,i} I_j(t)
- ``total_integrals``:       C_j = Σ_{n_l = j} ∫_0^{T−τ_l} s                   (the compensator at the horizon)

Exponential-family kernels (``components()`` = weights w_k, decays β_k) use the paper's recursion
R_j(m) = e^{-β(τ_m − τ_{m−1})}(R_j(m−1) + 1[n_{m−1} = j]), O(M·N) per decay, evaluated in vectorised blocks
(a cumulative sum of e^{β(τ − t_ref)} within a block, rescaled, with the state carried between blocks); any
other kernel sums over pairs in memory-bounded chunks, O(M²).
"""

from __future__ import annotations

import numpy as np

from .errors import HawkesError

__all__ = ["excitation", "exp_states", "finite_times", "integrated_excitation", "total_integrals"]

#: largest β·(t − t_ref) inside one block: e^600 ≈ 1e260 stays finite, arguments keep ~1e-13 accuracy
_EXP_SPAN = 600.0
#: most events per block (bounds memory to _BLOCK × n_nodes floats)
_BLOCK = 1 << 16
#: pairs per chunk for the O(M²) path
_PAIRS = 1 << 22


def _components(kernel):
    comp = getattr(kernel, "components", None)
    if callable(comp):
        w, d = comp()
        return np.asarray(w, dtype=float), np.asarray(d, dtype=float)
    return None


def finite_times(t, name: str = "query") -> np.ndarray:
    """``t`` as a float array whose every value is a finite time; a NaN or ±inf is an error naming ``name`` and
    the first bad position (a NaN would otherwise turn every intensity into NaN without a word)."""
    try:
        q = np.asarray(t, dtype=float)
    except (TypeError, ValueError):
        raise HawkesError(f"{name} must be a time or an array of times, got {t!r}") from None
    bad = ~np.isfinite(q)
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        where = "" if q.ndim == 0 else f" at index {first[0] if q.ndim == 1 else first}"
        raise HawkesError(f"{name} must be finite times, got {float(q[bad].ravel()[0])}{where}")
    return q


def exp_states(times: np.ndarray, nodes: np.ndarray, n_nodes: int, decay: float) -> np.ndarray:
    """S[l, j] = Σ_{m ≤ l, n_m = j} e^{-β(τ_l − τ_m)}: the recursion's state just after event l (shape (M, N))."""
    m_total = times.size
    out = np.empty((m_total, n_nodes))
    start = 0
    carry = np.zeros(n_nodes)
    t_prev = times[0] if m_total else 0.0
    while start < m_total:
        t0 = times[start]
        end = int(np.searchsorted(times, t0 + _EXP_SPAN / decay, side="right"))
        end = max(start + 1, min(end, start + _BLOCK))
        tb = times[start:end]
        z = np.zeros((end - start, n_nodes))
        z[np.arange(end - start), nodes[start:end]] = np.exp(decay * (tb - t0))
        np.cumsum(z, axis=0, out=z)
        if start:
            z += carry * np.exp(-decay * (t0 - t_prev))
        z *= np.exp(-decay * (tb - t0))[:, None]
        out[start:end] = z
        carry, t_prev = z[-1], tb[-1]
        start = end
    return out


def _last_before(times: np.ndarray, query: np.ndarray, right: bool) -> np.ndarray:
    return np.searchsorted(times, query, side="right" if right else "left") - 1


def _onehot(nodes: np.ndarray, n_nodes: int) -> np.ndarray:
    z = np.zeros((nodes.size, n_nodes))
    z[np.arange(nodes.size), nodes] = 1.0
    return z


def _pairwise(fn, times, nodes, n_nodes, query, right):
    """Σ over history events before each query of fn(t − τ_l), grouped by source node; chunked O(Q·M)."""
    out = np.zeros((query.size, n_nodes))
    if times.size == 0 or query.size == 0:
        return out
    order = np.argsort(query, kind="stable")
    q_sorted = query[order]
    last = _last_before(times, q_sorted, right)
    onehot = _onehot(nodes, n_nodes)
    start = 0
    while start < q_sorted.size:
        # the largest chunk [start, end) whose (queries × history before its last query) fits _PAIRS
        cost = (np.arange(1, q_sorted.size - start + 1)) * (last[start:] + 1.0)
        end = start + max(1, int(np.searchsorted(cost, _PAIRS, side="right")))
        h = int(last[end - 1]) + 1
        if h > 0:
            u = q_sorted[start:end, None] - times[None, :h]
            mask = (u >= 0) if right else (u > 0)
            vals = np.where(mask, fn(np.where(mask, u, 0.0)), 0.0)
            out[order[start:end]] = vals @ onehot[:h]
        start = end
    return out


def excitation(kernel, times, nodes, n_nodes, query, *, right=False, states=None) -> np.ndarray:
    """E_j(t) = Σ_{τ_l < t (≤ t if right), n_l = j} s(t − τ_l), shape (len(query), N).

    ``states`` may pass precomputed :func:`exp_states` per decay (a list) to avoid recomputing them.
    """
    query = finite_times(query)
    comp = _components(kernel)
    if comp is None:
        return _pairwise(lambda u: kernel.value(u), times, nodes, n_nodes, query, right)
    weights, decays = comp
    out = np.zeros((query.size, n_nodes))
    if times.size == 0:
        return out
    p = _last_before(times, query, right)
    has = p >= 0
    pc = np.where(has, p, 0)
    dt = np.where(has, query - times[pc], 0.0)
    for k, (w, d) in enumerate(zip(weights, decays, strict=True)):
        s = states[k] if states is not None else exp_states(times, nodes, n_nodes, d)
        out += w * s[pc] * np.where(has, np.exp(-d * dt), 0.0)[:, None]
    return out


def integrated_excitation(kernel, times, nodes, n_nodes, query, *, right=False, states=None) -> np.ndarray:
    """I_j(t) = Σ_{τ_l < t, n_l = j} ∫_0^{t−τ_l} s, shape (len(query), N); for exponentials
    Σ_k w_k (count_j(t) − R_{j,k}(t)) / β_k."""
    query = finite_times(query)
    comp = _components(kernel)
    if comp is None:
        return _pairwise(lambda u: kernel.integral(u), times, nodes, n_nodes, query, right)
    weights, decays = comp
    counts = np.zeros((query.size, n_nodes))
    side = "right" if right else "left"
    for j in range(n_nodes):
        counts[:, j] = np.searchsorted(times[nodes == j], query, side=side)
    out = np.zeros((query.size, n_nodes))
    if times.size == 0:
        return out
    for k, (w, d) in enumerate(zip(weights, decays, strict=True)):
        single = excitation(
            _Exp(d), times, nodes, n_nodes, query, right=right,
            states=None if states is None else [states[k]],
        )
        out += w * (counts - single) / d
    return out


class _Exp:
    """A unit exponential shape, used to reuse one decay's states."""

    def __init__(self, decay):
        self.decay = decay

    def components(self):
        return np.array([1.0]), np.array([self.decay])


def total_integrals(kernel, times, nodes, n_nodes, end_time) -> np.ndarray:
    """C_j = Σ_{n_l = j} ∫_0^{T − τ_l} s, shape (N,); the compensator at T is μ_i T + Σ_j α_{j,i} C_j."""
    if times.size == 0:
        return np.zeros(n_nodes)
    vals = np.asarray(kernel.integral(end_time - times), dtype=float)
    return np.bincount(nodes, weights=vals, minlength=n_nodes)


def event_features(kernel, times, nodes, n_nodes) -> np.ndarray:
    """F[m, j] = E_j(τ_m): the excitation from node j felt at each event (strictly earlier events only)."""
    comp = _components(kernel)
    if comp is None:
        return _pairwise(lambda u: kernel.value(u), times, nodes, n_nodes, times, False)
    weights, decays = comp
    return excitation(
        kernel, times, nodes, n_nodes, times,
        states=[exp_states(times, nodes, n_nodes, d) for d in decays],
    )
