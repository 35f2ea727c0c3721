"""Cascade benchmark: per-step overhead of the HawkesLLM loop **excluding the model call** — next-event sampling,
Hawkes memory selection (Algorithm 1) and the bookkeeping (prompt, record, JSONL write, history append) — on
histories of 1e2, 1e4 and 1e5 events. It should stay flat (O(N) per step, N = 5 nodes); target < 1 ms per step
at 1e5 events. For comparison, the Hawkes engine's ``sample_next``, which rebuilds the excitation from the whole
history on every call (O(M·N)).

Run: `python benchmarks/cascade.py` (a few seconds). Prints a markdown table to paste into RESULTS.md.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from machine import machine

SIZES = (100, 10_000, 100_000)
STEPS = 400  # loop steps timed per history size
ENGINE_REPS = {100: 200, 10_000: 50, 100_000: 10}


class FreeLLM:
    """A language model that costs nothing: the benchmark measures everything around the call."""

    name = "free"

    def model_id(self):
        return "none"

    def complete(self, messages, *, n=1, seed=0, **kw):
        from uncertainty_lab.llm import Completion

        return [Completion("A headline", "stop", "free", "none", seed, i) for i in range(n)]


def main() -> None:
    from uncertainty_lab.cascade import Event, HawkesSelector, History, NodeSpec, next_event
    from uncertainty_lab.cascade.run import generate_step, step_seeds
    from uncertainty_lab.hawkes import HawkesModel
    from uncertainty_lab.journal import JournalWriter

    names = ["local_tv", "mass_market", "specialist_science_tech", "business_finance", "general_news"]
    specs = [NodeSpec(n, f"Write one {n.replace('_', ' ')} headline.") for n in names]
    alpha = np.array([
        [0.30, 0.10, 0.00, 0.05, 0.10],
        [0.05, 0.35, 0.00, 0.05, 0.10],
        [0.10, 0.10, 0.20, 0.05, 0.10],
        [0.00, 0.05, 0.00, 0.30, 0.10],
        [0.10, 0.10, 0.05, 0.10, 0.25],
    ])
    model = HawkesModel.exponential([0.02, 0.03, 0.01, 0.02, 0.03], alpha, beta=1.5)  # hours; ρ(G) ≈ 0.36
    selector = HawkesSelector()
    llm = FreeLLM()
    rows = []
    tmp = Path(tempfile.mkdtemp())
    for size in SIZES:
        stream = model.simulate(max_events=size, seed=size)
        history = History(specs, [Event(float(t), int(n), f"headline {m} about the mission")
                                  for m, (t, n) in enumerate(zip(stream.times, stream.nodes, strict=True))])
        t_build = time.perf_counter()
        history.excitation(history.last_time, model.beta)  # the one O(M·N) pass that starts tracking β
        t_build = time.perf_counter() - t_build

        # components, on the same history (not appended)
        samp, sel = [], []
        for i in range(STEPS):
            rng = step_seeds(1, i)["hawkes"]
            t0 = time.perf_counter()
            tau, node = next_event(model, history, rng)
            t1 = time.perf_counter()
            selector.select(history, tau, node, 3, model=model)
            t2 = time.perf_counter()
            samp.append(t1 - t0)
            sel.append(t2 - t1)

        # whole loop steps (seeds, draw, select, prompt, hash, record, JSONL write + flush, append), model call free
        writer = JournalWriter(tmp / f"bench_{size}.jsonl", "w")
        totals = []
        for _ in range(STEPS):
            t0 = time.perf_counter()
            step = generate_step(len(history), history, model, selector, llm, 3, 1, specs)
            history.append(step.event)
            writer.write(step.to_record())
            totals.append(time.perf_counter() - t0)
        writer.close()

        # the engine's sample_next on the history arrays (rescans the history)
        eng = []
        times, nodes = history.times.copy(), history.nodes.copy()
        for i in range(ENGINE_REPS[size]):
            rng = np.random.default_rng(i)
            t0 = time.perf_counter()
            model.sample_next((times, nodes), float(times[-1]), rng)
            eng.append(time.perf_counter() - t0)

        us = lambda xs: f"{statistics.median(xs) * 1e6:.0f} µs"  # noqa: E731
        rows.append((f"{size:,}", us(samp), us(sel), us(totals), f"{np.percentile(totals, 95) * 1e6:.0f} µs", us(eng),
                     f"{t_build * 1e3:.1f} ms"))

    print(f"Cascade per-step overhead, model call excluded — {machine()}; 5 nodes, k = 3, hawkes selector, "
          f"median of {STEPS} steps\n")
    print("| history (events) | next-event draw (O(N) thinning) | Algorithm 1 selection | whole step excl. model "
          "| whole step p95 | engine `sample_next` (rescans history) | first-use state build (once) |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    print("\n'Whole step' = derived seeds + next-event draw + selection + memory check + prompt + hash + record + "
          "JSONL write/flush + history append (what `simulate_cascade` does per step besides the model call).")


if __name__ == "__main__":
    sys.exit(main())
