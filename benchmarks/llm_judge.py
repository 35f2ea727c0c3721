"""How far the LLM-as-judge grader (``llm``) agrees with our hand labels, next to ``strict``, on a seeded sample of
the shipped grader audit set (``datasets/data/grader_audit.jsonl``).

Run: ``python benchmarks/llm_judge.py [--llm embedded] [--sample 100] [--seed 0] [--out FILE.json]``;
``--real TruthfulQA.csv strategyqa_train.json [--work-dir DIR]`` judges a seeded sample of the hand-labelled real
answers of ``grading_audit_real.py`` instead.
Bounded: one judgement per sampled answer (``--sample`` ≤ 253). Every judgement goes through the completion cache
(``$UL_CACHE_DIR``), so a rerun costs no model call. Prints a markdown table and the verdict counts; the results
and the command are in ``benchmarks/llm_judge.md``.

The judge has no ``refused`` verdict (it says CORRECT / WRONG / UNSURE), so besides the three-label agreement the
script reports its accuracy on the answers our hand labels call ``correct`` or ``wrong`` (the part it can get
right), against the share a constant guess of the majority label gets there.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

from machine import machine


def _subset_accuracy(hand: list[str], graded: list[str]) -> dict[str, float]:
    """On the answers hand-labelled correct or wrong: the grader's accuracy (uncertain counts as a miss), the
    share a constant majority guess gets, and the accuracy on those the grader decided (``decided`` of them)."""
    pairs = [(h, g) for h, g in zip(hand, graded, strict=True) if h in ("correct", "wrong")]
    n = len(pairs)
    decided = [(h, g) for h, g in pairs if g in ("correct", "wrong")]
    majority = Counter(h for h, _ in pairs).most_common(1)[0][1] / n if n else float("nan")
    return {"n": n, "accuracy": sum(h == g for h, g in pairs) / n if n else float("nan"),
            "majority_guess": majority, "decided": len(decided),
            "accuracy_decided": sum(h == g for h, g in decided) / len(decided) if decided else float("nan")}


def _real_items(paths: list[Path], work_dir: Path | None, sample: int, seed: int) -> list[SimpleNamespace]:
    """A seeded sample of the hand-labelled real answers (``grading_audit_real.py``: the embedded model's answers
    to TruthfulQA and StrategyQA questions, regenerated from the public files), as audit items."""
    import random
    import tempfile

    import grading_audit_real as gar

    work = work_dir or Path(tempfile.gettempdir()) / "uncertainty_lab_grading_audit"
    labels = gar.read_labels()
    found = [SimpleNamespace(answer=r["answer"], references=list(r["item"]["answers"]),
                             incorrect=list(r["item"]["incorrect"]), question=r["item"]["question"],
                             label=labels[(r["dataset"], r["question_id"], r["sha"])]["label"])
             for r in gar.all_answers({"truthfulqa": paths[0], "strategyqa": paths[1]}, work)
             if (r["dataset"], r["question_id"], r["sha"]) in labels]
    return random.Random(seed).sample(found, min(sample, len(found)))


def main(argv: list[str] | None = None) -> int:
    from uncertainty_lab.datasets.audit import load_grader_audit
    from uncertainty_lab.llm import as_backend
    from uncertainty_lab.semantic.grades import grade_many
    from uncertainty_lab.semantic.grading_audit import agreement, make_grader

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--llm", default="embedded", help="the judge's backend (a get_llm spec)")
    parser.add_argument("--sample", type=int, default=100, help="audit answers to judge (at most 253)")
    parser.add_argument("--seed", type=int, default=0, help="the sample's seed")
    parser.add_argument("--out", type=Path, default=None, help="also write the results here as JSON")
    parser.add_argument("--real", nargs=2, type=Path, metavar=("TRUTHFULQA_CSV", "STRATEGYQA_JSON"),
                        help="judge the hand-labelled REAL answers of grading_audit_real.py instead (the public files)")
    parser.add_argument("--work-dir", type=Path, default=None, help="with --real: grading_audit_real.py's work folder")
    args = parser.parse_args(argv)

    items = (_real_items(args.real, args.work_dir, args.sample, args.seed) if args.real
             else load_grader_audit(sample=args.sample, seed=args.seed))
    hand = [it.label for it in items]
    backend = as_backend(args.llm)
    rows, details = [], {}
    for name, spec in (("strict", "strict"), (f"llm ({backend.label})", {"name": "llm", "llm": backend})):
        grader = make_grader(spec)
        t0 = time.perf_counter()
        results = grade_many(grader, [it.answer for it in items], [it.references for it in items],
                             [it.incorrect for it in items], [it.question for it in items])
        seconds = time.perf_counter() - t0
        graded = [r.label for r in results]
        a = agreement(hand, graded, name=name)
        unparsed = sum("unparsed" in r.evidence for r in results)
        rows.append({**a.row(), "seconds": round(seconds, 1)})
        details[name] = {"labels": dict(Counter(graded)), "unparsed": unparsed,
                         "correct_or_wrong": _subset_accuracy(hand, graded),
                         "replies": {} if args.real else dict(  # a reply may quote a data set's question
                             Counter(r.raw.strip()[:40] for r in results if r.raw is not None).most_common(8))}
    out = {"command": "python benchmarks/llm_judge.py " + " ".join(sys.argv[1:] if argv is None else argv),
           "machine": machine(), "sample": args.sample, "seed": args.seed, "hand": dict(Counter(hand)),
           "rows": rows, "details": details}
    cols = ["grader", "n", "accuracy", "kappa", "uncertain", "seconds"]
    print("| " + " | ".join(cols) + " |\n|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(str(r[c]) for c in cols) + " |")
    print(json.dumps({"hand": out["hand"], "details": details}, indent=1, ensure_ascii=False))
    if args.out:
        args.out.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
