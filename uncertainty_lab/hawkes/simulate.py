"""Simulation: Ogata thinning (any non-increasing kernel) and the cluster/branching construction.

Thinning (paper §2.3): from the current time s with bound λ̄ = Σ_i λ_i(s⁺), propose s ← s + Exp(λ̄), accept
with probability Σ_i λ_i(s)/λ̄ and pick node i ∝ λ_i(s); after a rejection λ̄ ← Σ_i λ_i(s). The bound is
valid because the intensity only decays between events when the kernel shape is non-increasing.

Branching: immigrants at node i form a Poisson(μ_i T) sample of uniform times on [0, T]; an event at node j
has Poisson(G_{j,i}) children at node i, each delayed by a draw from the normalised kernel s/‖s‖₁; repeat
for each generation (vectorised with numpy) until no child falls inside [0, T].
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .errors import HawkesError, UnstableModelError
from .events import EventStream
from .excitation import _components, excitation
from .history import as_history, as_rng
from .kernels import sample_delays
from .validation import tie_pairs

__all__ = ["exponential_decays", "next_event", "next_event_from_state", "simulate"]

#: draws are taken from the generator in batches: this many standard exponentials, then this many uniforms
_BATCH = 4096
#: thinning with one decay runs on Python floats up to this many nodes: 7x numpy's speed at N <= 10, 2x at 64,
#: even at 128; numpy wins from ~150 nodes (benchmarks/RESULTS.md)
_SCALAR_NODES = 128


class _Draws:
    """Pre-drawn standard exponentials and uniforms, handed out one at a time (fast in a Python loop)."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng
        self._e: list[float] = []
        self._u: list[float] = []

    def pair(self) -> tuple[float, float]:
        if not self._e:
            self._e = self.rng.standard_exponential(_BATCH).tolist()[::-1]
            self._u = self.rng.random(_BATCH).tolist()[::-1]
        return self._e.pop(), self._u.pop()


def _check_thinnable(model: Any) -> None:
    if not getattr(model.kernel, "decreasing", False):
        raise HawkesError(
            f"thinning needs a non-increasing kernel (so the current intensity bounds the future one), and "
            f"{type(model.kernel).__name__} does not declare decreasing = True; use method='branching' "
            "(it needs only the kernel's L1 norm and delays) or declare decreasing = True if it is"
        )


