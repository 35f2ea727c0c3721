"""The HawkesLLM generation loop (Algorithm 1) and its run record.

Each step t = 1..L: draw (τ_t, n_t) from the fitted Hawkes process given the history so far (generated events
feed back into the intensity), select the memory, build the prompt, generate x_t with a seed derived from
(seed, t), append e_t = (τ_t, n_t, x_t) — and write the step to the JSONL file at once. Optionally draw m more
texts for the same prompt and score them with an uncertainty metric: a per-step semantic-uncertainty curve.

Randomness: step t uses generators seeded by (seed, t, purpose) — the Hawkes draw, the selector and the
language model each get their own — so a run resumed at step t continues exactly as an uninterrupted one.

JSONL layout: a header ``{"type": "header", "format", "config", "steps"}``, one ``{"type": "step", ...}`` per
step, and ``{"type": "end", "reason", "n_steps"}`` when the run finishes (``reason`` "steps" or "horizon").
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..contracts.memory import CascadeError, Event, History, MemoryItem, NodeSpec, as_node_specs, check_memory
from ..journal import JournalWriter, drop_cut_tail, read_records
from .prompt import build_prompt, prompt_hash
from .sampling import next_event

__all__ = ["FORMAT", "CascadeResumeError", "CascadeRun", "CascadeStep", "generate_step", "simulate_cascade", "step_seeds"]

FORMAT = "uncertainty_lab.cascade/1"


class CascadeResumeError(CascadeError):
    """An existing JSONL file cannot be continued with these arguments (a different configuration)."""


# --- records ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CascadeStep:
    """One generated event with what produced it: its memory (indices into the run's events, 0 = seed, and the
    normalised weights), the prompt's hash, the language-model seed and, when sampled, the alternative texts and
    the metric's result on them (``{"metric", "uncertainty", "confidence", ...}``). ``raw_text``: what the model
    wrote, kept only when a ``postprocess`` function changed it into ``text``."""

    step: int
    time: float
    node: int
    text: str
    memory: tuple[MemoryItem, ...]
    prompt_hash: str
    llm_seed: int
    finish_reason: str = "stop"
    samples: tuple[str, ...] | None = None
    metric: dict[str, Any] | None = None
    raw_text: str | None = None

    @property
    def event(self) -> Event:
        return Event(self.time, self.node, self.text)

    @property
    def uncertainty(self) -> float:
        return float(self.metric["uncertainty"]) if self.metric else math.nan

    @property
    def confidence(self) -> float:
        return float(self.metric["confidence"]) if self.metric else math.nan

    def to_record(self) -> dict[str, Any]:
        rec: dict[str, Any] = {
            "type": "step", "step": self.step, "time": self.time, "node": self.node, "text": self.text,
            "memory": [m.to_record() for m in self.memory], "prompt_hash": self.prompt_hash,
            "llm_seed": self.llm_seed, "finish_reason": self.finish_reason,
        }
        if self.samples is not None:
            rec["samples"] = list(self.samples)
            rec["metric"] = self.metric
        if self.raw_text is not None:
            rec["raw_text"] = self.raw_text
        return rec

    @classmethod
    def from_record(cls, rec: dict[str, Any]) -> CascadeStep:
        samples = rec.get("samples")
        return cls(
            step=int(rec["step"]), time=float(rec["time"]), node=int(rec["node"]), text=rec["text"],
            memory=tuple(MemoryItem.from_record(m) for m in rec.get("memory", ())),
            prompt_hash=rec.get("prompt_hash", ""), llm_seed=int(rec.get("llm_seed", -1)),
            finish_reason=rec.get("finish_reason", "stop"),
            samples=None if samples is None else tuple(samples), metric=rec.get("metric"),
            raw_text=rec.get("raw_text"),
        )


@dataclass
class CascadeRun:
    """A cascade: its configuration, the seed event e_0 and the generated steps e_1..e_L.

    ``stop_reason``: "steps" (all L steps done), "horizon" (no further event before the horizon, or the
    intensity died out) or None (interrupted; :func:`simulate_cascade` with the same ``out`` resumes it).
    ``CascadeRun.load(path)`` reloads a JSONL file into the same object.
    """

    config: dict[str, Any]
    seed_event: Event
    node_specs: tuple[NodeSpec, ...]
    steps: list[CascadeStep] = field(default_factory=list)
    stop_reason: str | None = None
    path: Path | None = None

    def __len__(self) -> int:
        return len(self.steps)

    def __repr__(self) -> str:
        where = f", path={str(self.path)!r}" if self.path else ""
        return (f"CascadeRun({len(self.steps)} steps, selector={self.config.get('selector', {}).get('name')!r}, "
                f"k={self.config.get('k')}, stop_reason={self.stop_reason!r}{where})")

    @property
    def n_steps(self) -> int:
        return len(self.steps)

    @property
    def complete(self) -> bool:
        return self.stop_reason is not None

    @property
    def events(self) -> list[Event]:
        """e_0 (the seed), e_1, …, e_L."""
        return [self.seed_event] + [s.event for s in self.steps]

    @property
    def history(self) -> History:
        return History(self.node_specs, self.events)

    @property
    def texts(self) -> list[str]:
        return [e.text for e in self.events]

    @property
    def times(self) -> np.ndarray:
        return np.array([e.time for e in self.events])

    @property
    def nodes(self) -> np.ndarray:
        return np.array([e.node for e in self.events], dtype=np.int64)

    @property
    def node_names(self) -> list[str]:
        return [s.name for s in self.node_specs]

    @property
    def uncertainty(self) -> np.ndarray:
        """The per-step metric uncertainty on the alternative samples (NaN where none was sampled), shape (L,)."""
        return np.array([s.uncertainty for s in self.steps], dtype=float)

    @property
    def confidence(self) -> np.ndarray:
        return np.array([s.confidence for s in self.steps], dtype=float)

    def prompt(self, step: int, prompt_fn: Callable | None = None, *, verify: bool = True) -> list[dict[str, str]]:
        """Rebuild the messages the model saw at ``step`` (1..L) with ``prompt_fn`` — by default the template the
        run recorded (``config["prompt_fn"]``, imported by its name when it is a module-level function; else the
        default template); ``verify`` checks them against the stored prompt hash."""
        if not 1 <= step <= len(self.steps):
            raise CascadeError(f"step must be in 1..{len(self.steps)}, got {step!r}")
        if prompt_fn is None:
            prompt_fn = _resolve_fn(self.config.get("prompt_fn")) or build_prompt
        s = self.steps[step - 1]
        history = History(self.node_specs, self.events[:step])
        messages = prompt_fn(s.time, s.node, self.node_specs[s.node], list(s.memory), history, self.node_specs)
        if verify and s.prompt_hash and prompt_hash(messages) != s.prompt_hash:
            raise CascadeError(
                f"the rebuilt prompt of step {step} does not match the stored hash: the run used another prompt_fn "
                f"({self.config.get('prompt_fn')}); pass it as prompt_fn=, or verify=False"
            )
        return messages

    @classmethod
    def load(cls, path: str | os.PathLike) -> CascadeRun:
        """Reload a cascade JSONL file (complete or interrupted) into a CascadeRun."""
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"no cascade file at {path}")
        header, steps, end, _ = _read_jsonl(path)
        if header is None:
            raise CascadeError(f"{path} has no cascade header line; it is not a cascade run (or it is empty)")
        return _run_from(header, steps, end, path)


# --- helpers ----------------------------------------------------------------------------------------------


def step_seeds(seed: int, step: int) -> dict[str, Any]:
    """The generators and seeds of one step, derived from (seed, step): ``hawkes`` and ``selector`` numpy
    Generators, ``llm`` (the generation seed) and ``samples`` (the alternative samples' seed)."""

    def _int(purpose: int) -> int:
        return int(np.random.SeedSequence([seed, step, purpose]).generate_state(1, np.uint32)[0] & 0x7FFFFFFF)

    return {
        "hawkes": np.random.default_rng([seed, step, 0]),
        "selector": np.random.default_rng([seed, step, 1]),
        "llm": _int(2),
        "samples": _int(3),
    }


def _jsonable(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (str, int, float, bool)) or x is None:
        return x
    return repr(x)


def _plugin_config(obj: Any) -> dict[str, Any]:
    from ..parameters import parameters

    params = {p.name: _jsonable(getattr(obj, p.name, None)) for p in parameters(type(obj))}
    return {"name": getattr(obj, "name", type(obj).__name__), "params": params}


def _llm_identity(llm: Any) -> dict[str, str]:
    backend = llm.cache_backend_name() if callable(getattr(llm, "cache_backend_name", None)) else getattr(llm, "name", type(llm).__name__)
    model = llm.model_id() if callable(getattr(llm, "model_id", None)) else str(getattr(llm, "model", ""))
    return {"backend": str(backend), "model": str(model)}


def _fn_name(fn: Callable) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


def _resolve_fn(qualified: Any) -> Callable | None:
    """The module-level function named ``module.function`` (as :func:`_fn_name` wrote it), or None."""
    if not isinstance(qualified, str) or "." not in qualified or "<" in qualified:
        return None
    module, _, name = qualified.rpartition(".")
    try:
        import importlib

        fn = getattr(importlib.import_module(module), name, None)
    except Exception:  # a module that is gone or broken: fall back to the default template
        return None
    return fn if callable(fn) else None


def _canon(x: Any) -> Any:
    return json.loads(json.dumps(_jsonable(x)))


def _read_jsonl(path: Path):
    """(header, step records, last end record or None if steps follow it, bytes of complete lines)."""
    header = None
    steps: list[dict[str, Any]] = []
    end = None
    lines, good = read_records(path, error=CascadeError)
    for line_no, rec in lines:
        kind = rec.get("type") if isinstance(rec, dict) else None
        if kind == "header":
            if header is not None:
                raise CascadeError(f"{path} line {line_no}: a second header; the file mixes two runs")
            header = rec
        elif kind == "step":
            if header is None:
                raise CascadeError(f"{path} line {line_no}: a step before the header")
            expected = len(steps) + 1
            if rec.get("step") != expected:
                raise CascadeError(f"{path} line {line_no}: step {rec.get('step')!r} where step {expected} was expected")
            steps.append(rec)
            end = None
        elif kind == "end":
            end = rec
        else:
            raise CascadeError(f"{path} line {line_no}: unknown record {json.dumps(rec)[:80]!r}")
    return header, steps, end, good


def _run_from(header: dict[str, Any], steps: list[dict[str, Any]], end: dict[str, Any] | None, path: Path | None) -> CascadeRun:
    if header.get("format") != FORMAT:
        raise CascadeError(f"{path}: format {header.get('format')!r} is not {FORMAT!r}")
    config = header["config"]
    specs = as_node_specs(config["node_specs"])
    return CascadeRun(
        config=config, seed_event=Event.from_record(config["seed_event"]), node_specs=specs,
        steps=[CascadeStep.from_record(r) for r in steps],
        stop_reason=None if end is None else end.get("reason"), path=path,
    )


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
) -> CascadeRun:
    """Run HawkesLLM Algorithm 1 for ``steps`` = L steps from ``seed_event`` = e_0 and return a CascadeRun.

    - ``hawkes_model``: a fitted, **stable** HawkesModel over the N nodes (``alpha[source, target]``); an
      unstable one (ρ(G) ≥ 1) is refused. Generated events feed back into its intensity.
    - ``selector``: a ``memory_selectors`` name (``"hawkes"``, ``"recency"``, ``"random"``, …) or an instance;
      ``k`` ≥ 1 its memory budget.
    - ``llm``: a backend (``get_llm(...)``) or a spec string for ``get_llm``; decoding ``temperature``, ``top_p``,
      ``max_tokens`` (the paper: 0.35, 0.9, 75). The generated text is stripped of surrounding whitespace.
    - ``seed``: int ≥ 0; every step's draws and the model's seed derive from (seed, step) (:func:`step_seeds`).
    - ``node_specs``: one NodeSpec(name, instruction) per node. ``prompt_fn``: the template (see ``prompt``).
    - ``out``: a JSONL path; each step is written as it is made. With ``resume=True`` an existing file with the
      same configuration is continued (a different one raises CascadeResumeError); ``resume=False`` overwrites.
      ``steps`` may grow between calls (a finished run is extended).
    - ``samples_per_step=m`` > 0: draw m more texts per step at ``sample_temperature`` for the same prompt and
      score them with ``metric`` (a ``metrics`` name or instance): ``run.uncertainty`` is the per-step curve.
    - ``horizon``: no event after this time; the run stops early (stop_reason "horizon") when the next event
      would fall beyond it (or the intensity has died out).
    - ``postprocess``: a deterministic function applied to every generated text (the main one and the
      alternative samples) before it enters the history, e.g. keeping the first line of a rambling answer
      (:func:`uncertainty_lab.cascade.experiment.clean_headline`). The step keeps the model's own text as
      ``raw_text`` when it changed; the function's name is part of the configuration.
    """
    from ..hawkes.errors import UnstableModelError
    from ..hawkes.model import HawkesModel

    # --- validate everything before touching the file -------------------------------------------------
    if not isinstance(seed_event, Event):
        raise CascadeError(f"seed_event must be an Event(time, node, text), got {type(seed_event).__name__}")
    if not isinstance(hawkes_model, HawkesModel):
        raise CascadeError(f"hawkes_model must be a HawkesModel (e.g. a fit's .model), got {type(hawkes_model).__name__}")
    rho = hawkes_model.spectral_radius()
    if rho >= 1.0:
        raise UnstableModelError(
            f"refusing to run a cascade on an unstable Hawkes model: ρ(G) = {rho:.4g} >= 1, so events pile up "
            "without bound; use a stable fit (fit_hawkes keeps the best stable candidate) or reduce alpha"
        )
    specs = as_node_specs(node_specs)
    if len(specs) != hawkes_model.n_nodes:
        raise CascadeError(
            f"node_specs has {len(specs)} nodes but the Hawkes model has {hawkes_model.n_nodes}; give one "
            "NodeSpec(name, instruction) per model node, in the model's node order"
        )
    if seed_event.node >= len(specs):
        raise CascadeError(f"seed_event.node = {seed_event.node} is out of range for {len(specs)} nodes")
    steps = _check_int(steps, "steps", 0, "pass the number of generation steps L")
    k = _check_int(k, "k", 1, "the memory holds at most k events (the paper uses k = 3)")
    seed = _check_int(seed, "seed", 0, "pass an integer seed such as seed=0")
    samples_per_step = _check_int(samples_per_step, "samples_per_step", 0, "pass 0 (none) or the number m of alternative samples")
    temperature = _check_float(temperature, "temperature", 0.0, 5.0)
    sample_temperature = _check_float(sample_temperature, "sample_temperature", 0.0, 5.0)
    top_p = _check_float(top_p, "top_p", 0.0, 1.0, lo_open=True)
    max_tokens = _check_int(max_tokens, "max_tokens", 1, "pass the most new tokens per text, e.g. 75")
    if horizon is not None:
        horizon = float(horizon)
        if not (math.isfinite(horizon) and horizon > seed_event.time):
            raise CascadeError(f"horizon must be a finite time after the seed event (t={seed_event.time}), got {horizon!r}")
    if not callable(prompt_fn):
        raise CascadeError(f"prompt_fn must be a function (see uncertainty_lab.cascade.prompt), got {prompt_fn!r}")
    if postprocess is not None and not callable(postprocess):
        raise CascadeError(f"postprocess must be a function str -> str or None, got {postprocess!r}")
    from .. import registry

    if isinstance(selector, str):
        selector = registry.create("memory_selectors", selector)
    elif isinstance(selector, type):  # a class passed where an instance was meant: use its defaults
        selector = selector()
    if not callable(getattr(selector, "select", None)):
        raise CascadeError(f"selector must be a memory_selectors name or an object with .select(...), got {selector!r}")
    if isinstance(llm, str):
        from ..llm import get_llm

        llm = get_llm(llm)
    if not callable(getattr(llm, "complete", None)):
        raise CascadeError(f"llm must be a language-model backend (get_llm(...)) or a spec string, got {llm!r}")
    if samples_per_step:
        if metric is None:
            raise CascadeError("samples_per_step > 0 needs metric= (a metrics name such as 'semantic_entropy', or an instance)")
        if isinstance(metric, str):
            metric = registry.create("metrics", metric)
        elif isinstance(metric, type):
            metric = metric()
        if not callable(getattr(metric, "score", None)):
            raise CascadeError(f"metric must be a metrics name or an object with .score(samples), got {metric!r}")
    else:
        metric = None

    config = _canon({
        "seed_event": seed_event.to_record(),
        "node_specs": [s.to_record() for s in specs],
        "model": {"mu": hawkes_model.mu, "alpha": hawkes_model.alpha,
                  "kernel": _plugin_config(hawkes_model.kernel)},
        "selector": _plugin_config(selector),
        "llm": _llm_identity(llm),
        "k": k, "seed": seed, "prompt_fn": _fn_name(prompt_fn),
        "temperature": temperature, "top_p": top_p, "max_tokens": max_tokens,
        "samples_per_step": samples_per_step, "sample_temperature": sample_temperature if samples_per_step else None,
        "metric": _plugin_config(metric) if metric is not None else None,
        "horizon": horizon,
        # only when set, so files written before this option existed still resume
        **({"postprocess": _fn_name(postprocess)} if postprocess is not None else {}),
    })
    header = {"type": "header", "format": FORMAT, "config": config, "steps": steps}

    # --- resume or start ------------------------------------------------------------------------------
    path = Path(out) if out is not None else None
    records: list[dict[str, Any]] = []
    end = None
    mode = "w"
    if path is not None and resume and path.is_file() and path.stat().st_size > 0:
        old_header, records, end, good = _read_jsonl(path)
        if old_header is not None:
            if old_header.get("format") != FORMAT:
                raise CascadeResumeError(f"{path} holds format {old_header.get('format')!r}, not {FORMAT!r}; "
                                         "pass resume=False to overwrite it or choose another out path")
            diff = sorted(key for key in set(config) | set(old_header["config"])
                          if config.get(key) != old_header["config"].get(key))
            if diff:
                detail = "; ".join(f"{key}: file {old_header['config'].get(key)!r} vs now {config.get(key)!r}"
                                   for key in diff)
                raise CascadeResumeError(
                    f"cannot resume {path}: it was made with a different configuration ({detail[:600]}). "
                    "Pass the same arguments to continue it, resume=False to overwrite it, or another out path"
                )
            if len(records) > steps:
                raise CascadeResumeError(
                    f"{path} already holds {len(records)} steps, more than steps={steps}; pass steps >= "
                    f"{len(records)} (or CascadeRun.load it), or resume=False to start over"
                )
            drop_cut_tail(path, good)
            mode = "a"
        else:
            records, end = [], None
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
    run = CascadeRun(config=config, seed_event=seed_event, node_specs=specs,
                     steps=[CascadeStep.from_record(r) for r in records], path=path)
    if end is not None and (end.get("reason") == "horizon" or len(records) == steps):
        run.stop_reason = end.get("reason")
        return run

    history = History(specs, run.events)
    writer = JournalWriter(path, mode)
    try:
        if mode == "w":
            writer.write(header)
        run.stop_reason = _generate(run, history, writer, hawkes_model, selector, llm, steps, k, seed, specs,
                                    prompt_fn, temperature, top_p, max_tokens, samples_per_step, metric,
                                    sample_temperature, horizon, progress, postprocess)
    finally:
        writer.close()
    return run


