"""Semantic-uncertainty benchmark: every metric on a set of 10 sampled answers, with the exact and the embedding
judge, after the embeddings are computed. Target: all metrics together in < 20 ms per judge and sample set.

Run: `python benchmarks/semantic.py [--repeat 50]`. Prints a markdown table to paste into RESULTS.md.

- Each set of 10 answers comes from one sampling run of the embedded model (T = 1.0, with token logprobs, so
  semantic_entropy and predictive_entropy are measured too); a temporary cache keeps earlier runs out. Two sets:
  a short factual question (the small model repeats itself: few distinct answers, few pairs to judge) and an open
  question (every answer distinct: all 45 pairs judged, the expensive case).
- Excluded: verbalized_confidence — it calls the language model (one generation per sample set), so its time is
  generation time, not scoring.
- "After embedding": the embedder's text cache is warmed with the 10 answers first, and every metric is scored
  once before timing. Before each timed call the judge's pair-judgement cache is cleared, so each timing includes
  judging the pairs (cosines from cached embeddings) — the cost of scoring a *new* sample set whose answers are
  already embedded. The "one pass" row scores all metrics in sequence after one clear, as `score_all` would: later
  metrics reuse the pair judgements of earlier ones.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from machine import machine

TARGET_MS = 20.0
N_SAMPLES = 10
JUDGES = ("exact", "embedding")
EXCLUDED = {"verbalized_confidence": "calls the language model (its time is generation, not scoring)"}
QUESTIONS = {"factual": "What is the capital city of Australia?",
             "open": "Why do people keep pets? Answer in one sentence."}


def median_ms(fn, repeat: int, before=None) -> float:
    times = []
    for _ in range(repeat):
        if before is not None:
            before()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=50, help="timed calls per metric (median reported)")
    args = parser.parse_args(argv)

    from uncertainty_lab import registry
    from uncertainty_lab.embeddings import Embedder
    from uncertainty_lab.llm import CompletionCache, get_llm
    from uncertainty_lab.parameters import parameters
    from uncertainty_lab.semantic import clear_judgement_cache, sample_answers

    tmp = Path(tempfile.mkdtemp())
    llm = get_llm("embedded", cache=CompletionCache(tmp / "bench.sqlite"))
    sets = {}
    for label, question in QUESTIONS.items():
        samples = sample_answers(llm, question, n=N_SAMPLES, temperature=1.0, seed=0, max_tokens=48, logprobs=True)
        assert samples.has_logprobs, "the embedded backend should give token logprobs"
        Embedder().encode(samples.texts)  # warm the embedder's text cache: "after embedding"
        sets[label] = samples

    names = [m for m in registry.names("metrics") if m not in EXCLUDED]
    columns = [(s_label, j) for s_label in sets for j in JUDGES]
    rows: dict[str, dict[tuple[str, str], float]] = {m: {} for m in names}
    one_pass: dict[tuple[str, str], float] = {}
    for s_label, samples in sets.items():
        for judge_name in JUDGES:
            judge = registry.create("equivalence_judges", judge_name)
            metrics = {}
            for m in names:
                declared = {p.name for p in parameters(registry.get("metrics", m))}
                metrics[m] = registry.create("metrics", m, **({"judge": judge} if "judge" in declared else {}))
                result = metrics[m].score(samples)  # warm: imports, lazy model handles
                assert not result.missing, f"{m} is missing on the benchmark set: {result.details.get('missing')}"
            for m, metric in metrics.items():
                rows[m][(s_label, judge_name)] = median_ms(lambda metric=metric, samples=samples: metric.score(samples),
                                                           args.repeat, before=clear_judgement_cache)
            one_pass[(s_label, judge_name)] = median_ms(
                lambda metrics=metrics, samples=samples: [mm.score(samples) for mm in metrics.values()],
                args.repeat, before=clear_judgement_cache)

    print(f"Machine: {machine(load=True)}\n\nCommand: `{' '.join([Path(sys.executable).name] + sys.argv)}`\n")
    for s_label, samples in sets.items():
        print(f"- {s_label}: {samples.n} samples, {len(set(samples.texts))} distinct, of {samples.question!r} "
              "(embedded model, T = 1.0, max_tokens = 48, logprobs)")
    print(f"\nMedian of {args.repeat} calls; pair-judgement cache cleared before each call; embeddings cached. "
          "Excluded: " + "; ".join(f"{k}, which {v}" for k, v in EXCLUDED.items()) + ".\n")
    print("| metric | " + " | ".join(f"{s_label}, {j} (ms)" for s_label, j in columns) + " |")
    print("|---|" + "---:|" * len(columns))
    for m in names:
        print(f"| {m} | " + " | ".join(f"{rows[m][c]:.3f}" for c in columns) + " |")
    sums = {c: sum(rows[m][c] for m in names) for c in columns}
    print("| sum of the rows | " + " | ".join(f"{sums[c]:.2f}" for c in columns) + " |")
    print(f"| **all {len(names)} metrics, one pass** | " + " | ".join(f"**{one_pass[c]:.2f}**" for c in columns) + " |")
    print(f"| target < {TARGET_MS:g} ms: measured / target | "
          + " | ".join(f"{one_pass[c] / TARGET_MS:.3f}" for c in columns) + " |")

if __name__ == "__main__":
    main()
