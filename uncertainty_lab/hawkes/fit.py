"""Penalised maximum likelihood for Hawkes processes, with the decay chosen on a grid under stability.

For a fixed kernel shape (e.g. fixed β) the log-likelihood separates over target nodes i:

    ℓ = Σ_i ℓ_i,  ℓ_i(μ_i, α_{·,i}) = Σ_{n_m = i} log(μ_i + Σ_j α_{j,i} E_j(τ_m)) − μ_i T − Σ_j α_{j,i} C_j,

with the features E_j(τ_m) (the recursion R_j(m) for the exponential kernel) and C_j = Σ_{n_l = j} ∫_0^{T−τ_l} s
computed once per β. Each ℓ_i is concave, so (μ_i, α_{·,i}) is fitted on its own by L-BFGS-B with bounds ≥ 0
and exact gradients, maximising ℓ_i − η Ω(α_{·,i}) with Ω = Σ α (``"l1"``) or Σ α² (``"l2"``). With a β grid,
the best **stable** fit (ρ(G) < 1) by log-likelihood — or by held-out log-likelihood on ``validation`` — wins.
"""

from __future__ import annotations

import functools
import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from threadpoolctl import ThreadpoolController

from ..table import Table
from .errors import HawkesError, UnstableFitError
from .events import EventStream
from .excitation import design_matrices, total_integrals
from .fitreport import beta_undetermined, candidate_table
from .kernels import ExponentialKernel, as_kernel
from .l1_path import CRITERIA, bic_path
from .memory import memory_warning
from .model import HawkesModel
from .target import _TargetProblem
from .ties import StreamTies, tie_warning, timing_note
from .tiescale import tie_scale_warning

__all__ = ["Candidate", "FitResult", "StdErr", "fit_hawkes"]

PENALTIES = ("none", "l1", "l2")
#: the default β grid, as multiples of the overall event rate M / (T − t0)
DEFAULT_BETA_FACTORS = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0)


@dataclass
class StdErr:
    """Standard errors from the observed information (inverse Hessian of −ℓ_i per target), in the layout of
    μ and α (``alpha[source, target]``). NaN where an estimate sits at its 0 bound (the quadratic
    approximation does not hold there) or where a source has no events (α_{j,·} is not identified)."""

    mu: np.ndarray
    alpha: np.ndarray
    note: str = ""

    def __repr__(self) -> str:
        with np.printoptions(precision=4, suppress=True):
            return f"StdErr(mu={self.mu},\n  alpha[source, target]=\n{self.alpha}\n  note={self.note!r})"


@dataclass
class Candidate:
    """One fitted candidate kernel (one β of the grid)."""

    kernel: Any
    model: HawkesModel
    log_likelihood: float
    penalized: float
    rho: float
    stable: bool
    converged: bool
    n_iter: int
    validation_log_likelihood: float = float("nan")
    _se: tuple = field(default=None, repr=False)


