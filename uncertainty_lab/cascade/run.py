"""The HawkesLLM generation loop (Algorithm 1): one cascade run, streamed to its run file.

Each step t = 1..L: draw (τ_t, n_t) from the fitted Hawkes process given the history so far (generated events
feed back into the intensity), select the memory, build the prompt, generate x_t with a seed derived from
(seed, t), append e_t = (τ_t, n_t, x_t) — and write the step to the run file at once. Optionally draw m more
texts for the same prompt and score them with an uncertainty metric: a per-step semantic-uncertainty curve.

Randomness: step t uses generators seeded by (seed, t, purpose) (:func:`step_seeds`) — the Hawkes draw, the
selector and the language model each get their own — so a run resumed at step t continues exactly as an
uninterrupted one. The run file's layout is :data:`~uncertainty_lab.cascade.record.FORMAT`.
"""

from __future__ import annotations

import dataclasses
import math
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import registry
from ..contracts.memory import CascadeError, Event, History, NodeSpec, as_node_specs, check_memory
from ..journal import JournalWriter, rewrite
from ..jsonsafe import canonical, jsonable
from ..llm.base import identity
from ..llm.select import as_backend
from ..parameters import settings
from ..progress import bar as progress_bar
from ..seeds import derive_rng, derive_seed
from .prompt import build_prompt, prompt_hash
from .record import FORMAT, MOVED_NAMES, CascadeResumeError, CascadeRun, CascadeStep, function_name
from .sampling import next_event

__all__ = ["Decoding", "generate_step", "run_config", "simulate_cascade", "step_seeds"]


def step_seeds(seed: int, step: int) -> dict[str, Any]:
    """The generators and seeds of one step, derived from (seed, step): ``hawkes`` and ``selector`` numpy
    Generators (purposes 0, 1), ``llm`` (the generation seed, purpose 2) and ``samples`` (the alternative samples'
    seed, purpose 3) — :func:`~uncertainty_lab.seeds.derive_seed` of (seed, step, purpose)."""
    return {
        "hawkes": derive_rng(seed, step, 0),
        "selector": derive_rng(seed, step, 1),
        "llm": derive_seed(seed, step, 2),
        "samples": derive_seed(seed, step, 3),
    }


@dataclass(frozen=True)
class Decoding:
    """How each step's text is made: the prompt template, the decoding ``temperature`` / ``top_p`` /
    ``max_tokens`` (the paper: 0.35, 0.9, 75), ``samples_per_step`` alternative texts at ``sample_temperature``
    scored by ``metric`` (a ``metrics`` instance), and ``postprocess`` (str → str) applied to every text."""

    prompt_fn: Callable = build_prompt
    temperature: float = 0.35
    top_p: float = 0.9
    max_tokens: int = 75
    samples_per_step: int = 0
    metric: Any = None
    sample_temperature: float = 1.0
    postprocess: Callable[[str], str] | None = None

    def checked(self) -> Decoding:
        """The same settings validated (numbers in range, functions callable, the metric resolved when sampling;
        no metric without sampling)."""
        if not callable(self.prompt_fn):
            raise CascadeError(f"prompt_fn must be a function (see uncertainty_lab.cascade.prompt), got "
                               f"{self.prompt_fn!r}")
        if self.postprocess is not None and not callable(self.postprocess):
            raise CascadeError(f"postprocess must be a function str -> str or None, got {self.postprocess!r}")
        m = _check_int(self.samples_per_step, "samples_per_step", 0,
                       "pass 0 (none) or the number m of alternative samples")
        return dataclasses.replace(
            self, temperature=_check_float(self.temperature, "temperature", 0.0, 5.0),
            top_p=_check_float(self.top_p, "top_p", 0.0, 1.0, lo_open=True),
            max_tokens=_check_int(self.max_tokens, "max_tokens", 1, "pass the most new tokens per text, e.g. 75"),
            samples_per_step=m, metric=_resolve_metric(self.metric) if m else None,
            sample_temperature=_check_float(self.sample_temperature, "sample_temperature", 0.0, 5.0))

    def config(self) -> dict[str, Any]:
        """The settings as a run file's configuration records them."""
        m = self.samples_per_step
        return {
            "prompt_fn": function_name(self.prompt_fn), "temperature": self.temperature, "top_p": self.top_p,
            "max_tokens": self.max_tokens, "samples_per_step": m,
            "sample_temperature": self.sample_temperature if m else None,
            "metric": settings(self.metric) if self.metric is not None else None,
        }


