"""Scaling of an experiment over dask workers: units per second against 1, 2, 4, 8 worker processes, for

  (a) a model-free search (the oracle reader: CPU-bound, a few ms of BM25 and bookkeeping per episode),
  (b) a latency-bound search against a local fake Ollama server that answers every chat after a fixed delay
      (the shape of a remote GPU server: the worker waits, the CPU idles),
  (c) the embedded model (SmolLM2-135M in every worker process, one thread each: CPU-bound).

Every case is the search lab with the heuristic policy, the implicit belief and one gate set, so a unit is one
episode (one model call: the final answer); the fake server runs in a process of its own, like a remote one. For
each worker count one LocalCluster (one thread per worker) serves every case: per case a warm-up run on other
questions (each worker builds its context and, in (c), loads its model), then the timed run on the same questions
every time, with a fresh completion cache (nothing is answered from an earlier run). Throughput = units / wall
time of the timed run, including the main process's work (journals, cache, records); efficiency = throughput /
(workers × throughput with 1 worker). The serial executor (in process) is the reference row.

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

#: case -> (name, llm, step budget): the embedded model answers from the whole implicit state, so (c) takes 2 steps
#: (a prompt of ≈ 300 tokens) to keep a unit to seconds on one core
CASES = {
    "a": ("model-free (oracle reader), 8 steps", "oracle", 8),
    "b": ("latency-bound (fake Ollama, {delay} s per chat), 8 steps", "ollama:fake:1", 8),
    "c": ("embedded model (SmolLM2-135M, 1 thread per worker), 2 steps", "embedded", 2),
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


def config(llm: str, steps: int, ids: list[str], **run: object) -> dict:
    return {"llm": llm, "questions": ids, "beliefs": ["implicit"], "gate_sets": [["fixed_budget"]],
            "max_steps": steps, "progress": False, "figure": False,
            "out_dir": tempfile.mkdtemp(prefix="ul-scaling-"), **run}


def timed_run(llm: str, steps: int, ids: list[str], **run: object) -> float:
    """Seconds for one run of ``ids`` (a fresh completion cache, a fresh out_dir)."""
    from uncertainty_lab.search.experiment import run_experiment

    os.environ["UL_CACHE_DIR"] = tempfile.mkdtemp(prefix="ul-scaling-cache-")
    start = time.perf_counter()
    run_experiment(config(llm, steps, ids, **run), save=False)
    return time.perf_counter() - start


def measure(cases: dict[str, tuple[str, int, list[str]]], warm: list[str],
            workers: list[int]) -> dict[str, list[tuple[str, float]]]:
    """``{case: [(setting, seconds), ...]}``: the serial executor, then each worker count (one cluster per count,
    shared by the cases, so each worker process starts and imports once)."""
    import distributed

    out = {case: [("serial (in process)", timed_run(llm, steps, ids))] for case, (llm, steps, ids) in cases.items()}
    for n in workers:
        with distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                                      silence_logs=logging.CRITICAL) as cluster:
            on = {"executor": "dask", "scheduler": cluster.scheduler_address}
            for case, (llm, steps, ids) in cases.items():
                timed_run(llm, steps, warm[: 2 * n], **on)
                out[case].append((f"{n} worker{'s' * (n > 1)}", timed_run(llm, steps, ids, **on)))
                print(f"  ({case}) {out[case][-1][0]}: {out[case][-1][1]:.1f} s, load average "
                      f"{os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
    return out


def rows(name: str, units: int, measured: list[tuple[str, float]], workers: list[int]) -> list[str]:
    one = units / measured[1][1] if len(measured) > 1 else float("nan")
    lines = []
    for (setting, seconds), n in zip(measured, [0, *workers], strict=True):
        rate = units / seconds
        eff = f"{rate / (n * one):.2f}" if n else ""
        speed = f"{rate / one:.2f}x" if n else ""
        lines.append(f"| {name} | {setting} | {units} | {seconds:.1f} | {rate:.2f} | {speed} | {eff} |")
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
    table = ["| case | executor | units | wall s | units/s | speed-up | efficiency |", "|---|---|---|---|---|---|---|"]
    start = time.perf_counter()
    with fake_server(args.delay) as url:
        os.environ["OLLAMA_HOST"] = url  # workers started from here inherit it
        cases = {case: (CASES[case][1], CASES[case][2], ids[:units[case]]) for case in args.cases}
        measured = measure(cases, ids[-2 * max(args.workers):], args.workers)
    for case in args.cases:
        table += rows(f"({case}) {CASES[case][0].format(delay=args.delay)}", units[case], measured[case], args.workers)
    print(f"Machine: {header}; at the end load average {os.getloadavg()[0]:.1f}. Whole run "
          f"{time.perf_counter() - start:.0f} s.\n")
    print(f"Command: `python benchmarks/scaling.py {' '.join(sys.argv[1:])}`".rstrip() + "\n")
    print("\n".join(table))


if __name__ == "__main__":
    main()