@dataclass
class FitResult:
    """What :func:`fit_hawkes` returns: the chosen ``model``, its training ``log_likelihood``, the per-candidate
    ``table`` (beta, loglik, rho, stable, converged, …), ``stderr`` and ``converged`` for the chosen fit.

    ``ties`` is the stream's tie report; ``untimed_sources`` the nodes whose events all tie (no inter-event time
    in the data), whose α as sources is 0 by construction, with ``timing_note`` saying so; ``beta_note`` is
    non-empty when β is undetermined (then :attr:`beta` is None)."""

    model: HawkesModel
    log_likelihood: float
    table: Table
    stderr: StdErr
    converged: bool
    candidates: list[Candidate]
    penalty: str
    eta: float
    selected_by: str
    n_events: int
    seconds: float
    validation_log_likelihood: float = float("nan")
    warnings: list[str] = field(default_factory=list)
    ties: StreamTies | None = None
    untimed_sources: tuple[int, ...] = ()
    timing_note: str = ""
    beta_note: str = ""
    #: with ``eta="bic"``: the η path (one row per η: support size, refit log-likelihood, BIC, selected)
    eta_path: Table | None = None

    @property
    def beta(self) -> float | None:
        """The chosen decay β (exponential kernel); None for another kernel, and None when the data do not
        determine it (``beta_note`` says why; ``model`` then keeps a grid value, which with α = 0 changes nothing)."""
        return None if self.beta_note else self.model.beta

    @property
    def beta_determined(self) -> bool:
        """False when the log-likelihood is the same at every β of the grid (see ``beta_note``)."""
        return not self.beta_note

    @property
    def mu(self) -> np.ndarray:
        return self.model.mu

    @property
    def alpha(self) -> np.ndarray:
        """α̂ indexed ``[source, target]``."""
        return self.model.alpha

    def __repr__(self) -> str:
        m = self.model
        rho = m.spectral_radius()
        head = "".join(f"WARNING: {w}\n" for w in self.warnings) + (
            f"FitResult: {m.kernel!r}, chosen from {len(self.candidates)} candidate(s) by {self.selected_by} "
            f"among stable fits\n"
            + (f"  NOTE: {self.beta_note}\n" if self.beta_note else "")
            + (f"  no timing information: {self.timing_note}\n" if self.timing_note else "")
            + f"  log-likelihood {self.log_likelihood:.6g} on {self.n_events} events"
            + (f", held-out {self.validation_log_likelihood:.6g}" if not math.isnan(self.validation_log_likelihood) else "")
            + f"; ρ(G) = {rho:.4g}; converged: {'yes' if self.converged else 'NO'}; penalty {self.penalty}"
            + (f" (η = {self.eta:g}" + (f", the least BIC of {len(self.eta_path)} on the L1 path"
                                         if self.eta_path is not None else "") + ")" if self.penalty != "none" else "")
            + f"; {self.seconds:.3g} s\n"
        )
        with np.printoptions(precision=4, suppress=True, linewidth=100):
            body = (
                f"  mu     = {m.mu}\n  ± se   = {self.stderr.mu}\n"
                f"  alpha[source j, target i] =\n{_indent(m.alpha)}\n  ± se =\n{_indent(self.stderr.alpha)}\n"
            )
        note = f"  note: {self.stderr.note}\n" if self.stderr.note else ""
        return head + body + note + _indent(repr(self.table), "  ")


def _indent(x: Any, pad: str = "    ") -> str:
    return "\n".join(pad + line for line in str(x).splitlines())


def _candidates(kernel: Any, beta: Any, beta_grid: Any, kernel_params: dict, stream: EventStream) -> list:
    exponential = kernel == "exponential" if isinstance(kernel, str) else kernel is ExponentialKernel
    if beta is not None and beta_grid is not None:
        raise HawkesError("give beta=... (one decay) or beta_grid=[...] (choose among several), not both")
    if exponential:
        if "beta" in kernel_params:
            raise HawkesError("pass the decay as beta=... or beta_grid=[...], not in kernel_params")
        if beta is not None:
            grid = [beta]
        elif beta_grid is not None:
            grid = list(np.atleast_1d(np.asarray(beta_grid, dtype=float)))
            if not grid:
                raise HawkesError("beta_grid is empty; give at least one decay, e.g. beta_grid=[0.5, 1, 2, 4]")
        else:
            rate = stream.n_events / stream.duration if stream.n_events else 1.0
            grid = [rate * f for f in DEFAULT_BETA_FACTORS]
        for b in grid:
            if not (math.isfinite(b) and b > 0):
                raise HawkesError(f"every beta must be a finite number > 0, got {float(b)} in beta/beta_grid")
        return [ExponentialKernel(beta=float(b)) for b in grid]
    if beta is not None or beta_grid is not None:
        raise HawkesError(
            f"beta/beta_grid apply to the exponential kernel only; for {kernel!r} pass kernel=<instance> or a list "
            "of kernel instances to choose among"
        )
    if isinstance(kernel, (list, tuple)):
        if not kernel:
            raise HawkesError("kernel is an empty list; give at least one kernel")
        return [as_kernel(k) for k in kernel]
    return [as_kernel(kernel, **kernel_params)]


