"""Scaling of an experiment over dask workers: units per second against 1, 2, 4, 8 worker processes, for

  (a) a model-free search (the oracle reader: CPU-bound, a few ms of BM25 and bookkeeping per episode),
  (b) a latency-bound search against a local fake Ollama server that answers every chat after a fixed delay
      (the shape of a remote GPU server: the worker waits, the CPU idles),
  (c) the embedded model (SmolLM2-135M in every worker process, one thread each: CPU-bound).

Every case is the search lab with the heuristic policy, the implicit belief and one gate set, so a unit is one
episode (one model call: the final answer); the fake server runs in a process of its own, like a remote one. For
each worker count one LocalCluster (one thread per worker) serves every case: per case a warm-up in every worker
(the imports, the data and, in (c), loading the model: what a first unit pays once per process), then the timed
run on the same questions every time, with a fresh completion cache (nothing is answered from an earlier run).
Throughput = units / wall time of the timed run, including the main process's work (journals, cache, records);
efficiency = throughput / (workers × throughput with 1 worker). The steady columns count only the units after the
first round (after the first ``workers`` finished), so the start-up (connecting, each worker's context) is left
out: what a sweep of hundreds of units sees. The serial executor (in process) is the reference row.

Run: ``python benchmarks/scaling.py [--cases a b c] [--workers 1 2 4 8] [--units 64 32 8] [--delay 0.5]``. Prints a
markdown table to paste into RESULTS.md.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from machine import machine

TESTS = Path(__file__).resolve().parents[1] / "tests"
SERVE = """
import sys, threading
sys.path.insert(0, sys.argv[1])
from fake_ollama import FakeOllama
with FakeOllama(models=["fake:1"], reply="Answer: unknown", delay=float(sys.argv[2]), delay_paths=("/api/chat",)) as f:
    print(f.url, flush=True)
    sys.stdin.read()  # until the benchmark closes our stdin
