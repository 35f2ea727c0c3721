"""Sampling paths of the embedded model: n = 10 samples of one prompt, sequential (every sample evaluates its prompt
from scratch, ``reuse_prompt=False``) against prompt reuse (samples after the first reuse the prompt's KV cache,
the default), on a short question and a long cascade prompt (~700 tokens), interleaved in one run so both paths see
the same machine load.

Run: ``python benchmarks/sampling.py [--reps 3] [--n 10]``. Prints a markdown table to paste into RESULTS.md.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from machine import machine


def long_prompt(m: int = 25) -> list[dict[str, str]]:
    from uncertainty_lab.datasets import load_news_cascade

    rng = random.Random(0)
    headlines = rng.sample([e.headline for e in load_news_cascade()], m)
    memory = "\n".join(f"[weight {1 / m:.2f}] (node, t={i}.0 h) {h}" for i, h in enumerate(headlines))
    return [{"role": "system", "content": "You are a local TV newsroom writing one headline."},
            {"role": "user", "content": f"Earlier coverage:\n{memory}\nWrite the next headline."}]


PROMPTS = {
    "short question, 32 new tokens": ("What is the capital of Australia? Answer in a few words.", 32),
    "cascade prompt (~700 tokens), 75 new tokens": (long_prompt(), 75),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3, help="repetitions of each measurement (interleaved)")
    parser.add_argument("--n", type=int, default=10, help="samples per prompt")
    args = parser.parse_args()
    from uncertainty_lab.llm import CompletionCache, get_llm

    cache = CompletionCache(Path(tempfile.mkdtemp()) / "bench.sqlite")
    paths = {"sequential": get_llm("embedded", cache=cache, reuse_prompt=False),
             "prompt reuse": get_llm("embedded", cache=cache, reuse_prompt=True)}
    paths["sequential"].complete("warm up", max_tokens=4, use_cache=False)
    rates: dict[tuple[str, str], list[float]] = {}
    texts: dict[tuple[str, str, int], list[str]] = {}
    for rep in range(args.reps):
        for name, (prompt, tokens) in PROMPTS.items():
            for path, llm in paths.items():
                t0 = time.perf_counter()
                out = llm.complete(prompt, n=args.n, temperature=1.0, seed=100 + rep, max_tokens=tokens,
                                   use_cache=False)
                rates.setdefault((name, path), []).append(args.n / (time.perf_counter() - t0))
                texts[(name, path, rep)] = [c.text for c in out]
    print(f"Machine: {machine(load=True)}. Command: `python benchmarks/sampling.py --reps {args.reps} --n {args.n}`\n")
    print("| prompt | path | samples/s (median of reps) | all reps | vs sequential | texts equal to sequential |")
    print("|---|---|---|---|---|---|")
    for name in PROMPTS:
        base = statistics.median(rates[(name, "sequential")])
        for path in paths:
            r = rates[(name, path)]
            same = sum(a == b for rep in range(args.reps)
                       for a, b in zip(texts[(name, path, rep)], texts[(name, "sequential", rep)], strict=True))
            print(f"| {name} | {path} | {statistics.median(r):.2f} | {', '.join(f'{x:.2f}' for x in r)} | "
                  f"{statistics.median(r) / base:.2f}x | {same}/{args.reps * args.n} |")


if __name__ == "__main__":
    main()