def _fit_one(kern, stream, penalty, eta, maxiter, gtol, untimed=(), warm=None):
    """One candidate kernel: per target, build its design matrix, solve, keep θ̂ and its standard errors, and free
    the matrix before the next target (no per-event array outlives its target, nor any candidate its fit).
    The ``untimed`` sources get no α column (α_{j,·} = 0): their gaps are not in the data. ``warm`` (the η path's):
    {(kernel, target): solution} to start from, updated with this fit's."""
    n = stream.n_nodes
    times, nodes = stream.times, stream.nodes
    totals = total_integrals(kern, times, nodes, n, stream.end_time)
    totals[list(untimed)] = 0.0
    c = np.concatenate([[stream.duration], totals])
    cols = np.flatnonzero(c > 0)
    designs = design_matrices(kern, times, nodes, n, cols[1:] - 1)
    mu, alpha = np.zeros(n), np.zeros((n, n))
    se_mu, se_alpha = np.full(n, np.nan), np.full((n, n), np.nan)
    loglik, penalized, converged, iters = 0.0, 0.0, True, 0
    for i in range(n):
        A, designs[i] = designs[i], None
        if A.shape[0] == 0:  # a silent node: μ_i = α_{·,i} = 0 maximise ℓ_i = −μ_i T − Σ_j α_{j,i} C_j
            continue
        A /= c[cols]  # in place: X_i → A_i = X_i / c, what _TargetProblem.from_design computes
        prob = _TargetProblem(A, c, penalty, eta)
        key = (repr(kern), i)
        z, ok, nit = prob.solve(maxiter, gtol, None if warm is None else warm.get(key))
        if warm is not None:
            warm[key] = z
        theta = prob.theta(z)
        mu[i], alpha[:, i] = theta[0], theta[1:]
        se = prob.stderr(z)
        se_mu[i], se_alpha[:, i] = se[0], se[1:]
        ll = prob.loglik(z)
        del prob, A
        loglik += ll
        omega = {"l1": lambda a: a.sum(), "l2": lambda a: float(a @ a)}.get(penalty, lambda a: 0.0)
        penalized += ll - eta * omega(theta[1:])
        converged &= ok
        iters += nit
    model = HawkesModel(mu, alpha, kern)
    rho = model.spectral_radius()
    return Candidate(kern, model, loglik, penalized, rho, rho < 1.0, converged, iters, _se=(se_mu, se_alpha))


def _stderr(cand: Candidate, penalty: str) -> StdErr:
    se_mu, se_alpha = cand._se
    bound = int(np.sum((cand.model.alpha == 0) | np.isnan(se_alpha))) + int(np.sum(np.isnan(se_mu)))
    notes = []
    if bound:
        notes.append(
            f"{bound} parameter(s) at the 0 bound or not identified get NaN: the observed information gives no "
            "valid standard error there"
        )
    if penalty != "none":
        notes.append(f"with the {penalty} penalty these use the penalised Hessian and ignore shrinkage bias")
    return StdErr(se_mu, se_alpha, "; ".join(notes))


@functools.lru_cache(maxsize=1)
def _blas_controller() -> ThreadpoolController:
    """The loaded BLAS libraries, found once: the scan reads /proc/self/maps and costs ~3 ms, a fifth of a
    1e3-event fit (numpy's and scipy's BLAS are loaded when this module is imported)."""
    return ThreadpoolController()


def _check_fit_args(stream: Any, penalty: str, eta: Any) -> float | str:
    """The training stream, the penalty and its strength η checked; η as a float, or the name of the criterion
    that chooses it (``"bic"``, with the L1 penalty only: it scores the supports the L1 path proposes)."""
    if not isinstance(stream, EventStream):
        raise HawkesError(
            f"stream must be an EventStream, got {type(stream).__name__}; build one with "
            "EventStream.from_arrays(times, nodes)"
        )
    if stream.duration <= 0:
        raise HawkesError(f"stream has an empty window [{stream.start_time}, {stream.end_time}]; pass end_time > start_time")
    if penalty not in PENALTIES:
        raise HawkesError(f"penalty must be one of {list(PENALTIES)}, got {penalty!r}")
    if isinstance(eta, str) and eta in CRITERIA:
        if penalty != "l1":
            raise HawkesError(f"eta={eta!r} chooses η along the L1 path (the supports it scores need exact zeros); "
                              f"pass penalty='l1', or a number for eta with penalty={penalty!r}")
        return eta
    try:
        eta = float(eta)
    except (TypeError, ValueError):
        raise HawkesError(f"eta must be a number >= 0 or one of {list(CRITERIA)}, got {eta!r}") from None
    if not (math.isfinite(eta) and eta >= 0):
        raise HawkesError(f"eta must be a finite number >= 0, got {eta!r}")
    if penalty == "none" and eta != 0:
        raise HawkesError(f"eta={eta} has no effect with penalty='none'; pass penalty='l1' or 'l2'")
    return eta


