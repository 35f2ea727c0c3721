"""Multivariate Hawkes processes, the HawkesLLM way: events, kernels, model, fit, simulate, diagnostics.

    λ_i(s) = μ_i + Σ_j Σ_{τ_m < s, n_m = j} φ_{j,i}(s − τ_m),   φ_{j,i}(u) = α_{j,i} e^{-βu}  (paper §2.2)

``alpha[j, i]`` is the excitation **from source j to target i**; G = α/β; stable when ρ(G) < 1.

    from uncertainty_lab.hawkes import EventStream, HawkesModel, fit_hawkes, simulate
    truth = HawkesModel.exponential(mu=[0.2, 0.1], alpha=[[0.5, 0.8], [0.0, 0.3]], beta=2.0)
    stream = simulate(truth, T=5000, seed=1)
    fit = fit_hawkes(stream, beta_grid=[0.5, 1, 2, 4])
"""

from ..table import Table
from .diagnostics import (
    KSResult,
    ks_test,
    plot_branching_matrix,
    plot_intensity,
    plot_qq,
    time_rescaling_residuals,
)
from .errors import EventStreamError, HawkesError, UnstableFitError, UnstableModelError
from .events import EventStream
from .fit import Candidate, FitResult, StdErr, fit_hawkes
from .kernels import ExponentialKernel, PowerLawKernel, SumOfExponentialsKernel, as_kernel, sample_delays
from .model import HawkesModel
from .simulate import simulate
from .ties import StreamTies

__all__ = [
    "Candidate",
    "EventStream",
    "EventStreamError",
    "ExponentialKernel",
    "FitResult",
    "HawkesError",
    "HawkesModel",
    "KSResult",
    "PowerLawKernel",
    "StdErr",
    "StreamTies",
    "SumOfExponentialsKernel",
    "Table",
    "UnstableFitError",
    "UnstableModelError",
    "as_kernel",
    "fit_hawkes",
    "ks_test",
    "plot_branching_matrix",
    "plot_intensity",
    "plot_qq",
    "sample_delays",
    "simulate",
    "time_rescaling_residuals",
]
