"""How long the ``strict`` grader takes on one long answer (issue #21: linear in the answer's length; a 1 MB answer
in under 1 s). Run: ``python benchmarks/grading_speed.py`` (prints a markdown table; results in RESULTS.md)."""

from __future__ import annotations

import random
import time

from machine import machine

from uncertainty_lab.semantic.correctness import AnswerGrader

WORDS = ("the fortune cookie came from california and not from china but many people think so , indeed . yes "
         "no it was invented in san francisco ; unclear 1920").split()


def answer(n_chars: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    out, size = [], 0
    while size < n_chars:
        w = rng.choice(WORDS)
        out.append(w)
        size += len(w) + 1
    return " ".join(out)[:n_chars]


def main() -> None:
    grader = AnswerGrader("strict")
    refs = ["Fortune cookies originated in California", "The precise origin of fortune cookies is unclear"]
    wrong = ["Fortune cookies originated in China", "Fortune cookies originated in Japan"]
    print(f"{machine(load=True)}\n\n| answer | seconds (best of 3) | label |\n|---|---|---|")
    for n in (10_000, 100_000, 1_000_000):
        best, label = float("inf"), None
        for rep in range(3):
            text = answer(n - 2) + f" {rep}"  # a new text each time: read_answer's cache must not serve it
            t = time.perf_counter()
            label = grader.check(text, refs, "Where did fortune cookies originate?", wrong).label
            best = min(best, time.perf_counter() - t)
        print(f"| {n:,} characters | {best:.3f} | {label} |")


if __name__ == "__main__":
    main()