def _validation_history(stream: EventStream, validation: Any) -> EventStream | None:
    """What the held-out likelihood is conditioned on: the training stream when ``validation`` starts at or
    after its end (a later window), None for an independent realisation from 0 (or no validation)."""
    if validation is None:
        return None
    if not isinstance(validation, EventStream):
        raise HawkesError(f"validation must be an EventStream, got {type(validation).__name__}")
    if validation.n_nodes != stream.n_nodes:
        raise HawkesError(f"validation has n_nodes={validation.n_nodes}, stream has {stream.n_nodes}")
    if validation.start_time <= 0:
        return None
    if validation.start_time < stream.end_time:
        raise HawkesError(
            f"validation starts at {validation.start_time}, inside the training window ending at "
            f"{stream.end_time}; use a later window (EventStream.split) or an independent stream from 0"
        )
    return stream


def _warned(*texts: str | None) -> list[str]:
    """The given warning texts (None skipped), each issued as a UserWarning at fit_hawkes's caller."""
    out = [t for t in texts if t]
    for text in out:
        warnings.warn(text, UserWarning, stacklevel=3)
    return out


def fit_hawkes(
    stream: EventStream,
    kernel: Any = "exponential",
    beta: float | None = None,
    beta_grid: Any = None,
    penalty: str = "none",
    eta: float | str = 0.0,
    validation: EventStream | None = None,
    *,
    kernel_params: dict | None = None,
    maxiter: int = 2000,
    gtol: float = 1e-8,
    ties: Any = None,
    _warm_starts: dict | None = None,
) -> FitResult:
    """Fit μ ≥ 0 and α ≥ 0 (``alpha[source, target]``) by penalised maximum likelihood,
    (μ̂, α̂) ∈ argmax {ℓ_β(μ, α; D) − η Ω(α)}, for each candidate kernel, and keep the best stable one.

    - ``kernel="exponential"``: the paper's kernel; ``beta=`` fixes the decay, ``beta_grid=`` chooses it
      (neither: a grid r·(0.1, 0.3, 1, 3, 10, 30) with r = M / (T − t0) the overall event rate).
      Any other ``kernels`` plugin name (with ``kernel_params``), an instance, or a list of instances to
      choose among may be given; their shape parameters stay fixed.
    - ``penalty``: ``"none"``, ``"l1"`` (Ω = Σ α_{j,i}) or ``"l2"`` (Ω = Σ α_{j,i}²), strength ``eta`` ≥ 0.
      With ``"l1"``, ``eta="bic"`` chooses η on this stream alone: the BIC of each support's ML refit along the path
      η_max·10^(−3…0) (:mod:`~uncertainty_lab.hawkes.l1_path`; the path is ``.eta_path``, the choice ``.eta``).
    - ``validation``: an EventStream to choose the candidate by held-out log-likelihood. If it starts at or
      after ``stream.end_time`` (e.g. the later half of :meth:`EventStream.split`) its likelihood is
      conditioned on ``stream``; a stream starting at 0 is treated as an independent realisation.
    - Ties (``stream.ties``, :mod:`.ties`): one UserWarning (in ``.warnings``) naming the share tied and what was
      done; a source whose events all tie has α = 0, not fitted (``.untimed_sources``); α̂ = 0 at every β of a grid
      makes ℓ flat in β: ``.beta`` is None (``.beta_note``). ``ties=`` (``load_gdelt(...).ties_report``, hours) adds
      when β is the spacing the loader invented (:mod:`~uncertainty_lab.hawkes.tiescale`).
    - Memory: ~8·(N+1) bytes per event and the largest node's solver temporaries, whatever the grid; a UserWarning
      (in ``.warnings``) before starting when that is over half the free memory (:mod:`~uncertainty_lab.hawkes.memory`).

    Returns a :class:`FitResult` (``.model``, ``.log_likelihood``, ``.table``, ``.stderr``, ``.converged``).
    Raises :class:`UnstableFitError` (carrying the table) when no candidate is stable.
    """
    started = time.perf_counter()
    eta = _check_fit_args(stream, penalty, eta)
    if isinstance(eta, str):
        return _fit_by_criterion(stream, eta, started, dict(
            kernel=kernel, beta=beta, beta_grid=beta_grid, penalty=penalty, validation=validation,
            kernel_params=kernel_params, maxiter=maxiter, gtol=gtol, ties=ties))
    history = _validation_history(stream, validation)
    kernels = _candidates(kernel, beta, beta_grid, dict(kernel_params or {}), stream)
    notes = _warned(memory_warning(stream))  # before the work starts: a fit too big for memory says so first
    untimed = _untimed_sources(stream_ties := stream.ties)

    candidates = []
    for kern in kernels:
        # the per-target problems are small: a threaded BLAS only adds contention (measured 5-50x slower
        # with two busy cores in benchmarks/hawkes.py), so the solves run single-threaded
        with _blas_controller().limit(limits=1, user_api="blas"):
            cand = _fit_one(kern, stream, penalty, eta, maxiter, gtol, untimed, _warm_starts)
        if validation is not None:
            cand.validation_log_likelihood = cand.model.log_likelihood(validation, history=history)
        candidates.append(cand)

    key = "validation_log_likelihood" if validation is not None else "log_likelihood"
    stable = [c for c in candidates if c.stable]
    best = max(stable, key=lambda c: getattr(c, key)) if stable else None
    beta_note = beta_undetermined(candidates, stream_ties.untimed)
    table = candidate_table(candidates, best, penalty, eta, validated=validation is not None, beta_note=beta_note)
    if best is None:
        raise UnstableFitError(
            f"no stable fit: every candidate has ρ(G) >= 1 (ρ = {[round(c.rho, 4) for c in candidates]}); "
            "try larger beta values, a penalty (penalty='l1', eta>0), or check the data for bursts/duplicates. "
            "The table and candidates are attached to this error (.table, .candidates)",
            table=table, candidates=candidates,
        )
    notes += _timing_notes(candidates, best, stream_ties, untimed, beta_note, ties)
    return FitResult(
        warnings=notes, ties=stream_ties, untimed_sources=untimed, beta_note=beta_note,
        timing_note=timing_note(stream_ties, untimed), model=best.model, log_likelihood=best.log_likelihood,
        table=table, stderr=_stderr(best, penalty), converged=best.converged, candidates=candidates,
        penalty=penalty, eta=eta, selected_by="held-out log-likelihood" if validation is not None else "log-likelihood",
        n_events=stream.n_events, seconds=time.perf_counter() - started,
        validation_log_likelihood=best.validation_log_likelihood,
    )


