"""Grader speed against answer length: every grader should take time linear in the answer's length (an answer is
model output, and a model that loops can write megabytes). Times each grader on answers of 10 KB, 100 KB and 1 MB
and reports the growth factor per 10x of length (100 KB -> 1 MB): about 10 is linear, about 100 quadratic; under
:data:`LINEAR_BELOW` (40) counts as linear.

Run: `python benchmarks/grader_speed.py [--methods contains normalised hassum embedding strict] [--repeat 3]`.
Prints a markdown table (paste it into RESULTS.md with the machine line).

- Answers: two shapes, cut to the size. ``prose``: a sentence that names the wrong reference and a distractor,
  repeated ("The capital is not Sydney; some say Melbourne, others Perth. "), so no early match ends the work;
  ``one word``: a single run of letters with no space ("aaaa…"), the shape that defeats word splitting.
- Item: question "What is the capital of Australia?", correct references ["Canberra", "Canberra, ACT"],
  incorrect ["Sydney"]. The embedder (``hassum``, ``embedding``) is loaded and warmed before timing; each timed
  call grades a new answer text (the embedder's text cache never answers it).
- Each cell is the fastest of ``--repeat`` calls (the machine is shared: the minimum is the least disturbed).
  When the 1 MB call would take over a minute (projected from the growth 10 KB -> 100 KB), it is not run and the
  cell shows the projected time, marked "~".
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from machine import machine

SIZES = {"10 KB": 10_000, "100 KB": 100_000, "1 MB": 1_000_000}
SHAPES = {"prose": "The capital is not Sydney; some say Melbourne, others Perth. ", "one word": "a"}
QUESTION = "What is the capital of Australia?"
GOLD, WRONG = ["Canberra", "Canberra, ACT"], ["Sydney"]
METHODS = ("contains", "normalised", "hassum", "embedding", "strict")
#: growth per 10x of length below which a grader counts as linear: 10 is linear and 100 quadratic; a shared
#: machine's noise moves one growth figure by 2x either way (1 MB no longer fits the CPU caches either)
LINEAR_BELOW = 40


def answer(shape: str, size: int, salt: int) -> str:
    """``size`` characters of the shape, made distinct by ``salt`` (so no cache can answer it)."""
    unit = SHAPES[shape]
    text = f"{salt} " + unit * (size // len(unit) + 1)
    return text[:size]


def time_call(grader, shape: str, size: int, repeat: int, salt: list[int]) -> float:
    """Fewest seconds of ``repeat`` gradings of fresh answers of ``size`` characters."""
    times = []
    for _ in range(repeat):
        salt[0] += 1
        text = answer(shape, size, salt[0])
        t0 = time.perf_counter()
        grader.check(text, GOLD, QUESTION, WRONG)
        times.append(time.perf_counter() - t0)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from uncertainty_lab.semantic.correctness import AnswerGrader

    print(f"machine: {machine(load=True)}\n")
    print("| grader | answer | " + " | ".join(SIZES) + " | x per 10x length | verdict |")
    print("|---|---|" + "---:|" * len(SIZES) + "---:|---|")
    salt = [0]
    for method in args.methods:
        grader = AnswerGrader(method=method)
        grader.check("Canberra", GOLD, QUESTION, WRONG)  # loads the embedder, if any, outside the timing
        for shape in SHAPES:
            cells, seconds = [], []
            for size in SIZES.values():
                projected = seconds[1] * (seconds[1] / seconds[0]) if len(seconds) == 2 else 0.0
                if projected > 60:
                    cells.append(f"~{projected:.3g} s")
                    seconds.append(projected)
                    continue
                seconds.append(time_call(grader, shape, size, args.repeat, salt))
                cells.append(f"{seconds[-1] * 1e3:.3g} ms" if seconds[-1] < 1 else f"{seconds[-1]:.3g} s")
            growth = (seconds[2] / seconds[1]) if seconds[1] > 0 else float("nan")
            verdict = "linear" if growth < LINEAR_BELOW else "SUPERLINEAR"
            print(f"| {method} | {shape} | " + " | ".join(cells) + f" | {growth:.1f} | {verdict} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