def _excitation_at(weights: np.ndarray, state: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """E[k, i] = w_k Σ_j state[k, j] α_{j,i}: the per-target excitation per decay from the per-source state."""
    exc = np.zeros((weights.size, alpha.shape[1]))
    for k, w in enumerate(weights):
        exc[k] = w * (state[k] @ alpha)
    return exc


def _thin_exponential(model, times, nodes, s, end, max_events, draws):
    """Ogata thinning for s(u) = Σ_k w_k e^{-β_k u} from a history: its per-decay state at s⁺, then
    :func:`_thin_scalar` (one decay, a few nodes) or :func:`_thin_from_excitation`."""
    weights, decays = _components(model.kernel)
    n_nodes = model.n_nodes
    state = np.zeros((decays.size, n_nodes))
    if times.size:
        for k, d in enumerate(decays):
            state[k] = excitation(_Single(d), times, nodes, n_nodes, [s], right=True)[0]
    exc = _excitation_at(weights, state, model.alpha)
    if decays.size == 1 and n_nodes <= _SCALAR_NODES:
        return _thin_scalar(model.mu, weights[0] * model.alpha, float(decays[0]), exc[0], s, end, max_events, draws)
    return _thin_from_excitation(model, exc, s, end, max_events, draws)


def _thin_from_excitation(model, exc, s, end, max_events, draws):
    """Ogata thinning for a sum of exponentials from ``exc`` (the per-decay, per-target excitation at s⁺): the
    total intensity is tracked as scalars per decay, the per-node vector only at accepted proposals (O(N·K) per
    event, O(K) per proposal)."""
    weights, decays = _components(model.kernel)
    mu, alpha = model.mu, model.alpha
    n_nodes = model.n_nodes
    exc = np.array(exc, dtype=float)
    mu_total = float(mu.sum())
    tot_k = exc.sum(axis=1).tolist()
    dec = decays.tolist()
    t_ref = s  # the time at which exc is exact
    out_t: list[float] = []
    out_n: list[int] = []
    bound = mu_total + sum(tot_k)
    while max_events is None or len(out_t) < max_events:
        if bound <= 0.0:
            break
        e, u = draws.pair()
        s = s + e / bound
        if not s <= end:  # also stops at s = inf
            break
        total = mu_total + sum(tk * math.exp(-dk * (s - t_ref)) for tk, dk in zip(tot_k, dec, strict=True))
        d_draw = u * bound
        if d_draw <= total:
            lam = mu + (np.exp(-decays * (s - t_ref)) @ exc if decays.size > 1 else exc[0] * math.exp(-dec[0] * (s - t_ref)))
            node = min(int(np.searchsorted(np.cumsum(lam), d_draw, side="right")), n_nodes - 1)
            exc *= np.exp(-decays * (s - t_ref))[:, None]
            exc += weights[:, None] * alpha[node][None, :]
            t_ref = s
            tot_k = exc.sum(axis=1).tolist()
            out_t.append(s)
            out_n.append(node)
            bound = mu_total + sum(tot_k)
        else:
            bound = total
    return out_t, out_n


def _thin_scalar(mu, jumps, beta, exc, s, end, max_events, draws):
    """:func:`_thin_exponential` for one decay β and a few nodes, on Python floats (numpy's per-call cost
    dominates at small N): the same draws, the same decisions. ``jumps[j, i]`` = w α_{j,i}, ``exc`` = the
    per-target excitation at s⁺."""
    mu_l, rows, e = mu.tolist(), jumps.tolist(), exc.tolist()
    n = len(mu_l)
    mu_total = float(mu.sum())
    tot, t_ref = sum(e), s
    bound = mu_total + tot
    out_t: list[float] = []
    out_n: list[int] = []
    limit = math.inf if max_events is None else max_events
    pair, exp = draws.pair, math.exp
    while len(out_t) < limit and bound > 0.0:
        ee, u = pair()
        s = s + ee / bound
        if not s <= end:
            break
        f = exp(-beta * (s - t_ref))
        total = mu_total + tot * f
        d_draw = u * bound
        if d_draw <= total:
            node, acc = n - 1, 0.0
            for i in range(n):  # the first node whose cumulative intensity passes the draw
                acc += mu_l[i] + e[i] * f
                if acc > d_draw:
                    node = i
                    break
            row = rows[node]
            e = [e[i] * f + row[i] for i in range(n)]
            tot, t_ref = sum(e), s
            out_t.append(s)
            out_n.append(node)
            bound = mu_total + tot
        else:
            bound = total
    return out_t, out_n


class _Single:
    def __init__(self, decay):
        self.decay = decay

    def components(self):
        return np.array([1.0]), np.array([self.decay])


def _thin_general(model, times, nodes, s, end, max_events, draws):
    """Ogata thinning for any non-increasing kernel: the intensity sums over all past events (O(M) per
    proposal)."""
    kernel, mu, alpha = model.kernel, model.mu, model.alpha
    n_nodes = model.n_nodes
    cap = max(64, 2 * times.size)
    ht = np.empty(cap)
    hn = np.empty(cap, dtype=np.int64)
    ht[: times.size], hn[: times.size] = times, nodes
    size = times.size
    row_sums = alpha.sum(axis=1)
    mu_total = float(mu.sum())

    def total_at(x: float, right: bool) -> float:
        if not size:
            return mu_total
        u = x - ht[:size]
        vals = np.asarray(kernel.value(u), dtype=float)
        if not right:
            vals = np.where(u > 0, vals, 0.0)
        return mu_total + float(vals @ row_sums[hn[:size]])

    out_t: list[float] = []
    out_n: list[int] = []
    bound = total_at(s, True)
    while max_events is None or len(out_t) < max_events:
        if bound <= 0.0:
            break
        e, u = draws.pair()
        s = s + e / bound
        if not s <= end:
            break
        total = total_at(s, False)
        d_draw = u * bound
        if d_draw <= total:
            vals = np.asarray(kernel.value(s - ht[:size]), dtype=float) if size else np.zeros(0)
            lam = mu + vals @ alpha[hn[:size]]
            node = min(int(np.searchsorted(np.cumsum(lam), d_draw, side="right")), n_nodes - 1)
            if size == cap:
                cap *= 2
                ht = np.resize(ht, cap)
                hn = np.resize(hn, cap)
            ht[size], hn[size] = s, node
            size += 1
            out_t.append(s)
            out_n.append(node)
            bound = total_at(s, True)
        else:
            bound = total
    return out_t, out_n


def _thin(model, times, nodes, s, end, max_events, rng):
    _check_thinnable(model)
    draws = _Draws(rng)
    if _components(model.kernel) is not None:
        return _thin_exponential(model, times, nodes, s, end, max_events, draws)
    return _thin_general(model, times, nodes, s, end, max_events, draws)


def next_event(model: Any, history: Any, now: float | None, rng: np.random.Generator,
               horizon: float | None = None) -> tuple[float, int] | None:
    """The next (time, node) after ``now`` given ``history`` (see :meth:`HawkesModel.sample_next`)."""
    times, nodes, _ = as_history(history, model.n_nodes)
    if now is None:
        if isinstance(history, EventStream):
            now = history.end_time
        else:
            now = float(times[-1]) if times.size else 0.0
    now = float(now)
    if not math.isfinite(now):
        raise HawkesError(f"now must be a finite time, got {now!r}")
    if times.size and times[-1] > now:
        raise HawkesError(
            f"now={now!r} is before the last history event at {float(times[-1])!r}; the next event is drawn after "
            "the whole history: pass now >= the last event time"
        )
    end = math.inf if horizon is None else float(horizon)
    t, n = _thin(model, times, nodes, now, end, 1, rng)
    return (t[0], n[0]) if t else None


def exponential_decays(model: Any) -> np.ndarray | None:
    """The decays β_k of the model's kernel when it is a non-increasing sum of exponentials Σ_k w_k e^{-β_k u}
    (one row of state per decay for :func:`next_event_from_state`), else None."""
    comp = _components(model.kernel)
    if comp is None or not getattr(model.kernel, "decreasing", False):
        return None
    return comp[1]


def next_event_from_state(model: Any, state: Any, now: float, rng: Any,
                          horizon: float | None = None) -> tuple[float, int] | None:
    """The next (time, node) after ``now`` from the history's per-node state, in O(N·K) however long it is:
    state[k, j] = Σ_{τ_l ≤ now, n_l = j} e^{-β_k (now − τ_l)} for each decay β_k of :func:`exponential_decays`.

    The same Ogata thinning and the same use of the generator as :func:`next_event` (batches of ``_BATCH``
    standard exponentials, then as many uniforms), so a caller that keeps the state incrementally (the cascade's
    history) draws what the engine draws. None when no event comes before ``horizon`` (or ever)."""
    decays = exponential_decays(model)
    if decays is None:
        _check_thinnable(model)
        raise HawkesError(
            f"next_event_from_state needs a sum-of-exponentials kernel, got {type(model.kernel).__name__}; "
            "use next_event (it works from the history's events)"
        )
    state = np.asarray(state, dtype=float)
    if state.shape != (decays.size, model.n_nodes):
        raise HawkesError(
            f"state must have one row per decay and one column per node, shape ({decays.size}, {model.n_nodes}), "
            f"got {state.shape}"
        )
    weights, _ = _components(model.kernel)
    end = math.inf if horizon is None else float(horizon)
    exc = _excitation_at(weights, state, model.alpha)
    t, n = _thin_from_excitation(model, exc, float(now), end, 1, _Draws(as_rng(rng)))
    return (t[0], n[0]) if t else None


def _check_model(model: Any) -> None:
    """A Hawkes model by what simulation uses (μ, α, its kernel and ρ(G)); checked by shape, not by class, so
    this module does not import the model, whose ``simulate`` and ``sample_next`` call it."""
    needs = ("mu", "alpha", "kernel", "n_nodes", "spectral_radius", "branching_matrix")
    if not all(hasattr(model, name) for name in needs):
        raise HawkesError(f"model must be a HawkesModel, got {type(model).__name__}")


def _check_bounds(model, T, max_events, allow_unstable, method):
    if method not in ("thinning", "branching"):
        raise HawkesError(f"method must be 'thinning' or 'branching', got {method!r}")
    if T is None and max_events is None:
        raise HawkesError("give a horizon T=... (simulate on [0, T]) and/or a bound max_events=...")
    if T is not None:
        T = float(T)
        if not (math.isfinite(T) and T > 0):
            raise HawkesError(f"T must be a finite time > 0, got {T!r}")
    elif method == "branching":
        raise HawkesError("method='branching' needs a horizon T=... (immigrants are drawn on [0, T])")
    if max_events is not None:
        if isinstance(max_events, bool) or not isinstance(max_events, (int, np.integer)) or max_events < 0:
            raise HawkesError(f"max_events must be an integer >= 0, got {max_events!r}")
        max_events = int(max_events)
    rho = model.spectral_radius()
    if rho >= 1.0:
        if not allow_unstable:
            raise UnstableModelError(
                f"refusing to simulate an unstable model: ρ(G) = {rho:.4g} >= 1, so the number of events "
                "grows without bound. Reduce alpha (or use a larger beta), or pass allow_unstable=True "
                "together with max_events=... to simulate a capped run anyway"
            )
        if max_events is None:
            raise UnstableModelError(
                f"allow_unstable=True needs a bound: ρ(G) = {rho:.4g} >= 1, so pass max_events=... as well"
            )
    return T, max_events


def _untie(t: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Nudge the (probability-zero) events that share a time at the same node to the next float."""
    while (pair := tie_pairs(t, n)) is not None:
        t[pair[1]] = np.nextafter(t[pair[1]], np.inf)
        order = np.argsort(t, kind="stable")
        t[:], n[:] = t[order], n[order]
    return t


def _branching(model, T, max_events, rng):
    mu, n_nodes = model.mu, model.n_nodes
    G = model.branching_matrix()
    counts = rng.poisson(mu * T)
    gen_t = rng.uniform(0.0, T, size=int(counts.sum()))
    gen_n = np.repeat(np.arange(n_nodes), counts)
    all_t, all_n = [gen_t], [gen_n]
    n_total = gen_t.size
    cutoff = T
    targets = np.arange(n_nodes)
    for _ in range(100_000):
        if max_events is not None and n_total > max_events:
            # only the first max_events events are kept: anything later (and its offspring) can go
            merged_t = np.concatenate(all_t)
            cutoff = float(np.partition(merged_t, max_events - 1)[max_events - 1]) if max_events else -1.0
            all_n = [n[t <= cutoff] for t, n in zip(all_t, all_n, strict=True)]
            all_t = [t[t <= cutoff] for t in all_t]
            keep = gen_t <= cutoff
            gen_t, gen_n = gen_t[keep], gen_n[keep]
            n_total = sum(t.size for t in all_t)
        if not gen_t.size:
            break
        kids = rng.poisson(G[gen_n])  # (parents, targets): children of each parent at each target node
        per_parent = kids.sum(axis=1)
        n_kids = int(per_parent.sum())
        if not n_kids:
            break
        child_t = np.repeat(gen_t, per_parent) + sample_delays(model.kernel, rng, n_kids)
        child_n = np.repeat(np.tile(targets, gen_t.size), kids.ravel())
        keep = child_t <= cutoff
        gen_t, gen_n = child_t[keep], child_n[keep]
        all_t.append(gen_t)
        all_n.append(gen_n)
        n_total += gen_t.size
    else:
        raise HawkesError("branching simulation did not finish within 100000 generations; lower alpha or T")
    t = np.concatenate(all_t)
    n = np.concatenate(all_n)
    order = np.argsort(t)  # ties have probability zero (and _untie repairs any); a stable sort costs 5x
    t, n = t[order], n[order]
    if max_events is not None and t.size > max_events:
        t, n = t[:max_events], n[:max_events]
    return t, n


def simulate(
    model: Any,
    T: float | None = None,
    max_events: int | None = None,
    seed: Any = None,
    method: str = "thinning",
    *,
    allow_unstable: bool = False,
    node_names: Any = None,
) -> EventStream:
    """Simulate the model on [0, T] (and/or until ``max_events``) and return an :class:`EventStream`.

    ``method="thinning"``: Ogata thinning (any non-increasing kernel; O(M·N) for exponentials, O(M²)
    otherwise). ``method="branching"``: the cluster construction — immigrants Poisson(μ_i T), offspring
    Poisson(G_{j,i}), delays from the normalised kernel — vectorised, the fastest. ``seed``: int or Generator.

    An unstable model (ρ(G) ≥ 1) is refused unless ``allow_unstable=True`` and ``max_events`` is given.
    When ``max_events`` stops the run before T, the stream's end_time is its last event time.
    """
    _check_model(model)
    T, max_events = _check_bounds(model, T, max_events, allow_unstable, method)
    rng = as_rng(seed)
    if method == "thinning":
        empty = np.zeros(0)
        t_list, n_list = _thin(model, empty, empty.astype(np.int64), 0.0,
                               math.inf if T is None else T, max_events, rng)
        t, n = np.asarray(t_list, dtype=float), np.asarray(n_list, dtype=np.int64)
    else:
        t, n = _branching(model, T, max_events, rng)
        t = _untie(t, n)
    truncated = max_events is not None and t.size >= max_events and (T is None or t.size > 0)
    end = float(t[-1]) if (truncated and t.size) else (T if T is not None else 0.0)
    return EventStream(t, n, model.n_nodes, end, node_names=node_names)
