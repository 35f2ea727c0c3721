"""Foundation benchmarks: embedded generation speed, n=10 sampling, cache-hit latency, embedder throughput.

Run: `python benchmarks/llm.py` (or `make bench`). Prints a markdown table to paste into RESULTS.md.
Uses a temporary cache so earlier runs cannot turn generation into cache hits.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from machine import machine


def timed(fn, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def main() -> None:
    from uncertainty_lab.embeddings import Embedder
    from uncertainty_lab.llm import CompletionCache, get_llm

    tmp = Path(tempfile.mkdtemp())
    llm = get_llm("embedded", cache=CompletionCache(tmp / "bench.sqlite"))
    llm.complete("warm up", max_tokens=4, use_cache=False)
    rows = []

    prompt = "Write a long story about a lighthouse keeper and a storm."
    tok_rates = []
    for seed in range(3):
        t0 = time.perf_counter()
        (c,) = llm.complete(prompt, temperature=0.8, seed=seed, max_tokens=200, logprobs=True, use_cache=False)
        tok_rates.append(len(c.logprobs) / (time.perf_counter() - t0))
    rows.append(("embedded generation, 200-token story (incl. prompt)", f"{statistics.median(tok_rates):.0f} tokens/s",
                 "median of 3"))

    question = "What is the capital of Australia? Answer in a few words."
    times = timed(lambda: llm.complete(question, n=10, temperature=1.0, seed=1, max_tokens=24, use_cache=False), 3)
    rows.append(("n=10 short answers (max_tokens=24, T=1)", f"{statistics.median(times):.2f} s", "median of 3"))

    llm.complete(question, n=1, temperature=1.0, seed=99, max_tokens=24)
    hits = timed(lambda: llm.complete(question, n=1, temperature=1.0, seed=99, max_tokens=24), 2000)
    hit_ms = statistics.median(hits) * 1e3
    p99 = sorted(hits)[int(0.99 * len(hits))] * 1e3
    rows.append(("cache hit, one completion", f"{hit_ms:.3f} ms (p99 {p99:.3f} ms)",
                 f"target < 2 ms: ratio {hit_ms / 2.0:.3f} of target"))

    embedder = Embedder(batch_size=64)
    embedder.encode(["warm up"])
    sentences = [f"Sentence number {i} about the lunar flyby mission and its crew." for i in range(2000)]
    t0 = time.perf_counter()
    embedder.encode(sentences)
    rate = len(sentences) / (time.perf_counter() - t0)
    rows.append(("embedder all-MiniLM-L6-v2, 2000 new sentences, batch 64", f"{rate:.0f} sentences/s", "cold text cache"))

    print(f"Machine: {machine()}\n\nCommand: `{' '.join([Path(sys.executable).name] + sys.argv)}`\n")
    print("| measurement | result | note |\n|---|---|---|")
    for name, value, note in rows:
        print(f"| {name} | {value} | {note} |")


if __name__ == "__main__":
    main()