def generate_step(t: int, history: History, model, selector, llm, k: int, seed: int, specs, prompt_fn=build_prompt,
                  temperature: float = 0.35, top_p: float = 0.9, max_tokens: int = 75, samples_per_step: int = 0,
                  metric=None, sample_temperature: float = 1.0, horizon: float | None = None,
                  postprocess: Callable[[str], str] | None = None) -> CascadeStep | None:
    """One step of Algorithm 1 on ``history`` (not appended): draw (τ_t, n_t), select the memory, build the prompt,
    generate (and sample/score alternatives). None when no event comes before the horizon. Arguments are not
    validated here — :func:`simulate_cascade` does that."""
    seeds = step_seeds(seed, t)
    nxt = next_event(model, history, seeds["hawkes"], horizon=horizon)
    if nxt is None:
        return None
    tau, node = float(nxt[0]), int(nxt[1])
    sel_name = getattr(selector, "name", type(selector).__name__)
    memory = check_memory(selector.select(history, tau, node, k, model=model, rng=seeds["selector"]),
                          history, tau, who=f"memory selector {sel_name!r}")
    messages = prompt_fn(tau, node, specs[node], memory, history, specs)
    (completion,) = llm.complete(messages, n=1, temperature=temperature, top_p=top_p, max_tokens=max_tokens,
                                 seed=seeds["llm"])
    raw = completion.text.strip()
    text = _clean(postprocess, raw)
    samples = result = None
    if samples_per_step:
        extra = {"logprobs": True} if getattr(llm, "supports_logprobs", False) else {}
        comps = llm.complete(messages, n=samples_per_step, temperature=sample_temperature, top_p=top_p,
                             max_tokens=max_tokens, seed=seeds["samples"], **extra)
        samples = tuple(_clean(postprocess, c.text.strip()) for c in comps)
        result = _score(metric, comps, messages, samples)
    return CascadeStep(t, tau, node, text, tuple(memory), prompt_hash(messages), seeds["llm"],
                       str(getattr(completion, "finish_reason", "stop") or "stop"), samples, result,
                       raw if text != raw else None)


def _clean(postprocess, text: str) -> str:
    if postprocess is None:
        return text
    out = postprocess(text)
    if not isinstance(out, str):
        raise CascadeError(f"postprocess must return a string, got {type(out).__name__} for {text[:60]!r}")
    return out.strip()


def _generate(run, history, writer, model, selector, llm, steps, k, seed, specs, prompt_fn, temperature, top_p,
              max_tokens, m, metric, sample_temperature, horizon, progress, postprocess=None) -> str:
    from tqdm.auto import tqdm

    sel_name = getattr(selector, "name", type(selector).__name__)
    bar = tqdm(total=steps, initial=len(run.steps), desc=f"cascade ({sel_name}, k={k})", disable=not progress,
               leave=False)
    try:
        for t in range(len(run.steps) + 1, steps + 1):
            step = generate_step(t, history, model, selector, llm, k, seed, specs, prompt_fn, temperature, top_p,
                                 max_tokens, m, metric, sample_temperature, horizon, postprocess)
            if step is None:
                writer.write({"type": "end", "reason": "horizon", "n_steps": t - 1,
                              "detail": "no further event before the horizon" if horizon is not None
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


def _score(metric, completions, messages, texts=None) -> dict[str, Any]:
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