# --- checks ---------------------------------------------------------------------------------------------------


def _check_int(value: Any, name: str, minimum: int, fix: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise CascadeError(f"{name} must be an integer >= {minimum}, got {value!r}; {fix}")
    return int(value)


def _check_float(value: Any, name: str, lo: float, hi: float, lo_open: bool = False) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise CascadeError(f"{name} must be a number, got {value!r}") from None
    ok = (lo < x if lo_open else lo <= x) and x <= hi
    if not ok:
        raise CascadeError(f"{name} must be in {'(' if lo_open else '['}{lo}, {hi}], got {value!r}")
    return x


def _check_model(seed_event: Any, hawkes_model: Any, node_specs: Sequence[NodeSpec]) -> tuple[NodeSpec, ...]:
    """The node specs, after checking the seed event, that the model is a stable HawkesModel and that both agree
    on the number of nodes."""
    from ..hawkes.errors import UnstableModelError
    from ..hawkes.model import HawkesModel

    if not isinstance(seed_event, Event):
        raise CascadeError(f"seed_event must be an Event(time, node, text), got {type(seed_event).__name__}")
    if not isinstance(hawkes_model, HawkesModel):
        raise CascadeError(f"hawkes_model must be a HawkesModel (e.g. a fit's .model), got "
                           f"{type(hawkes_model).__name__}")
    rho = hawkes_model.spectral_radius()
    if rho >= 1.0:
        raise UnstableModelError(
            f"refusing to run a cascade on an unstable Hawkes model: ρ(G) = {rho:.4g} >= 1, so events pile up "
            "without bound; use a stable fit (fit_hawkes keeps the best stable candidate) or reduce alpha")
    specs = as_node_specs(node_specs)
    if len(specs) != hawkes_model.n_nodes:
        raise CascadeError(
            f"node_specs has {len(specs)} nodes but the Hawkes model has {hawkes_model.n_nodes}; give one "
            "NodeSpec(name, instruction) per model node, in the model's node order")
    if seed_event.node >= len(specs):
        raise CascadeError(f"seed_event.node = {seed_event.node} is out of range for {len(specs)} nodes")
    return specs


def _check_horizon(horizon: Any, seed_event: Event) -> float | None:
    if horizon is None:
        return None
    horizon = float(horizon)
    if not (math.isfinite(horizon) and horizon > seed_event.time):
        raise CascadeError(f"horizon must be a finite time after the seed event (t={seed_event.time}), got {horizon!r}")
    return horizon


def _plugin(kind: str, spec: Any, what: str) -> Any:
    """``registry.resolve``; a spec that is no plugin at all is a CascadeError (an unknown name stays the
    registry's LookupError, naming the choices)."""
    try:
        return registry.resolve(kind, spec, what=what)
    except registry.RegistryError as exc:
        if isinstance(exc, LookupError):
            raise
        raise CascadeError(str(exc)) from exc


def _resolve_metric(metric: Any) -> Any:
    if metric is None:
        raise CascadeError("samples_per_step > 0 needs metric= (a metrics name such as 'semantic_entropy', or an "
                           "instance)")
    return _plugin("metrics", metric, "metric")


def run_config(seed_event: Event, hawkes_model: Any, specs: Sequence[NodeSpec], selector: Any, llm: Any, k: int,
               seed: int, decoding: Decoding, horizon: float | None) -> dict[str, Any]:
    """What a run file's header records as the run's configuration (JSON values); a resumed run must match it."""
    return canonical({
        "seed_event": seed_event.to_record(),
        "node_specs": [s.to_record() for s in specs],
        "model": {"mu": hawkes_model.mu, "alpha": hawkes_model.alpha, "kernel": settings(hawkes_model.kernel)},
        "selector": settings(selector),
        "llm": identity(llm),
        "k": k, "seed": seed, **decoding.config(), "horizon": horizon,
        # only when set, so files written before this option existed still resume
        **({"postprocess": function_name(decoding.postprocess)} if decoding.postprocess is not None else {}),
    })


# --- the loop ---------------------------------------------------------------------------------------------


def simulate_cascade(
    seed_event: Event,
    hawkes_model: Any,
    selector: Any,
    llm: Any,
    steps: int,
    k: int,
    seed: int,
    node_specs: Sequence[NodeSpec],
    prompt_fn: Callable = build_prompt,
    temperature: float = 0.35,
    top_p: float = 0.9,
    max_tokens: int = 75,
    out: str | os.PathLike | None = None,
    resume: bool = True,
    samples_per_step: int = 0,
    metric: Any = None,
    horizon: float | None = None,
    progress: bool = True,
    *,
    sample_temperature: float = 1.0,
    postprocess: Callable[[str], str] | None = None,
    depends: Mapping[str, Any] | None = None,
) -> CascadeRun:
    """Run HawkesLLM Algorithm 1 for ``steps`` = L steps from ``seed_event`` = e_0 and return a CascadeRun.

    - ``hawkes_model``: a fitted, **stable** HawkesModel over the N nodes (``alpha[source, target]``); an
      unstable one (ρ(G) ≥ 1) is refused. Generated events feed back into its intensity.
    - ``selector``: a ``memory_selectors`` name (``"hawkes"``, ``"recency"``, ``"random"``, …), table or
      instance; ``k`` ≥ 1 its memory budget.
    - ``llm``: a backend (``get_llm(...)``) or a spec string for ``get_llm``; decoding ``temperature``, ``top_p``,
      ``max_tokens`` (the paper: 0.35, 0.9, 75). The generated text is stripped of surrounding whitespace.
    - ``seed``: int ≥ 0; every step's draws and the model's seed derive from (seed, step) (:func:`step_seeds`).
    - ``node_specs``: one NodeSpec(name, instruction) per node. ``prompt_fn``: the template (see ``prompt``).
    - ``out``: a run-file path; each step is written as it is made. With ``resume=True`` an existing file with
      the same configuration is continued (a different one raises CascadeResumeError); ``resume=False``
      overwrites. ``steps`` may grow between calls (a finished run is extended).
    - ``samples_per_step=m`` > 0: draw m more texts per step at ``sample_temperature`` for the same prompt and
      score them with ``metric`` (a ``metrics`` name or instance): ``run.uncertainty`` is the per-step curve.
    - ``horizon``: no event after this time; the run stops early (stop_reason "horizon") when the next event
      would fall beyond it (or the intensity has died out).
    - ``postprocess``: a deterministic function applied to every generated text (the main one and the
      alternative samples) before it enters the history, e.g. keeping the first line of a rambling answer
      (:func:`uncertainty_lab.cascade.headlines.clean_headline`). The step keeps the model's own text as
      ``raw_text`` when it changed; the function's name is part of the configuration.
    - ``depends``: what the run's evaluation depends on beyond its configuration (the experiment gives the data
      file's hash, and the hashes of the training events and the held-out references), recorded in the header
      and checked on resume (:func:`_check_depends`).
    """
    specs = _check_model(seed_event, hawkes_model, node_specs)
    steps = _check_int(steps, "steps", 0, "pass the number of generation steps L")
    k = _check_int(k, "k", 1, "the memory holds at most k events (the paper uses k = 3)")
    seed = _check_int(seed, "seed", 0, "pass an integer seed such as seed=0")
    decoding = Decoding(prompt_fn, temperature, top_p, max_tokens, samples_per_step, metric, sample_temperature,
                        postprocess).checked()
    horizon = _check_horizon(horizon, seed_event)
    selector = _plugin("memory_selectors", selector, "selector")
    llm = as_backend(llm, error=CascadeError, quiet=False)
    config = run_config(seed_event, hawkes_model, specs, selector, llm, k, seed, decoding, horizon)
    cascade = _Cascade(hawkes_model, selector, llm, k, seed, specs, decoding, horizon)
    return _run(cascade, CascadeRun(config=config, seed_event=seed_event, node_specs=specs), steps,
                None if out is None else Path(out), resume, progress, jsonable(dict(depends)) if depends else None)


@dataclass(frozen=True)
class _Cascade:
    """What every step of one run reads: the model, the selector, the backend, k, the seed, the nodes, how the
    text is made, the horizon."""

    model: Any
    selector: Any
    llm: Any
    k: int
    seed: int
    specs: tuple[NodeSpec, ...]
    decoding: Decoding
    horizon: float | None


def _keep_old_names(config: dict[str, Any], path: Path | None, resume: bool) -> dict[str, Any]:
    """A file written before 0.2 names a moved template or postprocess by its old path: continue it under that
    name (the same function), so the configurations compare equal."""
    if path is None or not resume or not path.is_file() or path.stat().st_size == 0:
        return config
    recorded = FORMAT.read(path).config
    out = dict(config)
    for key in ("prompt_fn", "postprocess"):
        old = recorded.get(key)
        if old in MOVED_NAMES and MOVED_NAMES[old] == config.get(key):
            out[key] = old
    return out


def _data_changed(path: Path | None, depends: Mapping[str, Any] | None, exc: Exception) -> Exception:
    """A refusal to resume that says the data changed, when the file's recorded data hashes differ from ``depends``
    (its fitted model and seed event then differ too: the steps belong to the old data); else ``exc``."""
    if path is None or not depends or not path.is_file():
        return exc
    old = (FORMAT.read(path).header or {}).get("depends") or {}
    if "data" in old and old["data"] != depends.get("data"):
        return CascadeResumeError(
            f"cannot resume {path}: the data changed since it was made ({old['data']} then, {depends.get('data')} "
            "now), so its fitted model and seed event differ and its steps belong to the old data; set overwrite = "
            "true (or choose another out_dir) to run it afresh")
    return exc


def _check_depends(path: Path, journal: Any, depends: Mapping[str, Any] | None, writer: Any) -> Any:
    """A resumed file (same configuration: the fit and the seed event match) whose recorded ``depends`` differ:
    the held-out references changed (the diagnostics are computed from the current ones when the result is
    collected; no model is asked) or the file predates the hashes (it cannot be checked beyond its configuration).
    Either is said in one warning line and the header is rewritten with the current hashes. Returns the writer."""
    old = (journal.header or {}).get("depends")
    if not depends or old == depends:
        return writer
    from ..provenance import StaleResultWarning

    if old is None:
        why = "it predates the recorded data hashes, so only its configuration (fit, seed event) could be checked"
    else:
        changed = ", ".join(k for k in sorted(set(old) | set(depends)) if old.get(k) != depends.get(k))
        why = (f"its {changed} changed; the diagnostics are computed from the current held-out references, no "
               "model was asked")
    warnings.warn(f"{path}: {why}; recording the current hashes", StaleResultWarning, stacklevel=4)
    writer.close()
    rewrite(path, [{**journal.header, "depends": dict(depends)}, *journal.body,
                   *([journal.end] if journal.end is not None else [])])
    return JournalWriter(path, "a")


def _run(cascade: _Cascade, run: CascadeRun, steps: int, path: Path | None, resume: bool,
         progress: bool, depends: Mapping[str, Any] | None = None) -> CascadeRun:
    """Start or continue the run file at ``path`` and generate the steps it lacks."""
    run.config = _keep_old_names(run.config, path, resume)
    run.path = path
    header = {"steps": steps, **({"depends": dict(depends)} if depends else {})}
    try:
        journal, writer = FORMAT.open(path, run.config, resume=resume, **header)
    except CascadeResumeError as exc:
        raise _data_changed(path, depends, exc) from None
    try:
        if journal is not None:
            writer = _check_depends(path, journal, depends, writer)
            done = CascadeRun.from_journal(journal)
            if len(done.steps) > steps:
                raise CascadeResumeError(
                    f"{path} already holds {len(done.steps)} steps, more than steps={steps}; pass steps >= "
                    f"{len(done.steps)} (or CascadeRun.load it), or resume=False to start over")
            run.steps = done.steps
            if journal.end is not None and (journal.end.get("reason") == "horizon" or len(run.steps) == steps):
                run.stop_reason = journal.end.get("reason")
                return run
        run.stop_reason = _generate(cascade, run, steps, writer, progress)
    finally:
        writer.close()
    return run


def generate_step(t: int, history: History, model: Any, selector: Any, llm: Any, k: int, seed: int,
                  specs: Sequence[NodeSpec], decoding: Decoding | None = None, *,
                  horizon: float | None = None) -> CascadeStep | None:
    """One step of Algorithm 1 on ``history`` (not appended): draw (τ_t, n_t), select the memory, build the prompt,
    generate (and sample/score alternatives) as ``decoding`` says (default: :class:`Decoding`). None when no event
    comes before the horizon. Arguments are not validated here — :func:`simulate_cascade` does that."""
    d = decoding or Decoding()
    seeds = step_seeds(seed, t)
    nxt = next_event(model, history, seeds["hawkes"], horizon=horizon)
    if nxt is None:
        return None
    tau, node = float(nxt[0]), int(nxt[1])
    sel_name = getattr(selector, "name", type(selector).__name__)
    memory = check_memory(selector.select(history, tau, node, k, model=model, rng=seeds["selector"]),
                          history, tau, who=f"memory selector {sel_name!r}")
    messages = d.prompt_fn(tau, node, specs[node], memory, history, specs)
    (completion,) = llm.complete(messages, n=1, temperature=d.temperature, top_p=d.top_p, max_tokens=d.max_tokens,
                                 seed=seeds["llm"])
    raw = completion.text.strip()
    text = _clean(d.postprocess, raw)
    samples = result = None
    if d.samples_per_step:
        extra = {"logprobs": True} if getattr(llm, "supports_logprobs", False) else {}
        comps = llm.complete(messages, n=d.samples_per_step, temperature=d.sample_temperature, top_p=d.top_p,
                             max_tokens=d.max_tokens, seed=seeds["samples"], **extra)
        samples = tuple(_clean(d.postprocess, c.text.strip()) for c in comps)
        result = _score(d.metric, comps, messages, samples)
    return CascadeStep(t, tau, node, text, tuple(memory), prompt_hash(messages), seeds["llm"],
                       str(getattr(completion, "finish_reason", "stop") or "stop"), samples, result,
                       raw if text != raw else None)


def _clean(postprocess: Callable[[str], str] | None, text: str) -> str:
    if postprocess is None:
        return text
    out = postprocess(text)
    if not isinstance(out, str):
        raise CascadeError(f"postprocess must return a string, got {type(out).__name__} for {text[:60]!r}")
    return out.strip()


def _generate(c: _Cascade, run: CascadeRun, steps: int, writer: Any, progress: bool) -> str:
    """Generate steps len(run)+1..``steps``, appending each to ``run`` and writing it; the stop reason."""
    history = History(c.specs, run.events)
    sel_name = getattr(c.selector, "name", type(c.selector).__name__)
    bar = progress_bar(total=steps, initial=len(run.steps), show=progress, desc=f"cascade ({sel_name}, k={c.k})",
                       leave=False)
    try:
        for t in range(len(run.steps) + 1, steps + 1):
            step = generate_step(t, history, c.model, c.selector, c.llm, c.k, c.seed, c.specs, c.decoding,
                                 horizon=c.horizon)
            if step is None:
                writer.write({"type": "end", "reason": "horizon", "n_steps": t - 1,
                              "detail": "no further event before the horizon" if c.horizon is not None
                              else "the intensity died out (no background rate)"})
                return "horizon"
            history.append(step.event)
            run.steps.append(step)
            writer.write(step.to_record())
            bar.update(1)
        writer.write({"type": "end", "reason": "steps", "n_steps": steps})
        return "steps"
    finally:
        bar.close()


def _score(metric: Any, completions: Sequence[Any], messages: Sequence[dict[str, str]],
           texts: Sequence[str] | None = None) -> dict[str, Any]:
    """Score the alternative samples; the SampleSet carries the prompt as its question and token logprobs when
    the backend gave them (a plain list of texts if the semantic package is unavailable). ``texts``: the
    samples after any postprocessing (their logprobs are still those of the model's full answers)."""
    question = messages[-1]["content"] if messages else ""
    texts = [c.text.strip() for c in completions] if texts is None else list(texts)
    lps = [getattr(c, "logprobs", None) for c in completions]
    lps = [None if lp is None else [t.logprob for t in lp] for lp in lps]
    try:
        from ..semantic.samples import SampleSet

        samples: Any = SampleSet.from_texts(texts, lps if any(lp is not None for lp in lps) else None, question)
    except ImportError:
        samples = texts
    res = metric.score(samples)
    out = {"metric": getattr(res, "metric", None) or getattr(metric, "name", type(metric).__name__),
           "uncertainty": float(res.uncertainty), "confidence": float(res.confidence)}
    if hasattr(res, "normalised_uncertainty"):
        out["normalised_uncertainty"] = float(res.normalised_uncertainty)
    return out
