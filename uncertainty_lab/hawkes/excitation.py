"""Sums of a kernel over a history — the workhorse behind intensity, compensator and likelihood.

For history events (τ_l, n_l) and query times t, with the kernel's shape s (φ_{j,i} = α_{j,i} s):

- ``excitation``:            E_j(t) = Σ_{τ_l < t, n_l = j} s(t − τ_l)        so λ_i(t) = μ_i + Σ_j α_{j,i} E_j(t)
- ``integrated_excitation``: I_j(t) = Σ_{τ_l < t, n_l = j} ∫_0^{t−τ_l} s       so Λ_i(t) = μ_i t + Σ_j α_{j,i} I_j(t)
- ``total_integrals``:       C_j = Σ_{n_l = j} ∫_0^{T−τ_l} s                   (the compensator at the horizon)

Exponential-family kernels (``components()`` = weights w_k, decays β_k) use the paper's recursion
R_j(m) = e^{-β(τ_m − τ_{m−1})}(R_j(m−1) + 1[n_{m−1} = j]), O(M·N) per decay, evaluated in vectorised blocks
(a cumulative sum of e^{β(τ − t_ref)} within a block, rescaled, with the state carried between blocks). The states
are streamed (:func:`exp_terms`): a chunk of ~_BLOCK events is turned into the sums at the queries it serves and
dropped, so memory is the output plus one chunk — the fit's per-target ``design_matrices`` are 8·(N + 1) bytes per
event, not M × N states per decay plus copies. Any other kernel sums over pairs in memory-bounded chunks, O(M²).
"""

from __future__ import annotations

import numpy as np

from .errors import HawkesError

__all__ = [
    "design_matrices",
    "event_features",
    "excitation",
    "exp_states",
    "exp_terms",
    "excitation_terms",
    "finite_times",
    "integrated_excitation",
    "total_integrals",
]

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


def _state_blocks(times: np.ndarray, nodes: np.ndarray, n_nodes: int, decay: float):
    """Yield (start, z) with z[r] = S[start + r] = Σ_{m ≤ start + r, n_m = j} e^{-β(τ_{start+r} − τ_m)}, block by
    block (a block spans at most _EXP_SPAN/β in time and _BLOCK events), the state carried between blocks."""
    m_total = times.size
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
        yield start, z
        carry, t_prev = z[-1].copy(), tb[-1]
        start = end


def _state_chunks(times: np.ndarray, nodes: np.ndarray, n_nodes: int, decay: float):
    """The blocks of :func:`_state_blocks` joined into chunks of at least _BLOCK events (the last may be shorter):
    with a large β a block holds a handful of events, and per-chunk work should not run per block."""
    pending, first, rows = [], 0, 0
    for start, z in _state_blocks(times, nodes, n_nodes, decay):
        if not pending:
            first = start
        pending.append(z)
        rows += z.shape[0]
        if rows >= _BLOCK:
            yield first, pending[0] if len(pending) == 1 else np.concatenate(pending)
            pending, rows = [], 0
    if pending:
        yield first, pending[0] if len(pending) == 1 else np.concatenate(pending)


def exp_states(times: np.ndarray, nodes: np.ndarray, n_nodes: int, decay: float) -> np.ndarray:
    """S[l, j] = Σ_{m ≤ l, n_m = j} e^{-β(τ_l − τ_m)}: the recursion's state just after event l (shape (M, N))."""
    out = np.empty((times.size, n_nodes))
    for start, z in _state_blocks(times, nodes, n_nodes, decay):
        out[start:start + z.shape[0]] = z
    return out


def exp_terms(times: np.ndarray, nodes: np.ndarray, n_nodes: int, weight: float, decay: float, query: np.ndarray,
              right: bool = False):
    """One decay's share of E_j(t) at **sorted** query times, a chunk of the history at a time: yields
    (lo, hi, term) with term[r, j] = w S[p, j] e^{-β(t − τ_p)} for t = query[lo + r] and p its last history
    event before t (at or before with ``right``). Queries with no history before them are in no chunk (their
    term is 0). Memory: one chunk of states and its queries, never all M states."""
    side = "right" if right else "left"
    other = "left" if right else "right"
    m_total = times.size
    for start, z in _state_chunks(times, nodes, n_nodes, decay):
        end = start + z.shape[0]
        # p ≥ start ⟺ τ_start < t (≤ t with right); p < end ⟺ not so for τ_end
        lo = int(np.searchsorted(query, times[start], side=other))
        hi = query.size if end == m_total else int(np.searchsorted(query, times[end], side=other))
        if hi > lo:
            q = query[lo:hi]
            p = np.searchsorted(times, q, side=side) - 1
            yield lo, hi, weight * z[p - start] * np.exp(-decay * (q - times[p]))[:, None]


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