def _timing_notes(candidates: list, best: Any, stream_ties: Any, untimed: tuple, beta_note: str | None,
                  ties: Any) -> list[str]:
    """The fit's warnings about its timing: ties in the stream, a β at the spacing a loader invented, an
    undetermined β (each issued as a UserWarning too)."""
    grid = [c.kernel.beta for c in candidates if isinstance(c.kernel, ExponentialKernel)]
    scale = tie_scale_warning(None if beta_note else best.model.beta, grid, ties)
    tied = tie_warning(stream_ties, untimed, beta_note)
    notes = _warned(" ".join(t for t in (tied, scale) if t) or None)
    if beta_note and not tied:
        notes += _warned(beta_note)
    return notes


def _untimed_sources(stream_ties: Any) -> tuple[int, ...]:
    """The sources whose gaps are not in the data (α_{j,·} = 0, not fitted): every node when all events tie."""
    return tuple(np.flatnonzero(stream_ties.events).tolist()) if stream_ties.untimed else stream_ties.untimed_nodes


def _fit_by_criterion(stream: EventStream, criterion: str, started: float, args: dict) -> FitResult:
    """``fit_hawkes`` with η chosen by ``criterion`` along the L1 path (:func:`.l1_path.bic_path`): the chosen
    penalised fit, its warnings issued once, the path attached as ``.eta_path``."""
    kernels = _candidates(args["kernel"], args["beta"], args["beta_grid"], dict(args["kernel_params"] or {}), stream)
    with _blas_controller().limit(limits=1, user_api="blas"):  # small solves: threads only contend (see below)
        warm: dict = {}  # each (kernel, target)'s solution at the previous η: the next one starts there
        fit, path = bic_path(stream, lambda e: fit_hawkes(stream, eta=e, _warm_starts=warm, **args), kernels,
                             _untimed_sources(stream.ties))
    for text in fit.warnings:  # once, at fit_hawkes's caller (the path's fits held theirs back)
        warnings.warn(text, UserWarning, stacklevel=3)
    fit.eta_path, fit.seconds = path, time.perf_counter() - started
    return fit