"""

#: case -> (name, settings): the embedded model answers from the whole implicit state, so (c) takes 1 step (one
#: search's passages in the prompt) and 8-token answers to keep a unit to seconds on one core
CASES = {
    "a": ("model-free (oracle reader), 8 steps", {"llm": "oracle", "max_steps": 8}),
    "b": ("latency-bound (fake Ollama, {delay} s per chat), 8 steps", {"llm": "ollama:fake:1", "max_steps": 8}),
    "c": ("embedded model (SmolLM2-135M, 1 thread per worker), 1 step, 8-token answers",
          {"llm": "embedded", "max_steps": 1, "answer_max_tokens": 8}),
}


@contextlib.contextmanager
def fake_server(delay: float) -> Iterator[str]:
    """A fake Ollama server in a process of its own (a remote server does not share our interpreter), answering
    every chat after ``delay`` seconds; yields its URL."""
    proc = subprocess.Popen([sys.executable, "-c", SERVE, str(TESTS), str(delay)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        yield proc.stdout.readline().strip()
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)


def config(case: dict, ids: list[str], **run: object) -> dict:
    return {"questions": ids, "beliefs": ["implicit"], "gate_sets": [["fixed_budget"]], "progress": False,
            "figure": False, "out_dir": tempfile.mkdtemp(prefix="run-"), **case, **run}


def warm_worker(case: dict, ids: list[str]) -> None:
    """In each worker (``client.run``), what its first unit would pay once per process: the imports, the data and,
    for the embedded model, loading it (a one-token answer)."""
    from uncertainty_lab.search.config import SearchConfig
    from uncertainty_lab.search.experiment import EXPERIMENT

    context = EXPERIMENT.prepare(SearchConfig.from_mapping(config(case, ids)))
    if case["llm"] == "embedded":
        context.llm.complete("Say hi.", max_tokens=1, seed=0)


def timed_run(case: dict, ids: list[str], busy: int, **run: object) -> tuple[float, float]:
    """One run of ``ids`` (a fresh completion cache, a fresh out_dir): its wall seconds, and its steady rate, the
    units per second after the first ``busy`` finished (the start-up — connecting, each worker's context, the
    first round — left out: what a long sweep sees)."""
    from uncertainty_lab.search.experiment import run_experiment

    os.environ["UL_CACHE_DIR"] = tempfile.mkdtemp(prefix="cache-")
    done: list[float] = []
    start = time.perf_counter()
    run_experiment(config(case, ids, **run), save=False, log=lambda *_: done.append(time.perf_counter()))
    wall = time.perf_counter() - start
    steady = (len(done) - busy) / (done[-1] - done[busy - 1]) if len(done) > busy else float("nan")
    return wall, steady


def measure(cases: dict[str, tuple[dict, list[str]]], warm: list[str],
            workers: list[int]) -> dict[str, list[tuple[str, float, float]]]:
    """``{case: [(setting, seconds, steady rate), ...]}``: the serial executor, then each worker count (one cluster
    per count, shared by the cases, so each worker process starts and imports once)."""
    import distributed

    out = {case: [("serial (in process)", *timed_run(settings, ids, 1))] for case, (settings, ids) in cases.items()}
    for n in workers:
        with distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                                      silence_logs=logging.CRITICAL) as cluster:
            on = {"executor": "dask", "scheduler": cluster.scheduler_address}
            for case, (settings, ids) in cases.items():
                with distributed.Client(cluster) as client:
                    client.run(warm_worker, settings, warm)
                out[case].append((f"{n} worker{'s' * (n > 1)}", *timed_run(settings, ids, n, **on)))
                print(f"  ({case}) {out[case][-1][0]}: {out[case][-1][1]:.1f} s, load average "
                      f"{os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
    return out


def rows(name: str, units: int, measured: list[tuple[str, float, float]], workers: list[int]) -> list[str]:
    """Table rows: wall time, units/s, speed-up and efficiency against 1 worker, end to end and steady."""
    one, steady_one = units / measured[1][1], measured[1][2]
    lines = []
    for (setting, seconds, steady), n in zip(measured, [0, *workers], strict=True):
        rate = units / seconds
        cells = [f"{rate / one:.2f}x", f"{rate / (n * one):.2f}", f"{steady / (n * steady_one):.2f}"] if n else [""] * 3
        cells = [c.replace("nan", "–") for c in (*cells, f"{steady:.2f}")]  # one round only: no steady rate
        lines.append(f"| {name} | {setting} | {units} | {seconds:.1f} | {rate:.2f} | {cells[0]} | {cells[1]} | "
                     f"{cells[3]} | {cells[2]} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--workers", nargs="+", type=int, default=[1, 2, 4, 8])
    parser.add_argument("--units", nargs="+", type=int, default=[64, 32, 8], help="timed units per case (a b c)")
    parser.add_argument("--delay", type=float, default=0.5, help="seconds the fake Ollama server waits per chat")
    args = parser.parse_args()
    from uncertainty_lab.datasets.search import load_search_questions

    ids = [q.id for q in load_search_questions()]
    units = dict(zip(CASES, args.units, strict=False))
    header = machine(load=True)
    table = ["| case | executor | units | wall s | units/s | speed-up | efficiency | steady units/s | steady "
             "efficiency |", "|---|---|---|---|---|---|---|---|---|"]
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ul-scaling-") as scratch, fake_server(args.delay) as url:
        tempfile.tempdir = os.environ["TMPDIR"] = scratch  # every run's files, the workers' too, removed at the end
        os.environ["OLLAMA_HOST"] = url  # workers started from here inherit it
        cases = {case: (CASES[case][1], ids[:units[case]]) for case in args.cases}
        measured = measure(cases, ids[-2:], args.workers)
    for case in args.cases:
        table += rows(f"({case}) {CASES[case][0].format(delay=args.delay)}", units[case], measured[case], args.workers)
    print(f"Machine: {header}; at the end load average {os.getloadavg()[0]:.1f}. Whole run "
          f"{time.perf_counter() - start:.0f} s.\n")
    print(f"Command: `python benchmarks/scaling.py {' '.join(sys.argv[1:])}`".rstrip() + "\n")
    print("\n".join(table))


if __name__ == "__main__":
    main()