def excitation(kernel, times, nodes, n_nodes, query, *, right=False) -> np.ndarray:
    """E_j(t) = Σ_{τ_l < t (≤ t if right), n_l = j} s(t − τ_l), shape (len(query), N).

    Exponential families sum :func:`exp_terms` over their decays: memory is the output plus one chunk.
    """
    query = finite_times(query)
    comp = _components(kernel)
    if comp is None:
        return _pairwise(lambda u: kernel.value(u), times, nodes, n_nodes, query, right)
    out = np.zeros((query.size, n_nodes))
    if times.size == 0:
        return out
    order = None if np.all(query[1:] >= query[:-1]) else np.argsort(query, kind="stable")
    q = query if order is None else query[order]
    for w, d in zip(*comp, strict=True):
        for lo, hi, term in exp_terms(times, nodes, n_nodes, w, d, q, right):
            out[slice(lo, hi) if order is None else order[lo:hi]] += term
    return out


def integrated_excitation(kernel, times, nodes, n_nodes, query, *, right=False) -> np.ndarray:
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
    for w, d in zip(weights, decays, strict=True):
        single = excitation(_Exp(d), times, nodes, n_nodes, query, right=right)
        out += w * (counts - single) / d
    return out


class _Exp:
    """A unit exponential shape, used to reuse one decay's states."""

    def __init__(self, decay):
        self.decay = decay

    def components(self):
        return np.array([1.0]), np.array([self.decay])


def total_integrals(kernel, times, nodes, n_nodes, end_time) -> np.ndarray:
    """C_j = Σ_{n_l = j} ∫_0^{T − τ_l} s, shape (N,); the compensator at T is μ_i T + Σ_j α_{j,i} C_j. Summed
    _BLOCK events at a time in event order (``np.add.at`` adds in the same sequence as one ``np.bincount``)."""
    out = np.zeros(n_nodes)
    for start in range(0, times.size, _BLOCK):
        vals = np.asarray(kernel.integral(end_time - times[start:start + _BLOCK]), dtype=float)
        np.add.at(out, nodes[start:start + _BLOCK], vals)
    return out


def event_features(kernel, times, nodes, n_nodes) -> np.ndarray:
    """F[m, j] = E_j(τ_m): the excitation from node j felt at each event (strictly earlier events only)."""
    return excitation(kernel, times, nodes, n_nodes, times)


def excitation_terms(kernel, times, nodes, n_nodes, query, *, right=False):
    """E at **sorted** query times as additive pieces (lo, hi, term): the pieces covering query r sum to its row of
    :func:`excitation`. Exponential families give one piece per decay and history chunk (memory: one chunk), other
    kernels one piece for all queries."""
    comp = _components(kernel)
    if comp is None:
        yield 0, query.size, _pairwise(lambda u: kernel.value(u), times, nodes, n_nodes, query, right)
        return
    for w, d in zip(*comp, strict=True):
        yield from exp_terms(times, nodes, n_nodes, w, d, query, right)


def design_matrices(kernel, times, nodes, n_nodes, sources) -> list[np.ndarray]:
    """Per target i, X_i = [1, E_j(τ_m) for j in ``sources``] over its events m (n_m = i) in time order, so that
    λ_i(τ_m) = X_i (μ_i, α_{sources,i}): the likelihood's design matrices, written chunk by chunk (the features of
    all M events are never held at once); together 8·(1 + len(sources)) bytes per event. Column-major, the layout
    the per-target solver's products were tuned and checked on (``X[:, cols]`` gives it)."""
    sources = np.asarray(sources, dtype=np.int64)
    out = [np.zeros((int(k), 1 + sources.size), order="F") for k in np.bincount(nodes, minlength=n_nodes)]
    for x in out:
        x[:, 0] = 1.0
    offsets, done = np.zeros(n_nodes, dtype=np.int64), 0
    for lo, hi, term in excitation_terms(kernel, times, nodes, n_nodes, times):
        if lo < done:  # the next decay's pass starts over, adding its share in place
            offsets[:], done = 0, 0
        offsets += np.bincount(nodes[done:lo], minlength=n_nodes)
        _scatter(out, offsets, nodes[lo:hi], term, sources)
        done = hi
    return out


def _scatter(out: list[np.ndarray], offsets: np.ndarray, chunk_nodes: np.ndarray, term: np.ndarray,
             sources: np.ndarray) -> None:
    """Add a chunk's feature rows to each target's design matrix at its running row offset (advanced in place)."""
    order = np.argsort(chunk_nodes, kind="stable")
    counts = np.bincount(chunk_nodes, minlength=len(out))
    rows = term[np.ix_(order, sources)]
    pos = 0
    for i in np.flatnonzero(counts):
        k, o = int(counts[i]), int(offsets[i])
        out[i][o:o + k, 1:] += rows[pos:pos + k]
        pos += k
    offsets += counts
